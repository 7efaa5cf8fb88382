"""The plan built in code when the planner returns no usable plan twice: one search with
the request's product words and its stated limits, then a pick.

It is shown as a fallback plan and goes through approval like any other. It is not a
replan: no step has run when it is built.
"""

from __future__ import annotations

from graph.limits import MAX_QUERY_WORDS, read_limits
from graph.state import Plan, PlanningError, PlanStep
from graph.words import product_words


def fallback_plan(request: str, why: str) -> Plan:
    """One search for the request's product words, then a pick. The planner node carries
    the request's stated limits into it, as into any plan (graph/limits.py). Raises
    PlanningError when the request names nothing to search for."""
    # All the request's product words: the catalog ranks by how many a product matches,
    # and the product's name may come after its features ("slim fit men's henleys").
    words = product_words(request)
    words = words[:MAX_QUERY_WORDS]
    if not words:
        raise PlanningError(
            "the planner returned no valid plan, and the request names no product to "
            "search for; say what you want to buy"
        )
    query = " ".join(words)
    stated = read_limits(request)
    cap = f" for ${stated.max_price:,.2f} or less" if stated.max_price is not None else ""
    return Plan(
        # The goal stays generic: the request reaches the executor only as product words.
        goal=f"Find the product that best matches the request's words{cap}",
        budget=stated.max_price,
        features=words,
        steps=[
            PlanStep(step=1, action=f"Search the catalog for {query}", query=query),
            PlanStep(step=2, action="Pick the best match within the limits", query=None),
        ],
        built_in_code=why,
    )
