"""The limits a shopper states (price cap, price floor, minimum rating), read from the
request in code, and carried into every search step's filters.

A small model drops stated limits (it writes `max_price: null`) and invents others ("at
least 300 reviews" became `min_price` 300). So the request is read here, once, and the
plan is reconciled with it: a limit the request states fills a step's empty filter, and a
limit the request does not state is removed. Both are recorded on the plan, so the person
approving it sees exactly what will run. No LLM call happens here.

The reading is deliberately conservative: a number counts as a price only with a currency
mark ("$40", "40 dollars", "40 USD") or a price word beside it ("priced under 40",
"budget 40"); a rating only with "star(s)" or "rating"/"rated" beside it. Sizes, counts
and review numbers ("10 to 10.9 inches", "6 to 8 outlets", "300 reviews") are neither.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graph.caps import StatedLimits, validate_request
from graph.checks.words import product_words
from graph.state import Plan, PlanStep

_NUMBER = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
# A price: "$40", "$ 40", "40 dollars", "40 USD", "USD 40", "40 bucks", "40$".
_CURRENCY_AFTER = r"(?:\$|dollars?\b|d[oó]lares\b|usd\b|bucks\b)"
_PRICE = rf"(?:\$\s*{_NUMBER}|(?:usd|us\$)\s*{_NUMBER}|{_NUMBER}\s*{_CURRENCY_AFTER})"
# A number that is a price only because a price word stands right before it.
_PRICED_NUMBER = rf"(?:{_PRICE}|(?<![\w.]){_NUMBER}(?![\w.%]|\s*(?:-|to)?\s*(?:star|%)))"

_UPPER = (
    r"under|below|less than|lower than|cheaper than|at most|up to|no more than|not more than|"
    r"no higher than|not higher than|not exceeding|not to exceed|no greater than|max(?:imum)?"
    r"(?: price| budget| cost)?(?: of)?|price cap of|cap of|budget(?: of| is|:)?|within"
    r"(?: a| my| the)?(?: budget| price)?(?: of)?|for less than|or less|<=?|≤"
)
_LOWER = (
    r"over|above|more than|at least|no less than|not less than|starting at|min(?:imum)?"
    r"(?: price| cost)?(?: of)?|>=?|≥"
)
_PRICE_WORDS = r"price[sd]?|priced|costs?|costing|budget|spend|pay|paying"
# "free shipping on orders over $25": a threshold of the shop, not a limit on the item.
_NOT_A_LIMIT = re.compile(
    r"\b(?:shipping|delivery|orders?|purchases?|spend(?:ing)?|gift cards?|coupons?|discounts?"
    r"|off|saves?|savings)\W+(?:\w+\W+)?$",
    re.IGNORECASE,
)

_RANGE = re.compile(
    rf"(?:between|from|range of|range|ranging from)?\s*{_PRICE}\s*(?:-|–|to|and)\s*"
    rf"(?:{_PRICE}|{_NUMBER}(?![\w.%]))",
    re.IGNORECASE,
)
_PRICE_RANGE_WORDS = re.compile(
    rf"(?:{_PRICE_WORDS})\s+(?:range\s+)?(?:of\s+|between\s+|from\s+)?{_NUMBER}\s*(?:-|–|to|and)"
    rf"\s*{_NUMBER}(?!\s*(?:star|%|[a-z]))",
    re.IGNORECASE,
)
_UPPER_LIMIT = re.compile(
    rf"(?:{_UPPER})\s*(?:the\s+|a\s+|an\s+)?(?:price\s+of\s+)?{_PRICE}"
    rf"|(?:(?:{_PRICE_WORDS})\s+(?:{_UPPER})\s*{_PRICED_NUMBER})"
    rf"|{_PRICE}\s*(?:or less|or under|or below|max(?:imum)?\b|at most|tops|total|in total)",
    re.IGNORECASE,
)
_LOWER_LIMIT = re.compile(
    rf"(?:{_LOWER})\s*{_PRICE}|(?:(?:{_PRICE_WORDS})\s+(?:{_LOWER})\s*{_PRICED_NUMBER})"
    rf"|{_PRICE}\s*(?:or more|or above|or higher|and up|minimum|min\b|at least)",
    re.IGNORECASE,
)
_BARE_PRICE = re.compile(_PRICE, re.IGNORECASE)
_BUDGET_NUMBER = re.compile(rf"\bbudget(?: of| is|:)?\s*{_NUMBER}(?![\w.%])", re.IGNORECASE)

_STARS = r"(?:-|\s)?(?:\+\s*)?(?:stars?|star rating)"
_RATING = re.compile(
    # "4.5 stars or higher", "at least 4.5-star", "4+ stars", "4.5+ star rating"
    rf"(?:(?:at least|minimum(?: of)?|min(?:imum)? rating(?: of)?|no less than|not less than|"
    rf"above|over|exceeding|more than|higher than|rated|rating(?: of)?)\s*(?:an?\s+)?)?"
    rf"(\d(?:\.\d+)?)\s*(\+)?{_STARS}(?:\s*(or (?:higher|more|above|better|up)|and (?:up|above)"
    rf"|\+|minimum|min|or greater))?"
    # "rated above 4", "a rating of at least 4.5", "rating exceeding 4.0", "4.5+ rating"
    rf"|(?:rated|rating|ratings|reviews? score)\s+(?:of\s+)?(?:at least|above|over|exceeding|"
    rf"no less than|not less than|higher than|more than|of|>=?|≥)\s*(\d(?:\.\d+)?)(?![\d.%]|\s*"
    rf"(?:reviews?|ratings?|customers?|users?|people|buyers))"
    rf"|(\d(?:\.\d+)?)\s*\+\s*(?:rating|rated)",
    re.IGNORECASE,
)
_STAR_WORD_BEFORE = re.compile(r"(?:at least|minimum|min|no less than|above|over|rated)\s*$", re.I)

_UNIT_AFTER = re.compile(
    r"\s*(?:-|\s)?(?:reviews?|ratings?|customers?|users?|stars?|inch|inches|in\b|\"|mm|cm|m\b|"
    r"ft|feet|foot|sq|lbs?|pounds?|oz|ounces?|kg|g\b|grams?|qt|quarts?|l\b|liters?|litres?|"
    r"ml|watts?|w\b|v\b|volts?|mah|gb|tb|mb|ghz|mhz|hz|hours?|hrs?|h\b|days?|weeks?|months?|"
    r"years?|yrs?|pack|pcs|pieces?|count|ct\b|cards?|slots?|outlets?|ports?|bands?|books?|"
    r"people|persons?|seats?|%|percent|x\b|k\b|p\b|fps|pairs?|sets?|items?|colou?rs?|"
    r"shades?|sizes?|cups?|servings?|capsules?|tablets?|pills?|bags?|rolls?|sheets?)",
    re.IGNORECASE,
)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _first(groups: tuple[str | None, ...]) -> list[float]:
    return [_number(g) for g in groups if g]


def _price_spans(request: str) -> list[tuple[int, int, str, list[float]]]:
    """(start, end, kind, values) of each price phrase, kind being range/max/min/bare. A
    phrase overlapping one already read (ranges first) is skipped; shop thresholds
    ("free shipping over $25") are read with no values."""
    found: list[tuple[int, int, str, list[float]]] = []
    for kind, pattern in (
        ("range", _RANGE),
        ("range", _PRICE_RANGE_WORDS),
        ("max", _UPPER_LIMIT),
        ("min", _LOWER_LIMIT),
        ("max", _BUDGET_NUMBER),
        ("bare", _BARE_PRICE),
    ):
        for match in pattern.finditer(request):
            start, end = match.span()
            if any(start < e and s < end for s, e, _, _ in found):
                continue
            values = _first(match.groups())
            if kind == "range" and len(values) < 2:
                continue
            if _NOT_A_LIMIT.search(request[max(0, start - 40) : start]):
                values = []  # read, so no shorter pattern reads it again, but not a limit
            found.append((start, end, kind, values))
    return found


def read_limits(request: str) -> StatedLimits:
    """The price cap, price floor and minimum rating the request states. The planner node
    calls it once per run and stores the result (State.stated_limits)."""
    uppers: set[float] = set()
    lowers: set[float] = set()
    bare: set[float] = set()
    prices: set[float] = set()
    for _, _, kind, values in _price_spans(request):
        prices.update(values)
        if not values:
            continue
        if kind == "range":
            low, high = sorted(values[:2])  # "between $300 and $100" means 100 to 300
            lowers.add(low)
            uppers.add(high)
        elif kind == "max":
            uppers.add(values[0])
        elif kind == "min":
            lowers.add(values[0])
        else:
            bare.add(values[0])
    if not uppers and not lowers and len(bare) == 1:
        # One price named with no word around it ("a $50 gift"): what the shopper means
        # to spend at most.
        uppers = bare
    ratings: set[float] = set()
    for match in _RATING.finditer(request):
        value = _first(match.groups()[:1] + match.groups()[3:])
        if value and 0 < value[0] <= 5:
            ratings.add(value[0])
    return StatedLimits(
        max_price=_single(uppers),
        min_price=_single(lowers),
        min_rating=_single(ratings),
        prices=tuple(sorted(prices | uppers | lowers)),
        ratings=tuple(sorted(ratings)),
    )


def request_facts(values: Mapping[str, Any]) -> tuple[str, StatedLimits]:
    """The cleaned request and its stated limits, as the planner stored them in a run's
    state. A run saved before the planner stored them (paused at approval by an older
    version) has them worked out here, once, from its raw request."""
    request, stated = values.get("clean_request"), values.get("stated_limits")
    if request is not None and stated is not None:
        return request, StatedLimits.model_validate(stated)
    request = validate_request(values.get("request", ""))
    return request, read_limits(request)


def _single(values: set[float]) -> float | None:
    return next(iter(values)) if len(values) == 1 else None


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
    return f"{value:g} stars" if name == "min_rating" else _money(value)


def _allowed(stated: StatedLimits, name: str) -> tuple[float, ...]:
    """The values the request states for a filter of this kind."""
    return stated.ratings if name == "min_rating" else stated.prices


@dataclass
class Reconciled:
    """The plan as it will run, and what was changed in code to make it so."""

    plan: Plan
    notes: list[str] = field(default_factory=list)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def reconcile_limits(stated: StatedLimits, plan: Plan) -> Reconciled:
    """Fill each search step's empty limit from the request's `stated` limits, and remove
    limits the request does not state. Each change is named in `notes` and marked on the
    step."""
    notes: list[str] = []
    budget = plan.budget
    if budget is not None and not _stated(budget, stated.prices):
        notes.append(f"budget {_money(budget)} is not stated in the request: removed")
        budget = None
    if (
        budget is not None
        and stated.max_price is not None
        and not same_amount(budget, stated.max_price)
    ):
        # One cap stated, so the budget can only be that cap ("$400 to $600" once gave
        # a budget of 400, the floor).
        notes.append(
            f"budget {_money(budget)} is not the request's cap: set to {_money(stated.max_price)}"
        )
        budget = stated.max_price
    if budget is None and stated.max_price is not None:
        budget = stated.max_price
    cap = stated.max_price if stated.max_price is not None else budget
    steps = [
        _reconcile_step(step, stated, cap, notes) for step in _without_limit_searches(plan, notes)
    ]
    update = {"budget": budget, "steps": steps}
    return Reconciled(plan.model_copy(update=update), notes)


def _without_limit_searches(plan: Plan, notes: list[str]) -> list[PlanStep]:
    """The plan's steps without searches for a limit alone ("rating: 4.5 stars", "300
    customer reviews"): limits belong in the filters, and a query of no product words
    finds nothing the shopper wants. Kept if every search is such a step."""
    kept = [s for s in plan.steps if not s.is_search or product_words(s.query or "")]
    if len(kept) == len(plan.steps) or not any(s.is_search for s in kept):
        return list(plan.steps)
    for step in plan.steps:
        if step not in kept:
            notes.append(
                f"step {step.step} searched for {step.query!r}, a limit and no product: removed"
            )
    return [s.model_copy(update={"step": n}) for n, s in enumerate(kept, start=1)]


def _reconcile_step(
    step: PlanStep, stated: StatedLimits, cap: float | None, notes: list[str]
) -> PlanStep:
    if not step.is_search:
        # A reasoning step runs no search: limits on it are never used, so none are kept.
        return step.model_copy(update={"max_price": None, "min_price": None, "min_rating": None})
    values = {
        "max_price": step.max_price,
        "min_price": step.min_price,
        "min_rating": step.min_rating,
    }
    query = query_without_limits(step.query or "")
    filled: list[str] = list(step.filled_from_request)
    wanted_of = {"max_price": cap, "min_price": stated.min_price, "min_rating": stated.min_rating}
    for name, wanted in wanted_of.items():
        value = values[name]
        if value is not None and not _stated(value, _allowed(stated, name)):
            notes.append(
                f"step {step.step}: {LIMIT_LABELS[name]} {_shown(name, value)} is not stated "
                "in the request: removed"
            )
            value = None
        if (
            value is not None
            and name == "min_price"
            and stated.min_price is None
            and cap is not None
            and value >= cap
        ):
            # "under $80" written as min_price 80 excludes everything the shopper can afford.
            notes.append(
                f"step {step.step}: price floor {_shown(name, value)} is the request's cap, not a "
                "floor: removed"
            )
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


_DANGLING = re.compile(
    r"(?:\s+\b(?:under|below|less|than|over|above|at|least|most|or|more|and|with|for|rated|"
    r"priced|max|min|up|to|no)\b)+\s*$",
    re.IGNORECASE,
)


def query_without_limits(query: str) -> str:
    """A search query with its price and rating phrases taken out ("camera straps under
    $40" -> "camera straps"): the filters carry those, and as search words they only
    add noise. Kept as written if nothing else would remain."""
    cut = query
    for start, end, _, _ in sorted(_price_spans(query), reverse=True):
        cut = cut[:start] + " " + cut[end:]
    cut = _RATING.sub(" ", cut)
    cut = _DANGLING.sub("", " ".join(cut.split())).strip(" ,;:-")
    return cut if product_words(cut) else query


def limit_warnings(stated: StatedLimits, plan: Plan) -> list[str]:
    """Where the plan's search filters and the request's `stated` limits differ: a stated
    limit some search step does not carry, and a limit the request does not state. Shown
    with the plan for approval (a person's edit is checked the same way, never changed)."""
    warnings: list[str] = []
    searches = plan.search_steps
    for name, label in LIMIT_LABELS.items():
        value = getattr(stated, name)
        if value is None or not searches:
            continue
        missing = [s.step for s in searches if getattr(s, name) is None]
        if missing and not (name == "max_price" and _carried(plan.budget, value)):
            steps = ", ".join(map(str, missing))
            warnings.append(
                f"the request states a {label} of {_shown(name, value)}, but step {steps} "
                "does not carry it"
            )
    if plan.budget is not None and not _stated(plan.budget, stated.prices):
        warnings.append(f"budget {_money(plan.budget)} is not stated in the request")
    for step in searches:
        for name, label in LIMIT_LABELS.items():
            value = getattr(step, name)
            if value is not None and not _stated(value, _allowed(stated, name)):
                warnings.append(
                    f"step {step.step}: {label} {_shown(name, value)} is not stated in the request"
                )
        if plan.budget and step.min_price is not None and step.min_price >= plan.budget:
            warnings.append(
                f"step {step.step}: min_price {_money(step.min_price)} is not below the budget "
                f"{_money(plan.budget)}; the limit probably belongs in max_price"
            )
    return warnings


def _carried(budget: float | None, value: float) -> bool:
    return budget is not None and same_amount(budget, value)
