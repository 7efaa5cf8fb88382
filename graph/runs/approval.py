"""What a session asks its caller at the approval pause, what the caller answers, and what
it tells an observer as the run goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from graph.context import Context
from graph.cost import CostEstimate, estimate_plan_cost
from graph.runs.draft import PlanDraft
from graph.schemas import FollowUp, Plan, PlanEdit, StatedLimits
from graph.shaping.edits import edit_of


@dataclass(frozen=True)
class ApprovalRequest:
    """What a run paused on: the plan and its cost estimate, before any step runs."""

    plan: Plan  # as the model wrote it
    estimate: CostEstimate
    # Checks of the plan against the request done in code (limit_warnings).
    warnings: tuple[str, ...] = ()
    # The limits the request states (as the planner stored them) and the run's settings:
    # a person's edit of the plan is checked against the one and its cost estimated with
    # the other (review_edit).
    limits: StatedLimits = field(default_factory=StatedLimits)
    context: Context | None = None
    # Why the edit last sent was refused; the run paused here again to get another.
    error: str | None = None
    # A follow-up's carry-over from the previous run, shown with the plan.
    follow_up: FollowUp | None = None
    # A plan changed in words: its version, the words, and what they changed (one line
    # each), as the approval node's payload has them.
    revision: dict[str, Any] | None = None


@dataclass(frozen=True)
class ApprovalDecision:
    """A person's answer at approval: run the plan, or `plan` (their edit of it), or not,
    or change it in words (`revise`).
    `estimate` is the edit's cost estimate when the caller has it already (review_edit),
    so a plan version is estimated once."""

    approved: bool
    plan: Plan | None = None
    estimate: CostEstimate | None = None
    revise: str | None = None  # a change asked in words: the plan is revised and asked again


@dataclass(frozen=True)
class EditReview:
    """A person's edit before they approve it: what it changes from the model's plan
    (None: nothing), the code checks of the edited plan, and its cost estimate."""

    plan: Plan
    edit: PlanEdit | None
    estimate: CostEstimate

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self.edit.warnings) if self.edit is not None else ()


def review_edit(request: ApprovalRequest, plan: Plan) -> EditReview:
    """Check a person's edit of the paused plan as the run will (no LLM call): what it
    changes, limit_warnings against the request, and the estimate for the edited plan."""
    edit = edit_of(request.limits, request.plan, plan)
    if edit is None:
        return EditReview(request.plan, None, request.estimate)
    estimate = estimate_plan_cost(plan, request.context or Context())
    return EditReview(plan, edit, estimate)


class RunObserver(Protocol):
    """Progress hooks for a caller that shows the run as it streams."""

    # True to receive the plan as the planner writes it (plan_drafted): the planner's
    # call then streams its tokens.
    wants_plan_draft: bool

    def plan_drafted(self, draft: PlanDraft) -> None:
        """The planner has written more of the plan: its goal, and each finished step."""

    def stream_started(self, values: dict[str, Any]) -> None:
        """A stream begins; `values` is the saved progress (a resumed run starts part way)."""

    def node_finished(self, node: str, change: dict[str, Any]) -> None:
        """A node finished and changed these state keys."""

    def stream_stopped(self) -> None:
        """The stream ended, paused or failed."""
