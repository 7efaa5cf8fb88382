"""Which saved run a rerun of an eval may report again.

A goal's thread id is built from the label and the goal (`eval-LABEL-INDEX-ASIN`,
`bundle-LABEL-ID`, `limits-LABEL-INDEX-ID`), so a rerun with the same `--label` finds the
threads of the first run. It reports (or resumes) one only when that run was made with the
same request, catalog content, provider, model and tool mode; these come from what every
run already saves (its request in the state, its settings and catalog identity in the
checkpoint metadata), so a thread the CLI ran counts too. Otherwise the goal runs afresh
on a thread of its own, the id with a fingerprint of those five appended, which a later
rerun with the same settings finds again. The thread ids of a first run are unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from langgraph.types import StateSnapshot

from graph.context import Context
from graph.reading.stated import checked_request
from graph.runs.catalog_tie import CATALOG_IDENTITY, catalog_identity
from graph.runs.session import Approver, run_thread
from graph.runs.threads import ShoppingGraph, read_state
from graph.schemas import RequestError


@dataclass(frozen=True)
class RunIdentity:
    """What makes two runs of one goal the same run."""

    request: str | None
    catalog: tuple[str | None, ...]  # the content hash, else (path, database)
    provider: str | None
    model: str | None
    tool_mode: str | None

    def fingerprint(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]

    def differences(self, saved: RunIdentity) -> list[str]:
        """What `saved` was run with that this run is not, in words for the terminal."""
        found = []
        if saved.request != self.request:
            found.append("another request")
        if saved.catalog != self.catalog:
            found.append(
                "a catalog saved without its content hash"
                if len(saved.catalog) > 1 and len(self.catalog) == 1
                else "another catalog"
            )
        for name in ("provider", "model", "tool_mode"):
            then, now = getattr(saved, name), getattr(self, name)
            if then != now:
                found.append(f"{name.replace('_', ' ')} {then!r} (now {now!r})")
        return found


def _catalog_key(identity: Any) -> tuple[str | None, ...]:
    if not isinstance(identity, dict):
        return (None, None)  # a run saved before catalog identities were kept
    if identity.get("source"):
        return (str(identity["source"]),)
    return (identity.get("catalog"), identity.get("database"))


def identity_now(request: str, context: Context) -> RunIdentity:
    """The identity of running `request` in a prepared context (graph/evals/driver.py)."""
    # As the run stores it; a request the run will refuse matches no saved one anyway.
    with contextlib.suppress(RequestError):
        request = checked_request(request)[0]
    return RunIdentity(
        request,
        _catalog_key(catalog_identity(context)),
        context.provider,
        context.model,
        context.tool_mode,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def saved_identity(snapshot: StateSnapshot) -> RunIdentity:
    """The identity of the run a thread holds, from its state and checkpoint metadata."""
    metadata = snapshot.metadata or {}
    try:
        identity = json.loads(_text(metadata.get(CATALOG_IDENTITY)) or "null")
    except ValueError:
        identity = None
    return RunIdentity(
        _text((snapshot.values or {}).get("request")),
        _catalog_key(identity),
        _text(metadata.get("provider")),
        _text(metadata.get("model")),
        _text(metadata.get("tool_mode")),
    )


class RerunMismatch(RuntimeError):
    """Both the goal's thread and its fingerprinted one hold other runs."""


class OnGoalThread(Protocol):
    thread_id: str  # the goal's own thread, then the thread it ran on


def run_on_goal_thread(
    graph: ShoppingGraph,
    context: Context,
    result: OnGoalThread,
    request: str,
    approver: Approver,
    note: Callable[[str], None],
) -> dict[str, Any]:
    """Run (or resume, or just read back) `request` on its goal's thread,
    `result.thread_id`, when that is new or holds a run of the same request, catalog,
    provider, model and tool mode; else on `thread_id-FINGERPRINT`, telling `note` why.
    The run's final values."""
    now = identity_now(request, context)
    thread_id = result.thread_id
    snapshot = read_state(graph, thread_id)
    differences = now.differences(saved_identity(snapshot)) if snapshot.values else []
    if differences:
        fresh = f"{thread_id}-{now.fingerprint()}"
        other = read_state(graph, fresh)
        if other.values and now.differences(saved_identity(other)):
            raise RerunMismatch(
                f"threads {thread_id!r} and {fresh!r} hold runs with other settings; "
                "use a new --label"
            )
        result.thread_id = fresh
        note(
            f"thread {thread_id!r} holds a run with {', '.join(differences)}; "
            f"this rerun uses thread {fresh!r}"
        )
    return run_thread(graph, result.thread_id, request, context, approver).values
