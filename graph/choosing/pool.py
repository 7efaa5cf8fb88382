"""What the recommendation is chosen from, worked out once: for the pick step, which code
may answer (decided.py), and for the outcome, which chooses (choice.py), so that both see
the same products and the same budget."""

from __future__ import annotations

from dataclasses import dataclass

from catalog import CatalogBackend, Product
from catalog.text import mentions_every, product_words
from graph.choosing.kept import budget_left, texts_about, words_about
from graph.choosing.picks import (
    Candidate,
    candidates_and_records,
    is_relevant,
    named_by_meaning,
    near_the_request,
    record_text,
    request_words,
)
from graph.schemas import FollowUp, Plan, RequestReading, StepResult


@dataclass(frozen=True)
class ChoicePool:
    """The plan as code chooses for it (a follow-up's kept picks taken off its budget), the
    candidates it may recommend, and what was set aside on the way."""

    plan: Plan
    candidates: list[Candidate]  # in the catalog now, and about what the request names
    all_candidates: list[Candidate]
    found: dict[str, Product]  # each candidate's catalog record, by id
    unrelated: set[str]  # ids that match none of the request's words
    # A refinement's earlier picks that lack what it wants: the same product is no change.
    earlier: set[str]
    # The items the request lists (RequestReading.items), each in the plan, picked or
    # named missing; none for a follow-up, which names what changes, or a gift (pick one).
    listed: tuple[str, ...] = ()


def choice_pool(
    plan: Plan,
    reading: RequestReading,
    follow_up: FollowUp | None,
    results: list[StepResult],
    catalog: CatalogBackend,
) -> ChoicePool:
    """The pool for `plan` (the plan that runs) after `results` (the steps run so far)."""
    listed = list(reading.items) if plan.pick == "each" and follow_up is None else []
    all_candidates, found = candidates_and_records(plan, results, catalog, listed)
    # An open-ended request (pick "one") names the person, not the product ("a gift for a
    # runner"): its words are no test of relevance; the kinds the plan searched are.
    words = words_about(reading, follow_up)  # "a cheaper one": the earlier item's
    wanted = request_words(words, plan) if plan.pick == "each" else set()
    unrelated = {i for i, r in found.items() if wanted and not is_relevant(r, wanted)}
    # Words of another language than the shop's share none with its titles ("moulin à
    # café manuel", a manual grinder): a product they name by meaning is about them.
    texts = (*texts_about(reading, follow_up), plan.goal, *plan.features)
    unrelated -= named_by_meaning(texts, found, unrelated)
    # A refinement asks for the same item otherwise: an earlier pick whose record lacks
    # what it wants ("a different camera bag"), or one that asks for nothing code can
    # tell (no reading, no limit of its own), is no answer; one that has what it wants,
    # or meets a limit it states ("4.5 stars minimum"), may be the answer again.
    changed = follow_up.replaced if follow_up and follow_up.kind == "refine" else ()
    wants = product_words(follow_up.wants) if follow_up else []
    earlier = {
        p.id
        for p in changed
        if p.id in found
        and (
            not mentions_every(wants, record_text(found[p.id])) if wants else not reading.limits.any
        )
    }
    # "Cheaper" is its cap: a product over it is no answer, however near ("the cheapest
    # is shown, $0.01 over" was the earlier pick again).
    cheaper = follow_up is not None and follow_up.kind == "cheaper"
    over = {c.summary.id for c in all_candidates if cheaper and not c.within_limits}
    candidates = [
        c
        for c in all_candidates
        if c.summary.id in found and c.summary.id not in unrelated | earlier | over
    ]
    if follow_up is None:  # a follow-up's words ("a cheaper one") say nothing of a person
        near_the_request(plan, candidates, reading.product_text)
    # A follow-up's kept picks count against the budget: the new items get what is left.
    plan = budget_left(plan, follow_up)
    return ChoicePool(plan, candidates, all_candidates, found, unrelated, earlier, tuple(listed))
