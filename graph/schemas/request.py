"""The request as read once, by the planner node (graph/reading/request.py: read_request),
and stored in state: every later node reads this, never the request text again."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from graph.schemas.limits import StatedLimits


class RequestReading(BaseModel):
    """What the shopper wrote, read in code before any model call."""

    model_config = ConfigDict(frozen=True)

    text: str  # the request cleaned of control characters and extra spaces
    limits: StatedLimits  # the limits it states itself (a follow-up's carried ones aside)
    product_text: str  # the text without its limit phrases: what it asks for
    # The product words of product_text, in order, and of the whole text with its
    # hyphenated words split (a "t-shirt" is a shirt; what a pick must be about).
    product_words: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    # The words it names what it asks for with, before any preposition ("camera bag" of
    # "a camera bag for hiking"), and that name as (modifier, head) when it is one
    # product named in two to four words.
    opening_words: tuple[str, ...] = ()
    named_product: tuple[str, str] | None = None
    items: tuple[str, ...] = ()  # the items it lists, two or more ("a tent, a stove and a map")
    open_ended: bool = False  # a gift, an occasion or a hobby: the planner sees shelves
    # The model's answer to "does it name what to buy?" where code asked it (a first
    # request that speaks of no gift or occasion): True when it read what to buy as left
    # open. None: not asked.
    model_read_open: bool | None = None
    asks_for_a_set: bool = False  # "a set", "put together", "a few things": one pick each
    adds: bool = False  # says it adds to something ("and a case for it", "plus", "also")
