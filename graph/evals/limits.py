"""Evaluation of plans against the limits each request states, for requests without a
ground-truth product (such as DeepShop's): the planner runs, the plan is not executed,
and its search filters are compared with limits labelled by hand (the command line:
graph/evals/main.py).

REQUESTS.jsonl has one `{"id", "ques"}` object per line. LABELS.json maps each id to
`{"max_price", "min_price", "min_rating"}` (null when the request states none) under a
"labels" key; tests/fixtures/deepshop_limits.json holds the labelling rule beside them.

Per request and limit kind:
- reached: the request states the limit and every search step's filter carries it;
- invented: a search step's filter (or the plan's budget) holds a limit the label does
  not have, or a different value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from graph.context import Context
from graph.evals.driver import EvalReport, Figure, Note, prepared, run_cases, table_of
from graph.evals.inputs import EvalInputError, is_number, read_json, read_jsonl
from graph.evals.reruns import run_on_goal_thread
from graph.runs.session import stay_paused
from graph.runs.threads import ShoppingGraph
from graph.schemas import Plan
from graph.shaping.limits import LIMIT_LABELS, same_amount

LIMIT_KINDS = tuple(LIMIT_LABELS)  # the step filters a plan is scored on


@dataclass
class LimitResult:
    id: str
    request: str
    thread_id: str
    labels: dict[str, float | None]
    plan_valid: bool = False
    built_in_code: bool = False
    not_shopping: bool = False
    search_steps: int = 0
    # Per kind: None when the request states no such limit, else whether it reached
    # every search step's filter.
    reached: dict[str, bool | None] = field(default_factory=dict)
    invented: list[str] = field(default_factory=list)
    filters: list[dict[str, Any]] = field(default_factory=list)
    budget: float | None = None
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None


def load_requests(path: Path) -> list[dict[str, Any]]:
    """A requests file (JSON Lines), checked before any request is planned."""
    requests = []
    for number, record in read_jsonl(path, "requests file"):
        where = f"requests file {path} line {number}"
        if not isinstance(record, dict) or "id" not in record or "ques" not in record:
            raise EvalInputError(f"{where}: expected an object with id and ques")
        if not isinstance(record["id"], str | int) or isinstance(record["id"], bool):
            raise EvalInputError(f"{where}: id must be a string or a number")
        if not isinstance(record["ques"], str) or not record["ques"].strip():
            raise EvalInputError(f"{where}: ques must be a non-empty string")
        requests.append(record)
    return requests


def load_labels(path: Path) -> dict[str, dict[str, float | None]]:
    """A labels file, checked: each label names exactly the limit kinds, each a number or
    null."""
    data = read_json(path, "labels file")
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        raise EvalInputError(f"labels file {path}: expected an object with a 'labels' map")
    for request_id, label in labels.items():
        if not isinstance(label, dict) or set(label) != set(LIMIT_KINDS):
            raise EvalInputError(
                f"labels file {path}: label {request_id!r} needs exactly {LIMIT_KINDS}"
            )
        for kind, value in label.items():
            if value is not None and not is_number(value):
                raise EvalInputError(
                    f"labels file {path}: label {request_id!r} {kind} must be a number or "
                    f"null, got {value!r}"
                )
    return labels


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and same_amount(a, b)


def score_plan(result: LimitResult, plan: Plan) -> None:
    """Fill a result's limit figures from its plan."""
    result.plan_valid = True
    result.built_in_code = plan.built_in_code is not None
    result.not_shopping = plan.not_shopping
    result.budget = plan.budget
    searches = plan.search_steps
    result.search_steps = len(searches)
    result.filters = [
        {"step": s.step, **{kind: getattr(s, kind) for kind in LIMIT_KINDS}} for s in searches
    ]
    for kind in LIMIT_KINDS:
        wanted = result.labels.get(kind)
        if wanted is None:
            result.reached[kind] = None
        else:
            result.reached[kind] = bool(searches) and all(
                _same(getattr(s, kind), wanted) for s in searches
            )
        for step in searches:
            value = getattr(step, kind)
            if value is not None and not _same(value, wanted):
                result.invented.append(f"step {step.step} {kind} {value:g}")
    cap = result.labels.get("max_price")
    if plan.budget is not None and not _same(plan.budget, cap):
        result.invented.append(f"budget {plan.budget:g}")


