"""What every CLI of the package does alike (#37): `--version` from the package metadata,
help for every option, exit codes and the `--json` documents, an unreachable PostgreSQL
named in one line within seconds, CATALOG_URL for `python -m catalog`, and the package's
own files (version, changelog, license, .dockerignore); .env.example: test_secrets.py."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from cli_runs import REPO_ROOT, cli_environment, graph_run_process
from conftest import postgres_url
from fake_openai_server import fake_openai_server
from fakes import photo_gift_script

import catalog.__main__
import catalog.exits
import catalog.postgres
import graph.cli.main
import graph.evals.main
import localmodel.errors
from catalog.exits import EXIT_BAD_INPUT, EXIT_BUG, EXIT_FAILED
from catalog.version import package_version
from graph.cli import documents
from graph.cli.documents import DOCUMENT
from graph.cli.exits import EXIT_AWAITING_APPROVAL, JSON_SCHEMA_VERSION

# Every argparse CLI a user runs, with what builds its parser.
CLIS = {
    "graph.run": graph.cli.main.build_parser,
    "graph.eval": graph.evals.main.build_parser,
    "catalog": catalog.__main__._parser,
    "catalog.postgres": catalog.postgres.build_parser,
}
NO_SERVER = "http://127.0.0.1:9"  # no run here gets as far as an LLM call


def run_module(
    module: str, *args: str, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` in the repository, with a data dir of its own (`env` adds)."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        env=cli_environment(NO_SERVER, Path(env.pop("data_dir")), **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def refused_port() -> int:
    """A local port nothing listens on (bound, then closed: the connection is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ------------------------------------------------------------------ version and help


@pytest.mark.parametrize("module", list(CLIS))
def test_every_cli_prints_the_package_version(module: str, isolated_data_dir: Path) -> None:
    run = run_module(module, "--version", data_dir=str(isolated_data_dir))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == f"shopping-planner {package_version()}\n"


def _options(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{path} {name}")
        else:
            yield path, action


@pytest.mark.parametrize("module", list(CLIS))
def test_every_option_of_every_cli_has_help(module: str) -> None:
    missing = [
        f"{path}: {'/'.join(action.option_strings) or action.dest}"
        for path, action in _options(CLIS[module](), module)
        if not action.help  # argparse.SUPPRESS (a hidden duplicate) is a help string
    ]
    assert missing == []


def test_the_eval_help_keeps_its_usage_lines_and_the_run_help_names_the_exit_codes() -> None:
    shown = CLIS["graph.eval"]().format_help()
    assert "\n    python -m graph.eval --compare A.json B.json\n" in shown
    assert "\nThe --limits mode plans requests" in shown
    shown = CLIS["graph.run"]().format_help()
    assert "exit codes:" in shown and "\n  3    the plan awaits approval" in shown
    for module in ("graph.run", "graph.eval", "catalog"):
        shown = CLIS[module]().format_help()
        assert "\n  1    a runtime failure" in shown and "\n  2    bad arguments" in shown, module
        assert "\n  70   a bug" in shown, module


# ------------------------------------------------------------------ the package's files


def test_the_version_is_written_once_and_the_changelog_names_it() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    releases = re.findall(
        r"^## \[?(\d+\.\d+\.\d+)\]?", (REPO_ROOT / "CHANGELOG.md").read_text(), re.M
    )
    assert releases and releases[0] == project["version"]
    assert releases == sorted(releases, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert "MIT License" in (REPO_ROOT / "LICENSE").read_text()
    assert "Operating System :: POSIX" in project["classifiers"]
    # #42: typed (each package ships py.typed), and the Python versions it runs on.
    assert "Typing :: Typed" in project["classifiers"]
    packaged = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package in ("graph", "catalog", "localmodel"):
        assert "py.typed" in packaged["package-data"][package]
        assert (REPO_ROOT / package / "py.typed").is_file()
    versions = [c.rsplit(" ", 1)[1] for c in project["classifiers"] if re.search(r":: 3\.\d+$", c)]
    assert versions and versions[0] == project["requires-python"].removeprefix(">=")
    ignored = (REPO_ROOT / ".dockerignore").read_text().split()
    assert {".env", ".git", ".venv/", "data/", "**/__pycache__/"} <= set(ignored)


def test_the_package_builds_with_no_deprecation_warning_and_states_its_license(
    tmp_path: Path,
) -> None:
    # Built from a copy, so no build/ or .egg-info lands in the checkout (an .egg-info
    # there would be the metadata every other test reads the version from).
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO_ROOT / name, source / name)
    for package in ("graph", "catalog", "localmodel"):
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(REPO_ROOT / package, source / package, ignore=ignore)
    # Offline, with this environment's setuptools; -v shows what the build backend warns.
    offline = ("--no-deps", "--no-build-isolation", "--no-index", "-v")
    out = ("-w", str(tmp_path / "out"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", *offline, *out, str(source)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = build.stdout + build.stderr
    assert build.returncode == 0, output[-3000:]
    assert "deprecat" not in output.lower(), output[-3000:]
    (wheel,) = (tmp_path / "out").glob("shopping_planner-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith("METADATA")))
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in archive.namelist())
    assert b"License-Expression: MIT" in metadata
    assert b"Classifier: Operating System :: POSIX" in metadata


@pytest.mark.parametrize(
    ("this", "writer", "newer"),
    [
        ("0.4.0", "0.3.0", False),
        ("0.4.0", "0.4.0", False),
        ("0.4.0", "0.4.1", True),
        ("0.4.0", "0.10.0", True),  # compared as versions, not as text
        ("0.4.0", "not a version", False),
        ("0+unknown", "0.1.0", True),  # a checkout never installed is older than any release
    ],
)
def test_checkpoints_are_compared_by_the_version_the_metadata_states(
    this: str, writer: str, newer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import graph.runs.threads as threads

    monkeypatch.setattr(threads, "package_version", lambda: this)
    assert threads.this_version() == this
    assert threads._is_newer(writer) is newer


# ------------------------------------------------------------------ --json and exit codes


def test_json_awaiting_approval_prints_the_plan_and_exits_3(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(photo_gift_script()) as url:
        args = ("a strap gift under $200", "--catalog", str(small_catalog_file))
        run = graph_run_process(url, isolated_data_dir, *args, "--thread", "w", "--json")
    assert run.returncode == EXIT_AWAITING_APPROVAL, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["schema_version"] == JSON_SCHEMA_VERSION
    assert document["status"] == "awaiting approval" and document["exit_code"] == 3
    assert document["thread_id"] == "w" and document["resume"] == "--resume w --yes"
    assert document["plan"]["steps"] and document["estimate"]["llm_calls"] >= 0
    assert document["step_results"] == [] and document["outcome"] is None
    is_the_published_shape(document)


def test_json_of_a_run_that_fails_is_an_error_document(isolated_data_dir: Path) -> None:
    # A catalog file that does not exist: refused in one line, nothing run.
    missing = isolated_data_dir / "no-such-catalog.jsonl"
    run = graph_run_process(
        NO_SERVER, isolated_data_dir, "a tent", "--catalog", str(missing), "--yes", "--json"
    )
    assert run.returncode == EXIT_BAD_INPUT, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["schema_version"] == JSON_SCHEMA_VERSION
    assert document["status"] == "failed" and document["exit_code"] == EXIT_BAD_INPUT
    assert set(document["error"]) == {"type", "message", "resumable"}
    assert "no-such-catalog.jsonl" in document["error"]["message"]
    assert "Traceback" not in run.stderr
    is_the_published_shape(document)


def test_bad_arguments_a_runtime_failure_and_awaiting_approval_exit_distinctly(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """Issue #37: a script tells "fix the command" from "try again later" from "approve
    it" by the code alone, and --json's exit_code says the same."""
    catalog = ("--catalog", str(small_catalog_file))
    # An argument out of range: refused before any model is asked.
    bad = graph_run_process(
        NO_SERVER, isolated_data_dir, "a strap gift", *catalog, "--limit", "0", "--yes", "--json"
    )
    # The model server is not there (nothing listens on the port).
    down = graph_run_process(
        f"http://127.0.0.1:{refused_port()}/v1", isolated_data_dir, "a strap gift under $200",
        *catalog, "--yes", "--json",
    )  # fmt: skip
    with fake_openai_server(photo_gift_script()) as url:
        paused = graph_run_process(
            url, isolated_data_dir, "a strap gift under $200", *catalog, "--json"
        )
    codes = {}
    for name, run, code in (
        ("bad", bad, EXIT_BAD_INPUT),
        ("down", down, EXIT_FAILED),
        ("paused", paused, EXIT_AWAITING_APPROVAL),
    ):
        assert run.returncode == code, f"{name}: {run.stdout}{run.stderr}"
        document = json.loads(run.stdout)
        assert document["exit_code"] == code, document
        is_the_published_shape(document)
        codes[name] = code
        assert "Traceback" not in run.stderr, run.stderr
    assert len(set(codes.values())) == 3
    assert json.loads(bad.stdout)["error"]["type"] == "RunRefused"
    assert json.loads(down.stdout)["error"]["type"] == "ProviderFailed"
    assert json.loads(paused.stdout)["status"] == "awaiting approval"


def test_a_bug_exits_with_a_code_of_its_own_and_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_data_dir: Path
) -> None:
    import graph.cli.commands

    def broken(*_: Any) -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(graph.cli.commands, "dispatch", broken)
    assert graph.cli.main.main(["--list", "--json"]) == EXIT_BUG == 70
    captured = capsys.readouterr()
    assert "Traceback" in captured.err and "ZeroDivisionError" in captured.err
    document = json.loads(captured.out)
    assert document["exit_code"] == EXIT_BUG and document["error"]["type"] == "ZeroDivisionError"


def test_the_exit_codes_localmodel_repeats_are_the_shared_ones() -> None:
    # localmodel may import nothing of catalog, so it writes its two codes as numbers.
    assert localmodel.errors.LocalModelError.exit_code == catalog.exits.EXIT_FAILED
    assert localmodel.errors.LocalModelSettingError.exit_code == catalog.exits.EXIT_BAD_INPUT


def test_json_done_states_its_status(small_catalog_file: Path, isolated_data_dir: Path) -> None:
    with fake_openai_server(photo_gift_script()) as url:
        args = ("a strap gift under $200", "--catalog", str(small_catalog_file))
        run = graph_run_process(url, isolated_data_dir, *args, "--yes", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["status"] == "done" and document["exit_code"] == 0
    assert document["schema_version"] == JSON_SCHEMA_VERSION and document["resume"] is None
    assert document["outcome"]["picks"] and document["step_results"]
    is_the_published_shape(document)


def is_the_published_shape(document: dict[str, Any]) -> None:
    """The document is one of the published models', field for field: read back through
    it (chosen by its status), it comes out the same: nothing missing, nothing extra,
    every value of its type."""
    assert DOCUMENT.dump_python(DOCUMENT.validate_python(document), mode="json") == document


def test_the_published_run_document_schema_is_the_models() -> None:
    published = (REPO_ROOT / "docs" / "run-document.schema.json").read_text()
    assert published == documents.published_schema(), (
        "regenerate it: python -m graph.cli.documents > docs/run-document.schema.json"
    )
    models = json.loads(published)["$defs"]
    run, error = models["RunDocument"], models["ErrorDocument"]
    assert {"schema_version", "status", "exit_code", "plan", "outcome"} <= set(run["required"])
    assert set(run["properties"]["status"]["enum"]) == {"done", "rejected", "awaiting approval"}
    assert set(error["properties"]["status"]["enum"]) == {"failed", "interrupted"}
    assert {"schema_version", "status", "exit_code", "thread_id", "error"} == set(error["required"])


# ------------------------------------------------------------------ unreachable PostgreSQL


def _one_quick_line(run: subprocess.CompletedProcess[str], took: float, start_up: float) -> str:
    """The one error line of a process that failed within seconds: under 5 s, or, on a
    machine so loaded that starting the CLI alone takes most of that, within 2 s of it."""
    assert took < 5 or took < start_up + 2, f"took {took:.1f} s (start-up {start_up:.1f} s)"
    assert run.returncode == EXIT_FAILED, run.stdout + run.stderr  # a database unreachable
    # --json keeps stdout for the document; the line goes to stderr.
    shown = run.stderr if run.stdout.startswith("{") else run.stdout + run.stderr
    (line,) = shown.strip().splitlines()
    assert "Traceback" not in shown and "psycopg_pool" not in shown and "WARNING" not in shown
    return line


def _timed(start: Callable[[], subprocess.CompletedProcess[str]]) -> tuple[Any, float]:
    started = time.monotonic()
    run = start()
    return run, time.monotonic() - started


@pytest.mark.parametrize("command", [["--list"], ["a tent", "--yes", "--json"]])
def test_an_unreachable_checkpoint_database_is_one_line_within_seconds(
    command: list[str], isolated_data_dir: Path
) -> None:
    port = refused_port()
    url = f"postgresql://shopper:s3cret@127.0.0.1:{port}/runs"
    _, start_up = _timed(lambda: graph_run_process(NO_SERVER, isolated_data_dir, "--list"))
    run, took = _timed(
        lambda: graph_run_process(NO_SERVER, isolated_data_dir, *command, CHECKPOINT_URL=url)
    )
    line = _one_quick_line(run, took, start_up)
    assert f"127.0.0.1:{port}" in line and "refused" in line.lower(), line
    assert "s3cret" not in run.stdout + run.stderr
    if "--json" in command:
        document = json.loads(run.stdout)
        assert (
            document["status"] == "failed" and document["error"]["type"] == "CheckpointStoreError"
        )
        assert document["exit_code"] == EXIT_FAILED
        assert "refused" in document["error"]["message"].lower()


def test_catalog_search_uses_catalog_url_and_names_an_unreachable_one(
    isolated_data_dir: Path,
) -> None:
    port = refused_port()
    data, url = str(isolated_data_dir), f"postgresql://shopper@127.0.0.1:{port}/shop"
    _, start_up = _timed(lambda: run_module("catalog", "--version", data_dir=data))
    run, took = _timed(
        lambda: run_module("catalog", "search", "tent", data_dir=data, CATALOG_URL=url)
    )
    line = _one_quick_line(run, took, start_up)
    assert f"127.0.0.1:{port}" in line and "refused" in line.lower(), line


@pytest.fixture
def pg_catalog_url() -> Iterator[str]:
    """A schema of its own on the session's PostgreSQL server, as a URL."""
    url = postgres_url("CATALOG_URL")
    import psycopg

    schema = f"test_catalog_cli_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    option = quote(f"-csearch_path={schema},public", safe="")
    try:
        yield url + ("&" if "?" in url else "?") + f"options={option}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_catalog_search_serves_from_catalog_url_without_catalog(
    pg_catalog_url: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    data = str(isolated_data_dir)
    loaded = run_module(
        "catalog.postgres", "load", str(small_catalog_file), "--url", pg_catalog_url, data_dir=data
    )
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    served = run_module(
        "catalog", "search", "strap", "--json", data_dir=data, CATALOG_URL=pg_catalog_url
    )
    assert served.returncode == 0, served.stdout + served.stderr
    assert {hit["id"] for hit in json.loads(served.stdout)} == {"strap-1", "strap-2"}
    embedded = run_module("catalog", "search", "strap", "--json", data_dir=data)
    assert embedded.returncode == 0, embedded.stdout + embedded.stderr
    assert not {hit["id"] for hit in json.loads(embedded.stdout)} & {"strap-1", "strap-2"}
