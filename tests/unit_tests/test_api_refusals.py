"""The graph as the API server runs it (a compiled graph with a checkpointer, no session
layer): bad input is refused as the CLI refuses it, the thread stays readable, and an
approval written by a state update is recorded as such."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel
from langgraph.checkpoint.memory import MemorySaver
from langgraph.types import Command

from graph.builder import build_graph
from graph.context import Context
from graph.runs.threads import status_of, thread_config, thread_history
from graph.schemas import RequestError


def graph_and_context(catalog: Path) -> tuple[Any, Context]:
    model = FakeShoppingChatModel(
        replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]}
    )
    return build_graph(checkpointer=MemorySaver()), Context(
        chat_model=model, catalog=str(catalog), code_decisions=False
    )


EMPTY = "the request is empty: say what you want to buy"


@pytest.mark.parametrize(
    ("run_input", "refusal"),
    [
        ({}, EMPTY),
        ({"request": ""}, EMPTY),
        ({"follow_up_of": "x"}, EMPTY),
        ({"request": 5}, "the request must be text, got int"),
    ],
)
def test_a_run_without_a_request_is_refused_and_its_thread_stays_readable(
    run_input: dict[str, Any], refusal: str, small_catalog_file: Path
) -> None:
    """Input `{}` failed with State's raw TypeError, and every read of the thread after it
    (the API's thread state) raised the same TypeError: HTTP 500 for good."""
    graph, context = graph_and_context(small_catalog_file)
    config = thread_config("empty")
    with pytest.raises(RequestError, match=refusal):
        graph.invoke(run_input, config, context=context)
    snapshot = graph.get_state(config)
    assert snapshot.next == ("planner",)
    assert [str(task.error) for task in snapshot.tasks] == [f"RequestError({refusal!r})"]
    assert status_of(snapshot) == "failed"
    assert context.chat_model is not None and context.chat_model.prompts == []  # no call


def test_an_approval_written_by_a_state_update_is_recorded_as_such(
    small_catalog_file: Path,
) -> None:
    """`update_state(..., as_node="approval")` with `approval: approved` runs the plan with
    no answer to the approval question: the history says so, beside the answered kind."""
    graph, context = graph_and_context(small_catalog_file)
    updated, answered = thread_config("updated"), thread_config("answered")
    for config in (updated, answered):
        graph.invoke({"request": "a strap gift under $200"}, config, context=context)
        context.chat_model.replies["Plan"] = [dict(STRAP_PLAN)]  # type: ignore[union-attr]
    graph.update_state(updated, {"approval": "approved"}, as_node="approval")
    graph.invoke(None, updated, context=context)
    assert graph.get_state(updated).values["outcome"].picks  # the plan ran

    def approvals(config: dict[str, Any]) -> list[str]:
        history = thread_history(graph, config["configurable"]["thread_id"])
        return [entry.summary for entry in history if entry.summary.startswith("plan approved")]

    assert approvals(updated) == [
        "plan approved by a state update, not by an answer to the approval question"
    ]
    context.chat_model.replies["ReasoningAnswer"] = [dict(STRAP_PICK)]  # type: ignore[union-attr]
    graph.invoke(Command(resume={"approved": True}), answered, context=context)
    assert approvals(answered) == ["plan approved"]


def test_a_password_pasted_into_an_api_request_is_not_sent_or_read(
    small_catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI masks a configured key or password where the request enters its session,
    the API server in its HTTP app (test_studio.py); a request given to the graph itself
    enters as sent: the planner masks it before the model sees it or the run's reading
    (its missing items included) is stored."""
    password = "pa55-w0rd-XYZ987"
    monkeypatch.setenv("PGPASSWORD", password)
    graph, context = graph_and_context(small_catalog_file)
    config = thread_config("pasted")
    graph.invoke({"request": f"a strap gift under $200 and {password}"}, config, context=context)
    assert context.chat_model is not None and "***" in context.chat_model.all_prompt_text()
    assert password not in context.chat_model.all_prompt_text()
    values = graph.get_state(config).values
    assert password not in str({**values, "request": None})  # as sent, kept only there
