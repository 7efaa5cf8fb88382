"""The pick mode of a plan: for an open-ended request (a gift, an occasion or a hobby,
RequestReading.open_ended) the plan looks at a few kinds of item and the answer is the
single best one (Plan.pick "one").

Naming the items ("a gift for my dad: a wallet and a belt") or asking for a set ("put
together", "a few things") keeps one product per item. A person can change it at
approval (`pick` in the plan).
"""

from __future__ import annotations

from typing import Literal

from catalog.text import head_word, mentions_every, product_words, same_word, stem
from graph.schemas import Plan, RequestReading

PickMode = Literal["each", "one"]


def pick_mode(reading: RequestReading, plan: Plan) -> PickMode:
    """ "one" for an open-ended request whose plan searches two or more kinds of item, of
    which the request names at most one: that word is the person's interest ("loves
    building things", "games and streams", "she likes bags"), one of the shelves near it.
    "each" otherwise: two kinds the request names ("a gift for my dad: a wallet and a
    belt") are what it wants, as are two items the request lists that its searches hold
    whole (RequestReading.items: "a board game and a card game for christmas", one head)."""
    searches = plan.search_steps
    if len(searches) < 2 or not reading.open_ended or reading.asks_for_a_set:
        return "each"
    heads = {stem(h): h for step in searches if (h := head_word(step.query or ""))}
    named = [h for h in heads.values() if any(same_word(h, word) for word in reading.words)]
    # An item is searched whole when a query holds its every word (as picks._listed_item).
    queries = [step.query or "" for step in searches]
    items = [product_words(item.replace("-", " ")) for item in reading.items]
    searched = [i for i in items if any(mentions_every(i, q) for q in queries)]
    return "each" if len(named) >= 2 or len(searched) >= 2 else "one"
