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
from dataclasses import dataclass, field

from catalog.models import PRICE_CURRENCY
from graph.state import Plan, PlanStep
from graph.words import product_words, stem

# Digits of any script ("٢٠٠" reads as 200), with "," or the Arabic thousands separator
# (U+066C) between thousands, and "." or the Arabic decimal separator (U+066B).
_NUMBER = r"(\d{1,3}(?:[,٬]\d{3})+(?:[.٫]\d+)?|\d+(?:[.٫]\d+)?)"
# Currency marks, by the currency they name. The catalog's own (PRICE_CURRENCY) makes a
# limit; any other is read, shown as stated and never converted (no rates offline).
# "pounds" alone is a weight, so sterling needs its sign or its code.
_CURRENCY_WORDS = {
    "USD": r"\$|us\$|usd\b|dollars?\b|d[oó]lar(?:es)?\b|bucks\b|ドル|美元|دولار(?:ا|ات)?"
    r"|доллар(?:ов|а)?",
    "EUR": r"€|eur\b|euros?\b|يورو|евро",
    "GBP": r"£|gbp\b|pounds? sterling\b",
    "JPY": r"¥|円|jpy\b|yen\b",
    "CNY": r"元|cny\b|rmb\b|yuan\b",
    "INR": r"₹|inr\b|rupees?\b",
}
_CURRENCY_OF = {code: re.compile(words, re.IGNORECASE) for code, words in _CURRENCY_WORDS.items()}
_CURRENCY_BEFORE = r"(?:\$|us\$|usd\b|€|eur\b|£|gbp\b|¥|₹)"
_CURRENCY_AFTER = "(?:" + "|".join(_CURRENCY_WORDS.values()) + ")"
# A price: "$40", "$ 40", "40 dollars", "40 USD", "USD 40", "40 bucks", "40$", "€40",
# "200ドル", "٢٠٠ دولار".
_PRICE = rf"(?:{_CURRENCY_BEFORE}\s*{_NUMBER}|{_NUMBER}\s*{_CURRENCY_AFTER})"
# A number that is a price only because a price word stands right before it.
_PRICED_NUMBER = rf"(?:{_PRICE}|(?<![\w.]){_NUMBER}(?![\w.%]|\s*(?:-|to)?\s*(?:star|%)))"

# Limit words before a price, in the languages the planner is asked in: English, then
# Spanish, Portuguese, French, German, Italian, Arabic, Chinese.
_UPPER = (
    r"under|below|less than|lower than|cheaper than|at most|up to|no more than|not more than|"
    r"no higher than|not higher than|not exceeding|not to exceed|no greater than|max(?:imum)?"
    r"(?: price| budget| cost)?(?: of)?|price cap of|cap of|budget(?: of| is|:)?|within"
    r"(?: a| my| the)?(?: budget| price)?(?: of)?|for less than|or less|<=?|≤|"
    r"menos de|por debajo de|por menos de|hasta|m[aá]ximo(?: de)?|abaixo de|até|"
    r"moins de|en dessous de|jusqu'à|au plus|sous|unter|bis(?: zu)?|h[oö]chstens|"
    r"weniger als|maximal|meno di|sotto|fino a|al massimo|"
    r"تحت|أقل من|اقل من|بأقل من|لا يزيد عن|بحد أقصى|"
    r"低于|不超过|少于|以内"
)
# ... and after it: "200ドル以下", "200 euros o menos".
_UPPER_AFTER = (
    r"or less|or under|or below|max(?:imum)?\b|at most|tops|total|in total|"
    r"以下|以内|未満|まで|以下的|以内的|o menos|ou menos|ou moins|oder weniger|o meno|أو أقل"
)
_LOWER = (
    r"over|above|more than|at least|no less than|not less than|starting at|min(?:imum)?"
    r"(?: price| cost)?(?: of)?|>=?|≥|"
    r"m[aá]s de|al menos|m[ií]nimo(?: de)?|mais de|pelo menos|plus de|au moins|"
    r"[uü]ber|mindestens|mehr als|pi[uù] di|almeno|أكثر من|فوق|على الأقل|高于|超过|至少"
)
_LOWER_AFTER = (
    r"or more|or above|or higher|and up|minimum|min\b|at least|以上|o m[aá]s|ou mais|"
    r"ou plus|oder mehr|o pi[uù]|أو أكثر"
)
_PRICE_WORDS = r"price[sd]?|priced|costs?|costing|budget|spend|pay|paying"
# "free shipping on orders over $25": a threshold of the shop, not a limit on the item.
_NOT_A_LIMIT = re.compile(
    r"\b(?:shipping|delivery|orders?|purchases?|spend(?:ing)?|gift cards?|coupons?|discounts?"
    r"|off|saves?|savings)\W+(?:\w+\W+)?$",
    re.IGNORECASE,
)

