"""Run sessions: start a run, resume it, answer its approval pause, and keep its settings.

The CLI (`graph.run`), the eval harness (`graph.eval`) and the benches drive the graph
through here, so a run's settings, its resume rules and its usage totals mean the same
everywhere. Nothing here prints: the caller supplies the approval callback and, if it
shows progress, an observer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Durability

from graph.context import Context, FrontEnd, SettingsError, traced_as
from graph.cost import CostEstimate, estimate_plan_cost
from graph.parent_run import run_end
from graph.providers.models import chat_model_session
from graph.providers.secrets import redact_secrets
from graph.reading.stated import checked_request
from graph.runs.approval import ApprovalDecision, ApprovalRequest, RunObserver
from graph.runs.catalog_tie import (
    CATALOG_IDENTITY,
    absolute_catalog,
    catalog_change,
    identity_metadata,
)
from graph.runs.checkpoint import thread_lease
from graph.runs.draft import PlanDraft
from graph.runs.errors import RunFailed, RunRefused, naming_run
from graph.runs.threads import (
    WRITER_VERSION,
    ShoppingGraph,
    UnreadableThread,
    error_of,
    read_state,
    recent_thread_ids,
    status_of,
    this_version,
    thread_config,
)
from graph.schemas import FOLLOW_UP_OF, Plan, Usage
from graph.state import state_of
from graph.tools import get_catalog

# The Context fields a run saves in its checkpoint metadata; a resumed run reuses them.
RUN_SETTINGS = ("provider", "model", "tool_mode", "catalog", "search_limit")


# Returns True (or an ApprovalDecision) to run the plan, False to reject it, None to
# leave the run paused.
Approver = Callable[[ApprovalRequest], bool | ApprovalDecision | None]


@dataclass(frozen=True)
class UsageTotals:
    """A run's LLM use, planner included. The one definition the CLI and eval report."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    # Calls whose server reported no sane token counts: the token totals leave them out.
    unknown_usage_calls: int = 0
    # Of those: the planner's output, the reasoning calls' input, and the pick steps code
    # answered with no call (graph/choosing/decided.py): where a slow CPU's wait goes.
    plan_output_tokens: int = 0
    reasoning_input_tokens: int = 0
    code_decisions: int = 0


def usage_totals(values: Mapping[str, Any]) -> UsageTotals:
    """Totals of a run's state: the planner (one call when it produced a plan) and every
    step. Latency is the planner's plus each step's, so it excludes time paused."""
    steps = values.get("step_results") or []
    planner = values.get("planner_usage")
    planned = values.get("planner_calls")
    if planned is None:  # a run written before the planner's calls were kept
        planned = 1 if values.get("plan") is not None else 0
    calls = planned + sum(r.llm_calls for r in steps)
    usage = sum((r.usage for r in steps), planner if planner is not None else Usage())
    latency = float(values.get("planner_latency_s") or 0) + sum(r.latency_s for r in steps)
    reasoning = [r for r in steps if r.kind == "reasoning"]
    return UsageTotals(
        calls,
        usage.input_tokens,
        usage.output_tokens,
        round(latency, 3),
        usage.unknown_calls,
        plan_output_tokens=planner.output_tokens if planner is not None else 0,
        reasoning_input_tokens=sum(r.usage.input_tokens for r in reasoning),
        code_decisions=sum(r.decided_in_code for r in reasoning),
    )


RunStatus = Literal["done", "rejected", "paused"]


@dataclass
class RunResult:
    thread_id: str
    status: RunStatus
    values: dict[str, Any]
    estimate: CostEstimate | None = None

    @property
    def totals(self) -> UsageTotals:
        return usage_totals(self.values)


def run_context(settings: Mapping[str, Any], saved: Mapping[str, Any] | None = None) -> Context:
    """A Context from saved run settings overridden by the explicit ones (None = unset)."""
    merged = {**(saved or {}), **{k: v for k, v in settings.items() if v is not None}}
    try:
        return Context(**{k: v for k, v in merged.items() if k in RUN_SETTINGS and v is not None})
    except SettingsError as error:  # a setting out of range: one line, before any call
        raise RunRefused(f"bad setting: {error}") from None


