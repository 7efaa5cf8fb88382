"""The finished run a follow-up follows, read from its saved values (issue 26): whether it
is finished, and what the planner and the carry-over see of it (graph/previous_run.py).

The session reads the parent through the checkpointer before any model starts; the
planner node reads it again for callers that bypass the session (Studio, the API), from
the checkpointer the graph runs with. Either way, the parent's checkpoints are only read.
No LLM call happens here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config

# The one read of another thread's checkpoint: langgraph.constants still exports the key
# under which a node finds its graph's checkpointer (kept public for langgraph-api).
from langgraph.constants import CONFIG_KEY_CHECKPOINTER

from graph.schemas import PreviousPick, PreviousRun, RequestError
from graph.state import state_of


class FollowUpRefused(RequestError):
    """A follow-up on a run that is unknown or not finished: refused before any LLM call."""


def run_end(values: Mapping[str, Any]) -> Literal["done", "rejected"] | None:
    """How a run's saved values ended: "rejected" (its plan was), "done" (it holds a
    checked outcome), or None (not ended). The one definition of a finished run: the
    session's result, its thread statuses and both parent checks read it."""
    if values.get("approval") == "rejected":
        return "rejected"
    return "done" if values.get("outcome") is not None else None


def previous_run_of(thread_id: str, values: Mapping[str, Any]) -> PreviousRun:
    """What a follow-up sees of the finished run `thread_id` whose saved values these are;
    a revision, of a run paused at approval (nothing recommended yet)."""
    state = state_of(values)
    plan, outcome, stated = state.run_plan, state.outcome, state.stated_limits
    # Planned: in this version's shape it holds these, however old it is.
    assert state.reading is not None and stated is not None
    picks, items = (outcome.picks, outcome.items) if outcome else ([], {})
    searches = plan.search_steps if plan else []
    return PreviousRun(
        thread_id=thread_id,
        request=state.reading.text,
        goal=plan.goal if plan else "",
        queries=tuple(s.query for s in searches if s.query),
        categories=tuple(dict.fromkeys(s.category for s in searches if s.category)),
        picks=tuple(
            PreviousPick(
                id=p.id, title=p.title, price=p.price, item=items[p.id], category=p.category
            )
            for p in picks
        ),
        budget=outcome.budget
        if outcome and outcome.budget is not None
        else (plan.budget if plan else None),
        limits=stated,
    )


def parent_in_graph(thread_id: str) -> PreviousRun:
    """The finished run `thread_id`, read from the checkpointer of the graph this node
    runs in (Studio's server, the session's database); FollowUpRefused if it is unknown
    or not finished. Must be called from inside a node."""
    saver = get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER)
    if not isinstance(saver, BaseCheckpointSaver):
        raise FollowUpRefused("a follow-up needs a graph with a checkpointer to read its run from")
    saved = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    values = dict(saved.checkpoint["channel_values"]) if saved is not None else {}
    if not values:
        raise FollowUpRefused(f"no run with thread id {thread_id!r} to follow up")
    ended = run_end(values)
    if ended != "done":
        reason = "its plan was rejected" if ended == "rejected" else "it has not finished"
        raise FollowUpRefused(
            f"thread {thread_id!r} cannot be followed up: {reason}; a follow-up continues a "
            "finished run"
        )
    return previous_run_of(thread_id, values)
