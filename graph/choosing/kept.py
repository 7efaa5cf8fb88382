"""A follow-up's kept picks in the recommendation: what the new items are about,
the budget they leave, and the kept picks themselves."""

from __future__ import annotations

from catalog import CatalogBackend
from catalog.text import product_words
from graph.schemas import FollowUp, Plan, ProductSummary, RequestReading


def texts_about(reading: RequestReading, follow_up: FollowUp | None) -> tuple[str, ...]:
    """What a follow-up's picks must be about: its own words and the planner's reading of
    them (what it adds or wants, in the shop's words though the shopper wrote in another
    language), and for the same items anew ("a cheaper one", "under $45 instead") the
    previous request. A first run's: the request's words."""
    if follow_up is None:
        return (reading.product_text,)
    texts = [reading.product_text, follow_up.added, follow_up.wants]
    if follow_up.kind in ("cheaper", "dearer", "refine"):
        texts.append(follow_up.previous.request)
    return tuple(t for t in texts if t)


def words_about(reading: RequestReading, follow_up: FollowUp | None) -> tuple[str, ...]:
    """The product words of texts_about."""
    if follow_up is None:
        return reading.words
    texts = texts_about(reading, follow_up)[1:]
    return (*reading.words, *(w for t in texts for w in product_words(t.replace("-", " "))))


def budget_left(plan: Plan, follow_up: FollowUp | None) -> Plan:
    """The plan as code chooses its picks: its budget less the kept picks' total."""
    if follow_up is None or not follow_up.kept or plan.budget is None:
        return plan
    return plan.model_copy(update={"budget": max(0.0, plan.budget - follow_up.kept_total)})


def with_kept(
    picks: list[ProductSummary],
    reasons: dict[str, str],
    follow_up: FollowUp | None,
    catalog: CatalogBackend,
) -> tuple[list[ProductSummary], dict[str, str], list[str]]:
    """The recommendation with a follow-up's kept picks first, as the catalog has them
    now (each once, though the new plan found it again), why each is there, and a
    warning for each kept pick the catalog no longer holds."""
    if follow_up is None or not follow_up.kept:
        return picks, reasons, []
    found = catalog.get(p.id for p in follow_up.kept)
    kept = [ProductSummary.of(found[p.id]) for p in follow_up.kept if p.id in found]
    why = f"kept from the previous run (thread {follow_up.previous.thread_id})"
    gone = [
        f"{p.id}, kept from the previous run, is no longer in the catalog"
        for p in follow_up.kept
        if p.id not in found
    ]
    kept_ids = {p.id for p in kept}
    new = [p for p in picks if p.id not in kept_ids]
    return kept + new, {**reasons, **{p.id: why for p in kept}}, gone
