"""Class 2 of the second red-team round (#24): a run is tied to the catalog it started
with. A relative --catalog is kept absolute, so a resume from another directory opens the
same file; a resume that would see another catalog (SHOPPING_CATALOG set since, or the file
changed) stops with one line naming both, unless --other-catalog. Through the real CLI."""

from __future__ import annotations

import io
import json
import sys
from functools import partial
from pathlib import Path

import pytest
from cli_runs import graph_run_main, graph_run_output
from conftest import SMALL_CATALOG
from fake_openai_server import fake_openai_server
from fakes import photo_gift_script

import catalog.sources
import catalog.store
from graph.builder import build_graph
from graph.cli.exits import EXIT_AWAITING_APPROVAL
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config

cli = partial(graph_run_output, timeout=90, COLUMNS="300")  # cli(url, data_dir, ARGS, cwd=)


def write_catalog(path: Path, id_prefix: str) -> Path:
    rows = [{**row, "id": f"{id_prefix}{row['id']}"} for row in SMALL_CATALOG]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def searched_ids(data_dir: Path, thread: str) -> set[str]:
    graph = build_graph(open_checkpointer(str(data_dir / "checkpoints.sqlite")))
    values = graph.get_state(thread_config(thread)).values
    return {p.id for result in values["step_results"] for p in result.products}


def test_a_relative_catalog_resumed_from_another_directory_is_the_same_file(
    tmp_path: Path, isolated_data_dir: Path
) -> None:
    first, other = tmp_path / "first", tmp_path / "other"
    first.mkdir(), other.mkdir()
    write_catalog(first / "shop.jsonl", "")
    write_catalog(other / "shop.jsonl", "elsewhere-")
    with fake_openai_server(photo_gift_script(3)) as url:
        code, out = cli(
            url,
            isolated_data_dir,
            "a strap gift",
            "--thread",
            "t",
            "--catalog",
            "shop.jsonl",
            cwd=first,
        )
        assert code == 3 and "--yes" in out, out  # paused at approval
        code, out = cli(url, isolated_data_dir, "--resume", "t", "--yes", cwd=other)
    assert code == 0, out
    found = searched_ids(isolated_data_dir, "t")
    assert found and not any(i.startswith("elsewhere-") for i in found), found


def test_a_resume_that_would_see_another_catalog_stops_unless_told(
    tmp_path: Path, isolated_data_dir: Path
) -> None:
    shop = write_catalog(tmp_path / "shop.jsonl", "")
    planted = write_catalog(tmp_path / "planted.jsonl", "planted-")
    with fake_openai_server(photo_gift_script(3)) as url:
        # Started on the shipped default; SHOPPING_CATALOG set before the resume.
        code, out = cli(url, isolated_data_dir, "a strap gift", "--thread", "d", cwd=tmp_path)
        assert code == 3, out  # paused at approval
        code, out = cli(
            url, isolated_data_dir, "--resume", "d", "--yes", cwd=tmp_path,
            SHOPPING_CATALOG=str(planted),
        )  # fmt: skip
        assert code == 2 and "Traceback" not in out, out
        assert "the shipped default" in out and str(planted) in out, out
        assert [line for line in out.splitlines() if line.startswith("error:")] == [
            out.splitlines()[-1]
        ], out

        # Started on a file that changed before the resume.
        code, out = cli(
            url, isolated_data_dir, "a strap gift", "--thread", "f", "--catalog",
            str(shop), cwd=tmp_path,
        )  # fmt: skip
        assert code == 3, out  # paused at approval
        write_catalog(shop, "changed-")
        code, out = cli(url, isolated_data_dir, "--resume", "f", "--yes", cwd=tmp_path)
        assert code == 2 and str(shop) in out and "--other-catalog" in out, out

        # Told: the resume runs on the catalog as it is now.
        code, out = cli(
            url, isolated_data_dir, "--resume", "f", "--yes", "--other-catalog", cwd=tmp_path
        )
    assert code == 0, out
    assert all(i.startswith("changed-") for i in searched_ids(isolated_data_dir, "f"))


def test_a_product_appended_while_paused_is_searched_on_a_resume_told_so(
    tmp_path: Path, isolated_data_dir: Path
) -> None:
    # The run pauses at approval on shop.jsonl; a strap rated above every other, and no
    # dearer, is appended; `--resume --other-catalog` searches the file as it is now.
    shop = write_catalog(tmp_path / "shop.jsonl", "")
    with fake_openai_server(photo_gift_script(2)) as url:
        code, out = cli(
            url, isolated_data_dir, "a strap gift", "--thread", "a", "--catalog",
            str(shop), cwd=tmp_path,
        )  # fmt: skip
        assert code == EXIT_AWAITING_APPROVAL, out
        appended = {**SMALL_CATALOG[0], "id": "strap-new", "rating": 4.9, "price": 19.0}
        with shop.open("a") as catalog_file:
            catalog_file.write(json.dumps(appended) + "\n")
        code, out = cli(
            url, isolated_data_dir, "--resume", "a", "--yes", "--other-catalog", "--json",
            cwd=tmp_path,
        )  # fmt: skip
    assert code == 0, out
    assert "strap-new" in searched_ids(isolated_data_dir, "a"), out
    assert [p["id"] for p in json.loads(out)["outcome"]["picks"]] == ["strap-new"], out


def test_a_resume_in_the_same_process_searches_the_shipped_catalog_as_changed_since(
    tmp_path: Path,
    isolated_data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One process holds the shipped default open (a server, or main() called again); the
    # file changes while a run waits at approval (an upgrade). The resume sees the change:
    # named without --other-catalog, searched with it.
    shipped = write_catalog(tmp_path / "products.jsonl", "")
    for module in (catalog.sources, catalog.store):
        monkeypatch.setattr(module, "DEFAULT_CATALOG_FILE", shipped)
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # no terminal: approval needs --yes
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    db = isolated_data_dir / "checkpoints.sqlite"
    with fake_openai_server(photo_gift_script(1)) as url:
        code, out = graph_run_main(capsys, url, db, "a strap gift", "--thread", "s")
        assert code == EXIT_AWAITING_APPROVAL and "--yes" in out, out
        appended = {**SMALL_CATALOG[0], "id": "strap-new", "rating": 4.9, "price": 19.0}
        with shipped.open("a") as catalog_file:
            catalog_file.write(json.dumps(appended) + "\n")
        code, out = graph_run_main(capsys, url, db, "--resume", "s", "--yes")
        assert code == 2 and "--other-catalog" in out, out
        code, out = graph_run_main(
            capsys, url, db, "--resume", "s", "--yes", "--other-catalog", "--json"
        )
    assert code == 0, out
    assert [p["id"] for p in json.loads(capsys_json(out))["outcome"]["picks"]] == ["strap-new"]


def capsys_json(out: str) -> str:
    """The JSON document in main()'s output (stdout, then anything on stderr)."""
    return out[out.index("{") : out.rindex("}") + 1]
