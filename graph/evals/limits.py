"""Evaluation of plans against the limits each request states, for requests without a
ground-truth product (such as DeepShop's): the planner runs, the plan is not executed,
and its search filters are compared with limits labelled by hand.

    python -m graph.eval REQUESTS.jsonl --limits LABELS.json [--provider ...] [--out R.json]

REQUESTS.jsonl has one `{"id", "ques"}` object per line. LABELS.json maps each id to
`{"max_price", "min_price", "min_rating"}` (null when the request states none) under a
"labels" key; tests/fixtures/deepshop_limits.json holds the labelling rule beside them.

Per request and limit kind:
- reached: the request states the limit and every search step's filter carries it;
- invented: a search step's filter (or the plan's budget) holds a limit the label does
  not have, or a different value.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from rich.progress import Progress

from catalog.terminal import terminal_markup
from graph.context import Context
from graph.evals.common import prepared
from graph.evals.inputs import EvalInputError, check_limit, read_json, read_jsonl
from graph.evals.reruns import goal_thread
from graph.runs.session import run_thread, stay_paused
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
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
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


@dataclass
class LimitReport:
    label: str
    requests_file: str
    provider: str | None
    model: str | None
    results: list[LimitResult]

    def summary(self) -> dict[str, Any]:
        results = self.results
        summary: dict[str, Any] = {
            "requests": len(results),
            "valid_plans": sum(r.plan_valid for r in results),
            "built_in_code": sum(r.built_in_code for r in results),
            "not_shopping": sum(r.not_shopping for r in results),
        }
        for kind in LIMIT_KINDS:
            stated = [r for r in results if r.labels.get(kind) is not None]
            summary[f"{kind}_stated"] = len(stated)
            summary[f"{kind}_reached"] = sum(bool(r.reached.get(kind)) for r in stated)
        summary["plans_with_invented_limit"] = sum(bool(r.invented) for r in results)
        n = len(results) or 1
        summary["output_tokens"] = round(sum(r.output_tokens for r in results) / n, 1)
        summary["latency_s"] = round(sum(r.latency_s for r in results) / n, 3)
        summary["errors"] = sum(1 for r in results if r.error)
        return summary

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "requests_file": self.requests_file,
            "provider": self.provider,
            "model": self.model,
            "summary": self.summary(),
            "results": [asdict(r) for r in self.results],
        }


def run_limits_eval(
    requests: list[dict[str, Any]],
    labels: dict[str, dict[str, float | None]],
    context: Context,
    graph: CompiledStateGraph,
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
    context = replace(context, auto_approve=False)

    check_limit(limit)
    context = prepared(context)
    selected = [r for r in requests if r["id"] in labels]  # unlabelled ones cannot be scored
    selected = selected[:limit] if limit is not None else selected
    results: list[LimitResult] = []
    with Progress(disable=not progress, transient=False) as bar:
        task = bar.add_task("requests", total=len(selected))
        for index, record in enumerate(selected, start=1):
            thread_id = f"limits-{label}-{index:03d}-{record['id']}"
            result = LimitResult(record["id"], record["ques"], thread_id, labels[record["id"]])
            started = time.perf_counter()
            try:
                chosen = goal_thread(graph, thread_id, record["ques"], context)
                result.thread_id = chosen.thread_id
                if chosen.note:
                    bar.console.print(f"request {index}: {terminal_markup(chosen.note, 500)}")
                run = run_thread(graph, chosen.thread_id, record["ques"], context, stay_paused)
                plan = run.values.get("plan")
                usage = run.values.get("planner_usage")
                result.output_tokens = usage.output_tokens if usage is not None else 0
                result.latency_s = float(run.values.get("planner_latency_s") or 0)
                if plan is not None:
                    score_plan(result, plan)
            except Exception as error:  # one failing request must not end the evaluation
                result.error = f"{type(error).__name__}: {error}"[:500]
                result.latency_s = round(time.perf_counter() - started, 3)
            results.append(result)
            missed = [k for k, ok in result.reached.items() if ok is False]
            bar.console.print(
                f"request {index}: "
                + ("valid" if result.plan_valid else "no plan")
                + (f", missed {', '.join(missed)}" if missed else "")
                + (f", invented {'; '.join(result.invented)}" if result.invented else "")
                + (f" error: {terminal_markup(result.error, 80)}" if result.error else "")
            )
            bar.advance(task)
    return LimitReport(label, requests_file, context.provider, context.model, results)


def markdown_table(reports: list[dict[str, Any]]) -> str:
    """One column per report, so two runs (two models) compare side by side."""
    header = "| metric | " + " | ".join(r["label"] for r in reports) + " |"
    lines = [header, "|---|" + "---:|" * len(reports)]

    def row(title: str, cell: Any) -> None:
        lines.append(f"| {title} | " + " | ".join(cell(r["summary"]) for r in reports) + " |")

    row("valid plans", lambda s: f"{s['valid_plans']}/{s['requests']}")
    row("plans built in code (fallback)", lambda s: str(s["built_in_code"]))
    row("not a shopping request", lambda s: str(s["not_shopping"]))
    for kind, title in (
        ("max_price", "max price reached"),
        ("min_price", "min price reached"),
        ("min_rating", "min rating reached"),
    ):
        row(title, lambda s, k=kind: f"{s[f'{k}_reached']}/{s[f'{k}_stated']}")
    row("plans with an invented limit", lambda s: str(s["plans_with_invented_limit"]))
    row("planner output tokens / request", lambda s: f"{s['output_tokens']:.1f}")
    row("planner latency s / request", lambda s: f"{s['latency_s']:.2f}")
    row("errors", lambda s: str(s["errors"]))
    return "\n".join(lines)
