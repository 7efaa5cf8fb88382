"""What a follow-up carries over from the finished run it follows. The planner states
what the follow-up does (`FollowUpStatement`: its kind, the earlier item it changes, what
it asks for); code checks that against the previous run, then carries over:

- the stated limits carry over unless the follow-up states new ones of that kind;
- "cheaper" is a price cap below the pick it refers to (the single pick, or the pick of
  the item it names), and wins over a looser cap the follow-up states below the earlier
  one (a cap above it raises the budget: a refinement); "dearer" is a price floor above it;
- "add" keeps every earlier pick in the recommendation: their total counts against the
  budget, and the new item's cap is what the budget leaves;
- "replace" gives up the pick of the item it names, keeping the rest; "refine" searches
  that item anew, with what it asks for;
- "new" carries nothing over.

Each carry-over, and each place code does not follow the planner's statement, is a line
of `FollowUp.notes`, shown at approval as coming from the previous run; the limits are
merged into the run's StatedLimits (their `carried` names what came from the previous
run), so the plan checks, approval and verify read them as they read any stated limit.
"""

from __future__ import annotations

from catalog import CatalogBackend, CatalogError, Product, money
from catalog.text import head_word, product_words, same_word
from graph.reading import products_naming, shelf_named_by
from graph.reading.phrases import bare_amounts
from graph.reading.shelves import SAID_AGAIN
from graph.reading.stated import listed_items, without_limit_phrases
from graph.schemas import (
    MAX_FEATURES,
    MAX_PLAN_STEPS,
    FollowUp,
    FollowUpKind,
    FollowUpStatement,
    Plan,
    PlanStep,
    PreviousPick,
    PreviousRun,
    RequestReading,
    StatedLimits,
)
from meaning import Embedder

CENT = 0.01  # "cheaper" is strictly below: the catalog's price filter includes its cap
_EMBEDDER = Embedder()  # the process's one model, loaded when a follow-up first asks


# Words name an earlier pick this near it by meaning, this much nearer than any other:
# "SDXC card", "tarjeta de memoria más barata" name the card beside a tripod (0.58-0.82,
# the tripod 0.2 at most), "un trípode más barato" the tripod (0.38 against 0.11); "a
# cheaper one", "¿algo más barato?", "4.5 stars or better" neither (0.2 at most).
NEAR = 0.35
NEARER_BY = 0.15


def _nearest(picks: tuple[PreviousPick, ...], *texts: str) -> tuple[PreviousPick, ...]:
    """The earlier pick the first of `texts` that names one names, by meaning (the
    semantic match, in any language the model reads); none when none names one pick."""
    index = _nearest_of([(p.item or p.title, p.title) for p in picks], *texts)
    return () if index is None else (picks[index],)


def _nearest_of(options: list[tuple[str, ...]], *texts: str) -> int | None:
    """Which option (each named by one or more labels) the first of `texts` that names
    one names, by meaning; None when none names one option."""
    owners = [n for n, option in enumerate(options) for _ in option]
    labels = [label for option in options for label in option]
    for text in filter(None, texts):
        scores = _EMBEDDER.similarity(text, labels)
        best_of = [
            max(s for s, k in zip(scores, owners, strict=True) if k == n)
            for n in range(len(options))
        ]
        best, second = [*sorted(best_of, reverse=True), -1.0, -1.0][:2]
        if best >= NEAR and best - second >= NEARER_BY:
            return best_of.index(best)
    return None


def _nearest_index(text: str, options: list[str]) -> int:
    """Which of `options` is nearest `text` by meaning, however near."""
    return int(_EMBEDDER.similarity(text, options).argmax())


def _named(picks: tuple[PreviousPick, ...], said: tuple[str, ...]) -> tuple[PreviousPick, ...]:
    """The earlier picks whose item's head word ("bag" of "camera bag") is among `said`."""
    return tuple(
        p for p in picks if (head := head_word(p.item)) and any(same_word(head, w) for w in said)
    )


