"""The same checkpointer tests against SQLite and PostgreSQL: approval, list, history, resume.

The ``postgres`` parameters run when ``CHECKPOINT_URL=postgresql://...`` is set (in a
schema of their own, dropped afterwards); without it they are skipped locally and
FAIL under ``CI=true``. Each "process" opens a fresh checkpointer, as a CLI run or a
server replica would; one test runs the two halves of a thread in two real processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from cli_runs import graph_run_process
from conftest import postgres_url
from fakes import STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel
from langgraph.types import Command

from graph.builder import build_graph
from graph.context import Context
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import list_threads, recent_thread_ids, thread_config, thread_history

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def pg_checkpoint_url() -> Iterator[str]:
    url = postgres_url("CHECKPOINT_URL")
    import psycopg

    schema = f"test_checkpoint_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    option = quote(f"-csearch_path={schema}", safe="")
    try:
        yield url + ("&" if "?" in url else "?") + f"options={option}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where checkpoints go: a SQLite file path or a postgresql:// URL."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_checkpoint_url")
    return str(tmp_path / "checkpoints.sqlite")


def model(answers: int = 1) -> FakeShoppingChatModel:
    return FakeShoppingChatModel(
        replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)] * answers}
    )


def process(store: str) -> tuple[Any, Any]:
    """A fresh "process": its own checkpointer connection and compiled graph."""
    saver = open_checkpointer(store)
    return saver, build_graph(checkpointer=saver)


def context(catalog: Path, chat_model: Any, **kwargs: Any) -> Context:
    # The reasoning call is where these runs fail and resume, so the pick step asks the
    # model even where code could answer it (graph/choosing/decided.py).
    return Context(chat_model=chat_model, catalog=str(catalog), code_decisions=False, **kwargs)


def test_open_checkpointer_selects_the_backend(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saver = open_checkpointer(store)
    expected = "PostgresSaver" if store.startswith("postgres") else "SqliteSaver"
    assert type(saver).__name__ == expected
    # The allowlist serializer is the one graph/runs/checkpoint.py configures for SQLite.
    assert getattr(saver.serde, "_allowed_msgpack_modules", None) == getattr(
        open_checkpointer(str(tmp_path / "x.sqlite")).serde, "_allowed_msgpack_modules", None
    )
    if store.startswith("postgres"):
        monkeypatch.setenv("CHECKPOINT_URL", store)
        assert type(open_checkpointer()).__name__ == "PostgresSaver"
        # An explicit path still wins over the environment.
        assert type(open_checkpointer(tmp_path / "y.sqlite")).__name__ == "SqliteSaver"


def test_approval_pause_list_history_and_resume_across_processes(
    store: str, small_catalog_file: Path
) -> None:
    thread = f"approve-{uuid.uuid4().hex[:8]}"
    config = thread_config(thread)
    saver, graph = process(store)
    ctx = context(small_catalog_file, model())
    paused = graph.invoke({"request": "a strap gift under $200"}, config, context=ctx)
    assert "__interrupt__" in paused
    [summary] = [s for s in list_threads(graph, saver, limit=50) if s.thread_id == thread]
    assert summary.status == "awaiting approval" and summary.steps_total == 2

    # Another process approves and finishes the run.
    saver2, graph2 = process(store)
    done = graph2.invoke(Command(resume={"approved": True}), config, context=ctx)
    assert [p.id for p in done["outcome"].picks] == ["strap-1"]
    [summary] = [s for s in list_threads(graph2, saver2, limit=50) if s.thread_id == thread]
    assert summary.status == "done" and summary.steps_done == 2

    history = thread_history(graph2, thread)
    text = " | ".join(entry.summary for entry in history)
    assert "paused for approval" in text and "plan approved" in text
    assert "step 1: " in text and "picked strap-1" in text
    assert [e.superstep for e in history] == sorted(e.superstep for e in history)


def test_rejection(store: str, small_catalog_file: Path) -> None:
    thread = f"reject-{uuid.uuid4().hex[:8]}"
    _, graph = process(store)
    ctx = context(small_catalog_file, model())
    graph.invoke({"request": "a strap gift under $200"}, thread_config(thread), context=ctx)
    saver, graph = process(store)
    state = graph.invoke(Command(resume="no"), thread_config(thread), context=ctx)
    assert state["approval"] == "rejected" and state.get("outcome") is None
    [summary] = [s for s in list_threads(graph, saver, limit=50) if s.thread_id == thread]
    assert summary.status == "rejected"


def test_failed_run_resumes_from_its_last_checkpoint(store: str, small_catalog_file: Path) -> None:
    thread = f"resume-{uuid.uuid4().hex[:8]}"
    config = thread_config(thread)
    _, graph = process(store)
    broken = model(answers=0)  # no reply left for the reasoning step: the run fails there
    with pytest.raises(AssertionError, match="no scripted reply"):
        graph.invoke(
            {"request": "a strap gift under $200"},
            config,
            context=context(small_catalog_file, broken, auto_approve=True),
        )
    saver, graph = process(store)
    [summary] = [s for s in list_threads(graph, saver, limit=50) if s.thread_id == thread]
    assert summary.status == "failed" and summary.steps_done == 1
    fixed = FakeShoppingChatModel(replies={"ReasoningAnswer": [dict(STRAP_PICK)]})
    state = graph.invoke(
        None, config, context=context(small_catalog_file, fixed, auto_approve=True)
    )
    assert [p.id for p in state["outcome"].picks] == ["strap-1"]
    assert fixed.tools_seen == [["ReasoningAnswer"]]  # the plan and search were not redone


def test_recent_thread_ids_newest_first(store: str, small_catalog_file: Path) -> None:
    saver, graph = process(store)
    made = []
    for _ in range(3):
        thread = f"order-{uuid.uuid4().hex[:8]}"
        ctx = context(small_catalog_file, model(), auto_approve=True)
        graph.invoke({"request": "a strap gift under $200"}, thread_config(thread), context=ctx)
        made.append(thread)
    assert recent_thread_ids(saver, limit=3) == made[::-1]
    # The fast path agrees with the generic one (which walks saver.list()).
    generic = type("Generic", (), {"list": saver.list})()
    assert recent_thread_ids(generic, limit=3) == made[::-1]


REPLICA_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
from fakes import FakeShoppingChatModel, STRAP_PICK, STRAP_PLAN
from langgraph.types import Command
from graph.builder import build_graph
from graph.runs.checkpoint import open_checkpointer
from graph.context import Context
from graph.runs.threads import thread_config
store, thread, catalog, step = sys.argv[1:5]
model = FakeShoppingChatModel(replies={{"Plan": [{plan}], "ReasoningAnswer": [{answer}]}})
graph = build_graph(checkpointer=open_checkpointer(store))
ctx = Context(chat_model=model, catalog=catalog, code_decisions=False)
payload = {{"request": "a strap gift under $200"}} if step == "start" else Command(resume=True)
state = graph.invoke(payload, thread_config(thread), context=ctx)
picks = [p.id for p in state["outcome"].picks] if state.get("outcome") else None
print(json.dumps({{"paused": "__interrupt__" in state, "picks": picks, "calls": model.tools_seen}}))
"""


