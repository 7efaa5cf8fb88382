"""What a follow-up carries over from the finished run it follows, worked out in code
(issue 26), as the request's own limits are (graph/checks/stated.py: read_limits):

- the stated limits carry over unless the follow-up states new ones of that kind;
- "cheaper" ("less expensive", "a cheaper one") is a price cap below the pick it refers
  to: the single pick, or the pick of the item it names;
- "and a case for it" ("add X", "also X") adds an item and keeps every earlier pick in
  the recommendation: their total counts against the budget, and the new item's cap is
  what the budget leaves;
- "instead of X" ("swap X for Y", "replace X with Y") replaces X's pick, keeping the rest;
- a request that names other products and refers to nothing earlier is a new request:
  nothing carries over.

Each carry-over is a line of `FollowUp.notes`, shown at approval as coming from the
previous run; the limits are merged into the run's StatedLimits (their `carried` names
what came from the previous run), so the plan checks, approval and verify read them as
they read any stated limit. No LLM call happens here.
"""

from __future__ import annotations

import re

from catalog import money
from graph.reading.stated import without_limit_phrases
from graph.reading.words import product_words, same_word, stem
from graph.schemas import (
    FollowUp,
    FollowUpKind,
    Plan,
    PlanStep,
    PreviousPick,
    PreviousRun,
    StatedLimits,
)

CENT = 0.01  # "cheaper" is strictly below: the catalog's price filter includes its cap

_OBJECT = r"(?:the |a |an |my |that |this )?(?P<item>[^,.;!?]+?)"
_OBJECT_ENDS = r"(?=$|[,.;!?]|\s+(?:get|find|buy|show|with|please)\b)"
_REPLACE = (
    re.compile(rf"\b(?:instead of|rather than|in place of)\s+{_OBJECT}{_OBJECT_ENDS}", re.I),
    re.compile(
        rf"\b(?:swap|replace|switch|exchange|trade)\s+(?:out\s+)?{_OBJECT}\s+(?:for|with|to)\b",
        re.I,
    ),
)
# Words of a price comparison a model may leave in a query once "cheaper" is taken out.
_PRICE_WORDS = frozenset({"expensive", "pricey", "costly", "instead", "one"})
_INSTEAD = re.compile(r"\binstead\b", re.I)
_CHEAPER = re.compile(
    r"\b(?:cheaper|cheapest|less expensive|lower[- ]priced|more affordable|costs? less|"
    r"for less|lower price)\b",
    re.I,
)
_ADD = re.compile(
    r"^\s*(?:and|also|plus)\b|\b(?:add|also|as well|too|to go with|for it|for them|"
    r"with it|go with it|on top)\b",
    re.I,
)
_REFERS = re.compile(
    r"\b(?:it|one|ones|that|those|them|this|same|another|different|something|else|more|"
    r"less|lighter|smaller|bigger|larger|better|other)\b",
    re.I,
)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in product_words(text)}


def _matching(picks: tuple[PreviousPick, ...], words: set[str]) -> tuple[PreviousPick, ...]:
    """The picks whose title or item shares a product word with `words`."""
    return tuple(p for p in picks if words & (_stems(p.title) | _stems(p.item)))


def _shown(pick: PreviousPick) -> str:
    return f"{pick.id} {pick.title} ({money(pick.price)})"


def _named(request: str) -> str:
    """The product words a follow-up names, without its limits and follow-up words."""
    text = _INSTEAD.sub(" ", _CHEAPER.sub(" ", without_limit_phrases(request)))
    return " ".join(product_words(text))


def read_follow_up(request: str, previous: PreviousRun) -> tuple[FollowUpKind, str]:
    """The kind of follow-up `request` is, and the words naming the earlier item it
    replaces or wants cheaper ("" when it names none)."""
    for pattern in _REPLACE:
        match = pattern.search(request)
        if match and product_words(match.group("item")):
            return "replace", match.group("item")
    if _CHEAPER.search(request):
        return "cheaper", _named(request)
    if _ADD.search(request):
        return "add", " ".join(product_words(_ADD.sub(" ", _named(request))))
    if _INSTEAD.search(request) and _named(request):
        return "replace", ""  # "a backpack instead": of the single pick, if one
    earlier = _stems(" ".join((previous.request, *previous.queries)))
    named = _stems(_named(request))
    if named and not _REFERS.search(request) and not named & earlier:
        return "new", ""
    return "refine", ""


