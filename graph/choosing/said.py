"""The sentence a model writes for a pick step, checked in code against what the steps
found: it may name only products among the results. A product it invents ("Mountains in
Monochrome ... by Joanne B.") is no product of the shop's, so its sentence is replaced by
one written in code from the chosen picks and their why-lines (choice.py), and a step
warning says so. No LLM call."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from catalog import Product, money
from catalog.text import product_words, stem
from graph.choosing.choice import choose
from graph.choosing.pool import ChoicePool
from graph.schemas import Plan

QUOTE_MATCH = 85  # a quoted title is a result's when it matches this well (rapidfuzz)

# A quoted phrase: "...", '...' (not an apostrophe inside a word), or curly quotes.
_QUOTED = re.compile(r"\"([^\"]{3,})\"|\u201c([^\u201d]{3,})\u201d|(?<!\w)'([^']{3,})'(?!\w)")
# A name: capitalised words, which lower-case joining words ("in", "of", "by") or an
# initial ("B.") may continue: "Mountains in Monochrome", "Joanne B.".
_CAPITAL = r"[A-Z][\w'&+-]*\.?"
_NAME = re.compile(rf"{_CAPITAL}(?:\s+(?:(?:of|in|the|and|by|for|on|at|to|&)\s+)*{_CAPITAL})+")
_WORD = re.compile(r"[^\W_][\w'&+-]*")


@dataclass(frozen=True)
class Unknown:
    """What a sentence names that the results do not hold: ids, quoted titles, names."""

    ids: list[str]
    titles: list[str]

    def __bool__(self) -> bool:
        return bool(self.ids or self.titles)

    def describe(self) -> str:
        named = [*self.ids, *(f'"{t}"' for t in self.titles)]
        return ", ".join(named)


def _shape(token: str) -> str:
    """An id's shape: runs of letters as "a", of digits as "9", other characters kept
    ("cam-060" and "cam-999" are "a-9"; an ASIN "B07XJ8C8F5" is "a9a9a9a9")."""
    return re.sub(r"\d+", "9", re.sub(r"[^\W\d_]+", "a", token))


@functools.lru_cache(maxsize=8192)  # the same product texts at every checked answer (#37)
def _words(text: str) -> frozenset[str]:
    """Each word of `text`, lower-case and plural-free (words.stem)."""
    return frozenset(stem(w.lower().strip("'.-")) for w in _WORD.findall(text))


def unknown_names(answer: str, products: Iterable[Product], extra_words: str = "") -> Unknown:
    """What `answer` names that is not among `products` (every product the steps found):
    - an id: a token of the shape of the results' ids, with a digit, none of theirs;
    - a quoted title that matches no result's title or brand;
    - a name (two or more capitalised words) of which most product words are in no
      result's title, brand, category or tags, nor in `extra_words` (the plan's text).
    A general test, not a list of phrases: a sentence about the results uses their words."""
    found = list(products)
    ids = {p.id.lower() for p in found}
    shapes = {_shape(p.id) for p in found}
    known = set(_words(extra_words))
    labels: list[str] = []
    for product in found:
        texts = [product.title, product.brand or "", product.category or "", *product.tags]
        known |= {w for t in texts for w in _words(t.replace("-", " "))} | _words(" ".join(texts))
        labels += [product.title, product.brand or ""]
    unknown_ids = [
        token
        for token in dict.fromkeys(re.findall(r"[\w-]+", answer))
        if any(c.isdigit() for c in token) and _shape(token) in shapes and token.lower() not in ids
    ]
    titles = []
    for groups in _QUOTED.findall(answer):
        quoted = next(g for g in groups if g).strip()
        if quoted.lower() in ids or not _words(quoted) - known:
            continue
        best = max(
            (fuzz.partial_ratio(quoted, t, processor=default_process) for t in labels if t),
            default=0.0,
        )
        if best < QUOTE_MATCH:
            titles.append(quoted)
    quoted_spans = " ".join(titles)
    for name in _NAME.findall(answer):
        # Its product words (fillers such as "The" or "Best" aside): more than half of
        # them unknown to the results is a name of something else.
        words = [stem(w) for w in product_words(name.replace("-", " "))]
        unseen = [w for w in words if w not in known]
        if words and 2 * len(unseen) > len(words) and name not in quoted_spans:
            titles.append(name.rstrip("."))
    return Unknown(unknown_ids, list(dict.fromkeys(titles)))


def answer_from_picks(pool: ChoicePool, model_ids: list[str]) -> str:
    """A pick step's sentence written in code: each product code recommends from `pool`
    (the model's picks kept where nothing covers the request better), its price and its
    why-line (choice.py), as the recommendation will show them."""
    choice = choose(pool.plan, pool.candidates, model_ids)
    if not choice.picks:
        return "Written in code: nothing found is of the kinds searched for."
    parts = [
        f"{c.summary.id} {c.summary.title} ({money(c.summary.price)}): "
        f"{choice.reasons[c.summary.id]}"
        for c in choice.picks
    ]
    return "Written in code from the picks: " + "; and ".join(parts) + "."


def plan_text(plan: Plan) -> str:
    """The plan's own words (goal, features, actions, queries): a sentence may use them."""
    steps = [f"{s.action} {s.query or ''}" for s in plan.steps]
    return " ".join([plan.goal, *plan.features, *steps])


def checked_answer(answer: str, model_ids: list[str], pool: ChoicePool) -> tuple[str, list[str]]:
    """The pick step's sentence, and a warning when it was replaced: `answer` as the
    model wrote it when it names only products the steps found (pool.found), else one
    written in code from the chosen picks."""
    unknown = unknown_names(answer, pool.found.values(), plan_text(pool.plan))
    if not unknown:
        return answer, []
    warning = (
        f"the model's sentence named what the results do not hold ({unknown.describe()}); "
        "it is replaced by one written in code from the picks"
    )
    return answer_from_picks(pool, model_ids), [warning]
