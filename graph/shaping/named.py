"""The product a request names stays in the plan's queries (checked in code, no LLM call).

A small planner shortens a compound product name to its head word and a word of the
request's purpose: "a camera bag for hiking" searched as "hiking bags", which finds dry
bags and no camera bag. When the request opens by naming one product in two to four
words ("a camera bag", before "for hiking"), a search whose query has that name's head
word ("bags") but not the word before it ("camera") gets that word back, before the head
word: "hiking camera bags". A request that lists several products ("a camera bag and a
strap", "shoes, socks") is left as planned: which query is for which item is not known.
"""

from __future__ import annotations

from catalog.text import WORD, product_words, same_word
from graph.schemas import Plan


def with_named_product(named: tuple[str, str] | None, plan: Plan) -> tuple[Plan, list[str]]:
    """`plan` with the request's compound product name (`named`, its modifier and head:
    RequestReading.named_product) whole in every search that has its head word only,
    and a note for each query changed."""
    if named is None:
        return plan, []
    modifier, head = named
    notes: list[str] = []
    steps = []
    for step in plan.steps:
        query = step.query or ""
        words = product_words(query.replace("-", " "))
        has_head = any(same_word(w, head) for w in words)
        if step.is_search and has_head and not any(same_word(w, modifier) for w in words):
            fixed = _before_head(query, head, modifier)
            notes.append(
                f"step {step.step}: searched for {fixed!r}, not {query!r}: the request "
                f"names {modifier} {head}"
            )
            step = step.model_copy(update={"query": fixed})
        steps.append(step)
    return plan.model_copy(update={"steps": steps}), notes


def _before_head(query: str, head: str, modifier: str) -> str:
    """`query` with `modifier` put before its first word that is `head`."""
    for match in WORD.finditer(query):
        if same_word(match.group().lower(), head):
            return f"{query[: match.start()]}{modifier} {query[match.start() :]}"
    return f"{modifier} {query}"
