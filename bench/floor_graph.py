"""The load bench's floor: a stand-in for the shopping graph with its shape and its model
calls, and none of its own work (`python bench/load.py --graph floor`, issue 37).

START -> planner -> approval -> executor <-> (tools -> record_search) -> verify -> END,
as graph/builder.py wires it, so a run makes the same supersteps and checkpoints. Each
node that asks the model asks it as the real one does (langchain-openai, one forced tool
call, the same "Step N: ACTION" line), so the fake answers it and counts it; tools is a
LangGraph ToolNode whose tool returns a fixed line. Nothing reads a request, searches a
catalog, chooses or checks: what such a run costs between its model calls is what the
runtime, LangGraph and the model client cost, whatever a graph does.
"""

from __future__ import annotations

import operator
import os
from functools import cache
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt


class State(TypedDict, total=False):
    request: str
    plan: dict[str, Any]
    approved: bool
    messages: Annotated[list[AnyMessage], add_messages]
    step_results: Annotated[list[dict[str, Any]], operator.add]
    outcome: dict[str, Any]


@tool
def search_products(query: str, max_price: float | None = None) -> str:
    """Search the catalog (a stand-in: it finds nothing)."""
    return f"no products for {query!r}"


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


@cache
def _model() -> ChatOpenAI:
    return ChatOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="floor",  # type: ignore[arg-type]  # the fake checks no key
        model=os.environ.get("OPENAI_MODEL", "floor"),
        max_retries=0,
    )


def _ask(tool_name: str, text: str) -> AIMessage:
    bound = _model().bind_tools([_tool(tool_name)], tool_choice=tool_name)
    answer: AIMessage = bound.invoke([HumanMessage(text)])
    return answer


def planner(state: State) -> dict[str, Any]:
    return {"plan": _ask("Plan", f"Shopping request:\n{state['request']}").tool_calls[0]["args"]}


def approval(state: State) -> dict[str, Any]:
    answer = interrupt({"plan": state["plan"]})
    return {"approved": bool(answer.get("approved"))}


def executor(state: State) -> dict[str, Any]:
    step = state["plan"]["steps"][len(state.get("step_results", []))]
    line = f"Step {step['step']}: {step['action']}"
    if step["query"]:
        call = _ask("search_products", line).tool_calls[0]
        message = AIMessage("", tool_calls=[{**call, "name": "search_products"}])
        return {"messages": [message]}
    answer = _ask("ReasoningAnswer", line).tool_calls[0]["args"]
    return {"step_results": [{"step": step["step"], "answer": answer.get("answer")}]}


def record_search(state: State) -> dict[str, Any]:
    return {"step_results": [{"step": len(state.get("step_results", [])) + 1}]}


def verify(state: State) -> dict[str, Any]:
    return {"outcome": {"picks": []}}


def _next(state: State) -> str:
    done = len(state.get("step_results", []))
    return "executor" if done < len(state["plan"]["steps"]) else "verify"


def _after_executor(state: State) -> str:
    # A search step's executor leaves the model's tool call last; a reasoning step's
    # adds no message, so the last is the previous search's tool answer.
    last = state.get("messages", [])[-1:]
    return "tools" if last and isinstance(last[0], AIMessage) else _next(state)


builder = StateGraph(State)
builder.add_node("planner", planner)
builder.add_node("approval", approval)
builder.add_node("executor", executor)
builder.add_node("tools", ToolNode([search_products]))
builder.add_node("record_search", record_search)
builder.add_node("verify", verify)
builder.add_edge(START, "planner")
builder.add_edge("planner", "approval")
builder.add_conditional_edges(
    "approval", lambda s: "executor" if s.get("approved") else END, ["executor", END]
)
builder.add_conditional_edges("executor", _after_executor, ["tools", "executor", "verify"])
builder.add_edge("tools", "record_search")
builder.add_conditional_edges("record_search", _next, ["executor", "verify"])
builder.add_edge("verify", END)
graph = builder.compile(name="floor")


def main(argv: list[str] | None = None) -> int:
    """`python bench/floor_graph.py REQUEST --thread T [--yes] --json` (or `--resume T
    --yes --json`): one run of the stand-in as the CLI runs one, a process a run, each
    checkpoint written on CHECKPOINT_URL before the next step (durability "sync", as the
    CLI streams); prints the run's status, step results and outcome as JSON."""
    import argparse
    import json

    from langgraph.types import Command

    from graph.runs.checkpoint import open_checkpointer

    parser = argparse.ArgumentParser(prog="python bench/floor_graph.py")
    parser.add_argument("request", nargs="?")
    parser.add_argument("--thread")
    parser.add_argument("--resume")
    parser.add_argument("--yes", action="store_true")
    parser.add_argument("--json", action="store_true")  # the CLI's flags; JSON is all it prints
    parser.add_argument("--tool-mode")
    args = parser.parse_args(argv)
    runnable = builder.compile(checkpointer=open_checkpointer(None))
    _model()  # as the CLI builds its model before the run starts
    config: Any = {"configurable": {"thread_id": args.resume or args.thread}}
    approve = Command(resume={"approved": True})
    todo: Any = approve if args.resume else {"request": args.request}
    while True:
        for _ in runnable.stream(todo, config, durability="sync"):
            pass
        state = runnable.get_state(config)
        if not (state.next == ("approval",) and args.yes and todo is not approve):
            break
        todo = approve
    status = "awaiting approval" if state.next else "done"
    values = {key: state.values.get(key) for key in ("step_results", "outcome")}
    print(json.dumps({"status": status, **values}))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
