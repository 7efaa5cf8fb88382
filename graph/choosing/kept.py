"""A follow-up's kept picks in the recommendation: what the new items are about,
the budget they leave, and the kept picks themselves."""

from __future__ import annotations

from catalog import CatalogBackend
from catalog.text import product_words
from graph.schemas import FollowUp, Plan, ProductSummary, RequestReading


def _follow_up_texts(follow_up: FollowUp | None) -> list[str]:
    """What a follow-up adds or wants as the planner reads it (in the shop's words though
    the shopper wrote in another language), and for the same items anew ("a cheaper one",
    "under $45 instead") the previous request."""
    if follow_up is None:
        return []
    texts = [follow_up.added, follow_up.wants]
    if follow_up.kind in ("cheaper", "dearer", "refine"):
        texts.append(follow_up.previous.request)
    return [t for t in texts if t]


def texts_about(reading: RequestReading, follow_up: FollowUp | None) -> tuple[str, ...]:
    """What a run's picks must be about: the request's words, and a follow-up's texts."""
    return tuple(t for t in (reading.product_text, *_follow_up_texts(follow_up)) if t)


def words_about(reading: RequestReading, follow_up: FollowUp | None) -> tuple[str, ...]:
    """The product words a run's picks must be about: the request's, and those of a
    follow-up's texts."""
    texts = _follow_up_texts(follow_up)
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
