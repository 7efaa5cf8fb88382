"""The compiled graph's shape: what talks to what, and what never does."""

from __future__ import annotations

from langgraph.prebuilt import ToolNode

from graph.builder import build_graph
from graph.context import Context


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


def test_a_refused_plan_edit_returns_to_approval_not_to_the_planner() -> None:
    # A person's edit that fails its checks is asked for again at approval; editing is
    # never a way back to the planner.
    assert ("approval", "approval") in edges()
    assert {target for source, target in edges() if source == "approval"} == {
        "approval",
        "executor",
        "__end__",
    }
