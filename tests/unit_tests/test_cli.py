"""The CLI in real subprocesses, against a fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli_runs import graph_run_process as cli
from fake_openai_server import FakeScript, fake_openai_server
from fakes import GIFT_ANSWERS, GIFT_PLAN

REPO_ROOT = Path(__file__).resolve().parents[2]

PLAN = GIFT_PLAN
ANSWERS = GIFT_ANSWERS


def script(**kwargs: Any) -> FakeScript:
    replies = {"Plan": [PLAN], "ReasoningAnswer": [dict(a) for a in ANSWERS]}
    return FakeScript(replies=replies, **kwargs)


def test_plan_is_printed_before_steps_and_the_outcome_is_checked(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(script()) as url:
        run = cli(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--catalog",
            str(small_catalog_file),
            "-y",
        )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert out.index("Plan: A photography gift") < out.index("Estimate:") < out.index("step 1")
    assert out.index("step 4") < out.index("Recommendation")
    # A gift naming no kind it searches for: the single best of the kinds (#22), shown in
    # the plan, and its pick explained in one line from catalog figures.
    assert "Recommends the single best of the kinds searched" in out
    assert "why strap-1: fits the $200.00 total" in out and "missing:" not in out
    assert "within budget" in out


def test_json_output_is_machine_readable(small_catalog_file: Path, isolated_data_dir: Path) -> None:
    with fake_openai_server(script()) as url:
        run = cli(
            url, isolated_data_dir, "gift", "--catalog", str(small_catalog_file), "-y", "--json"
        )
    report = json.loads(run.stdout)
    assert [s["step"] for s in report["plan"]["steps"]] == [1, 2, 3, 4]
    assert [r["step"] for r in report["step_results"]] == [1, 2, 3, 4]
    assert report["outcome"]["picks"][0]["id"] == "strap-1"
    assert report["estimate"]["llm_calls"] == 2


def test_without_a_terminal_it_refuses_and_names_yes_then_resumes(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = script()
    with fake_openai_server(fake) as url:
        args = ("gift under $200", "--catalog", str(small_catalog_file), "--thread", "gift-1")
        refused = cli(url, isolated_data_dir, *args)
        assert refused.returncode == 3
        assert "--yes" in refused.stdout
        assert "✓ step 1" not in refused.stdout  # nothing ran
        listed = cli(url, isolated_data_dir, "--list")
        assert "awaiting approval" in listed.stdout
        resumed = cli(url, isolated_data_dir, "--resume", "gift-1", "--yes")
    assert resumed.returncode == 0, resumed.stderr
    assert "step 4" in resumed.stdout
    assert len(fake.calls_for("Plan")) == 1  # resuming did not plan again


def test_reusing_a_finished_thread_is_an_error(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(script()) as url:
        args = ("--catalog", str(small_catalog_file), "--thread", "mine", "-y")
        assert cli(url, isolated_data_dir, "a gift", *args).returncode == 0
        again = cli(url, isolated_data_dir, "another request", *args)
    assert again.returncode == 2
    assert "already holds a run" in again.stdout


def test_list_and_history_show_the_run(small_catalog_file: Path, isolated_data_dir: Path) -> None:
    with fake_openai_server(script()) as url:
        args = ("--catalog", str(small_catalog_file), "--thread", "hist", "-y")
        cli(url, isolated_data_dir, "a strap gift under $200", *args)
        listed = cli(url, isolated_data_dir, "--list")
        history = cli(url, isolated_data_dir, "--history", "hist")
    assert "hist" in listed.stdout and "done" in listed.stdout and "4/4" in listed.stdout
    for expected in ("planner", "approval", "tools", "record_search", "verify", "step 4: picked"):
        assert expected in history.stdout


def test_empty_request_is_refused_before_any_call(isolated_data_dir: Path) -> None:
    fake = script()
    with fake_openai_server(fake) as url:
        run = cli(url, isolated_data_dir, "   ")
    assert run.returncode == 2 and "empty" in run.stdout
    assert fake.requests == []


def _step_results_saved(db: Path, thread_id: str) -> int:
    """How many step results the latest checkpoint holds, read with the real saver."""
    from graph.builder import build_graph
    from graph.runs.checkpoint import open_sqlite_checkpointer

    saver = open_sqlite_checkpointer(db)
    try:
        graph = build_graph(checkpointer=saver)
        values = graph.get_state({"configurable": {"thread_id": thread_id}}).values
    finally:
        saver.conn.close()
    return len(values.get("step_results") or [])


def test_sigkill_mid_run_then_resume_loses_and_repeats_nothing(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    # Step 4's answer is held back by the server from the start (no mid-run timing
    # changes), and the kill waits until step 4's request has actually arrived: steps
    # 1-3 are then checkpointed (durability="sync") and step 4 is in flight. Polling
    # the fake server, not the database, keeps the loop cheap under load.
    fake = script(holds={"Step 4:": 120.0})
    db = isolated_data_dir / "checkpoints.sqlite"

    def step_4_asked() -> int:
        with fake.lock:
            bodies = list(fake.requests)
        return sum("Step 4:" in json.dumps(b.get("messages")) for b in bodies)

    with fake_openai_server(fake) as url:
        env = dict(
            os.environ,
            OPENAI_BASE_URL=url,
            OPENAI_MODEL="fake-model",
            SHOPPING_PLANNER_DATA_DIR=str(isolated_data_dir),
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graph.run",
                "gift",
                "--catalog",
                str(small_catalog_file),
                "--thread",
                "crash",
                "-y",
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 90
            while not step_4_asked():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the run never reached step 4"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert _step_results_saved(db, "crash") == 3

        fake.holds.clear()
        fake.replies["ReasoningAnswer"] = [dict(ANSWERS[1])]
        listed = cli(url, isolated_data_dir, "--list")
        # Its process was killed: stopped, not running (no live process holds its lease).
        assert "stopped" in listed.stdout and "3/4" in listed.stdout
        resumed = cli(url, isolated_data_dir, "--resume", "crash", "--json")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert [r["step"] for r in report["step_results"]] == [1, 2, 3, 4]
    assert report["outcome"]["picks"][0]["id"] == "strap-1"
    # Step 2 was answered once; step 4 was asked once before the kill and once after.
    prompts = [json.dumps(r["messages"]) for r in fake.calls_for("ReasoningAnswer")]
    assert sum("Step 2:" in p for p in prompts) == 1
    assert sum("Step 4:" in p for p in prompts) == 2
    assert len(fake.calls_for("Plan")) == 1


def test_console_script_is_the_same_cli(capsys: Any, monkeypatch: Any) -> None:
    import importlib
    import tomllib

    import pytest

    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["shopping-planner"].partition(":")
    entry = getattr(importlib.import_module(module), name)
    from graph.cli.main import main

    assert entry is main
    monkeypatch.setattr(sys, "argv", ["/usr/bin/shopping-planner", "--help"])
    with pytest.raises(SystemExit) as exited:
        entry()
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("usage: shopping-planner")
