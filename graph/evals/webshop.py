"""Evaluation harness: run shopping goals with known answers through the whole graph and
score the final pick as the WebShop benchmark does.

    python -m graph.eval GOALS.json --catalog CATALOG [--provider ...] [--tool-mode ...]
                         [--limit N] [--out report.json]
    python -m graph.eval --compare A.json B.json
    python -m graph.eval REQUESTS.jsonl --limits LABELS.json [--provider ...] [--out R.json]
    python -m graph.eval BUNDLES.json --bundles [--check] [--catalog PATH] [--out R.json]

The --limits mode plans requests that have no known answer and scores each plan's
filters against the limits labelled for it (graph/evals/limits.py); nothing is searched.
The --bundles mode runs requests for several items under one total budget and scores the
picks against the best bundle the catalog holds (graph/evals/bundles.py); --check only
prints that brute force, with no model.

Each goal is one checkpointed thread, so a rerun resumes where the last one stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from rich.progress import Progress

from catalog import load_products
from catalog.paths import keep_data_private
from catalog.terminal import terminal_markup
from graph.builder import build_graph
from graph.context import Context, load_env_file
from graph.evals.bundles import bundles_main
from graph.evals.bundles import markdown_table as bundles_table
from graph.evals.common import approved_context, show_and_save
from graph.evals.follow_ups import follow_ups_main
from graph.evals.limits import load_labels, load_requests, run_limits_eval
from graph.evals.limits import markdown_table as limits_table
from graph.evals.webshop_reward import webshop_reward
from graph.providers.models import chat_model_session
from graph.providers.registry import PROVIDERS
from graph.runs.checkpoint import open_checkpointer
from graph.runs.session import approve_all, run_thread, usage_totals


@dataclass
class GoalResult:
    index: int
    asin: str
    instruction: str
    thread_id: str
    plan_valid: bool = False
    has_search_step: bool = False
    price_cap_in_filter: bool = False
    fallback_plan: bool = False
    zero_result_steps: int = 0
    picks: int = 0
    duplicate_picks: int = 0  # the same product listed twice in one outcome
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    plan_output_tokens: int = 0
    reasoning_input_tokens: int = 0
    code_decisions: int = 0
    latency_s: float = 0.0
    picked: str | None = None
    picked_price: float | None = None
    reward: float = 0.0
    exact_success: bool = False
    constraint_success: bool = False
    target_in_candidates: bool = False
    error: str | None = None
    reward_detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    label: str
    goals_file: str
    catalog: str
    provider: str | None
    model: str | None
    tool_mode: str
    results: list[GoalResult]

    def summary(self) -> dict[str, float]:
        n = len(self.results) or 1

        def mean(name: str) -> float:
            return round(sum(float(getattr(r, name)) for r in self.results) / n, 4)

        return {
            "goals": len(self.results),
            "mean_reward": mean("reward"),
            "exact_success": mean("exact_success"),
            "constraint_success": mean("constraint_success"),
            "plan_valid": mean("plan_valid"),
            "has_search_step": mean("has_search_step"),
            "price_cap_in_filter": mean("price_cap_in_filter"),
            "target_in_candidates": mean("target_in_candidates"),
            "zero_result_steps": mean("zero_result_steps"),
            "fallback_plans": sum(1 for r in self.results if r.fallback_plan),
            "duplicate_picks": sum(r.duplicate_picks for r in self.results),
            "llm_calls": mean("llm_calls"),
            "input_tokens": mean("input_tokens"),
            "output_tokens": mean("output_tokens"),
            "plan_output_tokens": mean("plan_output_tokens"),
            "reasoning_input_tokens": mean("reasoning_input_tokens"),
            "code_decisions": sum(r.code_decisions for r in self.results),
            "latency_s": mean("latency_s"),
            "errors": sum(1 for r in self.results if r.error),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "goals_file": self.goals_file,
            "catalog": self.catalog,
            "provider": self.provider,
            "model": self.model,
            "tool_mode": self.tool_mode,
            "summary": self.summary(),
            "results": [asdict(r) for r in self.results],
        }


def load_goals(path: Path) -> list[dict[str, Any]]:
    goals = json.loads(path.read_text())
    if not isinstance(goals, list):
        raise ValueError(f"{path}: expected a list of goals")
    for number, goal in enumerate(goals, start=1):
        missing = [k for k in ("instruction_text", "asin", "attributes") if k not in goal]
        if missing:
            raise ValueError(f"{path} goal {number}: missing {', '.join(missing)}")
    return goals


def raw_products(path: Path) -> dict[str, dict[str, Any]]:
    """Products as WebShop scores them (name, Attributes, product_category, query...).

    For a WebShop file these are the records themselves; for other formats the loaded
    products are mapped onto the same fields."""

    products: dict[str, dict[str, Any]] = {}
    if path.suffix == ".jsonl":
        for line in path.read_text().splitlines():
            record = json.loads(line) if line.strip() else None
            if isinstance(record, dict) and isinstance(record.get("product"), dict):
                products[str(record["id"])] = record["product"]
        if products:
            return products
    for product in load_products(path):
        products[product.id] = {
            "name": product.title,
            "Title": product.title,
            "Description": product.description,
            "Attributes": product.tags,
            "product_category": product.category,
        }
    return products


def score_goal(
    result: GoalResult,
    values: dict[str, Any],
    goal: dict[str, Any],
    raw: dict[str, dict[str, Any]],
) -> None:
    """Fill a goal's result from the run's final state."""

    plan = values.get("plan")
    steps = values.get("step_results") or []
    outcome = values.get("outcome")
    cap = float(goal.get("price_upper") or 0)
    result.plan_valid = plan is not None
    if plan is not None:
        result.has_search_step = bool(plan.search_steps)
        # Every search carries the cap: one unfiltered search can return what the
        # shopper cannot afford.
        result.price_cap_in_filter = (
            cap > 0
            and bool(plan.search_steps)
            and all(
                s.max_price is not None and s.max_price <= cap + 0.01 for s in plan.search_steps
            )
        )
        result.fallback_plan = plan.built_in_code is not None
    result.zero_result_steps = sum(1 for r in steps if r.kind == "search" and not r.products)
    totals = usage_totals(values)  # the same totals the CLI reports
    result.llm_calls = totals.llm_calls
    result.input_tokens = totals.input_tokens
    result.output_tokens = totals.output_tokens
    result.plan_output_tokens = totals.plan_output_tokens
    result.reasoning_input_tokens = totals.reasoning_input_tokens
    result.code_decisions = totals.code_decisions
    result.latency_s = totals.latency_s
    result.target_in_candidates = any(p.id == goal["asin"] for r in steps for p in r.products)
    if outcome is None or not outcome.picks:
        return
    result.picks = len(outcome.picks)
    result.duplicate_picks = len(outcome.picks) - len({p.id for p in outcome.picks})
    pick = outcome.picks[0]
    result.picked, result.picked_price = pick.id, pick.price
    purchased = raw.get(pick.id)
    target = raw.get(goal["asin"], {})
    if purchased is None:
        return
    reward = webshop_reward(purchased, pick.price, goal, target)
    result.reward = reward.reward
    result.reward_detail = asdict(reward)
    result.exact_success = pick.id == goal["asin"]
    result.constraint_success = reward.price_ok and (
        reward.attributes_matched == reward.attributes_total
    )


def run_goal(
    graph: CompiledStateGraph, thread_id: str, request: str, context: Context
) -> dict[str, Any]:
    """Run (or resume, or just read back) one goal's thread; return its final values."""

    return run_thread(graph, thread_id, request, context, approve_all).values