def saved_settings(graph: ShoppingGraph, thread_id: str) -> dict[str, Any]:
    """The run settings a thread's latest checkpoint carries."""
    metadata = read_state(graph, thread_id).metadata or {}
    return {k: v for k, v in metadata.items() if k in RUN_SETTINGS}


def new_thread_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:4]


MAX_THREAD_ID_CHARS = 200


def check_thread_id(thread_id: str) -> str:
    """A thread id a person can type back (--resume, --history): printable, bounded."""
    if not thread_id or len(thread_id) > MAX_THREAD_ID_CHARS or not thread_id.isprintable():
        raise RunRefused(
            f"a thread id must be 1 to {MAX_THREAD_ID_CHARS} printable characters "
            "(no control characters or line breaks)"
        )
    return thread_id


# `--follow-up last`: the most recently updated finished run, of the last RECENT_RUNS.
LAST = "last"
RECENT_RUNS = 200


def followable(graph: ShoppingGraph, thread_id: str) -> str:
    """The finished run a follow-up continues: `thread_id`, or for `last` the most recent
    finished one; RunRefused, in one line, for an unknown or unfinished one. The check
    before the graph starts (the planner node checks again for Studio and the API)."""
    saver = _saver(graph)
    if saver is None:
        raise RunFailed("a follow-up needs a checkpointer to read its run from")
    if thread_id == LAST:
        for recent in recent_thread_ids(saver, RECENT_RUNS):
            try:
                if status_of(read_state(graph, recent)) == "done":
                    return recent
            except UnreadableThread:  # one bad thread never hides the others
                continue
        raise RunRefused("no finished run to follow up (--follow-up last); see --list")
    status = status_of(read_state(graph, check_thread_id(thread_id)))
    if status == "unknown":
        raise RunRefused(f"no run with thread id {thread_id!r} to follow up; see --list")
    if status != "done":
        hint = {
            "awaiting approval": f"approve or reject it first (--resume {thread_id})",
            "rejected": "a rejected plan recommended nothing; start a new request instead",
        }.get(status, f"finish it first (--resume {thread_id})")
        raise RunRefused(
            f"thread {thread_id!r} is {status}: only a finished run can be followed up; {hint}"
        )
    return thread_id


def _run_input(graph: ShoppingGraph, request: str, follow_up_of: str | None) -> dict[str, Any]:
    """A new run's input, checked before any model starts, a catalog opens or anything is
    saved: the request, and for a follow-up the finished run it follows. A key pasted into
    the request is masked here, where it enters, so no state, listing or prompt holds it."""
    run_input: dict[str, Any] = {"request": redact_secrets(checked_request(request)[0])}
    if follow_up_of is not None:
        run_input[FOLLOW_UP_OF] = followable(graph, follow_up_of)
    return run_input


def open_run_catalog(context: Context) -> Context:
    """`context` holding the run's catalog, opened (and on first use indexed) now: a bad
    --catalog, or a read-only data directory where its index must be built, fails before
    the planner call that a paid provider bills, and before any thread is saved, and the
    nodes and the tool use this one handle. The shipped default too: indexing it once
    takes 0.05 s, and a run that never searches is rare. The one preparation of a run's
    context: the CLI's runs (start, resume) and the evals' (graph/evals) use it."""
    # Saved as an absolute path: a resume from another directory opens the same file.
    context = replace(context, catalog=absolute_catalog(context.catalog))
    if context.catalog_backend is None:
        return replace(context, catalog_backend=get_catalog(context.catalog, context.catalog_url))
    return context


def start(
    graph: ShoppingGraph,
    request: str,
    context: Context | Mapping[str, Any],
    approve: Approver,
    *,
    thread_id: str | None = None,
    observer: RunObserver | None = None,
    follow_up_of: str | None = None,
) -> RunResult:
    """Start a new run on a fresh thread (refusing one that already holds a run); with
    `follow_up_of`, a follow-up of that finished run (or of `last`). `context` may be the
    run settings given now (None = unset): a follow-up's parent's saved settings fill in
    the rest, as its limits carry over."""
    graph_input = _run_input(graph, request, follow_up_of)
    if not isinstance(context, Context):
        parent = graph_input.get(FOLLOW_UP_OF)
        context = run_context(context, saved_settings(graph, parent) if parent else None)
    thread_id = check_thread_id(thread_id) if thread_id is not None else new_thread_id()
    context = open_run_catalog(context)
    if read_state(graph, thread_id).values:
        raise _thread_taken(thread_id)  # early, before a local model server starts
    # The lease is exclusive (two processes starting one thread: exactly one wins), and the
    # state is read again under it: a racer that already saved its run is seen.
    with thread_lease(_saver(graph), thread_id, lambda: _thread_taken(thread_id)):
        if read_state(graph, thread_id).values:
            raise _thread_taken(thread_id)
        with (
            naming_run(thread_id, lambda: _saved(graph, thread_id)),
            chat_model_session(context) as resolved,
        ):
            return drive(graph, thread_id, graph_input, resolved, approve, observer)


