"""The pick mode of a plan: for an open-ended request (a gift, an occasion or a hobby,
RequestReading.open_ended) the plan looks at a few kinds of item and the answer is the
single best one (Plan.pick "one").

Naming the items ("a gift for my dad: a wallet and a belt") or asking for a set ("put
together", "a few things") keeps one product per item. A person can change it at
approval (`pick` in the plan).
"""

from __future__ import annotations

from typing import Literal

from catalog.text import mentions_every, product_words
from graph.schemas import Plan, RequestReading

PickMode = Literal["each", "one"]


def pick_mode(reading: RequestReading, plan: Plan) -> PickMode:
    """ "one" for an open-ended request whose plan searches two or more kinds of item: a
    word of the request a search shares is the person's interest ("loves building
    things", "drinks a lot of coffee and tea", "games and streams"), one of the shelves
    near it. "each" otherwise, and where two items the request lists are searched whole
    (RequestReading.items: "a gift for my dad: a wallet and a belt", "a board game and a
    card game for christmas"): those are what it wants."""
    searches = plan.search_steps
    if len(searches) < 2 or not reading.open_ended or reading.asks_for_a_set:
        return "each"
    # An item is searched when a query holds its every word (the check picks._listed_item
    # makes), or it holds the query's: "lens cleaning kit" of "a lens cleaning kit as a
    # photography gift", whose listed item runs on past the product.
    queries = [(product_words(q.replace("-", " ")), q) for q in (s.query or "" for s in searches)]
    items = [(product_words(item.replace("-", " ")), item) for item in reading.items]
    searched = [
        item
        for words, item in items
        if any(
            mentions_every(words, q) or mentions_every(said, item) for said, q in queries if said
        )
    ]
    return "each" if len(searched) >= 2 else "one"