_RANGE = re.compile(
    rf"(?:between|from|range of|range|ranging from|entre|zwischen)?\s*{_PRICE}\s*"
    rf"(?:-|–|to|and|y|e|et|und|a|bis)\s*(?:{_PRICE}|{_NUMBER}(?![\w.%]))",
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
    rf"|{_PRICE}\s*(?:{_UPPER_AFTER})",
    re.IGNORECASE,
)
_LOWER_LIMIT = re.compile(
    rf"(?:{_LOWER})\s*{_PRICE}|(?:(?:{_PRICE_WORDS})\s+(?:{_LOWER})\s*{_PRICED_NUMBER})"
    rf"|{_PRICE}\s*(?:{_LOWER_AFTER})",
    re.IGNORECASE,
)
_BARE_PRICE = re.compile(_PRICE, re.IGNORECASE)
_BUDGET_NUMBER = re.compile(rf"\bbudget(?: of| is|:)?\s*{_NUMBER}(?![\w.%])", re.IGNORECASE)
# A price written below zero ("under $-5", "-5 dollars"): no product costs that.
_NEGATIVE_PRICE = re.compile(
    rf"{_CURRENCY_BEFORE}\s*[-−]\s*\d|(?<![\w.])[-−]\s*{_NUMBER}\s*{_CURRENCY_AFTER}",
    re.IGNORECASE,
)
# Words that make a cap one on the sum of the items: "$150 total", "all three for $90",
# "under $100 combined", "all within $300", "a total budget of $200".
_TOTAL_WORDS = re.compile(
    r"\b(?:total|in all|combined|altogether|all together|overall|for everything|for both|"
    r"for all|all (?:three|four|five|of (?:it|them|these)|within|for|together|in)|"
    r"for the (?:lot|set|bundle|pair)|sum|together|en total|insgesamt|au total|in totale|"
    r"no total|合計|全部で)\b|合計|全部で|総額|总共|一共|المجموع|الإجمالي",
    re.IGNORECASE,
)
_TOTAL_BEFORE_CHARS = 30
_TOTAL_AFTER_CHARS = 20

_STARS = (
    r"(?:-|\s)?(?:\+\s*)?(?:stars?|star rating|estrellas?|estrelas?|[eé]toiles?|sterne?|stelle|"
    r"つ星|星|نجوم|نجمات|نجمة)"
)
_RATING = re.compile(
    # "4.5 stars or higher", "at least 4.5-star", "4+ stars", "4.5+ star rating"
    rf"(?:(?:at least|minimum(?: of)?|min(?:imum)? rating(?: of)?|no less than|not less than|"
    rf"above|over|exceeding|more than|higher than|rated|rating(?: of)?|al menos|m[ií]nimo|"
    rf"au moins|mindestens|almeno|pelo menos|至少)\s*(?:an?\s+)?)?"
    rf"(\d(?:[.٫]\d+)?)\s*(\+)?{_STARS}(?:\s*(or (?:higher|more|above|better|up)|and (?:up|above)"
    rf"|\+|minimum|min|or greater|以上|o m[aá]s|ou plus|oder mehr|أو أكثر))?"
    # "rated above 4", "a rating of at least 4.5", "rating exceeding 4.0", "4.5+ rating"
    rf"|(?:rated|rating|ratings|reviews? score)\s+(?:of\s+)?(?:at least|above|over|exceeding|"
    rf"no less than|not less than|higher than|more than|of|>=?|≥)\s*(\d(?:[.٫]\d+)?)(?![\d.%]|\s*"
    rf"(?:reviews?|ratings?|customers?|users?|people|buyers))"
    rf"|(\d(?:[.٫]\d+)?)\s*\+\s*(?:rating|rated)",
    re.IGNORECASE,
)