def _saver(graph: ShoppingGraph) -> BaseCheckpointSaver | None:
    return graph.checkpointer if isinstance(graph.checkpointer, BaseCheckpointSaver) else None


def _thread_taken(thread_id: str) -> RunRefused:
    return RunRefused(
        f"thread {thread_id!r} already holds a run (or another process is starting it); "
        f"use --resume {thread_id} to continue it, or choose another --thread"
    )


def _thread_busy(thread_id: str) -> RunFailed:
    # A failure, not a refusal: the same command works once that run ends or pauses.
    return RunFailed(
        f"thread {thread_id!r} is being run by another process right now; "
        f"when that run ends or pauses, --resume {thread_id} continues it"
    )


def _saved(graph: ShoppingGraph, thread_id: str) -> bool | None:
    """Whether the thread holds a saved run; None if the store cannot say (locked)."""
    try:
        return bool(read_state(graph, thread_id).values)
    except Exception:
        return None  # cannot tell: keep the claim


def resumable_status(graph: ShoppingGraph, thread_id: str) -> str:
    """The status of a thread that can be resumed; RunRefused if there is nothing to resume."""
    snapshot = read_state(graph, thread_id)
    if not snapshot.values:
        raise RunRefused(f"no run with thread id {thread_id!r}; see --list")
    status = status_of(snapshot)
    if status in ("done", "rejected"):
        raise RunRefused(f"thread {thread_id!r} is already {status}; nothing to resume")
    return status


def resume(
    graph: ShoppingGraph,
    thread_id: str,
    approve: Approver,
    *,
    settings: Mapping[str, Any] | None = None,
    observer: RunObserver | None = None,
    other_catalog: bool = False,
) -> RunResult:
    """Continue an unfinished run with its saved settings (explicit `settings` win). A
    resume that would see another catalog than the run started on (another path, or the
    file changed) stops with RunRefused unless `other_catalog`."""
    # Held before the status is read: a run that another process finished meanwhile is
    # seen as done, and a step in flight elsewhere never runs a second time.
    with thread_lease(_saver(graph), thread_id, lambda: _thread_busy(thread_id)):
        resumable_status(graph, thread_id)
        metadata = read_state(graph, thread_id).metadata or {}
        context = open_run_catalog(run_context(settings or {}, saved_settings(graph, thread_id)))
        if not other_catalog:
            moved = catalog_change(thread_id, metadata.get(CATALOG_IDENTITY), context)
            if moved is not None:
                raise RunRefused(moved)
        # A resumed run was saved before.
        with naming_run(thread_id, lambda: True), chat_model_session(context) as resolved:
            return drive(graph, thread_id, None, resolved, approve, observer)


def run_thread(
    graph: ShoppingGraph,
    thread_id: str,
    request: str,
    context: Context,
    approve: Approver,
    *,
    follow_up_of: str | None = None,
) -> RunResult:
    """Run a thread to its end: start it (with `follow_up_of`, as a follow-up of that
    finished run), resume it where it stopped, or read it back if it already ended; one
    process at a time. For batch callers (eval) whose context is already resolved."""
    with thread_lease(_saver(graph), thread_id, lambda: _thread_busy(thread_id)):
        snapshot = read_state(graph, thread_id)
        if not snapshot.values:
            graph_input = _run_input(graph, request, follow_up_of)
            return drive(graph, thread_id, graph_input, context, approve, front_end="eval")
        status = status_of(snapshot)
        if status in ("done", "rejected"):
            return RunResult(thread_id, status, snapshot.values)
        return drive(graph, thread_id, None, context, approve, front_end="eval")


