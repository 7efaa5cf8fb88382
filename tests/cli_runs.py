"""Running the CLIs (`python -m graph.run`, `python -m graph.eval`) in tests against a
fake OpenAI-compatible server: as a real subprocess (on a pseudo-terminal too), or
graph.run's main() in-process."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from graph.cli.main import main

REPO_ROOT = Path(__file__).resolve().parents[1]


def interruptible_by_ctrl_c() -> None:
    """A child's `preexec_fn` for tests that send it Ctrl-C's SIGINT. A shell runs a
    background job (`cmd &`, as CI runners and agents do) with SIGINT ignored, children
    inherit that, and Python then installs no KeyboardInterrupt handler: the signal would
    do nothing. A terminal's foreground process has the default, so give that back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def graph_run_process(
    url: str,
    data_dir: Path,
    *args: str,
    stdin: str | None = "",
    timeout: float = 60,
    cwd: Path = REPO_ROOT,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """`python -m graph.run ARGS` with the fake server at `url` and its own data dir, run
    in `cwd`; `stdin=None` inherits the test's stdin, `env` adds variables."""
    return subprocess.run(
        [sys.executable, "-m", "graph.run", *args],
        cwd=cwd,
        env=cli_environment(url, data_dir, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def graph_run_output(url: str, data_dir: Path, *args: str, **options: Any) -> tuple[int, str]:
    """graph_run_process (its keyword `options` too), as (exit code, stdout + stderr)."""
    run = graph_run_process(url, data_dir, *args, **options)
    return run.returncode, run.stdout + run.stderr


def graph_eval_process(
    url: str, data_dir: Path, *args: str, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m graph.eval ARGS` with the fake server at `url` and its own data dir."""
    return subprocess.run(
        [sys.executable, "-m", "graph.eval", *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data_dir, **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_graph_run(
    url: str,
    data_dir: Path,
    *args: str,
    program: Sequence[str] = ("-m", "graph.run"),
    **env: str,
) -> subprocess.Popen[str]:
    """`python -m graph.run ARGS` (or another `program` taking its arguments, as the load
    bench's floor script does) started in the background (no stdin, output captured),
    like graph_run_process, for tests that run several at once."""
    return subprocess.Popen(
        [sys.executable, *program, *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data_dir, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_on_terminal(
    url: str, data: Path, typed: bytes, *args: str, timeout: float = 90, **env: str
) -> tuple[int, str]:
    """The CLI with `typed` waiting on a pseudo-terminal for its prompts (and any editor
    it starts on that terminal); `env` adds variables (COLUMNS 300 unless given)."""
    run = terminal_process(url, data, typed, *args, timeout=timeout, **{"COLUMNS": "300", **env})
    return run.returncode, run.stdout + run.stderr


def terminal_process(
    url: str, data: Path, typed: bytes, *args: str, timeout: float = 90, **env: str
) -> subprocess.CompletedProcess[str]:
    """The CLI with `typed` waiting on a pseudo-terminal, its stdout and stderr apart."""
    master, slave = pty.openpty()
    try:
        os.write(master, typed)
        environment = cli_environment(url, data, **env)
        environment.pop("VISUAL", None)
        return subprocess.run(
            [sys.executable, "-m", "graph.run", *args],
            cwd=REPO_ROOT,
            env=environment,
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        os.close(master)
        os.close(slave)


def cli_environment(url: str, data_dir: Path, **env: str) -> dict[str, str]:
    """The environment of a CLI process: the fake server at `url`, the data dir, `env`."""
    return {
        **os.environ,
        "OPENAI_BASE_URL": url,
        "OPENAI_MODEL": "fake-model",
        "SHOPPING_PLANNER_DATA_DIR": str(data_dir),
        **env,
    }


def graph_run_main(
    capsys: pytest.CaptureFixture[str], url: str, db: Path, *args: str
) -> tuple[int, str]:
    """The CLI's main() in-process with the fake server at `url` and the checkpoint
    database `db`; returns (exit code, stdout + stderr)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_BASE_URL", url)
        code = main([*args, "--db", str(db)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err
