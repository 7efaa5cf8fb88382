"""Whether a request is about buying something, checked in code when the model says it
is not ("Not a shopping request"). A small model called "\\x00\\x01 camera" not shopping
while its own goal read "Buy a camera", and a request that names a product the catalog
sells got no search. The model's word stands only when neither its goal nor the
request names something to buy, and the request states no limit.
"""

from __future__ import annotations

import re

from catalog import CatalogBackend, CatalogError, Product, SearchArgs
from catalog.text import head_word, product_words, same_word, stem
from graph.schemas import RequestReading

# A goal that buys: "Buy a camera.", "Purchase running shoes", "Shop for a gift".
# Not "get" or "find": "Get the weather forecast", "Find out the time" buy nothing.
_PURCHASE = re.compile(
    r"\b(?:buy|buying|purchase|purchasing|shop(?:ping)? for|order(?:ing)? (?:a|an|some|the)\b)",
    re.IGNORECASE,
)
# Products a search for the request's words may bring back, to see which of those words
# name a kind of product the catalog sells.
_PRODUCTS_LOOKED_AT = 20


def _found(catalog: CatalogBackend, words: list[str]) -> list[Product]:
    """The products a search for `words` finds; none when the catalog cannot answer."""
    try:
        hits = catalog.search(SearchArgs(" ".join(words), limit=_PRODUCTS_LOOKED_AT))
    except CatalogError:
        return []
    return [hit.product for hit in hits]


def _kind_words(catalog: CatalogBackend, words: list[str]) -> set[str]:
    """The request's words that name a kind of product in the catalog: a word of a found
    product's category or tags ("lens", "camera"), never of its description alone (the
    cameras are "weather-sealed", yet "weather" is no product)."""
    kinds = {
        stem(word)
        for product in _found(catalog, words)
        for text in (product.category.replace("-", " "), *product.tags)
        for word in product_words(text)
    }
    return {word for word in words if stem(word) in kinds}


def shopping_reason(reading: RequestReading, goal: str, catalog: CatalogBackend) -> str | None:
    """Why a plan the model marked "not shopping" must be planned as shopping after all,
    as a line for its retry prompt; None when nothing in the request is for sale."""
    if reading.limits.any:
        # A request that states a price or rating limit is about buying something.
        return "the request states a price or rating limit: plan its search"
    if _PURCHASE.search(goal):
        return f"your goal {goal.strip()!r} is to buy something: plan its search"
    words = list(reading.words)
    named = _kind_words(catalog, words) if words else set()
    if named:
        listed = ", ".join(sorted(named))
        return f"the request names a product the catalog sells ({listed}): plan its search"
    return None


def products_naming(catalog: CatalogBackend, wants: str) -> list[Product]:
    """The products `wants`'s words find whose titles name its head word ("kit" of "lens
    cleaning kit"; "yoga mat" finds mats, "french press" a French Press Coffee Maker):
    what that kind of product is in this shop, and where it lives. None when it has no
    head, none is titled so ("better", "in blue": not a product here), or the catalog
    cannot answer."""
    head = head_word(wants)
    if head is None:
        return []
    return [
        product
        for product in _found(catalog, product_words(wants))
        if any(same_word(head, word) for word in product_words(product.title))
    ]
