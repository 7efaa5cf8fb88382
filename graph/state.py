"""State and schemas of the planner-executor graph. Data flows one way: request -> Plan
-> StepResults -> Outcome; at approval a person may edit the Plan (PlanEdit), which then
runs, the model's kept beside it. Each plain state field has one writer node, named
beside it; the two reducer fields are append-only logs (see State)."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

if TYPE_CHECKING:
    from catalog import Product
from graph.caps import (
    MAX_FEATURES,
    ForeignLimit,
    ItemCap,
    ReasoningAnswer,
    StatedLimits,
    model_facing_schema,
    plan_facing_schema,
    within_cap,
    within_count,
)
from graph.previous_run import FollowUp, PreviousPick, PreviousRun

MAX_PLAN_STEPS = 10
SEARCH_FILTERS = ("category", "min_price", "max_price", "min_rating")


class PlanStep(BaseModel):
    """One step of a plan: a catalog search (query set) or a reasoning-only step."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=model_facing_schema)

    # The model never writes it (WRITTEN_BY_CODE): code numbers the steps in order.
    step: int = Field(default=0, description="1-based position of this step in the plan.")
    # "Search <query>" when left out: the model writes a reasoning step's only.
    action: str = Field(default="", description="Short human description of what this step does.")
    query: str | None = Field(
        description=(
            "Catalog search keywords for a search step (product words only, never prices "
            "or ratings), or null for a reasoning-only step that works over earlier results."
        )
    )
    category: str | None = Field(
        default=None, description="Catalog category to restrict the search to, or null."
    )
    max_price: float | None = Field(
        default=None, description="Highest price in USD for one item, or null."
    )
    min_price: float | None = Field(default=None, description="Lowest price in USD, or null.")
    min_rating: float | None = Field(
        default=None, description="Lowest average rating (0 to 5), or null."
    )
    # Written by code, never by the model (left out of the schema it sees): the limits
    # filled in from the request because the model left them empty (graph/checks/limits.py).
    filled_from_request: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _action_said(self) -> PlanStep:
        self.action = within_cap("action", self.action.strip()) or ""
        if not self.action:
            if self.query is None:
                raise ValueError("action is missing")  # a reasoning step says what it does
            self.action = within_cap("action", f"Search {self.query}") or ""
        return self

    @field_validator("query", "category", mode="before")
    @classmethod
    def _text_within_cap(cls, value: Any, info: Any) -> Any:
        return within_cap(info.field_name, value) if isinstance(value, str) else value

    @field_validator("query")
    @classmethod
    def _blank_query_is_reasoning(cls, value: str | None) -> str | None:
        # Models often write "" for "no search"; that is a reasoning step, not a search
        # for everything.
        return value.strip() or None if value is not None else None

    @field_validator("min_price", "max_price", "min_rating")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @property
    def is_search(self) -> bool:
        return self.query is not None

    def search_arguments(self) -> dict[str, object]:
        """Arguments for `search_products`, without the unset filters."""
        filters = {name: getattr(self, name) for name in SEARCH_FILTERS}
        return {"query": self.query or "", **{k: v for k, v in filters.items() if v is not None}}


