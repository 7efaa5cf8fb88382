"""The compiled graph's shape: what talks to what, and what never does."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import get_args

import pytest
from fakes import GIFT_ANSWERS, GIFT_PLAN, FakeShoppingChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import MemorySaver
from langgraph.prebuilt import ToolNode

from graph.builder import build_graph
from graph.context import Context, ProviderName, SettingsError
from graph.providers.registry import PROVIDERS
from graph.state import OutputState, State


def edges() -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in build_graph().get_graph().edges}


def test_no_replan_edge_leads_back_to_the_planner() -> None:
    into_planner = {source for source, target in edges() if target == "planner"}
    assert into_planner == {"__start__"}


def test_executor_loops_on_itself_and_through_the_tool_node() -> None:
    assert {
        ("executor", "executor"),
        ("executor", "tools"),
        ("tools", "record_search"),
        ("record_search", "executor"),
        ("executor", "verify"),
        ("verify", "__end__"),
    } <= edges()


def test_plan_is_approved_before_any_step_runs() -> None:
    assert ("planner", "approval") in edges()
    assert not any(s == "planner" and t in {"executor", "tools"} for s, t in edges())


def test_tool_node_holds_search_products_and_the_planner_no_tools() -> None:
    graph = build_graph()
    tool_node = graph.nodes["tools"].bound
    assert isinstance(tool_node, ToolNode)
    assert set(tool_node.tools_by_name) == {"search_products"}
    # The planner is a plain function; the only tool-bearing node is "tools".
    tool_nodes = [name for name, node in graph.nodes.items() if isinstance(node.bound, ToolNode)]
    assert tool_nodes == ["tools"]


def test_graph_exports_without_a_checkpointer_for_studio() -> None:
    from graph.builder import graph

    assert graph.checkpointer is None
    assert graph.builder.context_schema is Context


# What a run gives back (#37): the plan, the answer at approval, the step results, the
# outcome and usage; not the messages or the nodes' bookkeeping.
OUTPUT_FIELDS = {
    "request",
    "follow_up_of",
    "stated_limits",
    "follow_up",
    "plan",
    "plan_warnings",
    "planner_usage",
    "planner_calls",
    "approval",
    "plan_edit",
    "edit_error",
    "revisions",
    "step_results",
    "outcome",
}


def test_the_schemas_studio_shows_describe_and_bound_their_fields() -> None:
    from graph.builder import graph

    given = graph.get_input_jsonschema()
    assert given["required"] == ["request"]
    assert set(given["properties"]) == {"request", "follow_up_of"}
    assert all(f.get("description") for f in given["properties"].values()), given
    form = graph.get_context_jsonschema()
    assert form is not None
    form = form["properties"]
    [choices] = [option for option in form["provider"]["anyOf"] if "enum" in option]
    assert choices["enum"] == list(PROVIDERS)
    assert (form["search_limit"]["minimum"], form["search_limit"]["maximum"]) == (1, 50)
    assert form["max_output_tokens"]["minimum"] == 1
    output = graph.get_output_jsonschema()["properties"]
    assert set(output) == OUTPUT_FIELDS
    # #42: 11 of the 13 had none (the --json document repeats these descriptions).
    assert all(field.get("description") for field in output.values()), output


# (what a run's context sends, words of the error): as the API server sends a context.
BAD_CONTEXTS = [
    ({"search_limit": 500}, "search_limit (--limit) must be a whole number between 1 and 50"),
    ({"search_limit": "ten"}, "search_limit (--limit) must be a whole number between 1 and 50"),
    ({"search_limit": True}, "got True"),
    ({"max_output_tokens": 0}, "max_output_tokens must be a whole number at least 1, got 0"),
    ({"tool_mode": "fast"}, "tool_mode must be 'direct' or 'llm', got 'fast'"),
]


@pytest.mark.parametrize(("sent", "said"), BAD_CONTEXTS)
def test_a_context_out_of_range_is_a_settings_error_naming_the_field_and_its_range(
    sent: dict[str, object], said: str
) -> None:
    """#42: over the API a bad context failed at run time as a bare ValueError (or a
    TypeError, or not at all for max_output_tokens 0)."""
    graph = build_graph(checkpointer=MemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    with pytest.raises(SettingsError) as refused:
        graph.invoke({"request": "a tent"}, config, context=sent)  # type: ignore[arg-type]
    assert said in str(refused.value)


def test_the_output_schema_names_state_fields_only() -> None:
    # A field of OutputState that State lacks would be a new, never-written channel.
    state = {f.name for f in dataclasses.fields(State)}
    output = {f.name for f in dataclasses.fields(OutputState)}
    assert output == OUTPUT_FIELDS and output <= state
    assert not output & {"messages", "dispatched", "reading", "planner_latency_s"}
    assert set(get_args(ProviderName)) == set(PROVIDERS)


def test_a_run_returns_the_output_schema_and_keeps_its_whole_state(
    small_catalog_file: Path,
) -> None:
    model = FakeShoppingChatModel(
        replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": list(GIFT_ANSWERS)}
    )
    graph = build_graph(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "out"}}
    context = Context(chat_model=model, catalog=str(small_catalog_file), auto_approve=True)
    returned = graph.invoke({"request": "a strap gift under $200"}, config, context=context)
    assert set(returned) <= OUTPUT_FIELDS and returned["outcome"].picks
    assert returned["approval"] == "approved" and returned["step_results"]
    assert graph.get_state(config).values["messages"]  # the thread keeps the rest


def test_a_refused_plan_edit_returns_to_approval_not_to_the_planner() -> None:
    # A person's edit that fails its checks is asked for again at approval; editing is
    # never a way back to the planner.
    assert ("approval", "approval") in edges()
    assert {target for source, target in edges() if source == "approval"} == {
        "approval",
        "executor",
        "revise",
        "__end__",
    }


def test_a_change_in_words_is_revised_between_approval_and_approval() -> None:
    # Issue 41: the plan changed in words is asked again before any step runs; nothing
    # that runs a step leads to the revise node, and it leads only back to approval.
    assert {source for source, target in edges() if target == "revise"} == {"approval"}
    assert {target for source, target in edges() if source == "revise"} == {"approval"}
