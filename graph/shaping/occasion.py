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

from graph.reading.words import head_word, product_words, same_word, stem
from graph.schemas import Plan

# A gift or an occasion, in the languages the limits reader knows (graph/reading/phrases.py).
_OPEN_ENDED = re.compile(
    r"\b(gifts?|presents?|stocking[- ]stuffers?|birthday|anniversary|christmas|xmas"
    r"|housewarming|graduation|something for|lovers?|loves|enthusiasts?|fans? of"
    r"|secret santa|\w+['’]s day"
    r"|regalos?|cadeaux?|geschenke?|presentes?|anniversaire|cumpleaños|geburtstag)\b",
    re.IGNORECASE,
)
# A person the shopper buys for, with what to buy left open ("what can I buy a friend
# who is getting into yoga", "a treat for someone into skincare"): the planner chooses it
# among the shop's shelves. "a theremin for my nephew" names what to buy. Words for
# people (someone, friends, kin, roles) and for a thing left open are small closed
# classes, unlike the ways of phrasing a gift. A person word that names a product's kind
# ("baby powder", "kids camera", "children's books") is followed by that product, not by
# a clause or the sentence's end.
_A_PERSON = re.compile(
    r"\b(?:someone|somebody|alguien|quelqu'un|jemand"
    r"|(?:friends?|colleagues?|co-?workers?|boss|teachers?|neighbou?rs?|mum|mom|mother|dad"
    r"|father|parents?|wife|husband|partner|boyfriend|girlfriend|son|daughter|kids?|child"
    r"|children|baby|brother|sister|sibling|nephew|niece|aunt|uncle|cousin|teen(?:ager)?"
    r"|grand(?:ma|pa|mother|father|parents?|son|daughter)|\d+[- ]year[- ]old"
    r"|amig[oa]s?|amie?s?|freund(?:in)?)"
    r"(?=\s*(?:[^\w\s'’]|$)|\s+(?:who|that|into|and|is|are|has|just|loves?|likes?)\b))",
    re.IGNORECASE,
)
_LEFT_OPEN = re.compile(
    r"\b(?:something|anything|what|treats?|ideas?|stuff|algo|qué|quelque chose|etwas)\b",
    re.IGNORECASE,
)
_WANTS_A_SET = re.compile(
    r"\b(sets?|bundles?|baskets?|hampers?|put together|a few|several|some things|both"
    r"|everything|all (?:two|three|four|of them)|each)\b",
    re.IGNORECASE,
)

PickMode = Literal["each", "one"]


def speaks_of_an_occasion(request: str) -> bool:
    """Whether the request speaks of a gift, an occasion or a person's hobby, or of a
    person it is for without naming what to buy."""
    if _OPEN_ENDED.search(request):
        return True
    return bool(_A_PERSON.search(request) and _LEFT_OPEN.search(request))


def pick_mode(request: str, plan: Plan) -> PickMode:
    """ "one" for an open-ended request whose plan searches two or more kinds of item, of
    which the request names at most one: that word is the person's interest ("loves
    building things", "games and streams", "she likes bags"), one of the shelves near it.
    "each" otherwise: two kinds the request names ("a gift for my dad: a wallet and a
    belt") are what it wants."""
    searches = plan.search_steps
    if len(searches) < 2 or not speaks_of_an_occasion(request) or _WANTS_A_SET.search(request):
        return "each"
    asked = product_words(request.replace("-", " "))
    heads = {stem(h) for step in searches if (h := head_word(step.query or ""))}
    named = {h for h in heads if any(same_word(h, word) for word in asked)}
    return "each" if len(named) >= 2 else "one"