def _elsewhere(
    reading: RequestReading,
    wants: str,
    naming: list[Product],
    picks: tuple[PreviousPick, ...],
    catalog: CatalogBackend,
    notes: list[str],
) -> bool:
    """Whether another product a follow-up names is a new request: it does not say it
    adds ("and a kit for it", "plus a lamp", "et aussi"), and the product lives in none
    of the shop's departments the earlier picks are in ("a yoga mat" after a camera bag;
    a lens kit is beside it). Where the shop cannot tell, it is not; a note says so."""
    if reading.adds:
        return False
    wanted = {product.category or "" for product in naming}
    try:
        earlier = {p.category or "" for p in catalog.get([p.id for p in picks]).values()}
    except CatalogError:
        return False
    if not wanted or not earlier or wanted & earlier:
        return False
    notes.append(
        f"{wants!r} is in none of the shop's departments the earlier picks are in, and the "
        "follow-up adds nothing to them: read as a new request"
    )
    return True


def _another_kind(
    catalog: CatalogBackend, wants: str, items: tuple[str, ...] | list[str]
) -> tuple[bool | None, list[Product], bool]:
    """Whether `wants` is another kind of product than `items` (True: no product its words
    name is titled as one of them; "Kettle & Pine Digital Coffee *Scale*" is a scale,
    whatever its brand), one of theirs (False), or a feature (None: no title names it),
    with the products it names, and whether every one of those is titled as theirs."""
    heads = [h for i in items if (h := head_word(i))]
    naming = products_naming(catalog, wants) if wants and heads else []
    if wants and heads and not naming and (shelf := shelf_named_by(catalog, wants)):
        naming = products_naming(catalog, shelf.name)  # in the shop's words ("bandas ...")
    theirs = [p for p in naming if any(same_word(h, t) for t in p.kinds.title for h in heads)]
    another = not theirs if naming else None
    return another, naming, bool(naming) and len(theirs) == len(naming)


def _wants(statement: FollowUpStatement | None) -> str:
    """What the planner reads the follow-up as wanting, its limits aside: they are the
    stated limits' ("four stars or higher" searched as "four higher earbuds" found none)."""
    return without_limit_phrases(statement.wants or "") if statement else ""


def _shown(pick: PreviousPick) -> str:
    return f"{pick.id} {pick.title} ({money(pick.price)})"


