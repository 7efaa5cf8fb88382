"""The schemas the graph passes on and stores, by what they hold: the plan (`plan`), what
running it produces (`results`), the request as read once (`request`) and the limits it
states (`limits`), what a follow-up carries over (`follow_up`), what the model may write
(`model_text`), and the errors of a request or plan that cannot be used (`errors`).
Plain pydantic: no LangGraph, no LLM."""

from __future__ import annotations

from graph.schemas.errors import USER_ERRORS, PlanningError, RequestError
from graph.schemas.follow_up import (
    FOLLOW_UP_KINDS,
    FOLLOW_UP_OF,
    FollowUp,
    FollowUpKind,
    FollowUpStatement,
    PreviousPick,
    PreviousRun,
)
from graph.schemas.limits import ForeignLimit, ItemCap, LimitChoice, StatedLimits
from graph.schemas.model_text import (
    MAX_FEATURES,
    MAX_PICKED_IDS,
    MAX_REQUEST_CHARS,
    MODEL_TEXT_CAPS,
)
from graph.schemas.plan import (
    MAX_PLAN_STEPS,
    SEARCH_FILTERS,
    ApprovalStatus,
    FollowUpPlan,
    Plan,
    PlanChange,
    PlanEdit,
    PlanRevision,
    PlanStep,
    PlanValue,
)
from graph.schemas.request import RequestReading
from graph.schemas.results import (
    MissingItem,
    Outcome,
    ProductSummary,
    ReasoningAnswer,
    SearchDispatch,
    StepResult,
    Usage,
)
