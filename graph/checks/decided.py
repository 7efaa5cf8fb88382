"""A pick step that code can answer without a model call (issue 25).

The recommendation is chosen in code (graph/checks/choice.py) by, in order: the kind
searched for, the wanted features matched, the model's own pick, rating and rank. The
model's pick is only a tie-break: when every item has one option that fits its limits and
beats all its other options on kind and features, and those options together fit the
budget, no pick the model could make changes the recommendation. Asking it then costs a
prompt of search results (most of a request's wait on a slow CPU) and decides nothing, so
the executor answers that step itself and says so.

This is still the executor running the plan as written: the step runs, its result is
recorded like any other, and nothing goes back to the planner.
"""

from __future__ import annotations

from dataclasses import dataclass

from graph.checks.choice import CENT, coverage_of, items_of
from graph.checks.picks import Candidate
from graph.state import Plan, PlanStep


@dataclass(frozen=True)
class CodeDecision:
    """The products a pick step takes, and why no model was needed, in one sentence."""

    picks: list[Candidate]
    why: str


def decided_in_code(plan: Plan, step: PlanStep, candidates: list[Candidate]) -> CodeDecision | None:
    """The last step's picks when the checks alone determine them, else None (the step
    needs a model's judgement: a tie on kind and features, or a budget to share)."""
    if step.is_search or step.step != len(plan.steps):
        return None  # only the final pick: an earlier reasoning step's text feeds later ones
    items = [item for item in items_of(plan, candidates) if item.options]
    if not items:
        return None
    picks: list[Candidate] = []
    for item in items:
        fitting = sorted(
            (c for c in item.options if c.within_limits),
            key=lambda c: coverage_of(c, plan),
            reverse=True,
        )
        if not fitting:
            return None
        if len(fitting) > 1 and coverage_of(fitting[1], plan) == coverage_of(fitting[0], plan):
            return None  # a tie on the checks: the model's pick would decide it
        picks.append(fitting[0])
    ids = [c.summary.id for c in picks]
    if len(set(ids)) < len(ids):
        return None  # one product best for two items: which item keeps it is a choice
    total = sum(c.summary.price for c in picks)
    if plan.budget is not None and total > plan.budget + CENT:
        return None  # the best of each together break the budget: a trade-off to weigh
    return CodeDecision(picks, _why(plan, picks, total))


def _why(plan: Plan, picks: list[Candidate], total: float) -> str:
    what = "one option" if len(picks) == 1 else "each item has one option"
    covered = (
        "the kind searched for and the most wanted features"
        if plan.features
        else ("the kind searched for")
    )
    budget = "" if plan.budget is None else f", ${total:,.2f} of the ${plan.budget:,.2f} budget"
    return (
        f"Decided in code: {what} within the limits that best matches {covered} "
        f"({', '.join(c.summary.id for c in picks)}{budget}), so a model's pick could not "
        "change it."
    )