def carry_over(
    request: str, stated: StatedLimits, previous: PreviousRun
) -> tuple[FollowUp, StatedLimits]:
    """What the follow-up `request` (its own limits `stated`) carries over from the
    finished run `previous`, and the limits the new run holds to."""
    kind, named = read_follow_up(request, previous)
    notes = [f"follows up thread {previous.thread_id} ({previous.request[:80]!r})"]
    picks = previous.picks
    replaced: tuple[PreviousPick, ...] = ()
    cap: float | None = None  # the new item's cap the previous run implies
    if kind == "cheaper":
        replaced = _matching(picks, _stems(named)) if named else picks
        if named and not replaced:
            notes.append(f"the previous run recommended no {named!r}: nothing carries over")
            kind = "new"
        elif len(replaced) == 1:
            cap = round(replaced[0].price - CENT, 2)
            notes.append(f"cheaper than {_shown(replaced[0])}: price cap {money(cap)}")
        elif replaced:
            total = round(sum(p.price for p in replaced), 2)
            cap = round(total - CENT, 2)
            notes.append(f"cheaper than the earlier picks together ({money(total)})")
        else:
            notes.append("the previous run recommended nothing to be cheaper than")
    elif kind == "replace":
        replaced = _matching(picks, _stems(named)) if named else picks if len(picks) == 1 else ()
        if not replaced:
            what = f"no {named.strip()!r}" if named else "no single pick"
            notes.append(f"the previous run has {what} to replace: every pick stays")
    if kind == "new":
        notes.append("a new request: nothing carries over from the previous run")
        return FollowUp(previous=previous, kind=kind, notes=tuple(notes)), stated
    if kind == "refine":
        replaced = picks
    kept = tuple(p for p in picks if p not in replaced) if kind != "add" else picks
    kept = kept if kind != "cheaper" or len(replaced) == 1 else ()
    notes.extend(f"replaces {_shown(p)}" for p in replaced if kind in ("replace", "cheaper"))
    notes.extend(f"kept from the previous run: {_shown(p)}" for p in kept)
    limits = _merged(kind, stated, previous, kept, cap, notes, cap_is_total=len(replaced) > 1)
    follow_up = FollowUp(
        previous=previous,
        kind=kind,
        kept=kept,
        replaced=replaced,
        added=named if kind == "add" else "",
        notes=tuple(notes),
    )
    return follow_up, limits


def _merged(
    kind: FollowUpKind,
    stated: StatedLimits,
    previous: PreviousRun,
    kept: tuple[PreviousPick, ...],
    cap: float | None,
    notes: list[str],
    *,
    cap_is_total: bool,
) -> StatedLimits:
    """The follow-up's own limits, and the earlier ones it does not state anew. `cap`
    is the one "cheaper" implies: on the new item, or (`cap_is_total`) on them all."""
    earlier = previous.limits
    prices_anew = any(
        v is not None for v in (stated.max_price, stated.min_price, stated.total)
    ) or bool(stated.item_caps or stated.foreign)
    carried: list[str] = []
    budget = previous.budget if previous.budget is not None else earlier.budget
    total = stated.total
    max_price = stated.max_price
    min_price = stated.min_price
    if kept and budget is not None and total is None:
        # The earlier budget was for what is kept and the new item together: a new cap
        # for the new item alone does not restate it.
        total = budget
        carried.append("total")
        notes.append(f"budget {money(budget)} carried over, the kept picks counted in it")
    if not prices_anew:
        if budget is not None and not kept and kind != "cheaper":
            max_price = earlier.max_price if earlier.max_price is not None else budget
            total = earlier.total
            carried += [n for n, v in (("max_price", max_price), ("total", total)) if v is not None]
            notes.append(f"price limit {money(budget)} carried over")
        if earlier.min_price is not None and kind not in ("add",):
            min_price = earlier.min_price
            carried.append("min_price")
    if kept and total is not None:
        left = round(total - sum(p.price for p in kept), 2)
        if left > 0:
            notes.append(f"the budget leaves {money(left)} for the new item")
            if max_price is None or left < max_price:
                max_price = left
                carried.append("max_price")
        else:
            notes.append("the kept picks use the whole budget: nothing is left for a new item")
    if cap is not None and cap_is_total and (total is None or cap < total):
        total = cap
        carried.append("total")
    elif cap is not None and (max_price is None or cap < max_price):
        max_price = cap
        carried.append("max_price")
    if min_price is not None and max_price is not None and min_price >= max_price:
        min_price = None  # a floor at or above the cheaper cap would exclude everything
    min_rating = stated.min_rating
    if min_rating is None and earlier.min_rating is not None:
        min_rating = earlier.min_rating
        carried.append("min_rating")
        notes.append(f"minimum rating {earlier.min_rating:g} stars carried over")
    used = {v for v in (max_price, min_price, total) if v is not None}
    return stated.model_copy(
        update={
            "max_price": max_price,
            "min_price": min_price,
            "total": total,
            "min_rating": min_rating,
            "prices": tuple(sorted(set(stated.prices) | used)),
            "ratings": tuple(sorted(set(stated.ratings) | ({min_rating} - {None}))),
            "carried": tuple(dict.fromkeys(carried)),
        }
    )


