"""What the shopper asked, read in code before any model call (no LLM, no LangGraph): the
request cleaned and checked, the limits it states, and whether it asks for anything the
shop sells."""

from __future__ import annotations

from graph.reading.intent import departments_of, names_another_product, shopping_reason
from graph.reading.shelves import (
    Shelf,
    best_rated_shelves,
    department_shelves,
    nearest_shelves,
    search_shelves,
    unstocked_searches,
)
from graph.reading.stated import (
    checked_request,
    listed_items,
    validate_request,
    without_limit_phrases,
)
from graph.reading.words import product_words
