"""Wires the planner-executor graph. No replan edge exists: nothing leads back to the planner.

START -> planner -> approval -> executor <-> (tools -> record_search) -> verify -> END
(planner -> verify when the request asks for no product: nothing runs)
A person's edit that fails its checks brings the run back to approval, never the planner;
a change asked in words goes approval -> revise -> approval, before anything has run.
"""

from __future__ import annotations

import copy

from langgraph.checkpoint.base import BaseCheckpointSaver, maybe_add_typed_methods
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from graph.api_log import log_refusals_in_one_line
from graph.context import Context, traced_as
from graph.nodes import approval, executor, planner, record_search, revise, verify
from graph.providers.retry import llm_retry_policy
from graph.routes import (
    route_after_approval,
    route_after_executor,
    route_after_planner,
    route_next_step,
)
from graph.state import STATE_TYPES, InputState, OutputState, State
from graph.tools import TOOLS, tool_error_message

LLM_RETRY = llm_retry_policy()


def with_state_types(checkpointer: BaseCheckpointSaver) -> BaseCheckpointSaver:
    """The saver with our state types allowed explicitly, so its serializer neither warns
    about them nor will block them. LangGraph's own JSON-plus serializer is rebuilt listing
    ours (with_allowlist leaves one that allows anything, as a plain MemorySaver's does, as
    it is: it warns on each unregistered type); any other gets ours added by with_allowlist."""
    if type(checkpointer.serde) is not JsonPlusSerializer:
        return checkpointer.with_allowlist(STATE_TYPES)
    clone = copy.copy(checkpointer)
    clone.serde = maybe_add_typed_methods(JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES))
    return clone


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph[State, Context, InputState, OutputState]:
    builder = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("planner", planner, retry_policy=LLM_RETRY)
    builder.add_node("approval", approval)
    builder.add_node("revise", revise, retry_policy=LLM_RETRY)
    builder.add_node("executor", executor, retry_policy=LLM_RETRY)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=tool_error_message))
    builder.add_node("record_search", record_search)
    builder.add_node("verify", verify)

    builder.add_edge(START, "planner")
    builder.add_conditional_edges("planner", route_after_planner, ["approval", "verify"])
    builder.add_conditional_edges(
        "approval", route_after_approval, ["executor", "approval", "revise", END]
    )
    builder.add_edge("revise", "approval")
    builder.add_conditional_edges("executor", route_after_executor, ["tools", "executor", "verify"])
    builder.add_edge("tools", "record_search")
    builder.add_conditional_edges("record_search", route_next_step, ["executor", "verify"])
    builder.add_edge("verify", END)
    if checkpointer is not None:
        checkpointer = with_state_types(checkpointer)
    return builder.compile(checkpointer=checkpointer, name="shopping-planner")


# For `langgraph dev` / Studio: no compiled-in checkpointer, the server brings its own.
graph = build_graph()
log_refusals_in_one_line()
# Its runs' tags and name: set on the graph itself, since with_config() copies it, and a
# copy loses the serializer allowlist compiling derived (test_strict_serializer.py).
graph.config = traced_as("api")
