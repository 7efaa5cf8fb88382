"""Reading runs back from the checkpointer: status, listing and step-by-step history.

Every run is one thread. Nothing here keeps its own records: it all comes from the
checkpoints LangGraph wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot
from packaging.version import InvalidVersion, Version

from catalog import money
from catalog.version import package_version
from graph.context import Context
from graph.errors import ShoppingError
from graph.parent_run import run_end
from graph.runs.checkpoint import is_store_failure, thread_is_held
from graph.schemas import Plan, PlanEdit, PlanRevision, PlanStep, StepResult
from graph.shaping.edits import describe_change
from graph.state import InputState, OutputState, State, plan_that_runs, state_of

if TYPE_CHECKING:  # for the cast in recent_thread_ids
    from langgraph.checkpoint.sqlite import SqliteSaver

# The compiled graph that runs are driven through and read back from (graph/builder.py:
# build_graph); its context schema is what lets `stream(..., context=)` take a Context.
ShoppingGraph: TypeAlias = CompiledStateGraph[State, Context, InputState, OutputState]

# Checkpoint metadata key: the version of shopping-planner that wrote the checkpoint.
WRITER_VERSION = "shopping_planner_version"

ThreadStatus = Literal[
    "planning",
    "awaiting approval",
    "running",
    "stopped",  # planning or running when its process died: --resume continues it
    "done",
    "rejected",
    "failed",
    "unknown",
    "unreadable",
    "newer version",
]


class UnreadableThread(ShoppingError, RuntimeError):
    """A thread whose stored checkpoints do not decode (written by another version, or
    damaged); every other thread stays readable."""


class ThreadFromNewerVersion(UnreadableThread):
    """A thread written by a newer shopping-planner, holding state this version cannot use."""


def this_version() -> str:
    """This shopping-planner's version, as its package metadata states it (catalog.version,
    the one place it is read)."""
    return package_version()


def _is_newer(written_by: Any) -> bool:
    try:
        return Version(str(written_by)) > Version(this_version())
    except InvalidVersion:  # not a version: nothing to compare, read it as before
        return False


def _state_is_usable(graph: ShoppingGraph, thread_id: str, values: dict[str, Any]) -> bool:
    """Whether this version knows every channel the checkpoint stores and its values
    validate as this version's State (a newer field would be dropped on the next save)."""
    saver = graph.checkpointer
    assert isinstance(saver, BaseCheckpointSaver)  # the snapshot read came from one
    saved = saver.get_tuple(thread_config(thread_id))
    stored = saved.checkpoint["channel_values"] if saved is not None else {}
    if not set(stored) <= set(graph.channels):
        return False
    try:
        state_of(values)
    except Exception:  # any validation error: the state is not this version's
        return False
    return True


def _newer_writer(
    graph: ShoppingGraph, thread_id: str, snapshot: StateSnapshot
) -> ThreadFromNewerVersion | None:
    """The error for a thread a newer version wrote in a shape this one cannot use."""
    written_by = (snapshot.metadata or {}).get(WRITER_VERSION)
    if written_by is None or not _is_newer(written_by):
        return None
    if _state_is_usable(graph, thread_id, dict(snapshot.values or {})):
        return None
    return ThreadFromNewerVersion(
        f"thread {thread_id!r} was written by shopping-planner {written_by}; "
        f"this is {this_version()}: upgrade to resume it"
    )


def thread_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def unreadable(thread_id: str, error: BaseException) -> UnreadableThread:
    reason = " ".join(str(error).split())[:160] or type(error).__name__
    return UnreadableThread(
        f"thread {thread_id!r} cannot be read: its stored checkpoint does not decode "
        f"({type(error).__name__}: {reason}); the other runs are unaffected"
    )


def read_state(graph: ShoppingGraph, thread_id: str) -> StateSnapshot:
    """The thread's latest state; UnreadableThread if its checkpoint does not decode, or
    (ThreadFromNewerVersion) holds state that only the newer version that wrote it knows."""
    try:
        snapshot = graph.get_state(thread_config(thread_id))
    except Exception as error:
        if is_store_failure(error):
            raise
        raise unreadable(thread_id, error) from error
    if (newer := _newer_writer(graph, thread_id, snapshot)) is not None:
        raise newer
    return snapshot


