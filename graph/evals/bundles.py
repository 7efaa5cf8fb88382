"""Bundle evaluation: requests for several items under one total budget, each run through
the whole graph and scored against the best bundle the catalog holds (issue #22; the
command line, --check among it: graph/evals/main.py).

The file format and the brute force: graph/evals/bundle_sets.py. Each request is one
checkpointed thread (`bundle-{label}-{request id}`), run with every plan approved, so a
rerun resumes where the last one stopped.

What each figure of a report means: docs/evaluation.md ("Bundles under one total budget").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from numpy import argmax

from catalog import (
    CatalogBackend,
    CatalogError,
    CatalogQueryError,
    Product,
    SearchArgs,
    load_products,
    money,
)
from catalog.terminal import clean_text, terminal_markup
from graph.context import Context
from graph.evals.bundle_sets import (
    BruteForce,
    BundleFile,
    BundleRequest,
    Combination,
    assign,
    brute_force,
    catalog_brute_force,
    check_kinds,
    rating_of,
    within,
)
from graph.evals.driver import (
    EvalReport,
    Figure,
    Note,
    prepared,
    run_cases,
    table_of,
    take_usage,
    usage_figures,
)
from graph.evals.overrides import OVERRIDES_FIGURE, as_listed, first_shown, judged, overrides_of
from graph.evals.reruns import run_on_goal_thread
from graph.runs.session import approve_all
from graph.runs.threads import ShoppingGraph
from graph.schemas import PlanStep
from graph.tools import get_catalog
from meaning import Embedder

_EMBEDDER = Embedder()  # the process's one model, loaded when first asked


def search_pools(
    request: BundleRequest, catalog_file: Path, *, caps: bool = False, limit: int = 5
) -> list[list[Product]]:
    """What the catalog's own search returns for each item's query (else its kind), at
    most the budget (with `caps`, at most the item's own cap where it has one): the pool
    a shallow search offers."""
    catalog = get_catalog(str(catalog_file))
    pools = []
    for item in request.items:
        cap = request.budget
        if caps and item.max_price is not None:
            cap = min(cap, item.max_price)
        hits = catalog.search(SearchArgs(item.query or item.kind, max_price=cap, limit=limit))
        pools.append([hit.product for hit in hits])
    return pools


@dataclass
class BundleResult:
    id: str
    request: str
    thread_id: str
    budget: float
    kinds: list[str]
    fitting_exists: bool = False
    best_rating: float | None = None
    best_combination: list[str] = field(default_factory=list)
    cheapest_total: float | None = None
    items_present: bool = False
    within_budget: bool = False
    missing_kinds: list[str] = field(default_factory=list)
    # The run's own "missing" entries (Outcome.missing): what it says it could not find.
    named_missing: list[str] = field(default_factory=list)
    # Every item is picked or named missing: no fewer entries than items lacking a pick.
    items_accounted: bool = False
    # Each change code made to the model's plan, judged (graph/evals/overrides.py).
    overrides: list[dict[str, Any]] = field(default_factory=list)
    total: float = 0.0
    rating: float | None = None
    rating_ratio: float | None = None
    picked: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None


def new_result(request: BundleRequest, thread_id: str, found: BruteForce) -> BundleResult:
    result = BundleResult(
        request.id, request.request, thread_id, request.budget, [i.kind for i in request.items]
    )
    if found.best is not None:
        result.fitting_exists = True
        result.best_rating = round(found.best.rating, 4)
        result.best_combination = [p.id for p in found.best.products]
    if found.cheapest is not None:
        result.cheapest_total = found.cheapest.total
    return result


def score_bundle(
    result: BundleResult,
    values: dict[str, Any],
    request: BundleRequest,
    catalog: dict[str, Product],
    shop: CatalogBackend | None = None,
) -> None:
    """Fill a request's result from its run's final state; with the `shop` the runs
    searched, judge code's changes to the model's plan too."""
    take_usage(result, values)
    outcome = values.get("outcome")
    result.picked = list(dict.fromkeys(p.id for p in outcome.picks)) if outcome else []
    result.unknown_ids = [i for i in result.picked if i not in catalog]
    picks = [catalog[i] for i in result.picked if i in catalog]
    result.total = round(sum(p.price for p in picks), 2)
    served = assign(request.items, picks)
    result.missing_kinds = [i.kind for i, p in zip(request.items, served, strict=True) if p is None]
    result.items_present = not result.missing_kinds
    result.named_missing = [m.query for m in outcome.missing] if outcome else []
    # Each named entry stands for the item nearest it by meaning: the run names a missing
    # item in its plan's words, which may be another language ("stirnlampe") or the
    # shop's ("Hiking Day Backpack").
    kinds = [i.kind for i in request.items]
    named = {kinds[argmax(_EMBEDDER.similarity(q, kinds))] for q in result.named_missing}
    result.items_accounted = set(result.missing_kinds) <= named
    result.within_budget = (
        bool(result.picked)
        and not result.unknown_ids
        and within(result.total, request.budget)
        and all(p is None or i.within_cap(p) for i, p in zip(request.items, served, strict=True))
    )
    met = result.items_present and result.within_budget
    if shop is not None:
        plan = values.get("plan")
        budget = plan.budget if plan is not None else None

        def finds_an_item(step: PlanStep) -> bool:
            """Whether what `step` searches (within its cap, in its category) shows a
            product of one of the request's items among the first five the shop returns."""
            try:
                shown = first_shown(shop, step, budget, step.category)
            except (CatalogQueryError, CatalogError):
                return False
            return any(item.holds(product) for product in shown for item in request.items)

        # A bundle names its items: reading one as open-ended is always code's mistake.
        overrides = judged(overrides_of(values), finds_an_item, open_ended=False, met=met)
        result.overrides = as_listed(overrides)
    if result.items_present:
        result.rating = round(sum(rating_of(p) for p in served if p is not None) / len(served), 4)
        if result.best_rating:
            result.rating_ratio = round(result.rating / result.best_rating, 4)


def _met(report: BundleReport) -> list[BundleResult]:
    """The requests met (every item, within budget), of those a fitting bundle exists for:
    the others cannot be met."""
    return [r for r in report.results if r.fitting_exists and r.items_present and r.within_budget]


def _mean_rating_ratio(report: BundleReport) -> float | None:
    """Over the met requests only, so it reads "how good, when it worked"."""
    ratios = [r.rating_ratio for r in _met(report) if r.rating_ratio is not None]
    return round(sum(ratios) / len(ratios), 4) if ratios else None


FIGURES = [
    Figure(
        "requests",
        lambda report: len(report.results),
        "requests (a fitting bundle exists)",
        beside="fitting_exists",
    ),
    Figure("fitting_exists", "count"),
    Figure(
        "all_items_and_within_budget",
        lambda report: len(_met(report)),
        "every item, within budget",
        of="fitting_exists",
        beside="all_items_and_within_budget_share",
    ),
    Figure(
        "all_items_and_within_budget_share",
        lambda report: round(len(_met(report)) / (report.count("fitting_exists") or 1), 4),
    ),
    Figure("items_present", "count", "every item present", of="requests"),
    Figure("items_accounted", "count", "every item picked or named missing", of="requests"),
    replace(OVERRIDES_FIGURE, title=None),  # its place in the summary; its row comes later
    Figure("within_budget", "count", "within budget", of="requests"),
    OVERRIDES_FIGURE,  # the same figure again: its row, its key keeping the place above
    Figure("mean_rating_ratio", _mean_rating_ratio, "rating / best fitting (when met)"),
    *usage_figures("request"),
]


@dataclass
class BundleReport(EvalReport):
    label: str
    bundles_file: str  # marks a bundle report (--compare)
    catalog: str
    provider: str | None
    model: str | None
    tool_mode: str
    results: list[BundleResult]
    figures = FIGURES


def run_bundles_eval(
    requests: Sequence[BundleRequest],
    catalog_file: Path,
    context: Context,
    graph: ShoppingGraph,
    *,
    label: str,
    bundles_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> BundleReport:
    """Run each request as one checkpointed thread (auto-approved) and score its picks
    against the brute force over `catalog_file`, the catalog the context's runs use."""
    context = prepared(context, catalog_file)  # opens the catalog: a bad one fails here
    products = load_products(catalog_file)
    check_kinds(requests, products, catalog_file, bundles_file)
    by_id = {p.id: p for p in products}

    def start(index: int, request: BundleRequest) -> BundleResult:
        found = catalog_brute_force(request, products)
        return new_result(request, f"bundle-{label}-{request.id}", found)

    def run(result: BundleResult, request: BundleRequest, note: Note) -> None:
        values = run_on_goal_thread(graph, context, result, request.request, approve_all, note)
        score_bundle(result, values, request, by_id, get_catalog(str(catalog_file)))

    def line(result: BundleResult) -> str:
        missing = ", ".join(result.missing_kinds)
        return (
            f"missing {terminal_markup(missing, 200)}" if missing else "every item"
        ) + f", {money(result.total)} of {money(result.budget)}"

    results = run_cases(requests, "request", start, run, line, limit=limit, progress=progress)
    settings = (context.provider, context.model, context.tool_mode)
    return BundleReport(label, bundles_file, str(catalog_file), *settings, results)


markdown_table = table_of(FIGURES)  # one column per report


def _combination(combo: Combination | None) -> str:
    if combo is None:
        return "none"
    parts = [
        f"{clean_text(p.id, 40)} {clean_text(p.title, 60)} "
        f"({money(p.price)}, {'unrated' if p.rating is None else f'{p.rating:g}'})"
        for p in combo.products
    ]
    return " + ".join(parts) + f" = {money(combo.total)}, mean rating {combo.rating:.2f}"


def check_text(bundles: BundleFile, products: Sequence[Product]) -> str:
    """What the brute force finds per request, over the whole catalog and over the top 5
    search results of each item's query, for reading a dev set without a model."""
    lines = []
    for request in bundles.requests:
        found = catalog_brute_force(request, products)
        shallow = brute_force(request.items, search_pools(request, bundles.catalog), request.budget)
        lines += [
            f"{clean_text(request.id, 40)}: {clean_text(request.request, 200)}",
            f"  budget {money(request.budget)}, fitting_exists: {found.best is not None}",
            f"  best:     {_combination(found.best)}",
            f"  cheapest: {_combination(found.cheapest)}",
            f"  best in the top 5 of each item's search: {_combination(shallow.best)}",
        ]
    return "\n".join(lines)
