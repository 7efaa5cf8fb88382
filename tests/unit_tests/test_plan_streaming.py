"""The plan is shown as the planner writes it: the session streams the planner's call when
its observer asks, over real HTTP (the fake OpenAI-compatible server streams SSE)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeScript, fake_openai_server
from fakes import GIFT_ANSWERS, GIFT_PLAN
from langchain_core.messages import AIMessageChunk
from langgraph.checkpoint.memory import MemorySaver

from graph.builder import build_graph
from graph.runs import session
from graph.runs.draft import PlanDraft


def chunk(args: str, message_id: str = "m1") -> AIMessageChunk:
    return AIMessageChunk(
        content="", id=message_id, tool_call_chunks=[{"name": None, "args": args, "index": 0}]
    )


def test_a_draft_completes_the_goal_then_each_step_once_its_object_closes() -> None:
    draft = PlanDraft()
    assert not draft.feed(chunk('{"shopping": true, "goal": "A tent'))
    assert draft.goal is None  # still being written
    assert draft.feed(chunk(' for two", "budget": 200, "steps": [{"step": 1, "action": "Find'))
    assert draft.goal == "A tent for two" and draft.steps == []
    assert not draft.feed(chunk(' tents", "query": "tent"'))
    assert draft.steps == []  # step 1 may still get more fields
    assert draft.feed(chunk("}"))
    assert [s["action"] for s in draft.steps] == ["Find tents"]
    assert not draft.feed(chunk(', {"step": 2, "action": "Pick"'))
    assert not draft.feed(chunk(', "max_price": 200'))  # a field after the query: still open
    assert draft.feed(chunk(" }"))
    assert not draft.feed(chunk("]}"))  # the plan closed: its steps were all shown already
    assert [s["action"] for s in draft.steps] == ["Find tents", "Pick"]
    # A provider that sends the last step's end with the plan's still shows that step.
    draft = PlanDraft()
    draft.feed(chunk('{"goal": "G", "steps": [{"step": 1, "action": "A", "query": "a"'))
    assert draft.feed(chunk("}]}")) and [s["action"] for s in draft.steps] == ["A"]
    # A retried planner call is a new message: its draft starts afresh.
    assert draft.feed(chunk('{"goal": "Again", "steps": [', message_id="m2"))
    assert draft.goal == "Again" and draft.steps == []


class Recorder:
    """A session observer that keeps every draft and when it came."""

    wants_plan_draft = True

    def __init__(self) -> None:
        self.drafts: list[tuple[float, str | None, list[str]]] = []
        self.plan_done_at: float | None = None

    def plan_drafted(self, draft: PlanDraft) -> None:
        actions = [str(step.get("action")) for step in draft.steps]
        self.drafts.append((time.monotonic(), draft.goal, actions))

    def stream_started(self, values: dict[str, Any]) -> None:
        pass

    def node_finished(self, node: str, change: dict[str, Any]) -> None:
        if node == "planner":
            self.plan_done_at = time.monotonic()

    def stream_stopped(self) -> None:
        pass


def test_the_session_streams_the_plan_to_its_observer_and_keeps_the_usage(
    small_catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    script = FakeScript(
        replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )
    with fake_openai_server(script) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        graph = build_graph(checkpointer=MemorySaver())
        context = session.run_context(
            {"provider": "compatible", "catalog": str(small_catalog_file)}
        )
        recorder = Recorder()
        result = session.start(
            graph, "a strap gift under $200", context, session.approve_all, observer=recorder
        )
    assert result.status == "done"
    [plan_call] = script.calls_for("Plan")
    assert plan_call["stream"] is True
    # Every step reached the observer, in order, before the planner finished.
    plan_steps = [step["action"] for step in GIFT_PLAN["steps"]]
    assert recorder.drafts[0][1] == GIFT_PLAN["goal"]
    assert recorder.drafts[-1][2] == plan_steps  # each shown as soon as it closed
    assert recorder.plan_done_at is not None
    assert all(at <= recorder.plan_done_at for at, _, _ in recorder.drafts)
    # The streamed answer still reports the planner's tokens (the usage chunk).
    usage = result.values["planner_usage"]
    assert usage.input_tokens > 0 and usage.output_tokens == 25
    # Only the plan is shown as it is written: the reasoning steps' calls are plain (a
    # server that cannot stream still answers them, #24), and their usage is kept.
    assert script.calls_for("ReasoningAnswer")
    assert not any(call.get("stream") for call in script.calls_for("ReasoningAnswer"))
    reasoned = [r for r in result.values["step_results"] if r.kind == "reasoning"]
    assert reasoned and all(r.usage.output_tokens == 25 for r in reasoned)


def test_without_an_observer_that_asks_nothing_streams(
    small_catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    script = FakeScript(
        replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )
    with fake_openai_server(script) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        graph = build_graph(checkpointer=MemorySaver())
        context = session.run_context(
            {"provider": "compatible", "catalog": str(small_catalog_file)}
        )
        session.start(graph, "a strap gift under $200", context, session.approve_all)
    assert all(not call.get("stream") for call in script.requests)