def status_of(snapshot: StateSnapshot) -> ThreadStatus:
    values = snapshot.values or {}
    if not values:
        return "unknown"
    if any(task.error for task in snapshot.tasks):
        return "failed"
    if snapshot.interrupts or any(task.interrupts for task in snapshot.tasks):
        return "awaiting approval"
    ended = run_end(values)
    if ended == "rejected" or (ended == "done" and not snapshot.next):
        return ended
    if values.get("plan") is None:
        return "planning" if snapshot.next else "failed"
    # A plan, not finished, no error recorded: in progress, or stopped by a crash.
    return "running"


def error_of(snapshot: StateSnapshot) -> str | None:
    return next((str(task.error) for task in snapshot.tasks if task.error), None)


@dataclass
class ThreadSummary:
    thread_id: str
    request: str
    status: ThreadStatus
    steps_done: int
    steps_total: int
    updated_at: str | None
    error: str | None = None
    follow_up_of: str | None = None  # the thread this run follows up, if any


def summarize(snapshot: StateSnapshot, thread_id: str) -> ThreadSummary:
    values = snapshot.values or {}
    plan = plan_that_runs(values)
    return ThreadSummary(
        thread_id=thread_id,
        request=values.get("request") or "",
        status=status_of(snapshot),
        steps_done=len(values.get("step_results") or []),
        steps_total=len(plan.steps) if plan else 0,
        updated_at=snapshot.created_at,
        error=error_of(snapshot),
        follow_up_of=values.get("follow_up_of"),
    )


# Checkpoint ids are time-ordered (uuid6), so a thread's max is its latest checkpoint.
_LATEST_THREADS_SQL = (
    "SELECT thread_id, MAX(checkpoint_id) AS latest FROM checkpoints "
    "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY latest DESC LIMIT {placeholder}"
)


def recent_thread_ids(saver: BaseCheckpointSaver, limit: int = 20) -> list[str]:
    """Thread ids, most recently updated first."""
    backend = type(saver).__name__  # by name: the postgres extra may not be installed
    if backend == "SqliteSaver":
        rows = (
            cast("SqliteSaver", saver)
            .conn.execute(_LATEST_THREADS_SQL.format(placeholder="?"), (limit,))
            .fetchall()
        )
        return [row[0] for row in rows]
    if backend == "PostgresSaver":
        # Public API only: a connection of the saver's pool (open_postgres_checkpointer's).
        with cast("Any", saver).conn.connection() as conn:
            sql = _LATEST_THREADS_SQL.format(placeholder="%s")
            # Rows are dicts with the pool's dict_row factory, tuples otherwise.
            found: list[Any] = conn.execute(sql, (limit,)).fetchall()
        return [row["thread_id"] if isinstance(row, dict) else row[0] for row in found]
    seen: dict[str, str] = {}
    for item in saver.list(None):
        configurable = item.config["configurable"]
        thread_id = configurable["thread_id"]
        seen[thread_id] = max(seen.get(thread_id, ""), configurable["checkpoint_id"])
    return sorted(seen, key=seen.__getitem__, reverse=True)[:limit]


def list_threads(
    graph: ShoppingGraph, saver: BaseCheckpointSaver, limit: int = 20
) -> list[ThreadSummary]:
    summaries = []
    for thread_id in recent_thread_ids(saver, limit):
        try:
            summary = summarize(read_state(graph, thread_id), thread_id)
            # Unfinished with no process holding its lease: that process died.
            if summary.status in ("planning", "running") and not thread_is_held(saver, thread_id):
                summary.status = "stopped"
            summaries.append(summary)
        except UnreadableThread as error:  # one bad thread never hides the others
            status: ThreadStatus = (
                "newer version" if isinstance(error, ThreadFromNewerVersion) else "unreadable"
            )
            summaries.append(ThreadSummary(thread_id, "", status, 0, 0, None, error=str(error)))
    return summaries


@dataclass
class HistoryEntry:
    checkpoint_id: str
    superstep: int
    node: str
    plan_step: int | None
    summary: str
    created_at: str | None
    # Lines shown under the history: the model's plan, and a person's edit of it.
    details: list[str] = field(default_factory=list)


def _describe_result(result: StepResult) -> str:
    if result.error:
        return f"error: {result.error[:80]}"
    if result.kind == "search":
        if not result.products:
            return "no products matched"
        top = result.products[0]
        return f"{len(result.products)} found, top: {top.title} ({money(top.price)})"
    picked = ", ".join(p.id for p in result.products) or "nothing"
    return f"picked {picked}: {result.answer[:60]}"


