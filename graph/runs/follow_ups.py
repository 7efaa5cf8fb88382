"""Follow-ups on a finished run (issue 26): "a cheaper one", "and a case for it".

A follow-up is a new run on a new thread whose input names the thread it follows
(`follow_up_of`); the parent's checkpoints are only read (docs/follow-ups.md says why).
Here the session refuses a follow-up on an unknown or unfinished run before any model
starts, finds the most recent finished run for `--follow-up last`, and reads a chain of
follow-ups back for `--list` and `--history`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from catalog import money
from graph.context import Context
from graph.reading.stated import checked_request
from graph.runs import session
from graph.runs.approval import RunObserver
from graph.runs.threads import (
    ThreadSummary,
    UnreadableThread,
    read_state,
    recent_thread_ids,
    status_of,
)
from graph.schemas import FOLLOW_UP_OF
from graph.state import plan_that_runs

# `--follow-up last`: the most recently updated run that has finished.
LAST = "last"
# How far back `last` looks, and how long a chain --history follows (a loop in stored
# links, which no session writes, cannot make it run forever).
RECENT_RUNS = 200
MAX_CHAIN = 50


def followable(graph: CompiledStateGraph, saver: BaseCheckpointSaver, thread_id: str) -> str:
    """The finished run a follow-up continues: `thread_id`, or for `last` the most recent
    finished run. RunFailed, in one line, for an unknown or unfinished one."""
    if thread_id == LAST:
        return latest_finished(graph, saver)
    session.check_thread_id(thread_id)
    snapshot = read_state(graph, thread_id)
    if not snapshot.values:
        raise session.RunFailed(f"no run with thread id {thread_id!r} to follow up; see --list")
    status = status_of(snapshot)
    if status != "done":
        hint = {
            "awaiting approval": f"approve or reject it first (--resume {thread_id})",
            "rejected": "a rejected plan recommended nothing; start a new request instead",
        }.get(status, f"finish it first (--resume {thread_id})")
        raise session.RunFailed(
            f"thread {thread_id!r} is {status}: only a finished run can be followed up; {hint}"
        )
    return thread_id


def latest_finished(graph: CompiledStateGraph, saver: BaseCheckpointSaver) -> str:
    """The most recently updated finished run; RunFailed if there is none."""
    for thread_id in recent_thread_ids(saver, RECENT_RUNS):
        try:
            if status_of(read_state(graph, thread_id)) == "done":
                return thread_id
        except UnreadableThread:  # one bad thread never hides the others
            continue
    raise session.RunFailed("no finished run to follow up (--follow-up last); see --list")


def start_follow_up(
    graph: CompiledStateGraph,
    parent: str,
    request: str,
    context: Context,
    approve: session.Approver,
    *,
    thread_id: str | None = None,
    observer: RunObserver | None = None,
) -> session.RunResult:
    """Start a follow-up of the finished run `parent` (or `last`) on a new thread. The
    request and the parent are checked before any model starts or anything is saved."""
    checked_request(request)
    saver = graph.checkpointer if isinstance(graph.checkpointer, BaseCheckpointSaver) else None
    if saver is None:
        raise session.RunFailed("a follow-up needs a checkpointer to read its run from")
    parent = followable(graph, saver, parent)
    return session.start(
        graph,
        request,
        context,
        approve,
        thread_id=thread_id,
        observer=observer,
        follow_up_of=parent,
    )


def run_follow_up_thread(
    graph: CompiledStateGraph,
    thread_id: str,
    parent: str,
    request: str,
    context: Context,
    approve: session.Approver,
) -> session.RunResult:
    """Run a follow-up thread to its end, or read it back if it already ended; for batch
    callers (the follow-up eval) whose context is already resolved."""
    snapshot = read_state(graph, thread_id)
    if snapshot.values and status_of(snapshot) in ("done", "rejected"):
        return session.RunResult(thread_id, status_of(snapshot), snapshot.values)
    if snapshot.values:
        return session.drive(graph, thread_id, None, context, approve)
    parent = followable(graph, graph.checkpointer, parent)  # type: ignore[arg-type]
    graph_input = {"request": checked_request(request)[0], FOLLOW_UP_OF: parent}
    return session.drive(graph, thread_id, graph_input, context, approve)


def in_chain_order(threads: list[ThreadSummary]) -> list[tuple[int, ThreadSummary]]:
    """The runs listed, each follow-up under the run it follows (indented by its depth
    in the chain); a follow-up whose parent is not listed stays in its own place."""
    listed = {t.thread_id for t in threads}
    children: dict[str, list[ThreadSummary]] = {}
    for thread in threads:
        if thread.follow_up_of in listed and thread.follow_up_of != thread.thread_id:
            children.setdefault(thread.follow_up_of, []).append(thread)  # type: ignore[arg-type]
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


def chain_of(graph: CompiledStateGraph, thread_id: str) -> list[ChainLink]:
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
