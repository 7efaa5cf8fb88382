"""What the shopper asked, read in code before any model call (no LLM, no LangGraph): the
request read once (`read_request`: cleaned and checked, the limits it states, its words,
its items, whether it is open-ended), whether it asks for anything the shop sells, and
the shop's shelves near it."""

from __future__ import annotations

from catalog.text import product_words
from graph.reading.intent import products_naming, shopping_reason
from graph.reading.request import read_request
from graph.reading.shelves import (
    Shelf,
    ShopShelves,
    StockAnswers,
    carried,
    in_shop_words,
    nearest_shelves,
    shelf_named_by,
    shop_shelves,
    unstocked_searches,
)