def checked_statement(
    reading: RequestReading,
    previous: PreviousRun,
    statement: FollowUpStatement | None,
    wants: str,
    catalog: CatalogBackend,
    notes: list[str],
) -> tuple[FollowUpKind, tuple[PreviousPick, ...]]:
    """The planner's reading of the follow-up (`wants`: what it wants, its limits aside,
    as carry_over read it), checked against the previous run and the shop: its kind and
    the earlier picks it is about. Where code does not follow it, a note says why."""
    picks = previous.picks
    if statement is None:
        notes.append("the planner gave no reading of the follow-up: read as a refinement")
        return "refine", picks
    kind, item = statement.kind, statement.item or ""
    notes.append(
        f"the planner reads it as {kind!r}" + (f" of {item!r}" if item else "")
        + (f", wanting {wants!r}" if wants else "")
    )  # fmt: skip
    # What it wants, by the shop's own products: another kind of product, or a feature.
    # An added or swapped-in item the reading leaves unnamed is what the follow-up's
    # own words name ("and a strap too").
    items = (*([item] if item else []), *(p.item for p in picks if p.item), *previous.queries)
    if kind in ("add", "replace") and not wants:
        wants = " ".join(reading.product_words)
    another, naming, only_theirs = _another_kind(catalog, wants, items)
    if kind == "new":
        # A new request names a product: not the earlier item's kind ("I can go up to $80
        # now", wanting a camera bag, after a camera bag), nor, by meaning, what the
        # previous run searched for.
        earlier = _EMBEDDER.similarity(reading.text, [previous.request, *previous.queries])
        if another is not False and reading.product_words and max(earlier) < NEAR:
            return kind, ()
        notes.append("it names no product the previous run did not: read as a refinement")
        return "refine", picks
    # What it wants is, by meaning, an earlier item said again ("a camp chair", "wireless
    # earbuds and Bluetooth headphones" after earbuds), whatever product a word of it
    # heads ("whetstone kitchen knives"): that item's kind, and an add or a swap of it is
    # that item asked anew, as an add of the same kind is. A revision has no pick: there
    # a swap for the same item is a drop (revised_plan). An add of what the shop names
    # no product of is the model's to read: code took it for a feature, and on the dev
    # sets that lost to the model ("und dazu noch eine Stirnlampe", German for headlamp).
    said_again = bool(wants and items) and max(_EMBEDDER.similarity(wants, items)) >= SAID_AGAIN
    if said_again:
        another = False
    # A swap for what the shop titles only as an earlier item's kind ("a manual one
    # instead" of a grinder: every manual product is a grinder) is that item asked anew;
    # "a backpack" instead of a camera bag names hiking backpacks too, and stays a swap.
    if (kind == "add" and another is False) or (
        kind == "replace" and (said_again or only_theirs) and picks
    ):
        notes.append(f"{wants!r} is the same kind of product here: read as a refinement")
        kind = "refine"
    # A swap of the one pick for what names no product here ("the women's version") is
    # that pick with it: right on both recorded swaps, where the rule lost on adds (above).
    elif kind == "replace" and another is None and wants and len(picks) == 1:
        notes.append(f"{wants!r} names no product of this shop: read as a refinement")
        kind = "refine"
    # A rating and no price asks for the same item rated so, at no other price.
    if kind in ("cheaper", "dearer") and reading.limits.ratings and not reading.limits.prices:
        notes.append(f"it states a rating and no price, not {kind}: read as a refinement")
        kind = "refine"
    swapped = _named(picks, reading.opening_words)
    if kind == "refine" and another and swapped:
        # "swap the bag for a strap", "a kettlebell rather than the mat": what it names
        # before any preposition is an earlier item, so the new product takes its place.
        notes.append(
            f"{wants!r} is another kind of product in this shop, named in place of "
            f"{', '.join(p.item or p.title for p in swapped)!r}: read as a swap"
        )
        return "replace", swapped
    if (
        kind in ("add", "refine")
        and another
        and _elsewhere(reading, wants, naming, picks, catalog, notes)
    ):
        return "new", ()
    if kind == "refine" and another:
        # The item changed into another product is a swap, unless the follow-up says it
        # adds or names the earlier item as what the new one goes with ("a strap for the
        # bag": named after "for"): then it is added.
        if reading.adds or _named(picks, reading.words):
            notes.append(
                f"{wants!r} is another kind of product in this shop: read as an added item"
            )
            return "add", ()
        notes.append(f"{wants!r} is another kind of product in this shop: read as a swap")
        kind = "replace"
    if kind == "add":
        return kind, ()
    if kind == "replace":
        # What it gives up: the earlier item it names, else the one pick, else them all
        # ("I would rather have a camera bag" after a tripod and a card).
        about = _nearest(picks, item) if item else swapped or _named(picks, reading.words)
        return kind, about or picks
    # The item it is about as the planner names it, else as its own words do, by meaning
    # ("a cheaper water bottle", "una botella más barata" after shoes and a bottle).
    about = _nearest(picks, item) if item else _nearest(picks, wants, reading.text)
    if item and not about:
        if max(_EMBEDDER.similarity(item, previous.queries), default=0) < NEAR:
            notes.append(f"the previous run has no {item!r}: nothing carries over")
            return "new", ()
        # An earlier search with no pick (a chain's link found nothing): the picks stay,
        # and the limits that search held to carry over.
        notes.append(f"the previous run has no pick for {item!r}: its earlier limits hold")
        return kind, ()
    if not about and (len(picks) == 1 or kind in ("cheaper", "refine")):
        about = picks
    return kind, about


