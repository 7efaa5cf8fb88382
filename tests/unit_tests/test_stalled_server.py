"""A stalled server cannot hold a run: every LLM call has a whole-call deadline, and one
Ctrl-C stops the run at once with its finished steps saved and its thread resumable.
Real CLI processes against the fake OpenAI-compatible server."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runs import REPO_ROOT, cli_environment, graph_run_process, interruptible_by_ctrl_c
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN

from graph.builder import build_graph
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config

# The scripted reasoning replies are part of what is checked (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("pick_steps_ask_the_model")


DEADLINE_S = 2.0


def replies() -> dict[str, list[dict]]:
    # Two of each: a stalled call uses up the reply it was sending.
    return {"Plan": [dict(STRAP_PLAN)] * 2, "ReasoningAnswer": [dict(STRAP_PICK)] * 2}


def saved_values(data_dir: Path, thread: str) -> dict:
    graph = build_graph(open_checkpointer(str(data_dir / "checkpoints.sqlite")))
    return graph.get_state(thread_config(thread)).values


# (stall, which call stalls: the planner's is the 1st request, the reasoning step's the 2nd)
STALLS = [(s, at) for s in ("trickle", "endless") for at in ("planner", "step")]


@pytest.mark.parametrize(("stall", "at"), STALLS, ids=[f"{s}-{a}" for s, a in STALLS])
def test_a_stalled_call_ends_the_run_within_three_times_the_deadline(
    stall: str, at: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    faults = [stall] if at == "planner" else ["ok", stall]
    calls = len(faults)  # the server consumes its faults
    fake = FakeScript(replies=replies(), faults=faults)
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            "--thread",
            "stall",
            "--catalog",
            str(small_catalog_file),
            COLUMNS="400",
            SHOPPING_LLM_DEADLINE=str(DEADLINE_S),
            SHOPPING_LLM_TIMEOUT="30",
        )
        ended = time.monotonic()
        stalled_at = fake.arrivals[calls - 1]
        output = run.stdout + run.stderr
        assert run.returncode == 1, output
        assert ended - stalled_at <= 3 * DEADLINE_S, ended - stalled_at
        assert "whole-call deadline of 2 s" in output and "Traceback" not in output
        assert len(fake.requests) == calls  # a call past its deadline is not retried
        assert "--resume stall" in output
        resumed = graph_run_process(url, isolated_data_dir, "--resume", "stall", "--yes")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(saved_values(isolated_data_dir, "stall")["step_results"]) == 2


def start_run(url: str, data_dir: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "graph.run", *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data_dir, SHOPPING_LLM_TIMEOUT="300"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible_by_ctrl_c,
    )


@pytest.mark.parametrize("stall", ["timeout", "trickle", "endless"])
def test_one_ctrl_c_stops_the_run_at_once_and_the_thread_resumes(
    stall: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    # The reasoning step's call stalls (a silent server for 60 s, a trickle, no end).
    fake = FakeScript(replies=replies(), faults=["ok", stall], timeout_sleep=60)
    with fake_openai_server(fake) as url:
        run = start_run(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            "--thread",
            "ctrl-c",
            "--catalog",
            str(small_catalog_file),
        )
        deadline = time.monotonic() + 60
        while len(fake.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the call is in flight
        sent = time.monotonic()
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=30)
        stopped_after = time.monotonic() - sent
        assert run.returncode == 130, out + err
        assert stopped_after < 3.0, stopped_after  # was: until the call returned (300 s)
        assert "interrupted." in out and "--resume ctrl-c" in out, out + err
        assert "Traceback" not in out + err
        # The search step finished before Ctrl-C: saved, and not run again.
        assert len(saved_values(isolated_data_dir, "ctrl-c")["step_results"]) == 1
        resumed = graph_run_process(url, isolated_data_dir, "--resume", "ctrl-c", "--yes")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(saved_values(isolated_data_dir, "ctrl-c")["step_results"]) == 2
    assert len(fake.calls_for("Plan")) == 1  # the plan was not asked for again
