"""The checked recommendation, chosen and checked in code after the last step (no LLM):
one product per item within every limit and the budget when the pools allow it
(choice.py), prices from the catalog, the total compared with the budget, and what is
missing or over named."""

from __future__ import annotations

from catalog import CatalogBackend, money
from graph.choosing.choice import choose
from graph.choosing.kept import with_kept
from graph.choosing.picks import drops_stated_limit, missing_items
from graph.choosing.pool import ChoicePool
from graph.schemas import FollowUp, Outcome, Plan, ProductSummary, StatedLimits, StepResult

NOT_SHOPPING_NOTE = (
    "this is not a shopping request: nothing was searched and nothing is recommended"
)
# What a follow-up of each kind does, as the outcome says it ran.
_RAN_AS = {
    "cheaper": "cheaper than the earlier pick",
    "dearer": "dearer than the earlier pick",
    "add": "an item added beside the earlier picks",
    "replace": "a swap of an earlier pick",
    "refine": "the same item searched anew, with no price limit from the earlier pick",
    "new": "a new request, nothing carried over",
}


def model_picks(results: list[StepResult]) -> list[str]:
    """The ids the model picked, in its order: the last pick step it answered gives them.
    A step code answered is no model's pick: with none, code chooses alone."""
    said = next((r for r in reversed(results) if r.kind == "reasoning" and r.products), None)
    return [p.id for p in said.products] if said and not said.decided_in_code else []


def checked_outcome(
    plan: Plan,
    pool: ChoicePool,
    results: list[StepResult],
    *,
    stated: StatedLimits,
    follow_up: FollowUp | None,
    plan_warnings: list[str],
    catalog: CatalogBackend,
) -> Outcome:
    """The outcome of `plan` (the plan that ran) after `results`, chosen from `pool`."""
    if plan.not_shopping:
        return Outcome(not_shopping=True, warnings=[NOT_SHOPPING_NOTE])
    # Code chooses the recommendation over every search's pool, keeping the model's picks
    # where none covers the request better.
    model_ids = model_picks(results)
    candidates, found = pool.all_candidates, pool.found
    outcome = Outcome(budget=plan.budget)
    outcome.warnings += [
        f"{i} matches none of the request's words; it is not recommended"
        for i in dict.fromkeys(model_ids)
        if i in pool.unrelated
    ]
    choice = choose(pool.plan, pool.candidates, model_ids)
    # Each pick as the catalog has it now (price and title from the record, not a step).
    picked = [ProductSummary.of(found[c.summary.id]) for c in choice.picks]
    outcome.picks, outcome.reasons, gone = with_kept(picked, choice.reasons, follow_up, catalog)
    # Each pick's item, passed on so a follow-up knows what "a cheaper grinder" refers to.
    kept = {p.id: p.item for p in follow_up.kept} if follow_up else {}
    chosen = {i: item.query for i, item in choice.items.items()}
    outcome.items = {p.id: kept.get(p.id) or chosen.get(p.id, "") for p in outcome.picks}
    outcome.warnings += gone
    outcome.warnings += [
        f"{i}, the earlier pick, is not recommended again: it lacks what the follow-up wants"
        for i in sorted(pool.earlier)
    ]
    again = (
        {p.id for p in follow_up.replaced} if follow_up and follow_up.kind == "refine" else set()
    )
    outcome.warnings += [
        f"{p.id}, the earlier pick, is recommended again: it meets what the follow-up asks"
        for p in outcome.picks
        if p.id in again
    ]
    if follow_up is not None and follow_up.planner_kind != follow_up.kind:
        # Code ran another reading than the planner's: the recommendation says which.
        read = _RAN_AS.get(follow_up.planner_kind or "", "no usable reading")
        outcome.warnings.append(
            f"the follow-up ran as {_RAN_AS[follow_up.kind]}, not as the planner read it "
            f"({read}); the plan's notes say why"
        )
    outcome.unknown_ids = [i for i in dict.fromkeys(model_ids) if i not in found]
    if drops_stated_limit(stated, plan):
        # The plan's budget is not what the shopper asked for: say so, never "within budget".
        outcome.dropped_limit = stated.budget
    # A limit in another currency was never applied: the total is not compared with it.
    outcome.unapplied_limits = [f"{f.shown} ({f.currency})" for f in stated.foreign]
    outcome.total_price = round(sum(p.price for p in outcome.picks), 2)
    filled = {item.step for item in choice.items.values()}
    outcome.missing = missing_items(plan, results, outcome.picks, filled, candidates, pool.listed)
    if outcome.unknown_ids:
        outcome.warnings.append(f"not in the catalog: {', '.join(outcome.unknown_ids)}")
    if not outcome.picks:
        outcome.warnings.append("no product could be recommended")
    if outcome.dropped_limit is not None:
        # within_budget stays None: the plan's budget is not one the shopper set.
        if outcome.total_price > outcome.dropped_limit:
            outcome.warnings.append(
                f"total {money(outcome.total_price)} is over the "
                f"{money(outcome.dropped_limit)} limit the request states"
            )
    elif outcome.budget is not None:
        if outcome.total_price > outcome.budget:
            outcome.within_budget = False
            outcome.warnings.append(
                f"total {money(outcome.total_price)} is over the budget of {money(outcome.budget)}"
            )
        elif outcome.picks and not outcome.missing and not stated.several:
            # Only a whole recommendation is "within budget": a part of one, or none, is
            # not, nor one of each where the request asks for several of an item.
            outcome.within_budget = True
    if outcome.picks and not choice.fits:
        outcome.warnings.extend(choice.notes)  # nothing fits: how far the cheapest is over
    outcome.warnings.extend(item.describe() for item in outcome.missing)
    outcome.warnings.extend(f"plan: {warning}" for warning in plan_warnings)
    for result in results:
        if result.error:
            outcome.warnings.append(f"step {result.step} failed: {result.error}")
        elif result.kind == "search" and not result.products:
            within = " within its limits" if result.pool else ""
            outcome.warnings.append(f"step {result.step} found no products{within}")
    return outcome