def carry_over(
    reading: RequestReading,
    previous: PreviousRun,
    statement: FollowUpStatement | None,
    catalog: CatalogBackend,
) -> tuple[FollowUp, StatedLimits]:
    """What the follow-up (`reading`, its own limits among it), as the planner reads it
    (`statement`), carries over from the finished run `previous`, and the limits the
    new run holds to."""
    notes = [f"follows up thread {previous.thread_id} ({previous.request[:80]!r})"]
    wants = _wants(statement)
    kind, about = checked_statement(reading, previous, statement, wants, catalog, notes)
    stated = _with_bare_cap(reading, kind, notes)
    planner_kind = statement.kind if statement else None
    picks = previous.picks
    if kind == "new":
        notes.append("a new request: nothing carries over from the previous run")
        new = FollowUp(previous=previous, kind=kind, planner_kind=planner_kind, notes=tuple(notes))
        return new, stated
    cap = floor = None  # the new item's price limit the previous run implies
    if kind == "cheaper" and len(about) == 1:
        cap = round(about[0].price - CENT, 2)
        notes.append(f"cheaper than {_shown(about[0])}: price cap {money(cap)}")
    elif kind == "cheaper" and about:
        cap = round(sum(p.price for p in about) - CENT, 2)
        notes.append(f"cheaper than the earlier picks together ({money(cap + CENT)})")
    elif kind == "dearer" and len(about) == 1:
        floor = round(about[0].price + CENT, 2)
        notes.append(f"dearer than {_shown(about[0])}: lowest price {money(floor)}")
    elif kind in ("cheaper", "dearer"):
        notes.append(f"the previous run recommended no single pick to be {kind} than")
    if kind == "replace" and not about:
        notes.append("the previous run has no single pick to replace: every pick stays")
    replaced = about if kind != "add" else ()
    kept = tuple(p for p in picks if p not in replaced)
    notes.extend(f"replaces {_shown(p)}" for p in replaced if kind != "refine")
    notes.extend(f"kept from the previous run: {_shown(p)}" for p in kept)
    added = wants or " ".join(reading.product_words)
    limits = _merged(
        kind, stated, previous, kept, cap, floor, notes, cap_is_total=len(replaced) > 1
    )
    follow_up = FollowUp(
        previous=previous,
        kind=kind,
        planner_kind=planner_kind,
        kept=kept,
        replaced=replaced,
        added=added if kind in ("add", "replace") else "",
        wants=wants if kind not in ("add", "replace") else "",
        notes=tuple(notes),
    )
    return follow_up, limits


def _with_bare_cap(reading: RequestReading, kind: FollowUpKind, notes: list[str]) -> StatedLimits:
    """The follow-up's limits, with the one amount it writes with no currency right after
    a cap word ("can we keep it below a hundred?") as its cap where it asks about price
    (cheaper or dearer) and code read no price: a first request's such amount is a cap
    where the planner's plan holds it (model_read_limits), a follow-up's plan holds none."""
    stated = reading.limits
    if kind not in ("cheaper", "dearer") or stated.prices:
        return stated
    amounts = bare_amounts(reading.text, capped=True)
    if len(amounts) != 1:
        return stated
    (cap,) = amounts
    notes.append(f"its {cap:g} is read as a price cap of {money(cap)}: it asks about price")
    return stated.model_copy(update={"max_price": cap, "prices": (cap,)})