# Number words up to a hundred, where a currency or a star follows or a rating word
# comes before: "fifty dollars", "four stars", "rated above four". Elsewhere ("one
# pair", "two items") a number word is no limit and stays as written.
_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUES = {word: n for n, word in enumerate(_UNITS)} | {
    word: 10 * n for n, word in enumerate(_TENS, start=2)
}
_NUMBER_WORD = (
    rf"(?:(?:a|one)[\s-]+hundred|(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(_UNITS[1:10])}))?"
    rf"|{'|'.join(_UNITS)})"
)
_WORDS_BEFORE_UNIT = re.compile(
    rf"\b({_NUMBER_WORD})\b(?=\s*(?:-\s*)?(?:{_CURRENCY_AFTER}|stars?\b|star rating))",
    re.IGNORECASE,
)
_WORDS_AFTER_RATING = re.compile(
    rf"\b((?:rated|rating(?: of)?)\s+(?:(?:at least|above|over|of)\s+)?)({_NUMBER_WORD})\b",
    re.IGNORECASE,
)


def _word_value(text: str) -> int:
    words = re.split(r"[\s-]+", text.lower())
    if words[-1] == "hundred":
        return 100
    return sum(_WORD_VALUES[w] for w in words)


def with_digits(text: str) -> str:
    """`text` with the number words of its limits written as digits ("fifty dollars" ->
    "50 dollars"), so one set of patterns reads both."""
    text = _WORDS_BEFORE_UNIT.sub(lambda m: str(_word_value(m.group(1))), text)
    return _WORDS_AFTER_RATING.sub(lambda m: m.group(1) + str(_word_value(m.group(2))), text)


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
    return float(text.replace(",", "").replace("٬", "").replace("٫", "."))


def _first(groups: tuple[str | None, ...]) -> list[float]:
    return [_number(g) for g in groups if g]


def _currency(text: str) -> str:
    """The currency a price phrase is written in; a number with a price word only is in
    the catalog's."""
    found = [
        (match.start(), code)
        for code, pattern in _CURRENCY_OF.items()
        if (match := pattern.search(text)) is not None
    ]
    return min(found)[1] if found else PRICE_CURRENCY


@dataclass(frozen=True)
class ItemCap:
    """A price cap on one item of a request that names several: "shoes under $100 and a
    hat under $20". `words` are the product words of the item it follows."""

    words: tuple[str, ...]
    max_price: float
    text: str


@dataclass(frozen=True)
class ForeignLimit:
    """A price limit stated in another currency than the catalog's ("under €200"). It
    is shown as stated and never applied: there are no exchange rates offline."""

    kind: str  # "max", "min" or "range"
    amounts: tuple[float, ...]
    currency: str
    text: str

    @property
    def shown(self) -> str:
        return " ".join(self.text.split())


@dataclass(frozen=True)
class StatedLimits:
    """The limits a request states. A price kind stated with different values (two
    items, each with its own cap) has no single value: `item_caps` holds each, and
    `total` the cap on the sum when the request says so ("$300 for everything")."""

    max_price: float | None = None
    min_price: float | None = None
    min_rating: float | None = None
    # Every number the request uses as a price, and as a rating: what a plan's limit
    # may be, however the model read it.
    prices: frozenset[float] = frozenset()
    ratings: frozenset[float] = frozenset()
    total: float | None = None
    item_caps: tuple[ItemCap, ...] = ()
    foreign: tuple[ForeignLimit, ...] = ()
    # Limits no product can meet ("under $-5", "under $0", a price too large to be a
    # number), as written: the request is refused with them before any search.
    impossible: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        values = (self.max_price, self.min_price, self.min_rating, self.total)
        return any(v is not None for v in values) or bool(
            self.item_caps or self.foreign or self.impossible
        )

    @property
    def budget(self) -> float | None:
        """What the whole recommendation may cost: the stated total, else the one cap."""
        return self.total if self.total is not None else self.max_price


