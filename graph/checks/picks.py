"""Constraint checks computed in code, so a small model's pick is informed (and guarded)
by facts rather than by its arithmetic. No LLM call and no replanning happens here.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from catalog import CatalogBackend, Product
from graph.caps import StatedLimits
from graph.checks.words import product_words, stem
from graph.state import MissingItem, Plan, PlanStep, ProductSummary, StepResult

FEATURE_MATCH_THRESHOLD = 85  # the same fuzzy cut-off WebShop scores attributes with
MAX_GUARD_COMBINATIONS = 20_000


def missing_limit_warning(stated: StatedLimits, plan: Plan) -> str | None:
    """Say when the request states a price cap (or total) that the plan does not carry."""
    limit = stated.budget
    if limit is None:
        return None
    carried = {plan.budget} | {step.max_price for step in plan.search_steps}
    if any(value is not None and abs(value - limit) < 0.01 for value in carried):
        return None
    return f"the request states a limit of ${limit:,.2f}, but the plan does not carry it"


def request_words(request: str, plan: Plan) -> set[str]:
    """What a recommended product must be about: the request's product words, and the
    plan's goal and features (the model may have translated the request). Not the plan's
    queries: a search finds products with its own words, whatever the request asked."""
    texts = [request, plan.goal, *plan.features]
    return {stem(w) for t in texts for w in product_words(t.replace("-", " "))}


def is_relevant(product: Product, words: set[str]) -> bool:
    """Whether a product's title, tags, category or description has any of the words: a
    product that matches none of them is not a pick, however it was found."""
    text = " ".join([product.title, product.category or "", *product.tags, product.description])
    found = {stem(w) for w in product_words(text.replace("-", " "))}
    return not words.isdisjoint(found) or any(
        _same_root(a, b) for a in words for b in found if a[:3] == b[:3]
    )


def _same_root(a: str, b: str) -> bool:
    """Words of one root ("photography", "photographer"): a long shared beginning."""
    shared = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return shared >= 5 and shared >= 0.8 * min(len(a), len(b))


_WORD = re.compile(r"[^\W\d_][\w'-]+")
_GOAL_STOP_WORDS = frozenset(
    """buy find get want need looking some one two for and the with without from into that
    this these those price prices lower less than under below above over dollars dollar usd
    budget total within cheap cheaper most least under about item items product products
    pick choose search""".split()
)


def goal_words(goal: str) -> list[str]:
    """Content words of the plan's goal sentence (what a product should be about)."""
    words = [w.lower() for w in _WORD.findall(goal)]
    return list(dict.fromkeys(w for w in words if len(w) >= 3 and w not in _GOAL_STOP_WORDS))


def wanted_terms(plan: Plan) -> tuple[list[str], str]:
    """What candidates are checked against: the plan's features, else its goal's words."""
    if plan.features:
        return plan.features, "features"
    return goal_words(plan.goal), "goal words"


def feature_matches(product: Product, features: list[str]) -> list[str]:
    """Requested features a product has, matched as WebShop matches attributes: fuzzy
    against its tags, or as a phrase in its title or description."""
    text = f"{product.title} {product.description}".lower()
    matched = []
    for feature in features:
        wanted = feature.strip().lower()
        if not wanted:
            continue
        in_tags = any(
            fuzz.token_set_ratio(tag, wanted, processor=default_process) > FEATURE_MATCH_THRESHOLD
            for tag in product.tags
        )
        if in_tags or wanted in text:
            matched.append(feature)
    return matched


@dataclass
class Candidate:
    """A product found by an earlier search step, with its checks."""

    summary: ProductSummary
    source_step: int
    rank: int
    within_limits: bool
    features_matched: list[str] = field(default_factory=list)

    def label(self, plan: Plan) -> str:
        parts = ["fits limits" if self.within_limits else "OVER LIMIT"]
        terms, kind = wanted_terms(plan)
        if terms:
            parts.append(f"{kind} {len(self.features_matched)}/{len(terms)}")
            if self.features_matched and kind == "features":
                parts[-1] += f" ({', '.join(self.features_matched)})"
        return "; ".join(parts)


def within_step_limits(product: ProductSummary, plan: Plan, step: PlanStep) -> bool:
    if step.max_price is not None and product.price > step.max_price:
        return False
    if step.min_price is not None and product.price < step.min_price:
        return False
    if step.min_rating is not None and (product.rating or 0) < step.min_rating:
        return False
    return plan.budget is None or product.price <= plan.budget


def candidates_of(
    plan: Plan, results: list[StepResult], catalog: CatalogBackend
) -> list[Candidate]:
    """Every product earlier search steps found, in search-rank order, with checks made
    against its full catalog record (tags and description are not in the step results)."""
    found = [p.id for result in results if result.kind == "search" for p in result.products]
    records = catalog.get(found)
    terms, _ = wanted_terms(plan)
    candidates = []
    for result in results:
        if result.kind != "search":
            continue
        step = plan.steps[result.step - 1]
        for rank, product in enumerate(result.products, start=1):
            record = records.get(product.id)
            candidates.append(
                Candidate(
                    summary=product,
                    source_step=result.step,
                    rank=rank,
                    within_limits=within_step_limits(product, plan, step),
                    features_matched=feature_matches(record, terms) if record else [],
                )
            )
    return candidates


