"""Large catalog loads say what they do and clean up after themselves (#24, class 12):
progress on stderr for a long load, no `.building-*` folder left by an interrupted build
(SIGTERM, Ctrl-C) or kept after a killed one (SIGKILL), products streamed into the index."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cli_runs import REPO_ROOT, interruptible_by_ctrl_c
from rich.console import Console

from catalog import Catalog, CatalogError, build_index, load_catalog
from catalog import terminal as catalog_terminal
from catalog.loaders import iter_products


def write_products(path: Path, count: int, *, bad_at: int | None = None) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for number in range(count):
            price = -1 if number == bad_at else 10 + number % 90
            product = {
                "id": f"p{number}",
                "title": f"Trail tent {number} for two",
                "description": "Light and quick to pitch, with a rain fly and two doors.",
                "category": "outdoors",
                "price": price,
                "tags": ["tent", "camping"],
            }
            handle.write(json.dumps(product) + "\n")
    return path


def building_folders(parent: Path) -> list[str]:
    return sorted(entry.name for entry in parent.iterdir() if ".building-" in entry.name)


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_later_build_removes_the_folders_of_killed_builds_only(tmp_path: Path) -> None:
    index_dir = tmp_path / "catalog"
    killed = tmp_path / f".catalog.building-{dead_pid()}-{uuid.uuid4().hex}"
    running = tmp_path / f".catalog.building-{os.getpid()}-{uuid.uuid4().hex}"
    older_name = tmp_path / f".catalog.building-{uuid.uuid4().hex}"  # no pid: by age only
    for folder in (killed, running, older_name):
        folder.mkdir()
        (folder / "meta.json").write_text("{}")
    build_index(iter_products(write_products(tmp_path / "p.jsonl", 5)), index_dir)
    assert building_folders(tmp_path) == sorted([running.name, older_name.name])
    assert len(Catalog.open(index_dir)) == 5


def test_a_bad_record_mid_stream_leaves_the_served_index_and_no_folder(tmp_path: Path) -> None:
    index_dir = tmp_path / "catalog"
    assert load_catalog(write_products(tmp_path / "good.jsonl", 5), index_dir) == 5
    with pytest.raises(CatalogError, match="line 3000"):
        load_catalog(write_products(tmp_path / "bad.jsonl", 4000, bad_at=2999), index_dir)
    assert len(Catalog.open(index_dir)) == 5  # the index before keeps serving
    assert building_folders(tmp_path) == []


def start_load(source: Path, index_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "catalog", "load", str(source), "--index-dir", str(index_dir)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible_by_ctrl_c,
    )


def wait_for_building(parent: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not building_folders(parent):
        assert time.monotonic() < deadline, "the build never started"
        time.sleep(0.02)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_an_interrupted_build_leaves_no_folder_behind(how: str, tmp_path: Path) -> None:
    index_dir = tmp_path / "catalog"
    assert load_catalog(write_products(tmp_path / "small.jsonl", 5), index_dir) == 5
    big = write_products(tmp_path / "big.jsonl", 60_000)
    load = start_load(big, index_dir)
    wait_for_building(tmp_path)
    load.send_signal(getattr(signal, how))
    _, stderr = load.communicate(timeout=60)
    assert load.returncode != 0
    assert "Traceback" not in stderr, stderr
    assert len(Catalog.open(index_dir)) == 5  # the index before keeps serving
    if how == "SIGKILL":
        # Nothing runs in a killed process: the next build clears its folder.
        assert len(building_folders(tmp_path)) == 1
        load_catalog(tmp_path / "small.jsonl", index_dir)
    assert building_folders(tmp_path) == []


def test_a_long_load_shows_progress_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog_terminal, "LONG_LOAD_S", 0.0)
    source = write_products(tmp_path / "p.jsonl", 5000)
    shown = io.StringIO()
    terminal = Console(file=shown, force_terminal=True, width=100)
    with catalog_terminal.load_progress("indexing p.jsonl", terminal) as advance:
        build_index(iter_products(source, progress=advance), tmp_path / "catalog")
    assert "indexing p.jsonl" in shown.getvalue() and "%" in shown.getvalue()
    logged = io.StringIO()
    log = Console(file=logged, force_terminal=False, width=100)
    with catalog_terminal.load_progress("indexing p.jsonl", log) as advance:
        build_index(iter_products(source, progress=advance), tmp_path / "catalog")
    assert logged.getvalue() == ""  # a short load in a log says nothing


def test_loading_from_the_cli_keeps_stdout_for_its_output(tmp_path: Path) -> None:
    source = write_products(tmp_path / "p.jsonl", 20)
    load = start_load(source, tmp_path / "catalog")
    stdout, stderr = load.communicate(timeout=60)
    assert load.returncode == 0, stderr
    assert stdout.startswith("Indexed 20 products") and stderr == ""
