"""The plan built in code when the planner returns no usable plan twice: one search with
the request's product words and its stated limits, then a pick.

It is shown as a fallback plan and goes through approval like any other. It is not a
replan: no step has run when it is built.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog import CatalogBackend, money
from catalog.text import product_words
from graph.reading.shelves import carried
from graph.reading.stated import MAX_QUERY_WORDS
from graph.schemas import Plan, PlanningError, PlanStep, RequestReading


def fallback_plan(
    reading: RequestReading,
    why: str,
    raw: str = "",
    earlier: Sequence[str] = (),
    catalog: CatalogBackend | None = None,
) -> Plan:
    """One search for the request's product words, then a pick, within the limits it
    states; shape_plan reconciles it with them, as any plan. A follow-up that names no
    product ("a cheaper one") searches its previous run's first search (`earlier`)
    instead. The query ends at its last word `catalog` carries as a kind. `why` says why
    the model's plans were unusable; PlanningError (with the model's `raw` output) when
    there is nothing to search for either."""
    # All the request's product words: the catalog ranks by how many a product matches,
    # and the product's name may come after its features ("slim fit men's henleys").
    # Its limits are read apart: "nothing over $60" names no product, nor a feature.
    words = list(reading.product_words) or product_words(next(iter(earlier), ""))
    words = words[:MAX_QUERY_WORDS]
    # A query's last word is the kind its products must be: it ends at the last word that
    # names a kind the shop carries ("which webcams do you have": not "... webcams do").
    kinds = [n for n, word in enumerate(words) if catalog and carried(catalog, word, None)]
    words = words[: kinds[-1] + 1] if kinds else words
    if not words:
        raise PlanningError(
            f"{why}, and the request names no product to search for; say what you want to buy",
            raw,
        )
    query = " ".join(words)
    budget = reading.limits.budget
    cap = f" for {money(budget)} or less" if budget is not None else ""
    return Plan(
        # The goal stays generic: the request reaches the executor only as product words.
        goal=f"Find the product that best matches the request's words{cap}",
        budget=budget,
        features=words,
        steps=[
            PlanStep(step=1, action=f"Search the catalog for {query}", query=query),
            PlanStep(step=2, action="Pick the best match within the limits", query=None),
        ],
        built_in_code=why,
    )