def follow_up_plan(plan: Plan, follow_up: FollowUp) -> tuple[Plan, list[str]]:
    """The model's plan for a follow-up, fixed in code: a search of no product words
    ("cheaper") searches for the item it replaces, and a search for an item whose
    earlier pick is kept is removed (the pick stays; searching again could replace it)."""
    notes: list[str] = []
    fallback = next((p.item for p in follow_up.replaced if p.item), "")
    fallback = fallback or next(iter(follow_up.previous.queries), "")
    steps: list[PlanStep] = []
    for step in plan.steps:
        query = " ".join(_CHEAPER.sub(" ", step.query or "").split())
        if step.is_search and query != step.query and product_words(query):
            # "cheaper" is a price cap, not a search word: as one it only adds noise.
            notes.append(f"step {step.step}: searched for {query!r}; 'cheaper' is the cap")
            step = step.model_copy(update={"query": query, "action": f"Search {query}"})
        if step.is_search and not set(product_words(step.query or "")) - _PRICE_WORDS and fallback:
            notes.append(
                f"step {step.step}: query {step.query!r} names no product: searched for "
                f"{fallback!r} (the item of the previous run)"
            )
            step = step.model_copy(update={"query": fallback, "action": f"Search {fallback}"})
        steps.append(step)
    added = product_words(follow_up.added)
    kept_items = [product_words(p.item) for p in follow_up.kept if p.item]
    # What "swap the bag for a strap" gives up is not searched for again either.
    replaced_items = [product_words(p.item) for p in follow_up.replaced if p.item]
    replaced_items = replaced_items if follow_up.kind == "replace" else []
    again = [s for s in steps if s.is_search and _searches_for(s, kept_items, added)]
    given_up = [s for s in steps if s.is_search and _searches_for(s, replaced_items, added)]
    if (again or given_up) and len(again) + len(given_up) < len(plan.search_steps):
        for step in steps:
            if step in again:
                why = "whose pick is kept"
            elif step in given_up:
                why = "which the follow-up replaces"
            else:
                continue
            notes.append(f"step {step.step} searched again for {step.query!r}, {why}: removed")
        steps = [s for s in steps if s not in again and s not in given_up]
    elif again and added:
        # Every search looks for a kept item, none for the one the follow-up adds: the
        # first searches for the new item instead, as the follow-up names it.
        first, *rest = again
        notes.append(
            f"step {first.step} searched again for {first.query!r}, whose pick is kept: "
            f"searched for {follow_up.added!r} (the item the follow-up adds)"
        )
        new = first.model_copy(
            update={"query": follow_up.added, "action": f"Search {follow_up.added}"}
        )
        notes.extend(f"step {s.step} searched again for {s.query!r}: removed" for s in rest)
        steps = [new if s is first else s for s in steps if s not in rest]
    steps = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return plan.model_copy(update={"steps": steps}), notes


def _searches_for(step: PlanStep, items: list[list[str]], added: list[str]) -> bool:
    """Whether a search step looks for one of the earlier `items` again: each of its
    product words is one of that item's (the query it was the pick for), up to a plural,
    and none names the item a follow-up adds."""
    words = product_words(step.query or "")
    if not words or any(same_word(w, a) for w in words for a in added):
        return False
    return any(all(any(same_word(w, i) for i in item) for w in words) for item in items)
