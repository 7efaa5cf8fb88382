"""Two or more CLI processes starting the same --thread at once: exactly one wins, every
other gets one clear error, and the thread holds the winner's run alone. On SQLite and,
when CHECKPOINT_URL is set (CI), on PostgreSQL."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from cli_runs import REPO_ROOT, start_graph_run
from conftest import postgres_url
from fake_openai_server import FakeScript, fake_openai_server
from fakes import photo_gift_script

from graph.builder import build_graph
from graph.runs import checkpoint
from graph.runs.checkpoint import (
    claim_thread,
    open_checkpointer,
    release_thread,
    thread_is_held,
)
from graph.runs.threads import thread_config, thread_history

RACERS = 4


def race(url: str, data_dir: Path, catalog: Path, thread: str, **env: str) -> list[Any]:
    processes = [
        start_graph_run(
            url,
            data_dir,
            f"a strap gift number {n}",
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
    assert values["request"] in winners[0] or values["request"].startswith("a strap gift number")
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
    assert thread_is_held(saver, thread) is False
    assert claim_thread(saver, thread) is True
    assert thread_is_held(saver, thread) is True
    assert thread_is_held(saver, f"{thread}-other") is False  # one thread, one lease
    assert claim_thread(saver, thread) is False
    release_thread(saver, thread)
    assert thread_is_held(saver, thread) is False
    assert claim_thread(saver, thread) is True
    assert thread_is_held(saver, thread) is True  # looking never took nor dropped it


def claimed_by_another_process(db: Path, thread: str) -> bool:
    """Whether a fresh process, with its own connection to `db`, wins the lease of `thread`."""
    code = (
        "import sys; from graph.runs.checkpoint import claim_thread, open_checkpointer; "
        "print(claim_thread(open_checkpointer(sys.argv[1]), sys.argv[2]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(db), thread],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() in ("True", "False"), done
    return done.stdout.strip() == "True"


def test_a_sqlite_lease_cannot_be_lost_from_under_its_holder(tmp_path: Path) -> None:
    """#39: with the folder of the old lock files (if any) deleted while a thread is held,
    and the holder's SQLite connections closed and opened again, another process is still
    refused; once the lease is given back, it wins."""
    db = tmp_path / "c.sqlite"
    saver = open_checkpointer(str(db))
    thread = f"held-{uuid.uuid4().hex[:8]}"
    assert claim_thread(saver, thread) is True
    shutil.rmtree(db.with_name(f".{db.name}.leases"), ignore_errors=True)
    assert claimed_by_another_process(db, thread) is False
    # SQLite closing its own descriptors of the file (which drops a process's classic
    # POSIX locks on it) leaves the lease alone.
    open_checkpointer(str(db)).conn.close()
    saver.conn.close()
    assert claimed_by_another_process(db, thread) is False
    assert claimed_by_another_process(db, f"{thread}-other") is True  # one thread, one lock
    release_thread(saver, thread)
    assert claimed_by_another_process(db, thread) is True


def test_without_ofd_locks_a_lease_falls_back_to_a_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where fcntl has no F_OFD_SETLK (macOS), a lease is an flock in lease_dir: still
    exclusive until released."""
    monkeypatch.setattr(checkpoint, "_OFD_LOCKS", False)
    db = tmp_path / "c.sqlite"
    saver = open_checkpointer(str(db))
    assert thread_is_held(saver, "t") is False
    assert claim_thread(saver, "t") is True
    assert any(checkpoint.lease_dir(db).iterdir())
    assert thread_is_held(saver, "t") is True
    assert claim_thread(saver, "t") is False
    release_thread(saver, "t")
    assert thread_is_held(saver, "t") is False
    assert claim_thread(saver, "t") is True
    release_thread(saver, "t")


def test_runs_reach_the_checkpointer_through_its_public_api_only() -> None:
    """#42: graph/runs called PostgresSaver's private `_cursor()`, which a minor release
    may change; no module there reads another object's private attribute."""
    private = [
        f"{path.name}:{node.lineno} {ast.unparse(node)}"
        for path in sorted((REPO_ROOT / "graph" / "runs").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]
    assert private == []
