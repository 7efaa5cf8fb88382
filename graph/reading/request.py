"""The request read once (RequestReading): cleaned and checked, the limits it states, the
words it asks with, the items it lists, and whether it is open-ended. The planner node
reads it and stores it in state; every later node reads that, never the request again.
No LLM call, no LangGraph."""

from __future__ import annotations

import re
from functools import partial

from catalog import CatalogBackend
from catalog.text import kind_words, opening, product_words
from graph.reading.phrases import ADDING
from graph.reading.shelves import carried
from graph.reading.stated import checked_request, listed_items, without_limit_phrases
from graph.schemas import RequestReading, StatedLimits

# A gift or an occasion, in the languages the limits reader knows (phrases.py).
_OPEN_ENDED = re.compile(
    r"\b(gifts?|presents?|stocking[- ]stuffers?|birthday|anniversary|christmas|xmas"
    r"|housewarming|graduation|something for|lovers?|loves|enthusiasts?|fans? of"
    r"|secret santa|\w+['’]s day"
    r"|regalos?|cadeaux?|geschenke?|presentes?|anniversaire|cumpleaños|geburtstag)\b",
    re.IGNORECASE,
)
# Not "each" nor "all three": those are the limits reader's (a cap on each, a total:
# "$30 each" for bridesmaids, "all four of us can play"), and say no set is wanted.
_WANTS_A_SET = re.compile(
    r"\b(sets?|bundles?|baskets?|hampers?|put together|a few|several|some things|both"
    r"|everything)\b",
    re.IGNORECASE,
)

_CLAUSE = re.compile(r"\s(?:that|which|who)\s", re.IGNORECASE)


def read_request(request: object, catalog: CatalogBackend | None = None) -> RequestReading:
    """The request read once; RequestError when it is unusable or states a limit no
    product can meet (checked_request)."""
    return reading_of(*checked_request(request), catalog)


def reading_of(
    text: str, limits: StatedLimits, catalog: CatalogBackend | None = None
) -> RequestReading:
    """The reading of a cleaned request `text` whose limits are `limits`, its listed
    items checked against the shop's kinds where the `catalog` is known (listed_items)."""
    product_text = without_limit_phrases(text)
    named = opening(product_text)
    carries = None if catalog is None else partial(carried, catalog, cap=None)
    items = tuple(listed_items(text, carries))
    return RequestReading(
        text=text,
        limits=limits,
        product_text=product_text,
        product_words=tuple(product_words(product_text)),
        words=tuple(product_words(text.replace("-", " "))),
        opening_words=tuple(product_words(named.replace("-", " "))),
        # A request listing several items names no one product: which query is which
        # item's is not known ("a yoga mat and a felt desk mat" is no "felt desk yoga mat").
        named_product=_named_product(named) if len(items) < 2 else None,
        items=items,
        open_ended=speaks_of_an_occasion(text),
        asks_for_a_set=_WANTS_A_SET.search(text) is not None,
        adds=ADDING.search(text) is not None,
    )


def _named_product(opening_text: str) -> tuple[str, str] | None:
    """The (modifier, head) of the one product a request's opening names ("camera",
    "bag"), or None: no compound name."""
    # "a smartwatch that is compatible": the clause after the product is no part of it.
    named = _CLAUSE.split(opening_text, maxsplit=1)[0]
    words = kind_words(named)
    if not 2 <= len(words) <= 4:
        return None
    return words[-2], words[-1]


def speaks_of_an_occasion(request: str) -> bool:
    """Whether the request speaks of a gift, an occasion or a person's hobby. One that
    describes a person or a problem in other words is left to the model to read
    (graph/nodes.py: _read_as_open)."""
    return _OPEN_ENDED.search(request) is not None
