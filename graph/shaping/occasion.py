"""Whether a request is open-ended: a gift, an occasion or a hobby, for which the plan
looks at a few kinds of item and the answer is the single best one (Plan.pick "one").

A request is open-ended when it speaks of a gift or an occasion, names none of the kinds
the plan searches for ("a gift for someone who likes photography" searched as straps,
cleaning kits and books), and does not ask for a set. Naming the items ("a gift for my
dad: a wallet and a belt") or asking for a set ("put together", "a few things") keeps one
product per item. A person can change it at approval (`pick` in the plan).
"""

from __future__ import annotations

import re
from typing import Literal

from graph.reading.words import head_word, product_words, same_word
from graph.schemas import Plan

# A gift or an occasion, in the languages the limits reader knows (graph/checks/phrases.py).
_OPEN_ENDED = re.compile(
    r"\b(gifts?|presents?|stocking[- ]stuffers?|birthday|anniversary|christmas|xmas"
    r"|housewarming|graduation|something for|someone who|lovers?|loves|enthusiasts?|fans? of"
    r"|secret santa|\w+['’]s day"
    r"|regalos?|cadeaux?|geschenke?|presentes?|anniversaire|cumpleaños|geburtstag)\b",
    re.IGNORECASE,
)
_WANTS_A_SET = re.compile(
    r"\b(sets?|bundles?|baskets?|hampers?|put together|a few|several|some things|both"
    r"|everything|all (?:two|three|four|of them)|each)\b",
    re.IGNORECASE,
)

PickMode = Literal["each", "one"]


def speaks_of_an_occasion(request: str) -> bool:
    """Whether the request speaks of a gift, an occasion or a person's hobby."""
    return bool(_OPEN_ENDED.search(request))


def pick_mode(request: str, plan: Plan) -> PickMode:
    """ "one" for an open-ended request whose plan searches two or more kinds of item the
    request does not name; "each" otherwise."""
    searches = plan.search_steps
    if len(searches) < 2 or not speaks_of_an_occasion(request) or _WANTS_A_SET.search(request):
        return "each"
    asked = product_words(request.replace("-", " "))
    for step in searches:
        head = head_word(step.query or "")
        if head and any(same_word(head, word) for word in asked):
            return "each"  # the request names this kind: it wants it
    return "one"