def _merged(
    kind: FollowUpKind,
    stated: StatedLimits,
    previous: PreviousRun,
    kept: tuple[PreviousPick, ...],
    cap: float | None,
    floor: float | None,
    notes: list[str],
    *,
    cap_is_total: bool,
) -> StatedLimits:
    """The follow-up's own limits, and the earlier ones it does not state anew. `cap`
    is the one "cheaper" implies: on the new item, or (`cap_is_total`) on them all;
    `floor` the one "dearer" implies."""
    earlier = previous.limits
    prices_anew = any(
        v is not None for v in (stated.max_price, stated.min_price, stated.total)
    ) or bool(stated.item_caps or stated.foreign)
    carried: list[str] = []
    budget = previous.budget if previous.budget is not None else earlier.budget
    total, max_price, min_price = stated.total, stated.max_price, stated.min_price
    raised = max_price if max_price is not None and not stated.max_price_each else None
    if kept and budget is not None and total is None:
        if raised is not None and raised > budget:
            # A cap above the earlier budget could never bind beneath it: the person raised
            # what the whole may cost ("zusammen höchstens 80 Dollar" after $40), and the
            # whole keeps within every amount they stated.
            total, max_price = raised, None
            notes.append(
                f"{money(raised)} is above the earlier budget: the new budget, kept picks in it"
            )
        else:
            # The earlier budget was for what is kept and the new item together: a new cap
            # for the new item alone does not restate it.
            total = budget
            carried.append("total")
            notes.append(f"budget {money(budget)} carried over, the kept picks counted in it")
    if not prices_anew:
        # "cheaper" sets its own cap below the pick; with no pick to be cheaper than (the
        # last link of a chain found nothing), the earlier cap still holds.
        if budget is not None and not kept and (kind != "cheaper" or cap is None):
            max_price = earlier.max_price if earlier.max_price is not None else budget
            total = earlier.total
            carried += [n for n, v in (("max_price", max_price), ("total", total)) if v is not None]
            notes.append(f"price limit {money(budget)} carried over")
        elif kind == "cheaper" and cap is None and earlier.max_price is not None:
            max_price = earlier.max_price
            carried.append("max_price")
        if earlier.min_price is not None and kind not in ("add",):
            min_price = earlier.min_price
            carried.append("min_price")
    if kept and total is not None:
        left = round(total - sum(p.price for p in kept), 2)
        if left > 0:
            notes.append(f"the budget leaves {money(left)} for the new item")
            if stated.max_price is not None and left < stated.max_price:
                notes.append(f"the stated {money(stated.max_price)} cap is above what is left")
            if max_price is None or left < max_price:
                max_price = left
                carried.append("max_price")
        else:
            notes.append("the kept picks use the whole budget: nothing is left for a new item")
    if cap is not None and cap_is_total and (total is None or cap < total):
        total = cap
        carried.append("total")
    elif cap is not None and (max_price is None or cap < max_price):
        if stated.max_price is not None:
            notes.append(f"the stated {money(stated.max_price)} cap is looser: cheaper wins")
        max_price = cap
        carried.append("max_price")
    if (
        cap is not None
        and min_price is not None
        and max_price is not None
        and min_price >= max_price
    ):
        min_price = None  # an earlier floor at or above the cheaper cap fits nothing
    if floor is not None and (min_price is None or floor > min_price):
        min_price = floor
        carried.append("min_price")
        if max_price is not None and max_price < floor and "max_price" in carried:
            notes.append(f"the earlier {money(max_price)} cap is below it: not carried")
            max_price = None
            carried.remove("max_price")
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
    """The model's plan for a follow-up, fixed in code: "cheaper" and "dearer" search
    the items they are about as the previous run did (the price limit is what changes);
    a refinement's searches carry what it wants; a search for an item whose earlier pick
    is kept, or which a swap gives up, is removed (searching again could replace it)."""
    notes: list[str] = []
    steps = list(plan.steps)
    if follow_up.kind in ("cheaper", "dearer") and follow_up.replaced:
        steps = _searched_anew(steps, follow_up, notes)
    elif follow_up.wants:
        item = next((p.item for p in follow_up.replaced if p.item), "")
        queries = [s.query or "" for s in steps if s.is_search]
        steps = [_wanting(step, item, follow_up.wants, notes, queries) for step in steps]
    steps = _not_searched_again(steps, follow_up, notes)
    steps = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    steps = _in_category_of_the_item(steps, follow_up, notes)
    features = plan.features
    if follow_up.wants and follow_up.wants not in features and len(features) < MAX_FEATURES:
        features = [*features, follow_up.wants]
    return plan.model_copy(update={"steps": steps, "features": features}), notes


def _in_category_of_the_item(
    steps: list[PlanStep], follow_up: FollowUp, notes: list[str]
) -> list[PlanStep]:
    """The same item anew ("cheaper", "dearer", a refinement) is looked for where the
    shop keeps the earlier pick: a cheaper camera bag is not a dry bag from another shelf."""
    categories = {p.category for p in follow_up.replaced} or set(follow_up.previous.categories)
    if follow_up.kind not in ("cheaper", "dearer", "refine") or len(categories) != 1:
        return steps
    (category,) = categories
    if category is None:
        return steps
    moved = [s.step for s in steps if s.is_search and s.category != category]
    notes += [f"step {n}: searched in {category!r}, where the earlier pick is" for n in moved]
    return [s.model_copy(update={"category": category}) if s.step in moved else s for s in steps]