@dataclass(frozen=True)
class _PriceSpan:
    start: int
    end: int
    kind: str  # range, max, min, bare
    values: list[float]
    currency: str
    text: str


def _price_spans(request: str) -> list[_PriceSpan]:
    """Each price phrase of `request` (its number words already digits), kind being
    range/max/min/bare. A phrase overlapping one already read (ranges first) is skipped;
    shop thresholds ("free shipping over $25") are read with no values."""
    found: list[_PriceSpan] = []
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
            if any(start < s.end and s.start < end for s in found):
                continue
            values = _first(match.groups())
            if kind == "range" and len(values) < 2:
                continue
            if _NOT_A_LIMIT.search(request[max(0, start - 40) : start]):
                values = []  # read, so no shorter pattern reads it again, but not a limit
            text = match.group(0)
            found.append(_PriceSpan(start, end, kind, values, _currency(text), text))
    return sorted(found, key=lambda s: s.start)


def _is_total(request: str, span: _PriceSpan, spans: list[_PriceSpan]) -> bool:
    """Whether a total word stands by this price phrase, and not nearer another one
    ("shoes under $100, $115 for both": the $115)."""
    before = max([s.end for s in spans if s.end <= span.start], default=0)
    after = min([s.start for s in spans if s.start >= span.end], default=len(request))
    start = max(before, span.start - _TOTAL_BEFORE_CHARS)
    around = request[start : min(after, span.end + _TOTAL_AFTER_CHARS)]
    return _TOTAL_WORDS.search(around) is not None


_SHOWN_CHARS = 40


def _quoted(text: str) -> str:
    """A phrase of the request as a message shows it: one line, a long number cut."""
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


_ITEM_SEPARATORS = re.compile(r"[,;:.!?()]|\band\b|\bplus\b|\balso\b|\bthen\b|、|،", re.I)


def _item_words(request: str, span: _PriceSpan, previous_end: int) -> tuple[str, ...]:
    """The product words of the item a cap follows: the last clause before it with any,
    since the previous price phrase ("a tent, a stove and a lamp under $40": the lamp)."""
    clauses = _ITEM_SEPARATORS.split(request[previous_end : span.start])
    for clause in reversed(clauses):
        words = product_words(clause)
        if words:
            return tuple(words)
    return ()