def drive(
    graph: ShoppingGraph,
    thread_id: str,
    graph_input: dict[str, Any] | None,
    context: Context,
    approve: Approver,
    observer: RunObserver | None = None,
    *,
    durability: Durability = "sync",
    front_end: FrontEnd = "cli",
) -> RunResult:
    """Stream the run until it ends or stays paused, answering approval pauses with
    `approve`. Every checkpoint carries the run settings, so a resume reuses them; a
    trace names the `front_end` that ran it."""
    config = thread_config(thread_id) | traced_as(front_end)
    config["metadata"] = {name: getattr(context, name) for name in RUN_SETTINGS}
    config["metadata"][CATALOG_IDENTITY] = identity_metadata(context)
    # So an older version that finds the run can say which version to upgrade to.
    config["metadata"][WRITER_VERSION] = this_version()
    if parent := (graph_input or graph.get_state(config).values).get(FOLLOW_UP_OF):
        config["metadata"][FOLLOW_UP_OF] = parent  # a follow-up's checkpoints name its parent
    estimate: CostEstimate | None = None
    pending: Any = graph_input
    while True:
        paused = _stream(graph, pending, config, context, observer, durability)
        if paused is None:
            break
        estimate = CostEstimate.model_validate(paused["estimate"])
        state = state_of(graph.get_state(config).values)
        assert state.stated_limits is not None  # paused at approval: planned
        asked = ApprovalRequest(
            Plan.model_validate(paused["plan"]),
            estimate,
            tuple(paused.get("warnings") or ()),
            # As the planner read them: an edit is checked against the same limits.
            limits=state.stated_limits,
            follow_up=state.follow_up,
            context=context,
            error=paused.get("error"),
            revision=paused.get("revision"),
        )
        answer = approve(asked)
        if answer is None:
            return RunResult(thread_id, "paused", graph.get_state(config).values, estimate)
        decision = answer if isinstance(answer, ApprovalDecision) else ApprovalDecision(answer)
        resume: dict[str, Any] = {"approved": decision.approved}
        if decision.revise is not None:
            resume = {"revise": decision.revise}
        elif decision.approved and decision.plan is not None:
            # The edit is sent as plain data and checked again by the approval node.
            resume["plan"] = decision.plan.model_dump(mode="json")
            estimate = decision.estimate or estimate_plan_cost(decision.plan, context)
        pending = Command(resume=resume)
    snapshot = graph.get_state(config)
    error = error_of(snapshot)
    if error:
        raise RunFailed(f"{error}\nthe run is saved; continue with --resume {thread_id}")
    # Every route to the end rejects the plan or leaves a checked outcome.
    return RunResult(thread_id, run_end(snapshot.values) or "done", snapshot.values, estimate)


def _stream(
    graph: ShoppingGraph,
    pending: Any,
    config: RunnableConfig,
    context: Context,
    observer: RunObserver | None,
    durability: Durability,
) -> dict[str, Any] | None:
    """Run until the graph ends or pauses; return the interrupt payload if it paused."""
    drafting = observer is not None and getattr(observer, "wants_plan_draft", False)
    draft = PlanDraft()
    if observer is not None:
        observer.stream_started(graph.get_state(config).values)
    try:
        for item in graph.stream(
            pending,
            config,
            context=context,
            # "messages" makes the planner's model stream its tokens to this loop.
            stream_mode=["updates", "messages"] if drafting else "updates",
            durability=durability,
        ):
            # A list of modes yields (mode, payload) pairs, which LangGraph's types do not say.
            mode, payload = cast("tuple[str, Any]", item if drafting else ("updates", item))
            if mode == "messages":
                chunk, metadata = payload
                planner_wrote = metadata.get("langgraph_node") == "planner" and draft.feed(chunk)
                if planner_wrote and observer is not None:
                    observer.plan_drafted(draft)
                continue
            for node, change in payload.items():
                if node == "__interrupt__":
                    return change[0].value
                if observer is not None:
                    observer.node_finished(node, change or {})
    finally:
        if observer is not None:
            observer.stream_stopped()
    return None


def approve_all(request: ApprovalRequest) -> bool:
    """The approver for unattended runs (eval, benches): every plan runs."""
    return True


def stay_paused(request: ApprovalRequest) -> None:
    """The approver that leaves a run paused at its plan (e.g. to time planning alone)."""
    return None
