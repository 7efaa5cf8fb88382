"""Open-ended evaluation: gifts, hobbies and occasions ("something for a coffee lover
under $60"), which the plan answers with the single best of a few kinds (`pick = "one"`,
issue #34). Each request runs through the whole graph, approved as planned, and is scored
on what the shop holds:

- kinds that exist: the share of the plan's searches that find a product of the kind
  they name (picks.candidates_of: of_searched_kind), so a plan that knows the shop
  searches for what it sells;
- the right part of the catalog: the pick is in one of the request's expected
  categories;
- within budget, and no item lost (the outcome names none missing, and there is a pick);
- no dominated pick: no other product the searches found, of its kind, outdoes it on
  every count a shopper weighs (choice.outdoes: within the limits, no worse on the
  request's checks, rated higher, no dearer).

The file: {"catalog": "shipped" or a path, "requests": [{"id", "request", "budget",
"categories": [...]}]}; each category must be one the catalog has. One checkpointed thread
per request (`open-{label}-{id}`), so a rerun resumes where the last one stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog import (
    CatalogBackend,
    CatalogError,
    CatalogQueryError,
    Product,
    load_products,
    money,
)
from catalog.models import category_slug
from catalog.terminal import terminal_markup
from graph.choosing.choice import outdoes
from graph.choosing.outcome import model_picks
from graph.choosing.picks import Candidate, candidates_of, near_the_request
from graph.context import Context
from graph.evals.bundle_sets import BundleFileError, _amount, _keys, _text, read_cases, within
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
from graph.evals.overrides import (
    OVERRIDES_FIGURE,
    JudgedOverride,
    as_listed,
    judged,
    overrides_of,
)
from graph.evals.reruns import run_on_goal_thread
from graph.runs.session import approve_all
from graph.runs.threads import ShoppingGraph
from graph.schemas import Outcome, Plan, PlanStep, StepResult
from graph.state import plan_that_runs
from graph.tools import get_catalog

_KEYS = {"id", "request", "budget", "categories"}


class OpenEndedFileError(BundleFileError):
    """An open-ended file that cannot be evaluated; the message names the file and case."""


@dataclass(frozen=True)
class OpenEndedRequest:
    id: str
    request: str
    budget: float
    categories: tuple[str, ...]  # category slugs a good pick comes from


@dataclass(frozen=True)
class OpenEndedFile:
    path: Path
    catalog: Path
    requests: tuple[OpenEndedRequest, ...]


def _request(record: Any, where: str) -> OpenEndedRequest:
    record = _keys(record, _KEYS, _KEYS, where)
    where = f"{where} ({record['id']!r})"
    categories = record["categories"]
    if not isinstance(categories, list) or not categories:
        raise OpenEndedFileError(f"{where}: categories must be a non-empty list")
    slugs = tuple(category_slug(_text(c, f"{where} category")) for c in categories)
    return OpenEndedRequest(
        id=_text(record["id"], f"{where} id"),
        request=_text(record["request"], f"{where} request"),
        budget=_amount(record["budget"], f"{where} budget"),
        categories=slugs,
    )


def load_open_ended(path: Path, catalog: Path | None = None) -> OpenEndedFile:
    """Read and check an open-ended file; `catalog` (the CLI's --catalog) overrides its own."""
    found = read_cases(path, catalog, "an open-ended file", _request, OpenEndedFileError)
    return OpenEndedFile(Path(path), *found)


def check_categories(
    requests: Sequence[OpenEndedRequest], products: Sequence[Product], source: str = ""
) -> None:
    """Every expected category is the catalog's, and holds a product within the budget:
    else the dev set asks for what cannot be had."""
    for request in requests:
        for category in request.categories:
            held = [p for p in products if p.category == category]
            if not held:
                raise OpenEndedFileError(
                    f"{source} request {request.id!r}: no product of category {category!r}"
                )
        if not any(
            p.category in request.categories and within(p.price, request.budget) for p in products
        ):
            raise OpenEndedFileError(
                f"{source} request {request.id!r}: nothing in its categories within "
                f"{money(request.budget)}"
            )


@dataclass
class OpenEndedResult:
    id: str
    request: str
    thread_id: str
    budget: float
    categories: list[str]
    pick_mode: str | None = None  # the plan's pick: "one" for an open-ended request
    kinds_planned: list[str] = field(default_factory=list)  # the plan's search queries
    kinds_found: list[str] = field(default_factory=list)  # of those, what finds its kind
    kinds_found_share: float = 0.0
    picked: list[str] = field(default_factory=list)
    pick_categories: list[str] = field(default_factory=list)
    right_category: bool = False
    within_budget: bool = False
    nothing_lost: bool = False
    dominated_by: dict[str, str] = field(default_factory=dict)  # pick id -> what outdoes it
    met: bool = False  # every check above
    # Each change code made to the model's plan, judged (graph/evals/overrides.py).
    overrides: list[dict[str, Any]] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None


def _kinds_found(plan: Plan, candidates: list[Candidate]) -> list[str]:
    """The plan's searches (their queries) that found a product of the kind they name."""
    steps = {c.source_step for c in candidates if c.of_searched_kind}
    return [s.query or "" for s in plan.search_steps if s.step in steps]


def _dominated(plan: Plan, picks: list[str], candidates: list[Candidate]) -> dict[str, str]:
    """Each pick another candidate of its kind outdoes on every count (choice.outdoes),
    with the first that does; a "one" plan's kinds are one item, so any kind counts."""
    found: dict[str, str] = {}
    for pick_id in picks:
        mine = [c for c in candidates if c.summary.id == pick_id and c.of_searched_kind]
        if not mine:
            continue
        pick = min(mine, key=lambda c: (not c.shown, c.rank))
        rivals = [
            c
            for c in candidates
            if c.of_searched_kind
            and c.summary.id not in picks
            and (plan.pick == "one" or c.item == pick.item)
        ]
        better = next((c for c in rivals if outdoes(c, pick, plan)), None)
        if better is not None:
            found[pick_id] = better.summary.id
    return found


def score_open_ended(
    result: OpenEndedResult,
    values: dict[str, Any],
    request: OpenEndedRequest,
    catalog_file: Path,
) -> None:
    """Fill a request's result from its run's final state."""
    take_usage(result, values)
    plan = plan_that_runs(values)
    outcome: Outcome | None = values.get("outcome")
    results: list[StepResult] = list(values.get("step_results") or [])
    catalog = get_catalog(str(catalog_file))
    result.picked = list(dict.fromkeys(p.id for p in outcome.picks)) if outcome else []
    records = catalog.get(result.picked)
    result.unknown_ids = [i for i in result.picked if i not in records]
    if plan is None:
        return
    result.pick_mode = plan.pick
    result.kinds_planned = [s.query or "" for s in plan.search_steps]
    candidates = candidates_of(plan, results, catalog)
    if (reading := values.get("reading")) is not None:
        near_the_request(plan, candidates, reading.product_text)  # as the choice saw them
    result.kinds_found = _kinds_found(plan, candidates)
    result.kinds_found_share = round(len(result.kinds_found) / (len(result.kinds_planned) or 1), 4)
    picks = [records[i] for i in result.picked if i in records]
    result.pick_categories = [p.category or "" for p in picks]
    result.right_category = bool(picks) and all(p.category in request.categories for p in picks)
    total = sum(p.price for p in picks)
    result.within_budget = bool(picks) and not result.unknown_ids and within(total, request.budget)
    result.nothing_lost = bool(picks) and outcome is not None and not outcome.missing
    result.dominated_by = _dominated(plan, result.picked, candidates)
    result.met = (
        result.pick_mode == "one"
        and result.kinds_found_share == 1.0
        and result.right_category
        and result.within_budget
        and result.nothing_lost
        and not result.dominated_by
    )

    def finds_expected(step: PlanStep) -> bool:
        """Whether the shop holds the kind `step` searches, within its cap, in one of the
        request's categories (the step's own, when it is restricted to one)."""
        try:
            stock = catalog.kind_stock(step.query or "", step.price_cap(plan.budget))
        except (CatalogQueryError, CatalogError):
            return False
        departments = set(stock.departments)
        if step.category:
            departments &= {step.category}
        return bool(departments & set(request.categories))

    # A pick is judged by what a pick decides among what the searches found: within the
    # budget, and no product found of its kind better on every count (the department
    # is the searches'); with nothing of a searched kind found, no pick is right.
    found_none = not result.picked and not result.kinds_found
    picked_well = found_none or (result.within_budget and not result.dominated_by)
    overrides = judged(overrides_of(values), finds_expected, open_ended=True, met=picked_well)
    overrides += _kind_by_meaning(results, candidates, result.picked, catalog, request)
    result.overrides = as_listed(overrides)


def _kind_by_meaning(
    results: list[StepResult],
    candidates: list[Candidate],
    picked: list[str],
    catalog: CatalogBackend,
    request: OpenEndedRequest,
) -> list[JudgedOverride]:
    """The model's pick of a kind further from the request than another (Candidate.
    near_request) that code did not take, each side judged by its department."""
    model_ids = model_picks(results)
    if not model_ids:
        return []
    model_id = model_ids[0]
    if (
        not picked
        or model_id in picked
        or not any(c.summary.id == model_id and not c.near_request for c in candidates)
    ):
        return []
    records = catalog.get([model_id, picked[0]])
    if model_id not in records or picked[0] not in records:
        return []
    model_right, code_right = (
        records[i].category in request.categories for i in (model_id, picked[0])
    )
    return [JudgedOverride("pick's kind by meaning", model_id, picked[0], code_right, model_right)]


FIGURES = [
    Figure("requests", lambda report: len(report.results), "requests"),
    Figure(
        "pick_one",
        lambda report: sum(1 for r in report.results if r.pick_mode == "one"),
        "planned as one pick",
        of="requests",
    ),
    Figure("kinds_found_share", "mean", "searches finding their kind"),
    Figure("right_category", "count", "pick in an expected category", of="requests"),
    Figure("within_budget", "count", "within budget", of="requests"),
    Figure("nothing_lost", "count", "nothing lost", of="requests"),
    Figure("dominated", "count", "dominated picks", "dominated_by"),
    Figure("met", "count", "every check met", of="requests", beside="met_share"),
    Figure("met_share", lambda report: round(report.count("met") / (len(report.results) or 1), 4)),
    OVERRIDES_FIGURE,
    *usage_figures("request"),
]


@dataclass
class OpenEndedReport(EvalReport):
    label: str
    open_ended_file: str  # marks an open-ended report (--compare)
    catalog: str
    provider: str | None
    model: str | None
    tool_mode: str
    results: list[OpenEndedResult]
    figures = FIGURES


def run_open_ended_eval(
    requests: Sequence[OpenEndedRequest],
    catalog_file: Path,
    context: Context,
    graph: ShoppingGraph,
    *,
    label: str,
    open_ended_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> OpenEndedReport:
    """Run each request as one checkpointed thread (auto-approved) and score it on
    `catalog_file`, the catalog the context's runs use."""
    context = prepared(context, catalog_file)  # opens the catalog: a bad one fails here
    check_categories(requests, load_products(catalog_file), open_ended_file)

    def start(index: int, request: OpenEndedRequest) -> OpenEndedResult:
        return OpenEndedResult(
            request.id,
            request.request,
            f"open-{label}-{request.id}",
            request.budget,
            list(request.categories),
        )

    def run(result: OpenEndedResult, request: OpenEndedRequest, note: Note) -> None:
        values = run_on_goal_thread(graph, context, result, request.request, approve_all, note)
        score_open_ended(result, values, request, catalog_file)

    def line(result: OpenEndedResult) -> str:
        shown = zip(result.picked, result.pick_categories, strict=False)
        picked = ", ".join(f"{i} ({c})" for i, c in shown)
        verdict = "met" if result.met else "not met"
        return f"{verdict}: {terminal_markup(picked or 'no pick', 200)}"

    results = run_cases(requests, "request", start, run, line, limit=limit, progress=progress)
    settings = (context.provider, context.model, context.tool_mode)
    return OpenEndedReport(label, open_ended_file, str(catalog_file), *settings, results)


markdown_table = table_of(FIGURES)  # one column per report
