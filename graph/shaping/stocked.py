"""An open-ended request's plan made of kinds the shop carries. The planner sees the
nearest shelves (graph/reading/shelves.py) but a small model still plans kinds the shop
lacks ("hiking gloves"), or one search for the occasion itself ("housewarming present").
For a gift, a hobby or an occasion (shaping.occasion) any kind the shop carries near it
will do, so before approval code replaces such a search with the nearest shelf: one its
own words find (a title sharing them first), else one of the request's, else the
best-rated of the departments its other searches found, then, while the plan looks at
fewer than KINDS_LOOKED_AT kinds, of the shop (after those searches are placed). A plan
looking at fewer kinds gets shelves added up to KINDS_LOOKED_AT. A request whose words the shop
never uses gets no shelves: the planner's own kinds for the person are placed here. A
search for one of the shop's departments ("kitchen-accessories") is that department's
nearest shelf. Each change is a note shown at approval. Searches the shop answers as
they stand are left alone, and a request that is not open-ended (one naming a kind the
shop sells, too) is never changed here: a kind the shop lacks is then a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from catalog import CatalogBackend, money
from catalog.text import head_word, kind_words, product_words, same_word
from graph.reading import Shelf, best_rated_shelves, department_shelves, search_shelves
from graph.schemas import Plan, PlanStep

# "After searching at least 2 kinds that exist": fewer is one guess, more costs searches.
KINDS_LOOKED_AT = 2


# Which of the shop's departments sells each of the kinds given, as the model names them
# (the planner node asks, once a plan): a list in their order, possibly shorter.
DepartmentsOf = Callable[[list[str]], Sequence[str]]


def stocked_plan(
    catalog: CatalogBackend,
    plan: Plan,
    shelves: list[Shelf],
    budget: float | None,
    departments_of: DepartmentsOf | None = None,
    request_words: Sequence[str] = (),
) -> tuple[Plan, list[str]]:
    """`plan` with each search for a kind the shop lacks within `budget` replaced by a
    shelf it has, and shelves added up to KINDS_LOOKED_AT kinds unless the request's
    words (`request_words`: RequestReading.words) name a kind it searches ("a gift for my
    sister: a yoga mat"); the notes say what changed.
    `shelves` are the request's nearest (what the planner saw). `departments_of` names
    the department that sells each kind the shop lacks: its shelves come first, as a
    word search cannot tell that a teacher's gift is a book and not the camera strap
    whose description says "teacher"."""
    kinds: list[str] = []  # the kinds the plan searches, the shop has
    areas: list[str] = []  # and the catalog categories they are in
    anywhere = cache(lambda: best_rated_shelves(catalog, budget))
    in_area = cache(lambda area: department_shelves(catalog, "", area, budget))

    def in_areas() -> list[Shelf]:
        return [shelf for area in dict.fromkeys(areas) for shelf in in_area(area)]

    def take(own: list[Shelf], anywhere_too: bool = False) -> Shelf | None:
        """A search's own shelves first, then the request's nearest; then, with
        `anywhere_too`, the best-rated of the plan's part of the shop (a hiking backpack,
        then headlamps), and while the plan looks at too few kinds, of all of it."""
        for near in (own, shelves, None) if anywhere_too else (own, shelves):
            short = len(kinds) < KINDS_LOOKED_AT
            options = near if near is not None else [*in_areas(), *(anywhere() if short else [])]
            if shelf := next((s for s in options if not _searched(s, kinds)), None):
                kinds.append(_kind(shelf))
                if near is not None:  # these say nothing of where to look
                    areas.append(shelf.category)
                return shelf
        return None

    steps: list[PlanStep] = []
    notes: list[str] = []
    # The kinds the plan's answered searches look for come first, so that no
    # replacement repeats a later one.
    found = {
        s.step: search_shelves(catalog, s.query or "", _cap(s, budget)) for s in plan.search_steps
    }
    for step in plan.search_steps:
        if (answered := found[step.step]) is not None and answered.area is not None:
            kinds.append(answered.kind)
            areas.append(answered.area)  # where its kind is, not its first hit (cooking oil)
        elif answered is None and (kind := head_word(step.query or "")):
            kinds.append(kind)  # the shop could not tell (its error): the plan's kind stands
    # The department of a kind the shop lacks is asked of the model only where the shop's
    # own words say nothing: no title it finds shares a word with the search.
    lacking = [
        s.query or ""
        for s in plan.search_steps
        if (f := found[s.step])
        and not f.stocked
        and not any(_shares_a_word(shelf.name, s.query or "") for shelf in f.shelves)
    ]
    # A model may name fewer than asked: the rest keep the word search's shelves.
    answer = departments_of(lacking) if lacking and departments_of else []
    named = dict(zip(lacking, answer, strict=False))
    # For each search for a kind the shop lacks: that kind, and the shelf in its place.
    placed: dict[int, tuple[str, Shelf | None]] = {}
    for step in plan.search_steps:
        if (unanswered := found[step.step]) is None or unanswered.stocked:
            continue
        # Its own shelves: those whose titles share its words ("hiking gloves": a hiking
        # backpack), then those in the department named for it, then those that matched
        # only its words in their descriptions.
        query = step.query or ""
        department = named.get(query)
        own = unanswered.shelves
        if department:
            own = department_shelves(catalog, query, department, _cap(step, budget)) + own
        nearest = sorted(
            own, key=lambda s: (not _shares_a_word(s.name, query), s.category != department)
        )
        placed[step.step] = (unanswered.kind, take(nearest))
    # A shelf nothing ties to its search comes last, from the part of the shop the
    # others are in: laptops under $80 become another phone accessory, not bottled water;
    # with nothing else there, it stays, and the approval warning names the gap.
    for number, (kind, shelf) in placed.items():
        placed[number] = (kind, shelf or take([], anywhere_too=True))
    for step in plan.steps:
        if step.step not in placed:
            steps.append(step)
            continue
        query, (kind, shelf) = step.query or "", placed[step.step]
        department = named.get(query)
        if shelf is None:
            steps.append(step)  # nothing near it: the approval warning names the gap
            continue
        steps.append(_searching(step, shelf))
        within = f" within {money(budget)}" if budget is not None else ""
        where = f" (in {department}, the department named for it)"
        notes.append(
            f"step {step.step} searched {query[:60]!r}, but the shop has no {kind}"
            f"{within}: it searches {shelf.name!r} instead, the nearest kind it has"
            + (where if shelf.category == department else "")
        )
    # A plan the shop answers as it stands keeps the planner's kinds, and looks at
    # KINDS_LOOKED_AT at least: one kind is one guess at what suits the person, unless
    # the shopper named it.
    shoppers_kind = any(same_word(kind, word) for kind in kinds for word in request_words)
    looks_wider = notes or not shoppers_kind  # no kinds at all: none the shopper named
    added: list[PlanStep] = []
    while looks_wider and len(kinds) < KINDS_LOOKED_AT and (shelf := take([], anywhere_too=True)):
        added.append(_searching(PlanStep(query=shelf.name, action=shelf.name), shelf))
        notes.append(f"too few kinds the shop has were planned: it also searches {shelf.name!r}")
    if not notes:
        return plan, []
    # Added searches go after the plan's own, before the steps that reason over them.
    last_search = max((n for n, s in enumerate(steps) if s.is_search), default=-1)
    steps[last_search + 1 : last_search + 1] = added
    numbered = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return plan.model_copy(update={"steps": numbered}), notes


def _searched(shelf: Shelf, kinds: list[str]) -> bool:
    return any(same_word(_kind(shelf), kind) for kind in kinds)


def _shares_a_word(name: str, query: str) -> bool:
    words = kind_words(query)
    return any(same_word(w, q) for w in product_words(name) for q in words)


def _kind(shelf: Shelf) -> str:
    return head_word(shelf.name) or shelf.name


def _cap(step: PlanStep, budget: float | None) -> float | None:
    return step.max_price if step.max_price is not None else budget


def _searching(step: PlanStep, shelf: Shelf) -> PlanStep:
    # In the shelf's own category: the name alone may find its neighbours first.
    category = shelf.category or None
    return step.model_copy(
        update={"query": shelf.name, "action": f"Search {shelf.name}", "category": category}
    )
