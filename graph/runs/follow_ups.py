"""Follow-ups on a finished run (issue 26), read back: a chain of follow-ups for `--list`
and `--history`.

A follow-up is a new run on a new thread whose input names the thread it follows
(`follow_up_of`); the parent's checkpoints are only read (docs/follow-ups.md says why).
It starts and runs through the session like any run (session.start and run_thread with
`follow_up_of`), which refuses an unknown or unfinished parent before any model starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog import money
from graph.runs.threads import (
    ShoppingGraph,
    ThreadSummary,
    UnreadableThread,
    read_state,
    status_of,
)
from graph.schemas import FOLLOW_UP_OF
from graph.state import plan_that_runs

# How long a chain --history follows (a loop in stored links, which no session writes,
# cannot make it run forever).
MAX_CHAIN = 50


def in_chain_order(threads: list[ThreadSummary]) -> list[tuple[int, ThreadSummary]]:
    """The runs listed, each follow-up under the run it follows (indented by its depth
    in the chain); a follow-up whose parent is not listed stays in its own place."""
    listed = {t.thread_id for t in threads}
    children: dict[str, list[ThreadSummary]] = {}
    for thread in threads:
        if thread.follow_up_of in listed and thread.follow_up_of != thread.thread_id:
            children.setdefault(thread.follow_up_of, []).append(thread)
    ordered: list[tuple[int, ThreadSummary]] = []
    seen: set[str] = set()

    def place(thread: ThreadSummary, depth: int) -> None:
        if thread.thread_id in seen:
            return
        seen.add(thread.thread_id)
        ordered.append((depth, thread))
        for child in reversed(children.get(thread.thread_id, [])):  # oldest follow-up first
            place(child, depth + 1)

    for thread in threads:
        if thread.follow_up_of not in listed:
            place(thread, 0)
    for thread in threads:  # any left (a loop of links): shown, never lost
        place(thread, 0)
    return ordered


@dataclass
class ChainLink:
    """One run of a chain of follow-ups: its request, plan and outcome in brief."""

    thread_id: str
    request: str
    status: str
    follow_up_of: str | None = None
    goal: str = ""
    queries: list[str] = field(default_factory=list)
    picks: list[str] = field(default_factory=list)  # "id title ($price)"
    total: float | None = None
    budget: float | None = None
    carried_over: list[str] = field(default_factory=list)


def _link(thread_id: str, status: str, values: Mapping[str, Any]) -> ChainLink:
    plan = plan_that_runs(values)
    outcome = values.get("outcome")
    follow_up = values.get("follow_up")
    return ChainLink(
        thread_id=thread_id,
        request=values.get("request", ""),
        status=status,
        follow_up_of=values.get(FOLLOW_UP_OF),
        goal=plan.goal if plan else "",
        queries=[s.query or "" for s in plan.search_steps] if plan else [],
        picks=[f"{p.id} {p.title} ({money(p.price)})" for p in outcome.picks] if outcome else [],
        total=outcome.total_price if outcome else None,
        budget=outcome.budget if outcome else (plan.budget if plan else None),
        carried_over=list(follow_up.notes) if follow_up is not None else [],
    )


def chain_of(graph: ShoppingGraph, thread_id: str) -> list[ChainLink]:
    """The chain of runs that ends at `thread_id`: the first request, then each follow-up
    in turn, each with its plan and outcome. A parent that no longer reads back ends it."""
    chain: list[ChainLink] = []
    current: str | None = thread_id
    while current is not None and len(chain) < MAX_CHAIN:
        if any(link.thread_id == current for link in chain):
            break
        try:
            snapshot = read_state(graph, current)
        except UnreadableThread:
            break
        if not snapshot.values:
            break
        chain.append(_link(current, status_of(snapshot), snapshot.values))
        current = chain[-1].follow_up_of
    chain.reverse()
    return chain
