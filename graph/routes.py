"""The graph's routing: where each node's run goes next. There is no replan edge: no route
leads back to the planner, whatever a step found.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage

from graph.state import State


def route_after_planner(state: State) -> str:
    """A request that asks for no product goes straight to verify: nothing is approved,
    searched or recommended. Never back to the planner: there is no replan edge."""
    assert state.plan is not None
    return "verify" if state.plan.not_shopping else "approval"


def route_after_approval(state: State) -> str:
    if state.revising is not None:  # a change asked in words: revised, then asked again
        return "revise"
    if state.approval is None:  # an edit was refused: ask again, with the reason
        return "approval"
    return "executor" if state.approval == "approved" else "__end__"


def route_after_executor(state: State) -> str:
    last = state.messages[-1] if state.messages else None
    if isinstance(last, AIMessage) and last.tool_calls:
        return "tools"
    return route_next_step(state)


def route_next_step(state: State) -> str:
    assert state.run_plan is not None
    return "executor" if state.next_step < len(state.run_plan.steps) else "verify"
