"""The plan: its steps, and a person's edit of it."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from catalog import SearchArgs
from graph.schemas.follow_up import FollowUpStatement
from graph.schemas.model_text import (
    MAX_FEATURES,
    blank_is_none,
    capped,
    model_facing_schema,
    plan_facing_schema,
    within_cap,
)

MAX_PLAN_STEPS = 10


SEARCH_FILTERS = tuple(
    f.name for f in fields(SearchArgs) if f.name not in ("query", "limit", "kind")
)


class PlanStep(BaseModel):
    """One step of a plan: a catalog search (query set) or a reasoning-only step."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=model_facing_schema)

    # The model never writes it (WRITTEN_BY_CODE): code numbers the steps in order.
    step: int = Field(default=0, description="1-based position of this step in the plan.")
    # "Search <query>" when left out: the model writes a reasoning step's only.
    action: str = Field(default="", description="Short human description of what this step does.")
    query: Annotated[str | None, AfterValidator(blank_is_none)] = Field(
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
    # filled in from the request because the model left them empty (graph/shaping/limits.py).
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

    @field_validator("filled_from_request")
    @classmethod
    def _filters_only(cls, names: list[str]) -> list[str]:
        # Code writes it, but an edit sent back over the API carries it: held to what
        # code can write, so it is no place for 100,000 strings.
        if len(names) > len(SEARCH_FILTERS):
            raise ValueError(
                f"filled_from_request has {len(names):,} items; the cap is {len(SEARCH_FILTERS)}"
            )
        unknown = [name for name in names if name not in SEARCH_FILTERS]
        if unknown:
            raise ValueError(
                f"filled_from_request names only search filters ({', '.join(SEARCH_FILTERS)}), "
                f"got {unknown[0][:40]!r}"
            )
        return names

    @field_validator("min_price", "max_price", "min_rating")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @property
    def is_search(self) -> bool:
        return self.query is not None

    def price_cap(self, budget: float | None) -> float | None:
        """The highest price this step's search may pay: its max_price, else `budget`."""
        return self.max_price if self.max_price is not None else budget

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
    goal: Annotated[str, capped("goal")] = Field(description="The shopper's goal in one sentence.")
    # Before the steps: written first, they shape the queries (written after the steps, a
    # streamed plan showed its first step ~15 tokens sooner, but the dev reward fell).
    features: Annotated[list[str], capped("features", MAX_FEATURES, "feature")] = Field(
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
    # Written by code (graph/shaping/occasion.py) or a person: "each" item searched for, or
    # the single best of all the kinds searched ("one": a gift, an occasion, a hobby).
    pick: Literal["each", "one"] = "each"
    # Written by code, never by the model: why this plan was built in code rather than by
    # the planner (it returned no usable plan twice), or None for the planner's own plan.
    built_in_code: Annotated[str | None, capped("built_in_code")] = None

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


def _follow_up_first(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """The plan's model-facing shape with the follow-up's reading written right after
    `shopping`: read first, it shapes the goal and the queries."""
    plan_facing_schema(schema, model)
    properties = schema["properties"]
    order = list(dict.fromkeys(["shopping", "follow_up", *properties]))
    schema["properties"] = {name: properties[name] for name in order}
    schema["required"] = [name for name in order if name in schema["required"]]


class FollowUpPlan(Plan):
    """The planner's output for a follow-up: its reading of the follow-up, then the plan."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_follow_up_first)

    follow_up: FollowUpStatement

    def plan(self) -> Plan:
        """The plan alone, as every later node reads it."""
        return Plan.model_validate(self.model_dump(exclude={"follow_up"}))


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


class PlanRevision(BaseModel):
    """A change of the plan asked in words at approval (docs/editing-plans.md): the
    version it changed, the words, and what the planner's revision changed in it. The
    version after is the next revision's `before`, or the run's `plan`."""

    before: Plan
    words: str
    changes: list[PlanChange]
