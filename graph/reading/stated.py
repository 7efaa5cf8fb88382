"""The limits a request states (price cap, floor and range, minimum rating, a total and
caps per item, and limits in another currency or beyond any price), read in code once per
run by the planner node and stored in state for the nodes after it.

A small model drops stated limits (it writes `max_price: null`) and invents others ("at
least 300 reviews" became `min_price` 300), so the request is read here, not by the model.
No LLM call happens here.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from catalog.models import PRICE_CURRENCY, money
from catalog.text import kind_words, opening, product_words
from graph.reading.phrases import (
    ADDING,
    BARE_PRICE,
    BUDGET_NUMBER,
    DANGLING,
    EACH_WORDS,
    ITEM_AFTER,
    LOWER_LIMIT,
    LOWER_LIMIT_AFTER,
    NEGATED_LOWER_LIMIT,
    NEGATED_UPPER_LIMIT,
    NEGATIVE_PRICE,
    NOT_A_LIMIT,
    PRICE_RANGE_WORDS,
    RANGE,
    RATING,
    TOTAL_AFTER_CHARS,
    TOTAL_BEFORE_CHARS,
    TOTAL_WORDS,
    UPPER_LIMIT,
    UPPER_LIMIT_AFTER,
    count_of,
    currency_of,
    decimal_mark_of,
    numbers_of,
    unreadable_amounts,
    with_digits,
)
from graph.schemas import (
    MAX_REQUEST_CHARS,
    ForeignLimit,
    ItemCap,
    LimitChoice,
    RequestError,
    StatedLimits,
)


@dataclass(frozen=True)
class _PriceSpan:
    start: int
    end: int
    kind: str  # range, max, min, bare, unreadable
    values: list[float]
    currency: str
    text: str


def _price_spans(request: str) -> list[_PriceSpan]:
    """Each price phrase of `request` (its number words already digits), kind being
    range/max/min/bare, or unreadable for an amount that is no number ("$6O"). A phrase
    overlapping one already read (unreadable amounts, then ranges first) is skipped; shop
    thresholds ("free shipping over $25") are read with no values."""
    found = [
        _PriceSpan(*match.span(), "unreadable", [], PRICE_CURRENCY, match.group(0))
        for match in unreadable_amounts(request)
        if currency_of(match.group(0)) is not None
        and (match.group("words") is None or product_words(match.group("words")))
    ]
    for kind, pattern in (
        ("range", RANGE),
        ("range", PRICE_RANGE_WORDS),
        ("max", NEGATED_LOWER_LIMIT),
        ("min", NEGATED_UPPER_LIMIT),
        ("max", UPPER_LIMIT),
        ("min", LOWER_LIMIT),
        ("max", UPPER_LIMIT_AFTER),
        ("min", LOWER_LIMIT_AFTER),
        ("max", BUDGET_NUMBER),
        ("bare", BARE_PRICE),
    ):
        for match in pattern.finditer(request):
            start, end = match.span()
            if any(start < s.end and s.start < end for s in found):
                continue
            text = match.group(0)
            currency = currency_of(text)
            if currency is None:
                continue  # "40 LED": three capitals that name no currency
            amounts = numbers_of(match.groups(), decimal_mark_of(text))
            values = [a for a in amounts if a is not None]
            if kind == "range" and len(amounts) < 2:
                continue
            # A shop's threshold, before the phrase or in a negation's reach ("no fees on
            # orders over $25"), is no limit.
            amount = match.start(next((i for i, g in enumerate(match.groups(), 1) if g), 0))
            before = request[max(0, start - 40) : start]
            if NOT_A_LIMIT.search(before) or NOT_A_LIMIT.search(request[start:amount]):
                values = []  # read, so no shorter pattern reads it again, but not a limit
            elif len(values) < len(amounts):
                kind, values = "unreadable", []
            found.append(_PriceSpan(start, end, kind, values, currency, text))
    return sorted(found, key=lambda s: s.start)


def _is_total(
    request: str, span: _PriceSpan, spans: list[_PriceSpan], words: re.Pattern[str] = TOTAL_WORDS
) -> bool:
    """Whether a total word (or another of `words`) stands by this price phrase, and not
    nearer another one ("shoes under $100, $115 for both": the $115)."""
    before = max([s.end for s in spans if s.end <= span.start], default=0)
    after = min([s.start for s in spans if s.start >= span.end], default=len(request))
    start = max(before, span.start - TOTAL_BEFORE_CHARS)
    around = request[start : min(after, span.end + TOTAL_AFTER_CHARS)]
    return words.search(around) is not None


_SHOWN_CHARS = 40


def _quoted(text: str) -> str:
    """A phrase of the request as a message shows it: one line, a long number cut."""
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


_ITEM_SEPARATORS = re.compile(r"[,;:.!?()]|\band\b|\bplus\b|\balso\b|\bthen\b|、|،", re.I)


def _item_words(request: str, span: _PriceSpan, previous_end: int) -> tuple[str, ...]:
    """The product words of the item a cap follows: the last clause before it with any,
    since the previous price phrase ("a tent, a stove and a lamp under $40": the lamp);
    with none there, the item the clause after it names ("no more than $10 on the kit")."""
    # "under $40 for the strap": the item named after the cap, when the request names it
    # elsewhere too, is the cap's (not the clause before: "a strap and a bag, under $40").
    named_after = ITEM_AFTER.match(request[span.end :])
    after = product_words(named_after.group(1)) if named_after else []
    elsewhere = product_words(request[: span.start])
    if after and set(after) & set(elsewhere):
        return tuple(after)
    clauses = _ITEM_SEPARATORS.split(request[previous_end : span.start])
    named_before = (words for clause in reversed(clauses) if (words := product_words(clause)))
    return tuple(next(named_before, after))


_LIMIT_MARK = "\x00"  # where a limit phrase stood: in no cleaned request (validate_request)


def listed_items(request: str, carries: Callable[[str], bool | None] | None = None) -> list[str]:
    """The items a request lists, as it names them ("a tent, a stove, a sleeping bag and
    a map, $300 total": tent, stove, sleeping bag, map): its clauses at the separators a
    cap's item is read by (_item_words), limit phrases taken out, each one's product words
    before a preposition (words.opening: "boots for hiking" is boots). What comes before a
    colon introduces the list ("for camping: a tent, ..."). A clause stating a limit names
    an item only of a kind the shop `carries` ("a lamp under $40"; not the verb of "trying
    to spend no more than $140"); one stating none names one the shop may lack ("a
    theremin", named missing). A request of fewer than two items lists none: its one
    product is what the plan searches for."""
    text = without_limit_phrases(with_digits(unicodedata.normalize("NFKC", request)), _LIMIT_MARK)
    # The words that make a limit a total or a cap on each are the limit's, not an item
    # ("$60 altogether", "$10 apiece").
    text = EACH_WORDS.sub(" ", TOTAL_WORDS.sub(" ", text))
    listed = _ITEM_SEPARATORS.split(text.split(":", 1)[-1])
    named = [(" ".join(kind_words(opening(c.replace(_LIMIT_MARK, " ")))), c) for c in listed]
    items = [i for i, c in named if i and (_LIMIT_MARK not in c or carries is None or carries(i))]
    items = list(dict.fromkeys(items))
    return items if len(items) >= 2 else []


def _joined(between: str) -> bool:
    """Whether the text between two limits joins them as both holding: nothing but words
    that add ("and", "plus") and punctuation, no correction ("no", "actually")."""
    return not re.sub(r"\W", "", ADDING.sub(" ", between))


def _applied(kind: str, spans: list[_PriceSpan], choices: list[LimitChoice]) -> float | None:
    """The one value of these limits of one kind: the last stated when they differ
    ("$30 total, no wait, $40 total": $40), the choice recorded to be shown."""
    if len({s.values[-1] for s in spans}) > 1:
        stated = tuple(dict.fromkeys(_quoted(s.text) for s in spans))
        choices.append(LimitChoice(kind=kind, stated=stated, applied=_quoted(spans[-1].text)))
    return spans[-1].values[-1] if spans else None


def read_limits(request: str) -> StatedLimits:
    """The price cap, price floor, minimum rating, total and caps per item that the
    request states, and the limits it states in another currency or beyond any price. The
    planner node calls it once per run and stores the result (State.stated_limits)."""
    # Fullwidth signs and digits read as the plain ones; an invisible character (a
    # zero-width space) is a space, as validate_request makes it: "$6\u200b0" is "$6 0".
    text = "".join(c if c.isprintable() else " " for c in unicodedata.normalize("NFKC", request))
    text = with_digits(text)
    uppers: list[_PriceSpan] = []
    lowers: set[float] = set()
    bare: set[float] = set()
    prices: set[float] = set()
    foreign: list[ForeignLimit] = []
    negatives = [m.span() for m in NEGATIVE_PRICE.finditer(text)]
    impossible = [_quoted(text[start:end]) for start, end in negatives]
    spans = [
        s for s in _price_spans(text) if not any(s.start < e and b < s.end for b, e in negatives)
    ]
    unreadable = [_quoted(s.text) for s in spans if s.kind == "unreadable"]
    for span in spans:
        if not span.values:
            continue
        if not all(math.isfinite(v) and v > 0 for v in span.values) and span.kind != "min":
            impossible.append(_quoted(span.text))
            continue
        if span.currency != PRICE_CURRENCY:
            foreign.append(
                ForeignLimit(
                    kind=span.kind,
                    amounts=tuple(span.values),
                    currency=span.currency,
                    text=span.text,
                )
            )
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
        elif _is_total(text, span, spans) or _is_total(text, span, spans, EACH_WORDS):
            uppers.append(span)  # "$115 for both": a cap on the sum; "$25 each": on each
        else:
            bare.add(span.values[0])
    if not uppers and not lowers and len(bare) == 1:
        # One price named with no word around it ("a $50 gift"): what the shopper means
        # to spend at most.
        uppers = [s for s in spans if s.kind == "bare" and s.values and s.values[0] in bare]
    choices: list[LimitChoice] = []
    total_spans = sorted((s for s in uppers if _is_total(text, s, spans)), key=lambda s: s.start)
    totals = {s.values[-1] for s in total_spans}
    total = _applied("total", total_spans, choices)
    # "under $25 each, $40 total": a cap on every item beside the total.
    each_spans = [
        s
        for s in sorted(uppers, key=lambda s: s.start)
        if s.values[-1] not in totals and _is_total(text, s, spans, EACH_WORDS)
    ]
    each_cap = _applied("price cap on each item", each_spans, choices)
    caps = [s for s in uppers if s.values[-1] not in totals and s not in each_spans]
    item_caps: list[ItemCap] = []
    max_price = _single({s.values[-1] for s in uppers})
    if max_price is None and each_cap is not None:
        max_price = each_cap
    elif max_price is None and (total is not None or len({s.values[-1] for s in caps}) > 1):
        # Several caps, or a total and a cap: each cap belongs to the item it follows.
        previous_end = 0
        for span in spans:
            if (cap := next((c for c in caps if c.start == span.start), None)) is not None:
                words = _item_words(text, cap, previous_end)
                applied = ItemCap(words=words, max_price=cap.values[-1], text=_quoted(cap.text))
                if not words and item_caps:
                    # A cap that names no item after another: that item's cap stated again,
                    # both shown. Joined to it as both holding ("under $40 and under $60"),
                    # the lower applies; else the later, as a correction comes after what it
                    # corrects ("under $60, no, under $40").
                    earlier = item_caps.pop()
                    both_hold = _joined(text[previous_end : cap.start])
                    if both_hold and earlier.max_price <= applied.max_price:
                        applied = earlier
                    applied = applied.model_copy(update={"words": earlier.words})
                    stated_caps = (earlier.text, _quoted(cap.text))
                    choices.append(
                        LimitChoice(kind="price cap", stated=stated_caps, applied=applied.text)
                    )
                if applied.words:
                    item_caps.append(applied)
            previous_end = span.end
        if total is None and len(item_caps) == 1:
            max_price, item_caps = item_caps[0].max_price, []  # one item, its cap corrected
    # "three camera straps": several of one item, which a plan of one pick per item does
    # not buy; named at approval, and no total of one of each is called within budget.
    several = [
        _quoted(clause.strip())
        for clause in _ITEM_SEPARATORS.split(without_limit_phrases(text))
        if (count_of(clause) or 0) > 1 and product_words(clause)
    ]
    floor = _single(lowers)
    ceiling = total if total is not None else max_price
    if floor is not None and ceiling is not None and floor > ceiling:
        # "$60 total or less, at least $70 total": no product is both.
        impossible.append(f"a floor of {money(floor)} above a cap of {money(ceiling)}")
    ratings: set[float] = set()
    for match in RATING.finditer(text):
        value = numbers_of(match.groups()[:1] + match.groups()[3:])
        rating = value[0] if value else None
        if rating is not None and 0 < rating <= 5:
            ratings.add(rating)
    return StatedLimits(
        max_price=max_price,
        min_price=floor,
        min_rating=_single(ratings),
        prices=tuple(sorted(prices | {s.values[-1] for s in uppers} | lowers)),
        ratings=tuple(sorted(ratings)),
        total=total,
        item_caps=tuple(item_caps),
        foreign=tuple(foreign),
        impossible=tuple(dict.fromkeys(impossible)),
        unreadable=tuple(dict.fromkeys(unreadable)),
        choices=tuple(choices),
        # A cap on each item ("$25 each") is no budget for all, however many are asked for.
        max_price_each=bool(each_spans) and max_price == each_cap,
        several=tuple(several),
    )


def checked_request(request: object) -> tuple[str, StatedLimits]:
    """The request cleaned (validate_request) and the limits it states, or RequestError
    when it is unusable or states a limit no product can meet ("under $-5"). The planner
    node reads a run's facts with it, and the session checks a request with it before a
    model starts or a thread is saved (Studio reaches the planner without a session)."""
    cleaned = validate_request(request)
    stated = read_limits(cleaned)
    if stated.impossible:
        raise RequestError(
            f"the request states a limit no product can meet ({', '.join(stated.impossible)}):"
            " a price limit must be a number above zero, and a floor no higher than the cap"
        )
    return cleaned, stated


def _single(values: set[float]) -> float | None:
    return next(iter(values)) if len(values) == 1 else None


MAX_QUERY_WORDS = 12


def without_limit_phrases(text: str, mark: str = " ") -> str:
    """`text` with each limit phrase replaced by `mark`."""
    cut = with_digits(text)
    for span in sorted(_price_spans(cut), key=lambda s: s.start, reverse=True):
        cut = cut[: span.start] + mark + cut[span.end :]
    cut = RATING.sub(mark, cut)
    return DANGLING.sub("", " ".join(cut.split())).strip(" ,;:-")


def validate_request(request: object) -> str:
    """Return the request, cleaned of control characters, or raise RequestError.

    Runs before any LLM call, so a bad request never costs a model round trip.
    """
    if not isinstance(request, str):
        raise RequestError(f"the request must be text, got {type(request).__name__}")
    # Control characters (NUL, escape sequences) carry no meaning for a shopper and can
    # confuse terminals and tokenizers; newlines and tabs become plain spaces.
    cleaned = "".join(ch if ch.isprintable() else " " for ch in request)
    cleaned = " ".join(cleaned.split())
    if not cleaned:
        raise RequestError("the request is empty: say what you want to buy")
    if len(cleaned) > MAX_REQUEST_CHARS:
        raise RequestError(
            f"the request is {len(cleaned):,} characters long; the limit is "
            f"{MAX_REQUEST_CHARS:,}. Shorten it to the essentials."
        )
    return cleaned
