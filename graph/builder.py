"""Wires the planner-executor graph. No replan edge exists: nothing leads back to the planner.

START -> planner -> approval -> executor <-> (tools -> record_search) -> verify -> END
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from graph.context import Context
from graph.nodes import (
    approval,
    executor,
    planner,
    record_search,
    route_after_approval,
    route_after_executor,
    route_next_step,
    verify,
)
from graph.providers import llm_retry_policy
from graph.state import STATE_TYPES, InputState, State
from graph.tools import TOOLS, tool_error_message

LLM_RETRY = llm_retry_policy()


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    builder = StateGraph(State, context_schema=Context, input_schema=InputState)
    builder.add_node("planner", planner, retry_policy=LLM_RETRY)
    builder.add_node("approval", approval)
    builder.add_node("executor", executor, retry_policy=LLM_RETRY)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=tool_error_message))
    builder.add_node("record_search", record_search)
    builder.add_node("verify", verify)

    builder.add_edge(START, "planner")
    builder.add_edge("planner", "approval")
    builder.add_conditional_edges("approval", route_after_approval, ["executor", END])
    builder.add_conditional_edges("executor", route_after_executor, ["tools", "executor", "verify"])
    builder.add_edge("tools", "record_search")
    builder.add_conditional_edges("record_search", route_next_step, ["executor", "verify"])
    builder.add_edge("verify", END)
    if checkpointer is not None:
        # Our types are allowed explicitly wherever the saver's serializer keeps a list.
        checkpointer = checkpointer.with_allowlist(STATE_TYPES)
    return builder.compile(checkpointer=checkpointer, name="shopping-planner")


# For `langgraph dev` / Studio: no compiled-in checkpointer, the server brings its own.
graph = build_graph()