class Plan(BaseModel):
    """The planner's output: a goal and the ordered steps that reach it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=plan_facing_schema)

    # First, and required of the model: it decides whether there is anything to buy
    # before it writes a goal. A small model ignored an optional flag for "the weather".
    shopping: bool = Field(
        default=True,
        description="False only when the request asks for no product at all; steps are [].",
    )
    goal: str = Field(description="The shopper's goal in one sentence.")
    # Before the steps: written first, they shape the queries (written after the steps, a
    # streamed plan showed its first step ~15 tokens sooner, but the dev reward fell).
    features: list[str] = Field(
        default_factory=list,
        description="Features the shopper requires, as short phrases from the request "
        "(e.g. 'waterproof', 'rubber sole'); [] if none.",
    )
    steps: list[PlanStep] = Field(
        description=f"Ordered steps, numbered 1..N, at most {MAX_PLAN_STEPS}.",
    )
    # Written by code (WRITTEN_BY_CODE), or by a person editing the plan.
    budget: float | None = Field(
        default=None,
        description="Total budget in USD stated by the shopper, or null if none was stated.",
    )
    # Written by code (graph/checks/occasion.py) or a person: "each" item searched for, or
    # the single best of all the kinds searched ("one": a gift, an occasion, a hobby).
    pick: Literal["each", "one"] = "each"
    # Written by code, never by the model: why this plan was built in code rather than by
    # the planner (it returned no usable plan twice), or None for the planner's own plan.
    built_in_code: str | None = None

    @field_validator("goal")
    @classmethod
    def _goal_within_cap(cls, value: str) -> str:
        return within_cap("goal", value) or ""

    @field_validator("features")
    @classmethod
    def _features_within_cap(cls, value: list[str]) -> list[str]:
        return within_count("features", value, MAX_FEATURES, "feature")

    @model_validator(mode="after")
    def _steps_numbered_in_order(self) -> Plan:
        if not self.shopping:
            # Nothing will run: whatever steps the model wrote are dropped.
            self.steps = []
            return self
        if not self.steps:
            raise ValueError("a plan needs at least one step")
        if not any(step.is_search for step in self.steps):
            # With no query nothing is searched, so nothing can be recommended (a 0.5B
            # model wrote "Search desks" as a step with query null).
            raise ValueError("a shopping plan needs at least one search step (a query)")
        if len(self.steps) > MAX_PLAN_STEPS:
            raise ValueError(f"a plan has at most {MAX_PLAN_STEPS} steps, got {len(self.steps)}")
        if all(step.step == 0 for step in self.steps):
            for number, step in enumerate(self.steps, start=1):
                step.step = number
        numbers = [step.step for step in self.steps]
        expected = list(range(1, len(self.steps) + 1))
        if numbers != expected:
            # Renumbering silently could hide a model that lost track of its own plan.
            raise ValueError(f"steps must be numbered {expected} in order, got {numbers}")
        if self.budget is not None and (not math.isfinite(self.budget) or self.budget < 0):
            raise ValueError(f"budget must be a number >= 0, got {self.budget}")
        return self

    @property
    def not_shopping(self) -> bool:
        return not self.shopping

    @property
    def search_steps(self) -> list[PlanStep]:
        return [step for step in self.steps if step.is_search]


class ProductSummary(BaseModel):
    """The compact view of a product that steps pass on (never the raw tool payload)."""

    id: str
    title: str
    price: float
    rating: float | None = None
    category: str | None = None

    @classmethod
    def of(cls, product: Product) -> ProductSummary:
        """The one way a catalog record becomes a summary (search results, checked picks):
        the summary's fields, each the product's own."""
        return cls(**{name: getattr(product, name) for name in cls.model_fields})


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    unknown_calls: int = 0  # calls whose server sent no sane counts: unknown, not zero

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            unknown_calls=self.unknown_calls + other.unknown_calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class SearchDispatch(BaseModel):
    """A search step handed to the tool node, until record_search records its answer."""

    step: int
    started_at: float  # time.time(): the answer may be recorded in another process
    llm_calls: int = 0  # 1 when the executor LLM chose the search arguments
    usage: Usage = Usage()


class StepResult(BaseModel):
    """What one executed step produced."""

    step: int
    kind: Literal["search", "reasoning"]
    action: str
    products: list[ProductSummary] = []  # a search's shown matches; a reasoning step's picks
    # A search's further matches, best first (tools.POOL_DEPTH in all): never shown to a
    # model; code chooses among them too (graph/checks/choice.py).
    pool: list[ProductSummary] = []
    answer: str = ""
    warnings: list[str] = []
    error: str | None = None
    decided_in_code: bool = False  # a pick step code answered (graph/checks/decided.py)
    llm_calls: int = 0
    usage: Usage = Usage()
    latency_s: float = 0.0


class MissingItem(BaseModel):
    """An item the plan searched for that the recommendation lacks, and why."""

    step: int
    query: str
    reason: str

    def describe(self) -> str:
        return f"missing: {self.query!r} (step {self.step}): {self.reason}"


class Outcome(BaseModel):
    """The recommendation checked in code after the last step (no LLM involved)."""

    picks: list[ProductSummary] = []
    reasons: dict[str, str] = {}  # per pick id: why, from catalog figures (checks/choice.py)
    items: dict[str, str] = {}  # per pick id: the item it is the pick for (its search queries)
    # Every item the plan searched for is in `picks` or here: none disappears unnamed.
    missing: list[MissingItem] = []
    total_price: float = 0.0
    budget: float | None = None
    within_budget: bool | None = None
    # A price limit the request states but the plan dropped (plan_warnings says so);
    # within_budget then compares against a budget the shopper never set.
    dropped_limit: float | None = None
    # Limits the request states in another currency than the catalog's, as stated: never
    # applied or converted, so the total is not compared with them.
    unapplied_limits: list[str] = []
    unknown_ids: list[str] = []
    warnings: list[str] = []
    # The request asks for no product (the planner said so): nothing ran.
    not_shopping: bool = False


ApprovalStatus = Literal["approved", "rejected"]
PlanValue = str | float | list[str] | None  # a plan field's value, before or after an edit


class PlanChange(BaseModel):
    """One difference between the model's plan and a person's edit of it. A step is
    named by its number in the model's plan (`step`) and in the edit (`new_step`)."""

    kind: Literal["plan", "added", "removed", "changed"]
    step: int | None = None  # in the model's plan (None: a plan field, or an added step)
    new_step: int | None = None  # in the edited plan (None: a plan field, a removed step)
    field: str | None = None  # the plan or step field changed (None: a whole step)
    before: PlanValue = None
    after: PlanValue = None


