"""The plan reconciled with the limits its request states (graph/reading/stated.py): a
limit the request states fills a step's empty filter, a limit it does not state is
removed, each step gets its item's cap, and a query of no product words gets some. Every
change is recorded on the plan, so the person approving it sees exactly what will run.
No LLM call happens here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from catalog.models import PRICE_CURRENCY, money
from catalog.text import product_words, stem, word_stems
from graph.reading.phrases import bare_amounts
from graph.reading.stated import MAX_QUERY_WORDS, listed_items, read_limits, without_limit_phrases
from graph.schemas import ItemCap, Plan, PlanStep, RequestReading, StatedLimits


def same_amount(a: float, b: float) -> bool:
    """Two limits are the same to the cent (the one comparison every check here uses)."""
    return math.isclose(a, b, abs_tol=0.005)


def _stated(value: float, stated: tuple[float, ...]) -> bool:
    return any(same_amount(value, s) for s in stated)


# The step filters code reconciles, in the words its notes use.
LIMIT_LABELS = {
    "max_price": "price cap",
    "min_price": "price floor",
    "min_rating": "minimum rating",
}


def _shown(name: str, value: float) -> str:
    return f"{value:g} stars" if name == "min_rating" else money(value)


def _allowed(stated: StatedLimits, name: str) -> tuple[float, ...]:
    """The values the request states for a filter of this kind."""
    return stated.ratings if name == "min_rating" else stated.prices


@dataclass
class Reconciled:
    """The plan as it will run, and what was changed in code to make it so."""

    plan: Plan
    notes: list[str] = field(default_factory=list)


def step_cap(step: PlanStep, stated: StatedLimits) -> tuple[float | None, ItemCap | None]:
    """The price cap a search step is held to: the cap stated for its item when the
    request gives one per item (matched by product words of the step's query and
    action), else the request's one cap, else its total (no item costs more than all)."""
    if stated.item_caps:
        mine = word_stems(f"{step.query or ''} {step.action}")
        overlap = [
            (len(mine & {stem(w) for w in cap.words}), -n, cap)
            for n, cap in enumerate(stated.item_caps)
        ]
        best = max(overlap, key=lambda o: o[:2])
        if best[0] > 0:
            return best[2].max_price, best[2]
    if stated.max_price is not None:
        return stated.max_price, None
    return stated.total, None


def model_read_limits(reading: RequestReading, plan: Plan) -> tuple[RequestReading, list[str]]:
    """The reading with the planner model's cap where code read none: an amount code
    read as a floor ("doesn't cost more than $40"), written with no currency ("without
    going over eighty") or in number words code cannot read ("a dozen dollars"); and its
    rating where code read the whole stars only ("cuatro estrellas y media"). Taken only
    where the request writes that amount, and named at approval."""
    stated, items, read = reading.limits, reading.items, reading.limits.min_rating
    ratings = {s.min_rating for s in plan.search_steps}
    rating = ratings.pop() if len(ratings) == 1 else None
    update: dict[str, object] = {}
    notes: list[str] = []
    if rating is not None and read is not None and read.is_integer() and read < rating < read + 1:
        update = {"min_rating": rating, "ratings": tuple(sorted({*stated.ratings, rating}))}
        notes.append(f"the request's {read:g} stars are read as {rating:g}")
    caps = {s.max_price for s in plan.search_steps}
    cap = plan.budget if plan.budget is not None else (caps.pop() if len(caps) == 1 else None)
    read_by_code = stated.budget is not None or bool(stated.item_caps)
    if cap is None and not read_by_code:
        # A small model may state the cap in its own words only ("Pick one ... within $60").
        cap = read_limits(" ".join([plan.goal, *(s.action for s in plan.steps)])).budget
    floor = stated.min_price
    if cap is None or read_by_code:
        cap = None
    elif floor is not None and cap < floor - 0.005:
        cap = None  # below the floor the request states: no product is both
    elif floor is not None and same_amount(cap, floor):
        # The phrases read "more than" or "over" and missed a negation the model read.
        update["min_price"] = None
        notes.append(f"the request's {money(cap)} is read as a cap, not a floor")
    elif not _stated(cap, stated.prices) and _stated(cap, tuple(bare_amounts(reading.text))):
        update["prices"] = tuple(sorted({*stated.prices, cap}))
        notes.append(f"the request's {cap:g} is read as a cap of {money(cap)}")
        # The clause that writes the cap lists no item ("a strap, fifty at most").
        clauses = re.split(r"(?<=[,;:.!?])\s", reading.text)
        items = tuple(listed_items(" ".join(c for c in clauses if cap not in bare_amounts(c))))
    elif len(stated.unreadable) == 1 and not stated.prices and stated.unreadable[0][0].isalpha():
        # Number words beside a currency that code cannot read ("a couple hundred dollars",
        # "шестидесяти долларов"): the model's reading of them, shown with them.
        update.update(prices=(cap,), unreadable=())
        notes.append(f"the request's {stated.unreadable[0]!r} is read as a cap of {money(cap)}")
    else:
        cap = None
    if cap is not None:
        update["total" if items else "max_price"] = cap
    limits = stated.model_copy(update=update)
    notes = [f"{n}, as the planner read it; edit the plan if another limit is meant" for n in notes]
    return reading.model_copy(update={"limits": limits, "items": items}), notes