def run_eval(
    goals: list[dict[str, Any]],
    catalog_path: Path,
    context: Context,
    graph: CompiledStateGraph,
    *,
    label: str,
    goals_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> Report:

    raw = raw_products(catalog_path)
    selected = goals[:limit] if limit else goals
    results: list[GoalResult] = []
    with Progress(disable=not progress, transient=False) as bar:
        task = bar.add_task("goals", total=len(selected))
        for index, goal in enumerate(selected, start=1):
            thread_id = f"eval-{label}-{index:03d}-{goal['asin']}"
            result = GoalResult(index, goal["asin"], goal["instruction_text"], thread_id)
            bar.update(task, description=f"goal {index}/{len(selected)}")
            started = time.perf_counter()
            try:
                values = run_goal(graph, thread_id, goal["instruction_text"], context)
                score_goal(result, values, goal, raw)
            except Exception as error:  # one failing goal must not end the evaluation
                result.error = f"{type(error).__name__}: {error}"[:500]
                result.latency_s = round(time.perf_counter() - started, 3)
            results.append(result)
            bar.console.print(
                f"goal {index}: reward {result.reward:.2f}"
                + (" (target)" if result.exact_success else "")
                # The error quotes model and server text: shown as data, not markup.
                + (f" error: {terminal_markup(result.error, 80)}" if result.error else "")
            )
            bar.advance(task)
    return Report(
        label=label,
        goals_file=goals_file,
        catalog=str(catalog_path),
        provider=context.provider,
        model=context.model,
        tool_mode=context.tool_mode,
        results=results,
    )


SUMMARY_ROWS = [
    ("mean_reward", "mean reward"),
    ("exact_success", "target picked"),
    ("constraint_success", "constraints met"),
    ("plan_valid", "valid plans"),
    ("has_search_step", "plans with a search"),
    ("price_cap_in_filter", "price cap in every search"),
    ("target_in_candidates", "target among candidates"),
    ("zero_result_steps", "zero-result steps / goal"),
    ("fallback_plans", "plans built in code (fallback)"),
    ("duplicate_picks", "products counted twice"),
    ("llm_calls", "LLM calls / goal"),
    ("input_tokens", "input tokens / goal"),
    ("output_tokens", "output tokens / goal"),
    ("plan_output_tokens", "plan output tokens / goal"),
    ("reasoning_input_tokens", "reasoning input tokens / goal"),
    ("code_decisions", "pick steps decided in code"),
    ("latency_s", "latency s / goal"),
    ("errors", "errors"),
]


def markdown_table(reports: list[dict[str, Any]]) -> str:
    """One column per report, so two runs compare side by side."""
    header = "| metric | " + " | ".join(r["label"] for r in reports) + " |"
    lines = [header, "|---|" + "---:|" * len(reports)]
    for key, title in SUMMARY_ROWS:
        cells = []
        for report in reports:
            value = report["summary"].get(key, "")
            cells.append(f"{value:.2f}" if isinstance(value, float) else str(value))
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graph.eval", description=__doc__)
    parser.add_argument("goals", nargs="?", type=Path, help="goals JSON (WebShop format)")
    parser.add_argument("--catalog", type=Path, help="catalog file the goals refer to")
    parser.add_argument("--provider", choices=list(PROVIDERS))
    parser.add_argument("--model")
    parser.add_argument("--tool-mode", choices=["direct", "llm"], default="direct")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--label", help="run name (default: provider-model-mode)")
    parser.add_argument("--out", type=Path, help="write the JSON report here (+ .md)")
    parser.add_argument("--db", type=Path, help="checkpoint database (default: per-user)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument(
        "--limits", type=Path, metavar="LABELS", help="score plans' filters against these labels"
    )
    parser.add_argument("--bundles", action="store_true", help="GOALS is a bundle file")
    parser.add_argument("--check", action="store_true", help="--bundles: brute force only")
    parser.add_argument("--follow-ups", action="store_true", help="GOALS is a follow-up file")
    args = parser.parse_args(argv)

    load_env_file()  # .env of the working directory configures providers; real variables win
    keep_data_private()  # the eval's runs and caches are private like the CLI's
    if args.compare:
        reports = [json.loads(p.read_text()) for p in args.compare]
        if all("requests_file" in r for r in reports):
            print(limits_table(reports))
        elif all("bundles_file" in r for r in reports):
            print(bundles_table(reports))
        else:
            print(markdown_table(reports))
        return 0
    if args.limits is not None:
        if args.goals is None:
            parser.error("give REQUESTS.jsonl with --limits")
        return _limits_main(args)
    if args.follow_ups:
        return follow_ups_main(args)
    if args.check and not args.bundles:
        parser.error("--check goes with --bundles")
    if args.bundles:
        if args.goals is None:
            parser.error("give BUNDLES.json with --bundles")
        return bundles_main(args)
    if args.goals is None or args.catalog is None:
        parser.error("give GOALS.json and --catalog (or --compare A.json B.json)")

    goals = load_goals(args.goals)
    context = approved_context(args, args.catalog)
    graph = build_graph(checkpointer=open_checkpointer(args.db))
    with chat_model_session(context) as context:
        label = args.label or f"{context.provider}-{context.model}-{context.tool_mode}"
        report = run_eval(
            goals,
            args.catalog,
            context,
            graph,
            label=label,
            goals_file=str(args.goals),
            limit=args.limit,
        )
    data = report.to_json()
    show_and_save(data, markdown_table([data]), args.out)
    return 0


def _limits_main(args: argparse.Namespace) -> int:

    requests = load_requests(args.goals)
    labels = load_labels(args.limits)
    context = Context(provider=args.provider, model=args.model)
    graph = build_graph(checkpointer=open_checkpointer(args.db))
    with chat_model_session(context) as context:
        label = args.label or f"limits-{context.provider}-{context.model}"
        report = run_limits_eval(
            requests,
            labels,
            context,
            graph,
            label=label,
            requests_file=str(args.goals),
            limit=args.limit,
        )
    data = report.to_json()
    show_and_save(data, limits_table([data]), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
