"""Evaluation harness: run shopping goals with known answers through the whole graph and
score the final pick as the WebShop benchmark does (the command line: graph/evals/main.py).

Each goal is one checkpointed thread, so a rerun resumes where the last one stopped, if
it runs the same goals on the same catalog, provider and model (graph/evals/reruns.py).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from catalog import CatalogBackend, load_products
from graph.context import Context
from graph.evals.driver import EvalReport, Figure, Note, prepared, run_cases, table_of, take_usage
from graph.evals.inputs import EvalInputError, is_number, read_json
from graph.evals.overrides import OVERRIDES_FIGURE, as_listed, first_shown, judged, overrides_of
from graph.evals.reruns import run_on_goal_thread
from graph.evals.webshop_reward import webshop_reward
from graph.runs.session import approve_all
from graph.runs.threads import ShoppingGraph
from graph.schemas import PlanStep
from graph.tools import get_catalog


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
    # Each change code made to the model's plan, judged (graph/evals/overrides.py).
    overrides: list[dict[str, Any]] = field(default_factory=list)


# Each figure of a summary, and its row in the table: code's changes to the model's plan last.
FIGURES = [
    Figure("goals", lambda report: len(report.results)),
    Figure("mean_reward", "mean", "mean reward", "reward"),
    Figure("exact_success", "mean", "target picked"),
    Figure("constraint_success", "mean", "constraints met"),
    Figure("plan_valid", "mean", "valid plans"),
    Figure("has_search_step", "mean", "plans with a search"),
    Figure("price_cap_in_filter", "mean", "price cap in every search"),
    Figure("target_in_candidates", "mean", "target among candidates"),
    Figure("zero_result_steps", "mean", "zero-result steps / goal"),
    Figure("fallback_plans", "count", "plans built in code (fallback)", "fallback_plan"),
    Figure("duplicate_picks", "total", "products counted twice"),
    Figure("llm_calls", "mean", "LLM calls / goal"),
    Figure("input_tokens", "mean", "input tokens / goal"),
    Figure("output_tokens", "mean", "output tokens / goal"),
    Figure("plan_output_tokens", "mean", "plan output tokens / goal"),
    Figure("reasoning_input_tokens", "mean", "reasoning input tokens / goal"),
    Figure("code_decisions", "total", "pick steps decided in code"),
    Figure("latency_s", "mean", "latency s / goal"),
    Figure("errors", "count", "errors", "error"),
    OVERRIDES_FIGURE,
]


@dataclass
class Report(EvalReport):
    label: str
    goals_file: str
    catalog: str
    provider: str | None
    model: str | None
    tool_mode: str
    results: list[GoalResult]
    figures = FIGURES


def load_goals(path: Path) -> list[dict[str, Any]]:
    """A WebShop goals file, checked before any goal runs: EvalInputError names the file,
    the goal and what is wrong with it."""
    goals = read_json(path, "goals file")
    if not isinstance(goals, list) or not goals:
        raise EvalInputError(f"goals file {path}: expected a non-empty list of goals")
    for number, goal in enumerate(goals, start=1):
        where = f"goals file {path} goal {number}"
        if not isinstance(goal, dict):
            raise EvalInputError(f"{where}: expected an object, got {type(goal).__name__}")
        missing = [k for k in ("instruction_text", "asin", "attributes") if k not in goal]
        if missing:
            raise EvalInputError(f"{where}: missing {', '.join(missing)}")
        for key in ("instruction_text", "asin"):
            if not isinstance(goal[key], str) or not goal[key].strip():
                raise EvalInputError(f"{where}: {key} must be a non-empty string")
        if not isinstance(goal["attributes"], list):
            raise EvalInputError(f"{where}: attributes must be a list")
        cap = goal.get("price_upper")
        if cap is not None and not is_number(cap):
            raise EvalInputError(f"{where}: price_upper must be a number, got {cap!r}")
    return goals


def raw_products(path: Path) -> dict[str, dict[str, Any]]:
    """Products as WebShop scores them (name, Attributes, product_category, query...).

    For a WebShop file these are the records themselves; for other formats the loaded
    products are mapped onto the same fields."""

    products: dict[str, dict[str, Any]] = {}
    if path.suffix == ".jsonl":
        try:
            # Split at "\n" only, as the catalog loader does: a title may hold U+2028.
            for line in path.read_text(encoding="utf-8").split("\n"):
                record = json.loads(line) if line.strip() else None
                if isinstance(record, dict) and isinstance(record.get("product"), dict):
                    products[str(record["id"])] = record["product"]
        except (OSError, ValueError):  # load_products names the problem, or reads the file
            products = {}
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
    shop: CatalogBackend | None = None,
) -> None:
    """Fill a goal's result from the run's final state; with the `shop` the runs
    searched, judge code's changes to the model's plan too: a search is right when the
    goal's product is among the first five it shows; a pick, when the goal's constraints
    are met."""
    _score_goal(result, values, goal, raw)
    plan = values.get("plan")
    if shop is None or plan is None:
        return

    def shows_the_target(step: PlanStep) -> bool:
        return any(p.id == goal["asin"] for p in first_shown(shop, step, plan.budget))

    met = result.constraint_success
    result.overrides = as_listed(judged(overrides_of(values), shows_the_target, False, met))


def _score_goal(
    result: GoalResult,
    values: dict[str, Any],
    goal: dict[str, Any],
    raw: dict[str, dict[str, Any]],
) -> None:
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
    take_usage(result, values)
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


def run_eval(
    goals: list[dict[str, Any]],
    catalog_path: Path,
    context: Context,
    graph: ShoppingGraph,
    *,
    label: str,
    goals_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> Report:
    context = prepared(context)  # opens the catalog: a bad one fails here
    raw = raw_products(catalog_path)

    def start(index: int, goal: dict[str, Any]) -> GoalResult:
        thread_id = f"eval-{label}-{index:03d}-{goal['asin']}"
        return GoalResult(index, goal["asin"], goal["instruction_text"], thread_id)

    def run(result: GoalResult, goal: dict[str, Any], note: Note) -> None:
        request = goal["instruction_text"]
        values = run_on_goal_thread(graph, context, result, request, approve_all, note)
        score_goal(result, values, goal, raw, get_catalog(str(catalog_path)))

    def line(result: GoalResult) -> str:
        return f"reward {result.reward:.2f}" + (" (target)" if result.exact_success else "")

    results = run_cases(goals, "goal", start, run, line, limit=limit, progress=progress)
    settings = (context.provider, context.model, context.tool_mode)
    return Report(label, goals_file, str(catalog_path), *settings, results)


markdown_table = table_of(FIGURES)  # one column per report