def reconcile_limits(request_words: Sequence[str], stated: StatedLimits, plan: Plan) -> Reconciled:
    """Fill each search step's empty limit from the request's `stated` limits, and remove
    limits the request does not state. Each change is named in `notes` and marked on the
    step. The request's product words (RequestReading.product_words) are a query of no
    product words' last resort."""
    notes: list[str] = []
    budget = plan.budget
    if budget is not None and not _stated(budget, stated.prices):
        notes.append(f"budget {money(budget)} is not stated in the request: removed")
        budget = None
    if budget is not None and stated.max_price_each and stated.total is None:
        # "$25 each" caps every item, not the whole ("three straps, $25 each").
        notes.append(f"budget {money(budget)} is the request's cap on each item: removed")
        budget = None
    if budget is not None and stated.budget is not None and not same_amount(budget, stated.budget):
        # One cap (or one total) stated, so the budget can only be that ("$400 to $600"
        # once gave a budget of 400, the floor).
        notes.append(
            f"budget {money(budget)} is not the request's cap: set to {money(stated.budget)}"
        )
        budget = stated.budget
    if budget is None and stated.budget is not None:
        budget = stated.budget
    steps = [
        _reconcile_step(step, request_words, stated, notes)
        for step in _without_limit_searches(plan, notes)
    ]
    update = {"budget": budget, "steps": steps}
    return Reconciled(plan.model_copy(update=update), notes)


def _without_limit_searches(plan: Plan, notes: list[str]) -> list[PlanStep]:
    """The plan's steps without searches for a limit alone ("rating: 4.5 stars", "300
    customer reviews"): limits belong in the filters, and a query of no product words
    finds nothing the shopper wants. Kept if every search is such a step (its query is
    then written anew, by _query_of)."""
    kept = [s for s in plan.steps if not s.is_search or product_words(s.query or "")]
    if len(kept) == len(plan.steps) or not any(s.is_search for s in kept):
        return list(plan.steps)
    notes += [
        f"step {step.step} searched for {step.query!r}, a limit and no product: removed"
        for step in plan.steps
        if step not in kept
    ]
    return [s.model_copy(update={"step": n}) for n, s in enumerate(kept, start=1)]


def _query_of(step: PlanStep, request_words: Sequence[str], notes: list[str]) -> str:
    """The step's query without its limit phrases. A query that is only a limit, a stop
    word or nothing ("under 200 dollars") finds nothing the shopper wants: the product
    words of the step's action are searched instead, else those of the request."""
    query = without_limit_phrases(step.query or "")
    if product_words(query):
        return query
    action_words = product_words(without_limit_phrases(step.action))
    for source, words in (("the step's action", action_words), ("the request", request_words)):
        words = list(words)[:MAX_QUERY_WORDS]
        if words:
            replacement = " ".join(words)
            notes.append(
                f"step {step.step}: query {step.query!r} names no product: searched for "
                f"{replacement!r} (from {source})"
            )
            return replacement
    return step.query or ""