class PlanEdit(BaseModel):
    """A person's edit of the model's plan, made at approval: the plan that runs instead
    of the model's, what changed, and the code checks (plan_warnings) of the edit."""

    plan: Plan
    changes: list[PlanChange]
    warnings: list[str] = []


@dataclass(kw_only=True)
class InputState:
    """What a user supplies: the shopping request, and the finished run it follows up."""

    request: str = field(metadata={"description": "The shopping request, in your own words."})
    follow_up_of: str | None = field(
        default=None,
        metadata={
            "description": "The thread id of a finished run this request follows up "
            '("a cheaper one", "and a case for it"); its limits and picks carry over.'
        },
    )


@dataclass(kw_only=True)
class State(InputState):
    """Everything the graph tracks for one run (one checkpointed thread)."""

    # planner: the request as every node reads it (control characters cleaned), and its
    # stated limits, read once (graph/checks/stated.py), with a follow-up's carried over.
    clean_request: str | None = None
    stated_limits: StatedLimits | None = None
    follow_up: FollowUp | None = None  # planner: what a follow-up carries over
    plan: Plan | None = None  # planner
    plan_warnings: list[str] = field(default_factory=list)  # planner: checks done in code
    planner_usage: Usage | None = None  # planner
    planner_latency_s: float | None = None  # planner
    approval: ApprovalStatus | None = None  # approval
    # approval: a person's edit of the plan, which runs instead of `plan` (kept as the
    # model wrote it), and why the last edit sent was refused (the run stays paused).
    plan_edit: PlanEdit | None = None
    edit_error: str | None = None
    dispatched: SearchDispatch | None = None  # executor: the search awaiting its answer
    # Append-only logs with a reducer, so each step's node adds to them: executor (a
    # reasoning step, or a search whose call failed) and record_search (a search) each
    # append one result per step; executor appends the tool call, the tool node its answer.
    step_results: Annotated[list[StepResult], operator.add] = field(default_factory=list)
    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    outcome: Outcome | None = None  # verify

    def __post_init__(self) -> None:
        # A strict serializer that does not know our types (LANGGRAPH_STRICT_MSGPACK=true
        # in a server that drops the compile-time allowlist, as `langgraph dev` does)
        # loads them back as plain dicts of their fields; nodes get the models again.
        self.stated_limits = _as_model(StatedLimits, self.stated_limits)
        self.follow_up = _as_model(FollowUp, self.follow_up)
        self.plan = _as_model(Plan, self.plan)
        self.planner_usage = _as_model(Usage, self.planner_usage)
        self.plan_edit = _as_model(PlanEdit, self.plan_edit)
        self.dispatched = _as_model(SearchDispatch, self.dispatched)
        self.outcome = _as_model(Outcome, self.outcome)
        self.step_results = [_as_model(StepResult, r) for r in self.step_results]

    @property
    def run_plan(self) -> Plan | None:
        """The plan the executor runs (plan_that_runs)."""
        return plan_that_runs(vars(self))

    @property
    def run_plan_warnings(self) -> list[str]:
        """The code checks of the plan that runs."""
        return self.plan_edit.warnings if self.plan_edit is not None else self.plan_warnings

    @property
    def next_step(self) -> int:
        """Index of the next plan step to run: every step adds exactly one result."""
        return len(self.step_results)


def _as_model(model: type[Any], value: Any) -> Any:
    return model.model_validate(value) if isinstance(value, dict) else value


def plan_that_runs(values: Mapping[str, Any]) -> Plan | None:
    """The plan a run executes: a person's edit if there is one, else the model's. The one
    definition, for the State the nodes get and for a run's saved values (which Studio's
    API may hand back as plain data)."""
    edit = _as_model(PlanEdit, values.get("plan_edit"))
    return edit.plan if edit is not None else _as_model(Plan, values.get("plan"))


# Our own types in checkpointed state, as (module, name), for the serializer's msgpack
# allowlist: the strict serializer (LANGGRAPH_STRICT_MSGPACK=true, a future default)
# blocks any type not listed. Compiling under strict mode also derives them from State.
_STATE_CLASSES = (Plan, PlanStep, StepResult, ProductSummary, Usage, Outcome, MissingItem)
_MORE_STATE_CLASSES = (ReasoningAnswer, SearchDispatch, PlanChange, PlanEdit, StatedLimits)
_FOLLOW_UP_CLASSES = (FollowUp, PreviousRun, PreviousPick, ItemCap, ForeignLimit)
STATE_TYPES = [
    (cls.__module__, cls.__name__)
    for cls in (*_STATE_CLASSES, *_MORE_STATE_CLASSES, *_FOLLOW_UP_CLASSES)
]