def _searched_anew(steps: list[PlanStep], follow_up: FollowUp, notes: list[str]) -> list[PlanStep]:
    """A cheaper or dearer follow-up's searches: each item it is about, searched as the
    previous run searched it (with what the follow-up wants), then the model's other steps."""
    fallback = next(iter(follow_up.previous.queries), "")
    items = dict.fromkeys(p.item or fallback for p in follow_up.replaced)
    queries = [_wanting_query(item, follow_up.wants) for item in items if item]
    if not queries:
        return steps
    planned = [s.query for s in steps if s.is_search]
    if planned != queries:
        notes.append(
            f"searched {', '.join(map(repr, queries))} as the previous run did, not "
            f"{', '.join(map(repr, planned))}: the {follow_up.kind} price limit does the rest"
        )
    rest = [s for s in steps if not s.is_search]
    rest = rest or [PlanStep(action="Pick the best match within the limits", query=None)]
    return [PlanStep(action=f"Search {q}", query=q) for q in queries] + rest


def _wanting_query(query: str, wants: str) -> str:
    words = product_words(query)
    new = [w for w in product_words(wants) if not any(same_word(w, q) for q in words)]
    return " ".join([*new, query]) if new else query


def _wanting(
    step: PlanStep, item: str, wants: str, notes: list[str], elsewhere: list[str]
) -> PlanStep:
    """A refinement's search with what it wants in its query, when the model left it
    out; a query that names neither the item nor what it wants ("a manual one") is what
    it wants of the item's head noun (its last word: "manual grinder"). What names the
    plan's other searches (`elsewhere`: "$450 for the chair and the arm") is theirs, not
    something this one wants."""
    if not step.is_search:
        return step
    words = product_words(step.query or "")
    others = [w for query in elsewhere if query != step.query for w in product_words(query)]
    wants = " ".join(w for w in product_words(wants) if not any(same_word(w, o) for o in others))
    if item and not any(same_word(w, i) for w in words for i in product_words(item)):
        query = " ".join([*product_words(wants), *product_words(item)[-1:]])
    else:
        query = _wanting_query(step.query or "", wants)
    if query == step.query:
        return step
    notes.append(f"step {step.step}: searched for {query!r}, with what the follow-up wants")
    return step.model_copy(update={"query": query, "action": f"Search {query}"})


def _not_searched_again(
    steps: list[PlanStep], follow_up: FollowUp, notes: list[str]
) -> list[PlanStep]:
    """A search for an earlier item whose pick is kept, or which a swap gives up, is
    removed (searching again could replace it): its query is nearer that item by meaning
    than the item the follow-up is about and what it adds. Where no search is for what it
    adds (a small model planned "and a kit for it" as the bag again), the first of them
    searches for that instead, as the follow-up names it."""
    why = {p.item: "whose pick is kept" for p in follow_up.kept if p.item}
    if follow_up.kind == "replace":
        why |= {p.item: "which the follow-up replaces" for p in follow_up.replaced if p.item}
    added = follow_up.added
    # What each search may be for: the earlier items (those with no pick too) and the new one.
    replaced = [p.item for p in follow_up.replaced if p.item not in why]
    items = [*why, *replaced, *follow_up.previous.queries, added]
    items = [item for item in dict.fromkeys(items) if item]
    searches = [s for s in steps if s.is_search]
    if not why or not searches:
        return steps
    item_of = {s.step: items[_nearest_index(s.query or "", items)] for s in searches}
    again = [s for s in searches if item_of[s.step] in why]
    first = again[0] if added and again and added not in item_of.values() else None
    removed = [s for s in again if s is not first]
    if len(removed) == len(searches):
        return steps  # nothing else to search for: as planned
    notes.extend(
        f"step {s.step} searched again for {s.query!r}, {why[item_of[s.step]]}: removed"
        for s in removed
    )
    if first is not None:
        notes.append(
            f"step {first.step} searched for {first.query!r}, not for what the follow-up asks "
            f"for: searched for {added!r}"
        )
    searched = {"query": added, "action": f"Search {added}"}
    return [s.model_copy(update=searched) if s is first else s for s in steps if s not in removed]