def _reconcile_step(
    step: PlanStep, request_words: Sequence[str], stated: StatedLimits, notes: list[str]
) -> PlanStep:
    if not step.is_search:
        # A reasoning step runs no search: limits on it are never used, so none are kept.
        return step.model_copy(update={"max_price": None, "min_price": None, "min_rating": None})
    values = {name: getattr(step, name) for name in LIMIT_LABELS}
    query = _query_of(step, request_words, notes)
    cap, item_cap = step_cap(step.model_copy(update={"query": query}), stated)
    one_cap = stated.max_price if item_cap is None else None
    filled: list[str] = list(step.filled_from_request)
    wanted_of = {"max_price": cap, "min_price": stated.min_price, "min_rating": stated.min_rating}
    for name, wanted in wanted_of.items():
        value = values[name]
        why: str | None = None  # why the step's own value goes, in its note
        if value is None:
            pass
        elif not _stated(value, _allowed(stated, name)):
            why = "is not stated in the request: removed"
        elif name == "max_price" and item_cap and not same_amount(value, item_cap.max_price):
            # "shoes under $100 and a cap under $20": the $100 on the cap's search is
            # the shoes' limit.
            why = (
                f"is another item's: set to {money(item_cap.max_price)} "
                f"({item_cap.text}, for {' '.join(item_cap.words)})"
            )
        elif name == "max_price" and one_cap is not None and value > one_cap + 0.005:
            # "under $60, no, under $40": $60 is stated, but not the cap applied.
            why = f"is above the request's cap: set to {money(one_cap)}"
        elif name == "min_price" and stated.min_price is None and cap is not None and value >= cap:
            # "under $80" written as min_price 80 excludes everything the shopper can afford.
            why = "is the request's cap, not a floor: removed"
        if why is not None:
            notes.append(f"step {step.step}: {LIMIT_LABELS[name]} {_shown(name, value)} {why}")
            value = None
        if value is None and wanted is not None:
            value = wanted
            filled.append(name)
        values[name] = value
    low, high = values["min_price"], values["max_price"]
    if low is not None and high is not None and low > high:
        values["min_price"], values["max_price"] = high, low
    filled = list(dict.fromkeys(f for f in filled if values[f] is not None))
    return step.model_copy(update={**values, "query": query, "filled_from_request": filled})


def limit_warnings(stated: StatedLimits, plan: Plan) -> list[str]:
    """Where the plan's search filters and the request's `stated` limits differ: a stated
    limit some search step does not carry, a limit the request does not state, and a
    limit stated in another currency than the catalog's, which is never applied, an amount
    that is no number, and limits of one kind where only one can hold. Shown
    with the plan for approval (a person's edit is checked the same way, never changed)."""
    searches = plan.search_steps
    warnings = [
        f"the request states {foreign.shown!r} in {foreign.currency}, but the catalog's "
        f"prices are in {PRICE_CURRENCY}: it is not applied (no exchange rates offline); "
        f"edit the plan to set a limit in {PRICE_CURRENCY}"
        for foreign in stated.foreign
    ]
    warnings += [
        f"the request's amount {unreadable!r} cannot be read as a number: no limit is "
        "taken from it; edit the plan to set the limit meant"
        for unreadable in stated.unreadable
    ]
    warnings += [
        f"the request asks for {several!r}: the plan recommends one of each item, and its "
        "total counts each once; edit the plan, or buy the number asked for"
        for several in stated.several
    ]
    warnings += [
        f"the request states {len(choice.stated)} limits of one kind ({choice.kind}): "
        f"{', '.join(repr(s) for s in choice.stated)}; {choice.applied!r} is applied, the "
        "last stated; edit the plan if another is meant"
        for choice in stated.choices
    ]
    for name, label in LIMIT_LABELS.items():
        missing = []
        for step in searches:
            value = step_cap(step, stated)[0] if name == "max_price" else getattr(stated, name)
            if value is not None and getattr(step, name) is None:
                missing.append((step.step, value))
        if name == "max_price" and plan.budget is not None:
            missing = [(n, v) for n, v in missing if not same_amount(plan.budget, v)]
        for value in dict.fromkeys(v for _, v in missing):
            steps = ", ".join(str(n) for n, v in missing if v == value)
            warnings.append(
                f"the request states a {label} of {_shown(name, value)}, but step {steps} "
                "does not carry it"
            )
    if plan.budget is not None and not _stated(plan.budget, stated.prices):
        warnings.append(f"budget {money(plan.budget)} is not stated in the request")
    for step in searches:
        for name, label in LIMIT_LABELS.items():
            value = getattr(step, name)
            if value is not None and not _stated(value, _allowed(stated, name)):
                warnings.append(
                    f"step {step.step}: {label} {_shown(name, value)} is not stated in the request"
                )
        if plan.budget and step.min_price is not None and step.min_price >= plan.budget:
            warnings.append(
                f"step {step.step}: min_price {money(step.min_price)} is not below the budget "
                f"{money(plan.budget)}; the limit probably belongs in max_price"
            )
    return warnings
