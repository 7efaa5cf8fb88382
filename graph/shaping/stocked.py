"""An open-ended request's plan made of kinds the shop carries. The planner sees the
nearest shelves (graph/reading/shelves.py) but a small model still plans kinds the shop
lacks ("hiking gloves"), or one search for the occasion itself ("housewarming present").
For a gift, a hobby or an occasion any kind the shop carries near it will do, so before
approval code replaces such a search with the nearest shelf its own words find (else the
request's, else the shop's best-rated), and adds shelves until the plan looks at
KINDS_LOOKED_AT kinds. Each change is a note shown at approval. A request that names
what it wants is never changed here: a kind the shop lacks is then reported.
"""

from __future__ import annotations

from collections.abc import Callable

from catalog import CatalogBackend, money
from graph.reading import Shelf, best_rated_shelves, search_shelves
from graph.reading.words import head_word, same_word
from graph.schemas import Plan, PlanStep

# "After searching at least 2 kinds that exist": fewer is one guess, more costs searches.
KINDS_LOOKED_AT = 2


def stocked_plan(
    catalog: CatalogBackend, plan: Plan, shelves: list[Shelf], budget: float | None
) -> tuple[Plan, list[str]]:
    """`plan` with each search for a kind the shop lacks within `budget` replaced by a
    shelf it has, and shelves added up to KINDS_LOOKED_AT searches; the notes say what
    changed. `shelves` are the request's nearest (what the planner saw)."""
    kinds: list[str] = []  # the kinds the plan searches, the shop has
    spare = _Spare(shelves, lambda: best_rated_shelves(catalog, budget))
    steps: list[PlanStep] = []
    notes: list[str] = []
    for step in plan.steps:
        query = step.query
        found = search_shelves(catalog, query, _cap(step, budget)) if query else None
        if found is None or found.stocked:
            steps.append(step)
            if found is not None:
                kinds.append(found.kind)
            continue
        shelf = spare.take(kinds, first=found.shelves)
        if shelf is None:
            steps.append(step)  # nothing near it: the approval warning names the gap
            continue
        kinds.append(_kind(shelf))
        steps.append(_searching(step, shelf))
        within = f" within {money(budget)}" if budget is not None else ""
        notes.append(
            f"step {step.step} searched {query[:60]!r}, but the shop has no {found.kind}"
            f"{within}: it searches {shelf.name!r} instead, the nearest kind it has"
        )
    added: list[PlanStep] = []
    while len(kinds) < KINDS_LOOKED_AT and (shelf := spare.take(kinds)) is not None:
        kinds.append(_kind(shelf))
        added.append(_searching(PlanStep(query=shelf.name, action=shelf.name), shelf))
        notes.append(f"too few kinds the shop has were planned: it also searches {shelf.name!r}")
    if not notes:
        return plan, []
    # Added searches go after the plan's own, before the steps that reason over them.
    last_search = max((n for n, s in enumerate(steps) if s.is_search), default=-1)
    steps[last_search + 1 : last_search + 1] = added
    numbered = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return plan.model_copy(update={"steps": numbered}), notes


class _Spare:
    """Shelves not searched yet: a search's own first, then the request's, then the
    shop's best-rated (looked up only when needed)."""

    def __init__(self, shelves: list[Shelf], best_rated: Callable[[], list[Shelf]]) -> None:
        self._shelves = list(shelves)
        self._best_rated: Callable[[], list[Shelf]] | None = best_rated

    def take(self, kinds: list[str], first: list[Shelf] | None = None) -> Shelf | None:
        for options in (first or [], self._shelves):
            if (shelf := _new(options, kinds)) is not None:
                return shelf
        if self._best_rated is not None:
            self._shelves += self._best_rated()
            self._best_rated = None
            return _new(self._shelves, kinds)
        return None


def _new(shelves: list[Shelf], kinds: list[str]) -> Shelf | None:
    return next((s for s in shelves if not any(same_word(_kind(s), k) for k in kinds)), None)


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
