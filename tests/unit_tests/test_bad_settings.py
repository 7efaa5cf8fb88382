"""Every bad flag and setting is refused before the first LLM call, with one clear line,
no traceback and no thread left behind. Real CLI processes against the fake server."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import REPO_ROOT, cli_environment, graph_run_process
from conftest import FakeServer
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PLAN


def bad_catalog(kind: str, tmp_path: Path) -> str:
    if kind == "missing":
        return str(tmp_path / "nope.jsonl")
    if kind == "directory":
        (tmp_path / "dir").mkdir()
        return str(tmp_path / "dir")
    if kind == "symlink loop":
        (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
        (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
        return str(tmp_path / "a.jsonl")
    if kind == "device":
        return "/dev/zero"
    if kind == "fifo":
        os.mkfifo(tmp_path / "pipe.jsonl")
        return str(tmp_path / "pipe.jsonl")
    if kind == "empty file":
        (tmp_path / "empty.jsonl").write_text("")
        return str(tmp_path / "empty.jsonl")
    raise AssertionError(kind)


# (case, extra arguments, extra environment, words the error line must hold)
CASES: list[tuple[str, list[str], dict[str, str], str]] = [
    ("limit 0", ["--limit", "0"], {}, "--limit) must be a whole number between 1 and 50, got 0"),
    ("limit 1000", ["--limit", "1000"], {}, "got 1000"),
    ("limit -3", ["--limit", "-3"], {}, "got -3"),
    *[
        (f"timeout {value}", [], {"SHOPPING_LLM_TIMEOUT": value}, "SHOPPING_LLM_TIMEOUT must")
        for value in ("abc", "-1", "nan", "inf", "0", "1e999")
    ],
    *[
        (f"deadline {value}", [], {"SHOPPING_LLM_DEADLINE": value}, "SHOPPING_LLM_DEADLINE must")
        for value in ("soon", "-5", "nan")
    ],
    ("busy timeout nan", [], {"SHOPPING_CHECKPOINT_BUSY_TIMEOUT": "nan"}, "BUSY_TIMEOUT must"),
    ("provider env", [], {"SHOPPING_PROVIDER": "nosuch"}, "unknown provider 'nosuch'"),
    ("thread control", ["--thread", "a\x1b[2Jb"], {}, "printable characters"),
    ("thread long", ["--thread", "t" * 300], {}, "1 to 200 printable"),
    ("thread empty", ["--thread", ""], {}, "1 to 200 printable"),
    *[
        (f"catalog {kind}", ["--catalog", kind], {}, words)
        for kind, words in (
            ("missing", "file not found"),
            ("directory", "not a catalog index"),
            ("symlink loop", "Too many levels of symbolic links"),
            ("device", "not a regular file"),
            ("fifo", "not a regular file"),
            ("empty file", "no products"),
        )
    ],
]


@pytest.mark.parametrize(("case", "args", "env", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_setting_fails_before_any_llm_call_with_one_line(
    case: str,
    args: list[str],
    env: dict[str, str],
    words: str,
    small_catalog_file: Path,
    tmp_path: Path,
) -> None:
    if case.startswith("catalog "):
        args = ["--catalog", bad_catalog(args[1], tmp_path)]
    else:
        args = [*args, "--catalog", str(small_catalog_file)]
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]})
    data = tmp_path / "data"
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url, data, "a strap gift under $200", "--yes", *args, timeout=30, **env
        )
        listing = graph_run_process(url, data, "--list")
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in output, output
    assert fake.requests == []  # nothing was sent to the model
    if case != "busy timeout nan":
        assert "No runs yet." in listing.stdout, listing.stdout  # no thread left behind


def test_ctrl_d_at_the_approval_prompt_leaves_the_run_paused(
    small_catalog_file: Path, tmp_path: Path, photo_gift_server: FakeServer
) -> None:
    master, slave = pty.openpty()
    try:
        os.write(master, b"\x04")  # Ctrl-D: end of input at the prompt
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "graph.run",
                "a strap gift under $200",
                "--thread",
                "eof",
                "--catalog",
                str(small_catalog_file),
            ],
            cwd=REPO_ROOT,
            env=cli_environment(photo_gift_server.url, tmp_path / "data"),
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=60,
        )
        resumed = graph_run_process(
            photo_gift_server.url, tmp_path / "data", "--resume", "eof", "--yes"
        )
    finally:
        os.close(master)
        os.close(slave)
    output = run.stdout + run.stderr
    assert "Run this plan?" in output and "EOFError" not in output and "Traceback" not in output
    assert run.returncode == 3, output
    assert "no answer given; the run is saved (--resume eof --yes continues it)" in output
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(photo_gift_server.script.calls_for("Plan")) == 1  # the plan was not asked for again