def _search_of(step: PlanStep) -> str:
    if not step.is_search:
        return ""
    filters = ", ".join(
        f"{name} {getattr(step, name):g}"
        for name in ("min_price", "max_price", "min_rating")
        if getattr(step, name) is not None
    )
    category = f", category {step.category!r}" if step.category else ""
    return f": search {step.query!r}{category}" + (f", {filters}" if filters else "")


def thread_history(graph: ShoppingGraph, thread_id: str) -> list[HistoryEntry]:
    """Checkpoints in order, each with the node that produced it and a short result."""
    read_state(graph, thread_id)  # a thread only a newer version can read says so first
    try:
        snapshots = list(graph.get_state_history(thread_config(thread_id)))
    except Exception as error:
        if is_store_failure(error):
            raise
        raise unreadable(thread_id, error) from error
    snapshots.reverse()
    entries: list[HistoryEntry] = []
    previous: StateSnapshot | None = None
    for snapshot in snapshots:
        values = snapshot.values or {}
        before = (previous.values or {}) if previous else {}
        ran = ", ".join(previous.next) if previous and previous.next else "input"
        results: list[StepResult] = values.get("step_results") or []
        new_results = results[len(before.get("step_results") or []) :]
        plan_step: int | None = None
        details: list[str] = []
        if new_results:
            plan_step = new_results[-1].step
            summary = "; ".join(f"step {r.step}: {_describe_result(r)}" for r in new_results)
        elif ran == "input":
            summary = "run started"
        elif ran == "__start__":
            summary = f"request: {values.get('request', '')[:70]}"
        elif ran == "tools":
            plan_step = len(results) + 1
            summary = f"search_products answered for step {plan_step}"
        elif values.get("plan") is not None and before.get("plan") is None:
            plan: Plan = values["plan"]
            summary = f"plan: {len(plan.steps)} steps, budget {plan.budget}"
            details = [f"the model's plan: {plan.goal} (budget {plan.budget})"]
            details += [f"  {step.step}. {step.action}{_search_of(step)}" for step in plan.steps]
        elif values.get("revising") and not before.get("revising"):
            version = len(values.get("revisions") or []) + 1
            summary = f"plan {version} changed in words: {values['revising'][:70]!r}"
        elif len(values.get("revisions") or []) > len(before.get("revisions") or []):
            revisions: list[PlanRevision] = values["revisions"]
            plan = values["plan"]
            summary = f"plan {len(revisions) + 1}: {len(plan.steps)} steps, budget {plan.budget}"
            details = [f"changed as asked ({revisions[-1].words[:70]!r}):"]
            details += [f"  {describe_change(change)}" for change in revisions[-1].changes]
        elif values.get("edit_error") and values.get("edit_error") != before.get("edit_error"):
            summary = f"edit refused: {values['edit_error']}"
        elif values.get("approval") != before.get("approval"):
            summary = f"plan {values.get('approval')}"
            if (snapshot.metadata or {}).get("source") == "update":
                # Written over the API (update_state), not answered at the approval pause.
                summary += " by a state update, not by an answer to the approval question"
            edit: PlanEdit | None = values.get("plan_edit")
            if edit is not None:
                summary += f", as edited by a person ({len(edit.changes)} changes)"
                details = ["edited at approval, from the model's plan:"]
                details += [f"  {describe_change(change)}" for change in edit.changes]
        elif values.get("outcome") is not None and before.get("outcome") is None:
            outcome = values["outcome"]
            summary = f"checked: {len(outcome.picks)} picks, total {money(outcome.total_price)}"
        elif len(values.get("messages") or []) > len(before.get("messages") or []):
            plan_step = len(results) + 1
            summary = f"search dispatched for step {plan_step}"
        else:
            summary = ""
        if snapshot.interrupts:
            summary = (summary + "; " if summary else "") + "paused for approval"
        entries.append(
            HistoryEntry(
                checkpoint_id=snapshot.config["configurable"]["checkpoint_id"],
                superstep=int((snapshot.metadata or {}).get("step", -1)),
                node=ran,
                plan_step=plan_step,
                summary=summary,
                created_at=snapshot.created_at,
                details=details,
            )
        )
        previous = snapshot
    return entries
