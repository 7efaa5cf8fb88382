"""An open-ended request's plan made of kinds the shop carries. The planner sees the
nearest shelves (graph/reading/shelves.py), but a small model still plans kinds the shop
lacks ("hiking gloves"), or one search for the occasion itself ("housewarming present").
For a gift, a hobby or an occasion any kind the shop carries near it will do, so before
approval code replaces such a search with the shelf nearest in meaning to the search and
the request together, and a plan looking at fewer than KINDS_LOOKED_AT kinds gets the
request's nearest shelves added. Each change is a note shown at approval. Searches the
shop answers as they stand are left alone, and a request that is not open-ended is never
changed here: a kind the shop lacks is then a warning (unstocked_searches).
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog import CatalogBackend, money
from catalog.kinds import kind_term
from catalog.text import head_word
from graph.reading import Shelf, ShopShelves, StockAnswers, carried, shop_shelves
from graph.schemas import Plan, PlanStep

# "After searching at least 2 kinds that exist": fewer is one guess, more costs searches.
KINDS_LOOKED_AT = 2


def stocked_plan(
    catalog: CatalogBackend,
    plan: Plan,
    request: str,
    budget: float | None,
    request_words: Sequence[str] = (),
    known: StockAnswers | None = None,
) -> tuple[Plan, list[str]]:
    """`plan` with each search for a kind the shop lacks within its cap replaced by the
    shelf nearest it and `request` (the request's words without its limits), and the
    request's nearest shelves added up to KINDS_LOOKED_AT kinds unless the request's
    words (`request_words`) name a kind it searches ("a gift for my sister: a yoga mat");
    the notes say what changed. What the shop carries is kept in `known` (`carried`)."""
    shop = shop_shelves(catalog)
    # A search stands when the shop carries its kind, or cannot tell (its own error).
    stands = {
        s.step: carried(catalog, s.query or "", s.price_cap(budget), known) is not False
        for s in plan.search_steps
    }
    # A search copied from a shelf's line ("Carbon Trekking Poles (outdoor)") is of that
    # shelf's kind, though its last word is the department's: no second search of it.
    kinds = [_kind_searched(shop, s.query or "") for s in plan.search_steps if stands[s.step]]
    steps: list[PlanStep] = []
    notes: list[str] = []
    for step in plan.steps:
        query = step.query or ""
        cap = step.price_cap(budget)
        if stands.get(step.step, True):
            steps.append(step)
            continue
        nearest = shop.nearest(query, request, cap=cap, shown=1, skip=kinds)
        if not nearest:
            steps.append(step)  # nothing near it: the approval warning names the gap
            continue
        kinds.append(nearest[0].kind)
        steps.append(_searching(step, nearest[0]))
        within = f" within {money(cap)}" if cap is not None else ""
        notes.append(
            f"step {step.step} searched {query[:60]!r}, but the shop has no "
            f"{head_word(query) or query}{within}: it searches {nearest[0].name!r} "
            "instead, the nearest kind it has"
        )
    # One kind is one guess at what suits the person, unless the shopper named it.
    shoppers_kind = any(kind_term(word) in kinds for word in request_words)
    added: list[PlanStep] = []
    if notes or not shoppers_kind:
        wanted = max(KINDS_LOOKED_AT - len(set(kinds) - {""}), 0)
        for shelf in shop.nearest(request, cap=budget, shown=wanted, skip=kinds) if wanted else []:
            added.append(_searching(PlanStep(query=shelf.name, action=shelf.name), shelf))
            notes.append(
                f"too few kinds the shop has were planned: it also searches {shelf.name!r}"
            )
    if not notes:
        return plan, []
    # Added searches go after the plan's own, before the steps that reason over them.
    last_search = max((n for n, s in enumerate(steps) if s.is_search), default=-1)
    steps[last_search + 1 : last_search + 1] = added
    numbered = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return plan.model_copy(update={"steps": numbered}), notes


def _kind_searched(shop: ShopShelves, query: str) -> str:
    shelf = shop.named_by(query)
    return shelf.kind if shelf is not None else kind_term(query)


def _searching(step: PlanStep, shelf: Shelf) -> PlanStep:
    # In the shelf's own category: the name alone may find its neighbours first.
    category = shelf.category or None
    return step.model_copy(
        update={"query": shelf.name, "action": f"Search {shelf.name}", "category": category}
    )
