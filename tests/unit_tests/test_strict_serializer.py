"""Checkpointed state survives LangGraph's strict serializer (LANGGRAPH_STRICT_MSGPACK=true),
which will become the default: a run pauses for approval, is read back and resumed, with
a plain MemorySaver (as in Studio or a library user's code) and with the CLI's SQLite
store. LangGraph reads the variable once at import, so each check runs in a fresh process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import logging, sys
from pathlib import Path
from langgraph.checkpoint.serde import _msgpack
assert _msgpack.STRICT_MSGPACK_ENABLED, "LANGGRAPH_STRICT_MSGPACK was not honoured"
messages = []
class Collect(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
logging.getLogger().addHandler(Collect())
logging.getLogger().setLevel(logging.WARNING)

from fakes import GIFT_ANSWERS, GIFT_PLAN, FakeShoppingChatModel
from graph.runs import session
from graph.builder import build_graph
from graph.context import Context
from graph.schemas import Outcome, StepResult
from graph.schemas import Plan

def saver():
    if sys.argv[1] == "memory":
        from langgraph.checkpoint.memory import MemorySaver
        return MemorySaver()
    from graph.runs.checkpoint import open_sqlite_checkpointer
    return open_sqlite_checkpointer(Path(sys.argv[2]))

store = saver()
model = FakeShoppingChatModel(
    replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
)
context = Context(chat_model=model, catalog=sys.argv[3])
paused = session.start(build_graph(store), "a strap gift under $200", context, lambda r: None,
                       thread_id="strict")
assert paused.status == "paused", paused.status
# A second graph over the same store reads the paused run back and resumes it.
graph = build_graph(store)
assert isinstance(graph.get_state({"configurable": {"thread_id": "strict"}}).values["plan"], Plan)
done = session.drive(graph, "strict", None, context, session.approve_all)
assert done.status == "done", done.status
values = graph.get_state({"configurable": {"thread_id": "strict"}}).values
assert isinstance(values["plan"], Plan) and isinstance(values["outcome"], Outcome)
assert all(isinstance(r, StepResult) for r in values["step_results"])
assert [r.step for r in values["step_results"]] == [1, 2, 3, 4]
assert values["outcome"].picks[0].id == "strap-1"
# Studio's graph is compiled without a saver; the server lends it one per run, and the
# allowlist LangGraph derived from State at compile time applies to that saver.
from langgraph.checkpoint.memory import MemorySaver
from langgraph.types import Command
from graph.builder import graph as studio
lent = {"configurable": {"thread_id": "studio", "__pregel_checkpointer": MemorySaver()}}
studio.invoke({"request": "a strap gift under $200"}, lent, context=Context(
    chat_model=FakeShoppingChatModel(replies={
        "Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}),
    catalog=sys.argv[3]))
assert isinstance(studio.get_state(lent).values["plan"], Plan)
bad = [m for m in messages if "unregistered" in m or "blocked" in m.lower()]
assert not bad, bad

# `langgraph dev` lends its saver through Pregel.copy, which drops that allowlist, so
# there our types load back as dicts of their fields: the nodes still get models.
copied = studio.copy(update={"checkpointer": MemorySaver()})
config = {"configurable": {"thread_id": "copied"}}
copied.invoke({"request": "a strap gift under $200"}, config, context=Context(
    chat_model=FakeShoppingChatModel(replies={
        "Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}),
    catalog=sys.argv[3]))
final = copied.invoke(Command(resume=True), config, context=Context(
    chat_model=FakeShoppingChatModel(replies={
        "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}),
    catalog=sys.argv[3]))
assert any("Blocked deserialization" in m for m in messages), "the copy kept the allowlist"
assert final["outcome"].picks[0].id == "strap-1"
assert [r.step for r in final["step_results"]] == [1, 2, 3, 4]
print("ok")
"""


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_paused_run_resumes_under_the_strict_serializer(
    store: str, small_catalog_file: Path, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "LANGGRAPH_STRICT_MSGPACK": "true",
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")]),
    }
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, store, str(tmp_path / "c.sqlite"), str(small_catalog_file)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith("ok")


DEFAULT_MODE_SCRIPT = """
import logging, sys
messages = []
class Collect(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
logging.getLogger().addHandler(Collect())
logging.getLogger().setLevel(logging.WARNING)
from langgraph.checkpoint.memory import MemorySaver
from fakes import GIFT_ANSWERS, GIFT_PLAN, FakeShoppingChatModel
from graph.builder import build_graph
from graph.context import Context
from graph.schemas import Plan
graph = build_graph(MemorySaver())
model = FakeShoppingChatModel(
    replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
)
config = {"configurable": {"thread_id": "t"}}
graph.invoke({"request": "a strap gift under $200"}, config,
             context=Context(chat_model=model, catalog=sys.argv[1], auto_approve=True))
assert isinstance(graph.get_state(config).values["plan"], Plan)
unregistered = [m for m in messages if "unregistered" in m]
assert not unregistered, unregistered[:2]
print("ok")
"""


def test_a_plain_memory_saver_in_the_default_mode_warns_about_no_type(
    small_catalog_file: Path,
) -> None:
    """Today's default (not strict) warns "Deserializing unregistered type ..." for every
    type a saver's serializer was not told about; build_graph tells a plain MemorySaver."""
    env = {
        **os.environ,
        "LANGGRAPH_STRICT_MSGPACK": "false",
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests")]),
    }
    run = subprocess.run(
        [sys.executable, "-c", DEFAULT_MODE_SCRIPT, str(small_catalog_file)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith("ok")