def revised_plan(
    shown: Plan, revised: Plan, follow_up: FollowUp, words: str, catalog: CatalogBackend
) -> tuple[Plan, list[str]]:
    """The model's revision of the plan `shown`, checked search by search: a small model
    rewrites a plan whole, so it loses an item the words never named, keeps one they
    drop, or plans an added item alone. The search the words name (by meaning: the part
    of them that is not what they ask for, "swap the water bottle for ...", or the one
    search there is) is the one they change: replaced by another kind of product (the
    shop's own titles say which), it is swapped for it; by none, it is dropped; refined,
    the model's search for it is kept, with what it wants. Every search the words do not
    name stays as shown; what they add goes beside them."""
    searches = shown.search_steps
    if follow_up.kind == "add":
        return _with_searches_of(shown, revised, follow_up.added)
    wanted = follow_up.added or follow_up.wants
    rest = words.replace(wanted, " ") if wanted and wanted in words else words
    queries = [s.query or "" for s in searches]
    index = _nearest_of([(q,) for q in queries], rest, words)
    if index is None and len(searches) != 1:
        return revised, []  # it names no one search: the model's plan as it wrote it
    named = searches[index or 0]
    notes: list[str] = []
    if follow_up.kind == "replace":
        another, _, _ = _another_kind(catalog, wanted, [named.query or ""])
        query = " ".join(product_words(wanted))
        instead = [PlanStep(action=f"Search {query}", query=query)] if another and query else []
        done = f"swapped for {query!r}" if instead else "dropped"
        notes.append(f"the change names the search for {named.query!r}: {done}")
    else:
        # The model's searches nearest the one named, with what the change wants.
        nearest = {
            s.step: searches[_nearest_index(s.query or "", queries)] for s in revised.search_steps
        }
        instead = [s for s in revised.search_steps if nearest[s.step] is named]
        elsewhere = [q for q in queries if q != named.query]
        if wanted:
            instead = [_wanting(s, named.query or "", wanted, notes, elsewhere) for s in instead]
        notes.extend(
            f"the search for {s.query!r}, which the change does not name, is kept as shown"
            for s in searches
            if s is not named and s not in nearest.values()
        )
    changed = [new for s in searches for new in (instead if s is named else [s])]
    steps = [*changed, *(s for s in revised.steps if not s.is_search)]
    if not changed or len(steps) > MAX_PLAN_STEPS:
        return revised, []  # nothing left to search, or no room: the model's plan is checked
    numbered = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return revised.model_copy(update={"steps": numbered}), notes


def _with_searches_of(shown: Plan, revised: Plan, added: str) -> tuple[Plan, list[str]]:
    """A revision that adds an item (`revised`): every search of the plan `shown`, as
    shown, then the revision's searches for what the words add (`added`), and notes. A
    small model plans the new item alone, or the shown items again beside it ("ergonomic
    office chairs" beside the shown "ergonomic office chair"): a revised search is for
    what they add when it is nearer that by meaning than any shown search. Where none is
    ("add a lens cleaning kit" revised into the bag twice), it is searched as they name it."""
    queries = [s.query or "" for s in shown.search_steps]
    # Each item the words add on its own: "a camera bag" of "a lens cleaning kit and a
    # camera bag" is nearer a shown "camera strap" than the words whole.
    wanted = (list(listed_items(added)) or [added]) if added else []
    if wanted:
        items = [*queries, *wanted]
        new = [
            s for s in revised.search_steps if _nearest_index(s.query or "", items) >= len(queries)
        ]
    else:
        new = [s for s in revised.search_steps if s.query not in queries]
    notes = [
        f"the revision searched {s.query!r} again beside the plan shown: removed"
        for s in revised.search_steps
        if s not in new and s.query not in queries
    ]
    if wanted and not new:
        new = [PlanStep(action=f"Search {item}", query=item) for item in wanted]
        notes.append(f"no search of the revision was for {added!r}: it is searched as named")
    steps = [*shown.search_steps, *new, *(s for s in revised.steps if not s.is_search)]
    if len(steps) > MAX_PLAN_STEPS:
        return revised, []  # no room: the approval shows what the model dropped, as changes
    numbered = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return revised.model_copy(update={"steps": numbered}), notes
