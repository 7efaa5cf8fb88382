"""A pick step that code can answer without a model call (issue 25).

The recommendation is chosen in code (graph/checks/choice.py): among the choices of one
product per item that keep every limit and the budget, the best summed over the items by,
in order, the kind searched for, the wanted features matched, the model's own pick, rating
and rank. The model's pick is only a tie-break. So when one choice alone scores best on
kind and features, or when no choice fits and the cheapest is shown, no pick the model
could make changes the recommendation. Asking it then costs a prompt of search results
(most of a request's wait on a slow CPU) and decides nothing, so the executor answers that
step itself and says so. That covers a budget shared between items too: the trade-off is
arithmetic over the same checks.

This is still the executor running the plan as written: the step runs, its result is
recorded like any other, and nothing goes back to the planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from graph.checks.choice import (
    Score,
    Scorer,
    add_scores,
    best_combination,
    choose,
    coverage_of,
    items_of,
)
from graph.checks.picks import Candidate
from graph.state import Plan, PlanStep

NOTHING_FOUND = (
    "Decided in code: the searches found no product of the kinds searched for, so there "
    "is nothing to pick."
)
TIE = 1e-9  # summed shares of the query's words: closer than this is a tie, for the model


@dataclass(frozen=True)
class CodeDecision:
    """The products a pick step takes, and why no model was needed, in one sentence."""

    picks: list[Candidate]
    why: str


def decided_in_code(plan: Plan, step: PlanStep, candidates: list[Candidate]) -> CodeDecision | None:
    """The last step's picks when the checks alone determine them (none, when nothing of
    the kinds searched was found), else None: two choices tie on kind and features, and
    the model's pick would break the tie. `plan` and
    `candidates` are what the recommendation is chosen from (its budget is what is left
    for the new items, and only products it may recommend)."""
    if step.is_search or step.step != len(plan.steps):
        return None  # only the final pick: an earlier reasoning step's text feeds later ones
    items = [item for item in items_of(plan, candidates) if item.options]
    if not items:
        return CodeDecision([], NOTHING_FOUND)
    pools = [tuple(c for c in item.options if c.within_limits) for item in items]

    def checks(candidate: Candidate) -> Score:
        return coverage_of(candidate, plan)

    best = best_combination(pools, checks, plan.budget)
    if best is not None and _tied(pools, best, checks, plan.budget):
        return None
    choice = choose(plan, candidates, [])
    return CodeDecision(choice.picks, _why(plan, choice.picks, fits=best is not None))


def _tied(
    pools: list[tuple[Candidate, ...]],
    best: tuple[Candidate, ...],
    checks: Scorer,
    budget: float | None,
) -> bool:
    """Whether another choice scores as well as `best` on the checks: one that differs
    from it in some item, so the best choice without that item's pick."""
    top = _summed(best, checks)
    for index, pick in enumerate(best):
        without = [
            tuple(c for c in pool if c.summary.id != pick.summary.id) if i == index else pool
            for i, pool in enumerate(pools)
        ]
        other = best_combination(without, checks, budget)
        if other is not None and all(
            b >= t - TIE for b, t in zip(_summed(other, checks), top, strict=True)
        ):
            return True
    return False


def _summed(choice: tuple[Candidate, ...], checks: Scorer) -> Score:
    return reduce(add_scores, map(checks, choice), ())


def _why(plan: Plan, picks: list[Candidate], *, fits: bool) -> str:
    ids = ", ".join(c.summary.id for c in picks)
    if not fits:
        return (
            "Decided in code: no choice of one product per item keeps every limit and the "
            f"budget, so the cheapest is shown ({ids}); a model's pick could not change it."
        )
    total = sum(c.summary.price for c in picks)
    covered = (
        "the kind searched for and the most wanted features"
        if plan.features
        else "the kind searched for"
    )
    within = "within the limits" if plan.budget is None else "within the limits and the budget"
    what = "one option" if len(picks) == 1 else "one choice of one product per item"
    budget = "" if plan.budget is None else f", ${total:,.2f} of the ${plan.budget:,.2f} budget"
    return (
        f"Decided in code: {what} {within} best matches {covered} ({ids}{budget}), "
        "so a model's pick could not change it."
    )