def _limit_figures(kind: str) -> list[Figure]:
    """How many requests state the limit, and how many of their plans carry it in every
    search step's filter."""

    def stated(report: LimitReport) -> list[LimitResult]:
        return [r for r in report.results if r.labels.get(kind) is not None]

    def reached(report: LimitReport) -> int:
        return sum(bool(r.reached.get(kind)) for r in stated(report))

    title = f"{kind.replace('_', ' ')} reached"
    return [
        Figure(f"{kind}_stated", lambda report: len(stated(report))),
        Figure(f"{kind}_reached", reached, title, of=f"{kind}_stated"),
    ]


FIGURES = [
    Figure("requests", lambda report: len(report.results)),
    Figure("valid_plans", "count", "valid plans", "plan_valid", of="requests"),
    Figure("built_in_code", "count", "plans built in code (fallback)"),
    Figure("not_shopping", "count", "not a shopping request"),
    *(figure for kind in LIMIT_KINDS for figure in _limit_figures(kind)),
    Figure("plans_with_invented_limit", "count", "plans with an invented limit", "invented"),
    Figure(
        "output_tokens",
        lambda report: report.mean("output_tokens", 1),
        "planner output tokens / request",
        cell=lambda summary: f"{summary['output_tokens']:.1f}",
    ),
    Figure("latency_s", lambda report: report.mean("latency_s", 3), "planner latency s / request"),
    Figure("errors", "count", "errors", "error"),
]


@dataclass
class LimitReport(EvalReport):
    label: str
    requests_file: str
    provider: str | None
    model: str | None
    results: list[LimitResult]
    figures = FIGURES


def run_limits_eval(
    requests: list[dict[str, Any]],
    labels: dict[str, dict[str, float | None]],
    context: Context,
    graph: ShoppingGraph,
    *,
    label: str,
    requests_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> LimitReport:
    """Plan each labelled request (each on its own checkpointed thread, stopped at the
    approval pause, so nothing is searched) and score the plan's filters."""

    # Plans only: the run stops at approval whatever the caller's context says, so no
    # search runs and no reasoning call is made.
    context = prepared(replace(context, auto_approve=False))
    selected = [r for r in requests if r["id"] in labels]  # unlabelled ones cannot be scored

    def start(index: int, record: dict[str, Any]) -> LimitResult:
        thread_id = f"limits-{label}-{index:03d}-{record['id']}"
        return LimitResult(record["id"], record["ques"], thread_id, labels[record["id"]])

    def run(result: LimitResult, record: dict[str, Any], note: Note) -> None:
        values = run_on_goal_thread(graph, context, result, record["ques"], stay_paused, note)
        plan = values.get("plan")
        usage = values.get("planner_usage")
        result.output_tokens = usage.output_tokens if usage is not None else 0
        result.latency_s = float(values.get("planner_latency_s") or 0)
        if plan is not None:
            score_plan(result, plan)

    def line(result: LimitResult) -> str:
        missed = [k for k, ok in result.reached.items() if ok is False]
        return (
            ("valid" if result.plan_valid else "no plan")
            + (f", missed {', '.join(missed)}" if missed else "")
            + (f", invented {'; '.join(result.invented)}" if result.invented else "")
        )

    results = run_cases(selected, "request", start, run, line, limit=limit, progress=progress)
    return LimitReport(label, requests_file, context.provider, context.model, results)


markdown_table = table_of(FIGURES)  # one column per report
