"""The plan that is shown at approval, shaped in code from the model's (no LLM call, no
LangGraph): a follow-up's carry-over, the product the request names kept in its queries,
the limits reconciled with the request's, reasoning steps merged, the pick mode; the
plan built in code when the model gives none; and a person's edits of it."""

from __future__ import annotations

from dataclasses import dataclass

from graph.schemas import FollowUp, Plan, RequestReading, StatedLimits
from graph.shaping.edits import (
    HOW_TO_ANSWER,
    AnswerError,
    PlanEditError,
    checked_plan,
    describe_change,
    edit_of,
    plan_changes,
    read_answer,
)
from graph.shaping.fallback import fallback_plan
from graph.shaping.follow_up import (
    carry_over,
    follow_up_plan,
    revised_plan,
)
from graph.shaping.limits import limit_warnings, model_read_limits, reconcile_limits
from graph.shaping.named import with_named_product
from graph.shaping.occasion import pick_mode
from graph.shaping.stocked import stocked_plan
from graph.shaping.tidy import merge_reasoning_runs, steps_before_any_search


@dataclass(frozen=True)
class ShapedPlan:
    """The plan as it is shown and run, and the checks done on it in code (shown at
    approval as the plan's warnings)."""

    plan: Plan
    warnings: list[str]


def shape_plan(
    reading: RequestReading, stated: StatedLimits, plan: Plan, follow_up: FollowUp | None = None
) -> ShapedPlan:
    """The model's `plan` (or the fallback) made into the plan that is shown: a
    follow-up's fixed (it names what changes, "a cheaper grinder", not the product anew),
    else the product the request names kept whole in its queries; limits reconciled with
    `stated` (the request's, with a follow-up's carried over); reasoning steps that read
    the same results merged."""
    plan, fixed = (
        follow_up_plan(plan, follow_up)
        if follow_up
        else with_named_product(reading.named_product, plan)
    )
    reconciled = reconcile_limits(reading.product_words, stated, plan)
    tidied, merged = merge_reasoning_runs(reconciled.plan)
    tidied = tidied.model_copy(update={"pick": pick_mode(reading, tidied)})
    early = steps_before_any_search(tidied)
    return ShapedPlan(
        tidied, fixed + reconciled.notes + merged + early + limit_warnings(stated, tidied)
    )
