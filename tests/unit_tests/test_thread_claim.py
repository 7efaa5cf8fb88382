"""Two or more CLI processes starting the same --thread at once: exactly one wins, every
other gets one clear error, and the thread holds the winner's run alone. On SQLite and,
when CHECKPOINT_URL is set (CI), on PostgreSQL."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from cli_runs import start_graph_run
from conftest import postgres_url
from fake_openai_server import FakeScript, fake_openai_server
from fakes import photo_gift_script

from graph.builder import build_graph
from graph.runs.checkpoint import claim_thread, open_checkpointer, release_thread
from graph.runs.threads import thread_config, thread_history

RACERS = 4


def race(url: str, data_dir: Path, catalog: Path, thread: str, **env: str) -> list[Any]:
    processes = [
        start_graph_run(
            url,
            data_dir,
            f"a photo gift number {n}",
            "--yes",
            "--thread",
            thread,
            "--catalog",
            str(catalog),
            **env,
        )
        for n in range(RACERS)
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        results.append((process.returncode, out + err))
    return results


def check_one_winner(results: list[Any], fake: FakeScript, db: str, thread: str) -> None:
    winners = [output for code, output in results if code == 0]
    losers = [output for code, output in results if code != 0]
    assert len(winners) == 1, results
    assert len(losers) == RACERS - 1
    for code, output in results:
        if code != 0:
            assert code == 2 and "Traceback" not in output, output
            assert f"thread '{thread}' already holds a run" in output, output
    assert len(fake.calls_for("Plan")) == 1  # the losers made no LLM call
    graph = build_graph(open_checkpointer(db))
    values = graph.get_state(thread_config(thread)).values
    assert values["outcome"] is not None and len(values["step_results"]) == 2
    # Nothing interleaved: one request, one "run started", the winner's.
    assert values["request"] in winners[0] or values["request"].startswith("a photo gift number")
    history = thread_history(graph, thread)
    assert sum(entry.summary == "run started" for entry in history) == 1


def fake_script() -> FakeScript:
    # The plan is held a moment, so every racer starts while the winner is mid-run.
    return photo_gift_script(delays={"Plan": 1.0})


def test_sqlite_two_processes_on_one_thread_one_wins(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = fake_script()
    db = isolated_data_dir / "checkpoints.sqlite"
    with fake_openai_server(fake) as url:
        results = race(
            url, isolated_data_dir, small_catalog_file, "same", SHOPPING_CHECKPOINT_DB=str(db)
        )
    check_one_winner(results, fake, str(db), "same")


def test_postgres_two_processes_on_one_thread_one_wins(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    url_db = postgres_url("CHECKPOINT_URL")
    thread = f"race-{uuid.uuid4().hex[:8]}"
    fake = fake_script()
    with fake_openai_server(fake) as url:
        results = race(url, isolated_data_dir, small_catalog_file, thread, CHECKPOINT_URL=url_db)
    check_one_winner(results, fake, url_db, thread)


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "memory"])
def test_claim_is_exclusive_until_released(backend: str, tmp_path: Path) -> None:
    if backend == "memory":
        from langgraph.checkpoint.memory import MemorySaver

        saver: Any = MemorySaver()
    else:
        target = (
            str(tmp_path / "c.sqlite") if backend == "sqlite" else postgres_url("CHECKPOINT_URL")
        )
        saver = open_checkpointer(target)
    thread = f"claim-{uuid.uuid4().hex[:8]}-{time.time_ns()}"
    assert claim_thread(saver, thread) is True
    assert claim_thread(saver, thread) is False
    release_thread(saver, thread)
    assert claim_thread(saver, thread) is True