def test_two_processes_continue_the_same_thread(
    store: str, small_catalog_file: Path, tmp_path: Path
) -> None:
    """Two "replicas": one plans and pauses for approval, the other resumes and finishes."""
    script = tmp_path / "replica.py"
    script.write_text(
        REPLICA_SCRIPT.format(
            tests=str(REPO_ROOT / "tests"), plan=repr(STRAP_PLAN), answer=repr(STRAP_PICK)
        )
    )
    thread = f"replicas-{uuid.uuid4().hex[:8]}"

    def replica(step: str) -> dict[str, Any]:
        run = subprocess.run(
            [sys.executable, str(script), store, thread, str(small_catalog_file), step],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    first = replica("start")
    assert first == {"paused": True, "picks": None, "calls": [["Plan"]]}
    second = replica("resume")
    assert second == {"paused": False, "picks": ["strap-1"], "calls": [["ReasoningAnswer"]]}


def test_cli_list_history_resume_on_the_backend(
    store: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """python -m graph.run --db STORE: approve on stdin, then --list and --history."""
    from fake_openai_server import FakeScript, fake_openai_server

    # CHECKPOINT_URL is out of the environment (conftest.BACKEND_URLS): --db is the store.
    def cli(url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return graph_run_process(
            url, isolated_data_dir, "--db", store, *args, stdin=stdin, timeout=120, COLUMNS="200"
        )

    replies: dict[str, list[Any]] = {
        "Plan": [dict(STRAP_PLAN)],
        "ReasoningAnswer": [dict(STRAP_PICK)],
    }
    with fake_openai_server(FakeScript(replies=replies)) as url:
        # No terminal to ask: the run plans, pauses for approval and is saved.
        paused = cli(url, "a strap gift under $200", "--catalog", str(small_catalog_file))
        assert "--resume" in paused.stdout, paused.stdout + paused.stderr[-3000:]
        saver, _ = process(store)
        thread = recent_thread_ids(saver, limit=1)[0]
        listing = cli(url, "--list")
        assert listing.returncode == 0, listing.stderr[-3000:]
        assert "awaiting approval" in listing.stdout and "a strap gift under $200" in listing.stdout
        # A later invocation (another process) approves and finishes it.
        resumed = cli(url, "--resume", thread, "--yes")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr[-3000:]
        assert "strap-1" in resumed.stdout
    history = cli("http://127.0.0.1:9", "--history", thread)
    assert history.returncode == 0, history.stderr[-3000:]
    assert "approved" in history.stdout
    assert "done" in cli("http://127.0.0.1:9", "--list").stdout
    again = cli("http://127.0.0.1:9", "--resume", thread)
    assert again.returncode != 0 and "already done" in again.stdout