def read_limits(request: str) -> StatedLimits:
    """The price cap, price floor, minimum rating, total and caps per item that the
    request states, and the limits it states in another currency or beyond any price."""
    text = with_digits(request)
    uppers: list[_PriceSpan] = []
    lowers: set[float] = set()
    bare: set[float] = set()
    prices: set[float] = set()
    foreign: list[ForeignLimit] = []
    negatives = [m.span() for m in _NEGATIVE_PRICE.finditer(text)]
    impossible = [_quoted(text[start:end]) for start, end in negatives]
    spans = [
        s for s in _price_spans(text) if not any(s.start < e and b < s.end for b, e in negatives)
    ]
    for span in spans:
        if not span.values:
            continue
        if not all(math.isfinite(v) and v > 0 for v in span.values) and span.kind != "min":
            impossible.append(_quoted(span.text))
            continue
        if span.currency != PRICE_CURRENCY:
            foreign.append(ForeignLimit(span.kind, tuple(span.values), span.currency, span.text))
            continue
        prices.update(span.values)
        if span.kind == "range":
            low, high = sorted(span.values[:2])  # "between $300 and $100" means 100 to 300
            lowers.add(low)
            uppers.append(_PriceSpan(span.start, span.end, "max", [high], span.currency, span.text))
        elif span.kind == "max":
            uppers.append(span)
        elif span.kind == "min":
            lowers.add(span.values[0])
        elif _is_total(text, span, spans):
            uppers.append(span)  # "$115 for both": a cap on the sum
        else:
            bare.add(span.values[0])
    if not uppers and not lowers and len(bare) == 1:
        # One price named with no word around it ("a $50 gift"): what the shopper means
        # to spend at most.
        uppers = [s for s in spans if s.kind == "bare" and s.values and s.values[0] in bare]
    totals = {s.values[-1] for s in uppers if _is_total(text, s, spans)}
    caps = [s for s in uppers if s.values[-1] not in totals]
    total = _single(totals)
    item_caps: list[ItemCap] = []
    max_price = _single({s.values[-1] for s in uppers})
    if max_price is None and (len(totals) == 1 or len({s.values[-1] for s in caps}) > 1):
        # Several caps, or a total and a cap: each cap belongs to the item it follows.
        previous_end = 0
        for span in spans:
            if span in caps or any(c.start == span.start for c in caps):
                cap = next(c for c in caps if c.start == span.start)
                words = _item_words(text, cap, previous_end)
                if words:
                    item_caps.append(ItemCap(words, cap.values[-1], " ".join(cap.text.split())))
            previous_end = span.end
    ratings: set[float] = set()
    for match in _RATING.finditer(text):
        value = _first(match.groups()[:1] + match.groups()[3:])
        if value and 0 < value[0] <= 5:
            ratings.add(value[0])
    return StatedLimits(
        max_price=max_price,
        min_price=_single(lowers),
        min_rating=_single(ratings),
        prices=frozenset(prices | {s.values[-1] for s in uppers} | lowers),
        ratings=frozenset(ratings),
        total=total if total is not None else None,
        item_caps=tuple(item_caps),
        foreign=tuple(foreign),
        impossible=tuple(dict.fromkeys(impossible)),
    )


def _single(values: set[float]) -> float | None:
    return next(iter(values)) if len(values) == 1 else None


def same_amount(a: float, b: float) -> bool:
    """Two limits are the same to the cent (the one comparison every check here uses)."""
    return math.isclose(a, b, abs_tol=0.005)


def _stated(value: float, stated: frozenset[float]) -> bool:
    return any(same_amount(value, s) for s in stated)


# The step filters code reconciles, in the words its notes use.
LIMIT_LABELS = {
    "max_price": "price cap",
    "min_price": "price floor",
    "min_rating": "minimum rating",
}


def _shown(name: str, value: float) -> str:
    return f"{value:g} stars" if name == "min_rating" else _money(value)


def _allowed(stated: StatedLimits, name: str) -> frozenset[float]:
    """The values the request states for a filter of this kind."""
    return stated.ratings if name == "min_rating" else stated.prices


@dataclass
class Reconciled:
    """The plan as it will run, and what was changed in code to make it so."""

    plan: Plan
    notes: list[str] = field(default_factory=list)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def step_cap(step: PlanStep, stated: StatedLimits) -> tuple[float | None, ItemCap | None]:
    """The price cap a search step is held to: the cap stated for its item when the
    request gives one per item (matched by product words of the step's query and
    action), else the request's one cap, else its total (no item costs more than all)."""
    if stated.item_caps:
        mine = {stem(w) for w in product_words(f"{step.query or ''} {step.action}")}
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


