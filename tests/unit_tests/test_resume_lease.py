"""Class 1 of the second red-team round (#24): a run, a resume and an answer at approval
each hold their thread exclusively, on SQLite and PostgreSQL, through real CLI processes.
Two `--resume` of one thread at once, or a resume of a thread still running: exactly one
runs, the other exits with one line, and the fake server sees each step's call once. A
claim left by a killed process does not block the thread."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_process, start_graph_run
from conftest import postgres_url
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN

from graph.builder import build_graph
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config

BUSY = "is being run by another process right now"


def script(step_delay: float) -> FakeScript:
    # Spare replies: a step run twice would be answered (and counted), not refused.
    return FakeScript(
        replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)] * 4},
        delays={"ReasoningAnswer": step_delay},
    )


def backend_env(backend: str, data_dir: Path) -> tuple[dict[str, str], str]:
    # The pick step asks the model even where code could answer it, so that a step's
    # LLM call is in flight while another process tries the thread.
    asked = {"SHOPPING_CODE_DECISIONS": "off"}
    if backend == "sqlite":
        db = str(data_dir / "checkpoints.sqlite")
        return {"SHOPPING_CHECKPOINT_DB": db, **asked}, db
    url = postgres_url("CHECKPOINT_URL")
    return {"CHECKPOINT_URL": url, **asked}, url


def step_calls_once(fake: FakeScript, db: str, thread: str) -> None:
    calls = [json.dumps(body, sort_keys=True) for body in fake.calls_for("ReasoningAnswer")]
    assert len(calls) == len(set(calls)), "a step's LLM call was made twice"
    values = build_graph(open_checkpointer(db)).get_state(thread_config(thread)).values
    assert values["outcome"] is not None
    assert len(calls) == sum(result.llm_calls for result in values["step_results"])


def one_line_refusal(code: int, output: str) -> None:
    assert code == 1, output
    assert "Traceback" not in output and BUSY in output, output


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_resumes_at_once_run_the_thread_once(
    backend: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    env, db = backend_env(backend, isolated_data_dir)
    thread = f"lease-{uuid.uuid4().hex[:8]}"
    fake = script(step_delay=6.0)
    with fake_openai_server(fake) as url:
        paused = graph_run_process(
            url, isolated_data_dir, "a strap gift", "--thread", thread,
            "--catalog", str(small_catalog_file), **env,
        )  # fmt: skip
        assert paused.returncode == 3 and "--yes" in paused.stdout, paused.stdout
        racers = [
            start_graph_run(url, isolated_data_dir, "--resume", thread, "--yes", **env)
            for _ in range(2)
        ]
        results = [(p.wait(timeout=120), p.stdout.read() + p.stderr.read()) for p in racers]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 1], results  # the loser: a runtime failure, fine once the run ends
    one_line_refusal(*next(r for r in results if r[0] != 0))
    step_calls_once(fake, db, thread)


def resume_in_its_reasoning_call(
    url: str,
    fake: FakeScript,
    data_dir: Path,
    thread: str,
    catalog: Path,
    env: dict[str, str],
    meanwhile: Callable[[], object] = lambda: None,
) -> subprocess.CompletedProcess[str]:
    """Start a run of `thread` and, once it is in its reasoning call (mid-step: its
    checkpoint says "resumable"), do `meanwhile` and `--resume` it from another process;
    the first run must still finish. The resume's process is returned."""
    running = start_graph_run(
        url, data_dir, "a strap gift", "--yes", "--thread", thread, "--catalog", str(catalog),
        **env,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not fake.calls_for("ReasoningAnswer") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake.calls_for("ReasoningAnswer"), "the run never reached its reasoning call"
    meanwhile()
    resumed = graph_run_process(url, data_dir, "--resume", thread, "--yes", **env)
    out, err = running.communicate(timeout=120)
    assert running.returncode == 0, out + err
    return resumed


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_resume_of_a_running_thread_is_refused(
    backend: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    env, db = backend_env(backend, isolated_data_dir)
    thread = f"lease-{uuid.uuid4().hex[:8]}"
    fake = script(step_delay=10.0)
    with fake_openai_server(fake) as url:
        resumed = resume_in_its_reasoning_call(
            url, fake, isolated_data_dir, thread, small_catalog_file, env
        )
    one_line_refusal(resumed.returncode, resumed.stdout + resumed.stderr)
    step_calls_once(fake, db, thread)


def test_a_resume_is_refused_with_the_old_lease_folder_deleted(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#39: the folder where leases were once kept, removed while a run is in its
    reasoning call, does not let a `--resume` run that step again."""
    env, db = backend_env("sqlite", isolated_data_dir)
    thread = f"lease-{uuid.uuid4().hex[:8]}"
    fake = script(step_delay=10.0)
    old_leases = isolated_data_dir / ".checkpoints.sqlite.leases"
    with fake_openai_server(fake) as url:
        resumed = resume_in_its_reasoning_call(
            url, fake, isolated_data_dir, thread, small_catalog_file, env,
            meanwhile=lambda: shutil.rmtree(old_leases, ignore_errors=True),
        )  # fmt: skip
    one_line_refusal(resumed.returncode, resumed.stdout + resumed.stderr)
    assert len(fake.calls_for("ReasoningAnswer")) == 1
    step_calls_once(fake, db, thread)


def start_and_kill_at(
    url: str, fake: FakeScript, tool: str, data_dir: Path, *args: str, **env: str
) -> None:
    """Start a CLI process and SIGKILL it while `tool`'s call is in flight (it must get
    that far: a lease left by the last killed process would stop it earlier)."""
    before = len(fake.calls_for(tool))
    running = start_graph_run(url, data_dir, *args, **env)
    deadline = time.monotonic() + 60
    while len(fake.calls_for(tool)) == before and running.poll() is None:
        assert time.monotonic() < deadline, f"no {tool} call"
        time.sleep(0.05)
    os.kill(running.pid, signal.SIGKILL)
    out, err = running.communicate(timeout=30)
    assert running.returncode == -signal.SIGKILL, out + err


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_killed_runs_lease_does_not_block_the_thread(
    backend: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    env, db = backend_env(backend, isolated_data_dir)
    thread = f"lease-{uuid.uuid4().hex[:8]}"
    fake = script(step_delay=30.0)
    fake.replies["Plan"].append(dict(STRAP_PLAN))
    resume = ("--resume", thread, "--yes")
    with fake_openai_server(fake) as url:
        fake.delays["Plan"] = 30.0  # killed while planning
        start_and_kill_at(
            url, fake, "Plan", isolated_data_dir, "a strap gift", "--yes", "--thread", thread,
            "--catalog", str(small_catalog_file), **env,
        )  # fmt: skip
        fake.delays["Plan"] = 0.0  # the resume that plans is killed mid-step
        start_and_kill_at(url, fake, "ReasoningAnswer", isolated_data_dir, *resume, **env)
        fake.delays["ReasoningAnswer"] = 0.0
        resumed = graph_run_process(url, isolated_data_dir, *resume, **env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    values: Any = build_graph(open_checkpointer(db)).get_state(thread_config(thread)).values
    assert values["outcome"] is not None


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_list_tells_a_run_held_by_a_live_process_from_one_whose_process_died(
    backend: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#37: `--list` reads the thread's lease (without taking it): held means running in
    a live process; unfinished and not held means its process died, and --resume works."""
    env, _ = backend_env(backend, isolated_data_dir)
    thread = f"lease-{uuid.uuid4().hex[:8]}"
    fake = script(step_delay=30.0)

    def listed_status() -> str:
        listed = graph_run_process(url, isolated_data_dir, "--list", "--json", **env)
        assert listed.returncode == 0, listed.stderr
        (run,) = [item for item in json.loads(listed.stdout) if item["thread_id"] == thread]
        return str(run["status"])

    with fake_openai_server(fake) as url:
        running = start_graph_run(
            url, isolated_data_dir, "a strap gift", "--yes", "--thread", thread,
            "--catalog", str(small_catalog_file), **env,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not fake.calls_for("ReasoningAnswer"):
                assert running.poll() is None and time.monotonic() < deadline, "no step call"
                time.sleep(0.05)
            assert listed_status() == "running"
            assert listed_status() == "running"  # looking did not take the lease
        finally:
            os.kill(running.pid, signal.SIGKILL)
            running.communicate(timeout=30)
        assert listed_status() == "stopped"
        fake.delays["ReasoningAnswer"] = 0.0
        resumed = graph_run_process(url, isolated_data_dir, "--resume", thread, "--yes", **env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert listed_status() == "done"