# Two searches that found this many of the same products were looking for one kind of
# item (a 1.5B model searched once per feature of a single sweater: five searches, each
# listing the same sweater). One shared product can be chance in a small catalog.
SAME_ITEM_SHARED_PRODUCTS = 2


def item_of_step(candidates: list[Candidate]) -> dict[int, int]:
    """Each search step's item: steps whose results share SAME_ITEM_SHARED_PRODUCTS or
    more products look for the same kind of item, and get the number of the first."""
    found: dict[int, set[str]] = {}
    for candidate in candidates:
        found.setdefault(candidate.source_step, set()).add(candidate.summary.id)
    item: dict[int, int] = {}
    for step in sorted(found):
        item[step] = next(
            (
                item[earlier]
                for earlier in sorted(item)
                if len(found[step] & found[earlier]) >= SAME_ITEM_SHARED_PRODUCTS
            ),
            step,
        )
    return item


def one_pick_per_search(
    picked_ids: list[str], candidates: list[Candidate]
) -> tuple[list[str], str | None]:
    """Plans search once per kind of item wanted, so a pick keeps the first product the
    model named for each item (a search step, or searches that found the same products);
    the others are dropped with a note."""
    by_id = {c.summary.id: c for c in candidates}
    item = item_of_step(candidates)
    kept: list[str] = []
    dropped: list[str] = []
    seen_items: set[int] = set()
    for product_id in picked_ids:
        step = by_id[product_id].source_step if product_id in by_id else None
        wanted = item.get(step, step) if step is not None else None
        if wanted is not None and wanted in seen_items:
            dropped.append(product_id)
            continue
        if wanted is not None:
            seen_items.add(wanted)
        kept.append(product_id)
    if not dropped:
        return picked_ids, None
    return kept, (
        f"kept one product per kind of item (one per search, or per searches that found "
        f"the same products): dropped {', '.join(dropped)}"
    )


def guard_picks(
    plan: Plan, picked_ids: list[str], candidates: list[Candidate]
) -> tuple[list[str], str | None]:
    """Keep the model's picks if they satisfy the hard limits (each step's price and
    rating filters, and the total budget). Otherwise, when some choice of candidates does,
    return the best such choice (one product per search step the model picked from, most
    features matched, then best search rank) and a note saying what was replaced."""
    by_id = {c.summary.id: c for c in candidates}
    picks = [by_id[i] for i in picked_ids if i in by_id]
    if not picks:
        return picked_ids, None
    total = sum(c.summary.price for c in picks)
    budget_ok = plan.budget is None or total <= plan.budget + 1e-9
    if budget_ok and all(c.within_limits for c in picks):
        return picked_ids, None
    steps = list(dict.fromkeys(c.source_step for c in picks))
    pools = [
        sorted(
            (c for c in candidates if c.source_step == step and c.within_limits),
            key=lambda c: (-len(c.features_matched), c.rank),
        )
        for step in steps
    ]
    best: tuple[Candidate, ...] | None = None
    best_key: tuple[float, ...] | None = None
    for checked, combination in enumerate(itertools.product(*pools)):
        if checked >= MAX_GUARD_COMBINATIONS:
            break
        if len({c.summary.id for c in combination}) < len(combination):
            continue  # one product found by two searches is still one product
        cost = sum(c.summary.price for c in combination)
        if plan.budget is not None and cost > plan.budget + 1e-9:
            continue
        key = (
            -sum(len(c.features_matched) for c in combination),
            sum(c.rank for c in combination),
            cost,
        )
        if best_key is None or key < best_key:
            best, best_key = combination, key
    if best is None:
        return picked_ids, None
    chosen = [c.summary.id for c in best]
    note = (
        f"picks {', '.join(c.summary.id for c in picks)} broke a price or rating limit; "
        f"replaced in code by {', '.join(chosen)}, the best-ranked choice within the limits"
    )
    return chosen, note


def best_per_search(candidates: list[Candidate]) -> list[ProductSummary]:
    """Each item's best candidate by the code checks (an item: a search step, or searches
    that found the same products): within the limits first, then most wanted terms
    matched, then search rank. Used when no reasoning step picked."""
    item = item_of_step(candidates)
    best: dict[int, Candidate] = {}
    for candidate in sorted(candidates, key=_preference):
        wanted = item[candidate.source_step]
        taken = {c.summary.id for c in best.values()}
        if wanted not in best and candidate.summary.id not in taken:
            best[wanted] = candidate
    return [best[wanted].summary for wanted in sorted(best)]


def _preference(candidate: Candidate) -> tuple[bool, int, int]:
    return (not candidate.within_limits, -len(candidate.features_matched), candidate.rank)


def missing_items(
    plan: Plan, results: list[StepResult], picks: list[ProductSummary]
) -> list[MissingItem]:
    """The plan's searched-for items that no pick comes from, each with its reason."""
    picked = {p.id for p in picks}
    by_step = {r.step: r for r in results}
    missing = []
    for step in plan.steps:
        if step.query is None:
            continue
        result = by_step.get(step.step)
        if result is None:
            reason = "its search step did not run"
        elif result.error:
            reason = f"its search failed ({result.error})"
        elif not result.products:
            reason = "the search found no matching product"
        elif picked.isdisjoint(p.id for p in result.products):
            reason = f"none of the {len(result.products)} products found for it was picked"
        else:
            continue
        missing.append(MissingItem(step=step.step, query=step.query, reason=reason))
    return missing