def reconcile_limits(request: str, plan: Plan) -> Reconciled:
    """Fill each search step's empty limit from the request, and remove limits the request
    does not state. Each change is named in `notes` and marked on the step."""
    stated = read_limits(request)
    notes: list[str] = []
    budget = plan.budget
    if budget is not None and not _stated(budget, stated.prices):
        notes.append(f"budget {_money(budget)} is not stated in the request: removed")
        budget = None
    if budget is not None and stated.budget is not None and not same_amount(budget, stated.budget):
        # One cap (or one total) stated, so the budget can only be that ("$400 to $600"
        # once gave a budget of 400, the floor).
        notes.append(
            f"budget {_money(budget)} is not the request's cap: set to {_money(stated.budget)}"
        )
        budget = stated.budget
    if budget is None and stated.budget is not None:
        budget = stated.budget
    steps = [
        _reconcile_step(step, request, stated, notes)
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
    for step in plan.steps:
        if step not in kept:
            notes.append(
                f"step {step.step} searched for {step.query!r}, a limit and no product: removed"
            )
    return [s.model_copy(update={"step": n}) for n, s in enumerate(kept, start=1)]


def _query_of(step: PlanStep, request: str, notes: list[str]) -> str:
    """The step's query without its limit phrases. A query that is only a limit, a stop
    word or nothing ("under 200 dollars") finds nothing the shopper wants: the product
    words of the step's action are searched instead, else those of the request."""
    query = _without_limit_phrases(step.query or "")
    if product_words(query):
        return query
    for source, text in (("the step's action", step.action), ("the request", request)):
        words = product_words(_without_limit_phrases(text))[:MAX_QUERY_WORDS]
        if words:
            replacement = " ".join(words)
            notes.append(
                f"step {step.step}: query {step.query!r} names no product: searched for "
                f"{replacement!r} (from {source})"
            )
            return replacement
    return step.query or ""


def _reconcile_step(
    step: PlanStep, request: str, stated: StatedLimits, notes: list[str]
) -> PlanStep:
    if not step.is_search:
        # A reasoning step runs no search: limits on it are never used, so none are kept.
        return step.model_copy(update={"max_price": None, "min_price": None, "min_rating": None})
    values = {
        "max_price": step.max_price,
        "min_price": step.min_price,
        "min_rating": step.min_rating,
    }
    query = _query_of(step, request, notes)
    cap, item_cap = step_cap(step.model_copy(update={"query": query}), stated)
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
            and name == "max_price"
            and item_cap is not None
            and not same_amount(value, item_cap.max_price)
        ):
            # "shoes under $100 and a cap under $20": the $100 on the cap's search is
            # the shoes' limit.
            notes.append(
                f"step {step.step}: price cap {_money(value)} is another item's: set to "
                f"{_money(item_cap.max_price)} ({item_cap.text}, for {' '.join(item_cap.words)})"
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
MAX_QUERY_WORDS = 12


def _without_limit_phrases(text: str) -> str:
    cut = with_digits(text)
    for span in sorted(_price_spans(cut), key=lambda s: s.start, reverse=True):
        cut = cut[: span.start] + " " + cut[span.end :]
    cut = _RATING.sub(" ", cut)
    return _DANGLING.sub("", " ".join(cut.split())).strip(" ,;:-")


def query_without_limits(query: str) -> str:
    """A search query with its price and rating phrases taken out ("camera straps under
    $40" -> "camera straps"): the filters carry those, and as search words they only
    add noise. Kept as written if nothing else would remain."""
    cut = _without_limit_phrases(query)
    return cut if product_words(cut) else query


def limit_warnings(request: str, plan: Plan) -> list[str]:
    """Where the plan's search filters and the request's stated limits differ: a stated
    limit some search step does not carry, a limit the request does not state, and a
    limit stated in another currency than the catalog's, which is never applied. Shown
    with the plan for approval (a person's edit is checked the same way, never changed)."""
    stated = read_limits(request)
    warnings: list[str] = []
    searches = plan.search_steps
    for foreign in stated.foreign:
        warnings.append(
            f"the request states {foreign.shown!r} in {foreign.currency}, but the catalog's "
            f"prices are in {PRICE_CURRENCY}: it is not applied (no exchange rates offline); "
            f"edit the plan to set a limit in {PRICE_CURRENCY}"
        )
    for name, label in LIMIT_LABELS.items():
        missing = []
        for step in searches:
            value = step_cap(step, stated)[0] if name == "max_price" else getattr(stated, name)
            if value is not None and getattr(step, name) is None:
                missing.append((step.step, value))
        if name == "max_price":
            missing = [(n, v) for n, v in missing if not _carried(plan.budget, v)]
        for value in dict.fromkeys(v for _, v in missing):
            steps = ", ".join(str(n) for n, v in missing if v == value)
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
