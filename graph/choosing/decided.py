"""A pick step that code can answer without a model call (issue 25).

The recommendation is chosen in code (graph/choosing/choice.py): among the choices of one
product per item that keep every limit and the budget, the best summed over the items by,
in order, the kind searched for, the wanted features matched, the query's compound named,
the model's own pick, rating and rank. The model's pick is only a tie-break. Asking it
costs a prompt of search results (most of a request's wait on a slow CPU), so the executor
answers the step itself, and says so, when the model has nothing to judge:

- one choice alone scores best on those checks, or none fits and the cheapest is shown:
  no pick the model could make changes the recommendation (a budget shared between items
  too: the trade-off is arithmetic over the same checks);
- the best choices tie, and the products tied for each pick are of one kind and each
  titled as it (Candidate.titled_as_kind): the type check is sure of each, so they are
  equals on everything the request asked, and rating breaks the tie as it does after the
  model's pick. Where some tied product only names the kind (a lens cleaning kit whose
  text names prime lenses, tied with a prime lens), or a gift's tie spans kinds (socks or
  a water bottle for a runner), telling them apart is judgement: the model picks.

This is still the executor running the plan as written: the step runs, its result is
recorded like any other, and nothing goes back to the planner.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial, reduce

from catalog import money
from graph.choosing.choice import (
    Score,
    Scorer,
    add_scores,
    best_combination,
    choose,
    fillable_items,
    request_score,
)
from graph.choosing.picks import Candidate, one_pick_per_search
from graph.choosing.pool import ChoicePool
from graph.schemas import Plan, PlanStep, ProductSummary, StepResult

NOTHING_FOUND = (
    "Decided in code: the searches found no product of the kinds searched for, so there "
    "is nothing to pick."
)
TIE = 1e-9  # summed shares of the query's words: closer than this is a tie, for the model


@dataclass(frozen=True)
class CodeDecision:
    """The products a pick step takes, and why no model was needed, in one sentence.
    `by_rating`: the best choices tied, and rating broke the tie (a model's pick would
    have broken it instead)."""

    picks: list[Candidate]
    why: str
    by_rating: bool = False


def decided_in_code(plan: Plan, step: PlanStep, candidates: list[Candidate]) -> CodeDecision | None:
    """The last step's picks when the checks alone determine them (none, when nothing of
    the kinds searched was found), else None: the best choices tie, and some product in
    them is not titled as its kind, so telling them apart needs the model. `plan` and
    `candidates` are what the recommendation is chosen from (its budget is what is left
    for the new items, and only products it may recommend)."""
    if step.is_search or step.step != len(plan.steps):
        return None  # only the final pick: an earlier reasoning step's text feeds later ones
    items = fillable_items(plan, candidates)
    if not items:
        return CodeDecision([], NOTHING_FOUND)
    pools = [tuple(c for c in item.options if c.within_limits) for item in items]
    checks: Scorer = partial(request_score, plan=plan, by_meaning=False)
    best = best_combination(pools, checks, plan.budget)
    tied = contenders(pools, best, checks, plan.budget) if best is not None else []
    by_rating = any(len(item) > 1 for item in tied)
    if by_rating and not all(_equals(item) for item in tied):
        return None
    choice = choose(plan, candidates, [])
    why = _why(plan, choice.picks, fits=best is not None, by_rating=by_rating)
    return CodeDecision(choice.picks, why, by_rating)


def _equals(tied: list[Candidate]) -> bool:
    """Whether tied candidates for one pick differ only where rating may decide: each
    is titled as its kind, and all are of one kind. Which kind of gift to give (a "one"
    plan's item spans the kinds it searched) is the model's judgement."""
    return all(c.titled_as_kind for c in tied) and len({c.item for c in tied}) == 1


def contenders(
    pools: list[tuple[Candidate, ...]],
    best: tuple[Candidate, ...],
    checks: Scorer,
    budget: float | None,
) -> list[list[Candidate]]:
    """Per pool, the candidates of the choices that score as well as `best` on `checks`:
    those a model's pick could bring into the recommendation. A candidate is one when the
    best choice that holds it ties with `best`."""
    top = _summed(best, checks)

    def ties(index: int, candidate: Candidate) -> bool:
        holding = [(candidate,) if i == index else p for i, p in enumerate(pools)]
        other = best_combination(holding, checks, budget)
        return other is not None and all(
            b >= t - TIE for b, t in zip(_summed(other, checks), top, strict=True)
        )

    return [[c for c in pool if ties(index, c)] for index, pool in enumerate(pools)]


def _summed(choice: tuple[Candidate, ...], checks: Scorer) -> Score:
    return reduce(add_scores, map(checks, choice), ())


def _why(plan: Plan, picks: list[Candidate], *, fits: bool, by_rating: bool) -> str:
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
    budget = "" if plan.budget is None else f", {money(total)} of the {money(plan.budget)} budget"
    if by_rating:
        return (
            f"Decided in code: choices {within} tie on {covered}, each product titled as "
            f"its kind, so the best rated is taken ({ids}{budget})."
        )
    return (
        f"Decided in code: {what} {within} best matches {covered} ({ids}{budget}), "
        "so a model's pick could not change it."
    )


@dataclass(frozen=True)
class PickStep:
    """A pick step's answer in code (`decision`, no model call), or None and the candidates
    the model is shown to pick from."""

    decision: CodeDecision | None
    candidates: list[Candidate]


def decide_pick_step(pool: ChoicePool, step: PlanStep, *, in_code: bool = True) -> PickStep:
    """The pick step `step` over `pool`: decided in code when the checks alone determine
    it (and `in_code` allows it), else the candidates for the model."""
    decision = decided_in_code(pool.plan, step, pool.candidates) if in_code else None
    return PickStep(decision, pool.all_candidates)


def checked_model_picks(
    ids: list[str], results: list[StepResult], candidates: list[Candidate]
) -> tuple[list[ProductSummary], list[str]]:
    """The model's picked `ids` that earlier results hold, one per item, and a warning for
    each kind of id set aside."""
    known = {p.id: p for r in results for p in r.products}
    picked = list(dict.fromkeys(ids))
    unknown = [i for i in picked if i not in known]
    warnings = [f"ignored ids not among earlier results: {', '.join(unknown)}"] if unknown else []
    picked, note = one_pick_per_search([i for i in picked if i in known], candidates)
    return [known[i] for i in picked], warnings + ([note] if note else [])
