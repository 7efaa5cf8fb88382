"""Command line: `python -m graph.run "a birthday gift for someone who likes photography"`.

Thin over the graph: it starts a run (or resumes one), shows the plan and its cost
estimate before any step runs, asks for approval, streams step results, and prints the
checked recommendation. Heavy imports happen after argument parsing, so --help is fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph
    from rich.console import Console

    from graph.context import Context
    from graph.cost import CostEstimate
    from graph.state import Outcome, Plan, StepResult

RUN_SETTINGS = ("provider", "model", "tool_mode", "catalog", "search_limit")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m graph.run",
        description="Plan a shopping request, approve the plan, then run it step by step.",
    )
    parser.add_argument("request", nargs="?", help="what you want to buy, in your own words")
    parser.add_argument("--provider", choices=["openai", "azure", "compatible", "local"])
    parser.add_argument("--model", help="model or deployment name (provider default if unset)")
    parser.add_argument("--catalog", help="catalog file or index directory (default: shipped)")
    parser.add_argument("--tool-mode", choices=["direct", "llm"], default=None)
    parser.add_argument("--limit", type=int, default=None, help="products per search (1-50)")
    parser.add_argument("--thread", help="name this run's thread (default: a new id)")
    parser.add_argument("--yes", "-y", action="store_true", help="approve the plan without asking")
    parser.add_argument("--json", action="store_true", help="print plan and results as JSON")
    parser.add_argument("--list", action="store_true", help="list recent runs")
    parser.add_argument("--history", metavar="THREAD", help="show a run's checkpoints in order")
    parser.add_argument("--resume", metavar="THREAD", help="continue an unfinished run")
    parser.add_argument("--db", help="checkpoint database path (default: per-user data dir)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from dotenv import load_dotenv

    load_dotenv()  # .env configures providers; real environment variables win
    from rich.console import Console

    console = Console(stderr=args.json)
    try:
        return dispatch(args, console)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted.[/] Finished steps are saved; continue with --resume.")
        return 130
    except Exception as error:
        if args.debug or not is_expected_error(error):
            if args.debug:
                raise
            console.print_exception(max_frames=4)
            return 1
        console.print(f"[bold red]error:[/] {error_text(error, args)}", soft_wrap=True)
        return 2


def is_expected_error(error: Exception) -> bool:
    """Errors with a message meant for the user (everything else is a bug: traceback)."""
    import sqlite3

    import openai

    from catalog import CatalogError, CatalogQueryError
    from graph.checkpoint import CheckpointStoreError
    from graph.local_model import LocalModelError
    from graph.providers import ProviderConfigError, is_transient_provider_error
    from graph.state import PlanningError, RequestError

    expected = (
        CatalogError,
        CatalogQueryError,
        CheckpointStoreError,
        LocalModelError,
        PlanningError,
        ProviderConfigError,
        RequestError,
        openai.APIError,
        RunFailed,
        # The checkpoint store failing mid-run (disk full, locked): saved steps are intact.
        sqlite3.Error,
    )
    # A provider fault that outlived the retries (e.g. a non-JSON body from a proxy).
    return isinstance(error, expected) or is_transient_provider_error(error)


def error_text(error: Exception, args: argparse.Namespace) -> str:
    """The one message shown for an expected error, with any API key masked."""
    import sqlite3

    from rich.markup import escape

    from graph.providers import describe_provider_error, redact_secrets

    if isinstance(error, sqlite3.Error):
        from graph.checkpoint import default_checkpoint_path, sqlite_error_hint

        path = _path(args.db) or default_checkpoint_path()
        hint = sqlite_error_hint(error, path)
        advice = f"{hint}; " if hint else ""
        text = (
            f"checkpoint database {path}: {error} "
            f"({advice}finished steps are saved, continue with --resume)"
        )
    else:
        text = describe_provider_error(error) or str(error)
    # Markup off for the message itself: a model's output or a URL may hold "[...]".
    return escape(redact_secrets(text))


class RunFailed(RuntimeError):
    """A run stopped on an error; its checkpoint is intact and it can be resumed."""


def dispatch(args: argparse.Namespace, console: Console) -> int:
    from graph.builder import build_graph
    from graph.checkpoint import open_checkpointer

    saver = open_checkpointer(args.db)
    graph = build_graph(checkpointer=saver)
    if args.list:
        from graph.threads import list_threads

        print_threads(console, list_threads(graph, saver))
        return 0
    if args.history:
        return show_history(console, graph, args.history)
    if args.resume:
        return resume(args, console, graph)
    if not args.request:
        console.print('[bold red]error:[/] give a request, e.g. python -m graph.run "a tent"')
        return 2
    return start(args, console, graph)


def _path(value: str | None) -> Any:
    from pathlib import Path

    return Path(value).expanduser() if value else None


def context_from(args: argparse.Namespace, saved: dict[str, Any] | None = None) -> Context:
    from graph.context import Context

    settings = dict(saved or {})
    for name, value in (
        ("provider", args.provider),
        ("model", args.model),
        ("tool_mode", args.tool_mode),
        ("catalog", args.catalog),
        ("search_limit", args.limit),
    ):
        if value is not None:
            settings[name] = value
    return Context(**{k: v for k, v in settings.items() if k in RUN_SETTINGS and v is not None})


def start(args: argparse.Namespace, console: Console, graph: CompiledStateGraph) -> int:
    from graph.state import validate_request
    from graph.threads import thread_exists

    request = validate_request(args.request)  # before any model starts or call is made
    thread_id = args.thread or datetime.now().strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:4]
    if thread_exists(graph, thread_id):
        raise RunFailed(
            f"thread {thread_id!r} already holds a run; use --resume {thread_id} to continue "
            "it, or choose another --thread"
        )
    context = context_from(args)
    return drive(args, console, graph, thread_id, {"request": request}, context)


def resume(args: argparse.Namespace, console: Console, graph: CompiledStateGraph) -> int:
    from graph.threads import status_of, thread_config

    thread_id = args.resume
    snapshot = graph.get_state(thread_config(thread_id))
    if not snapshot.values:
        raise RunFailed(f"no run with thread id {thread_id!r}; see --list")
    status = status_of(snapshot)
    if status in ("done", "rejected"):
        raise RunFailed(f"thread {thread_id!r} is already {status}; nothing to resume")
    saved = {k: v for k, v in (snapshot.metadata or {}).items() if k in RUN_SETTINGS}
    context = context_from(args, saved)
    if not args.json:
        console.print(f"Resuming thread [bold]{thread_id}[/] ({status}).")
    return drive(args, console, graph, thread_id, None, context)


def drive(
    args: argparse.Namespace,
    console: Console,
    graph: CompiledStateGraph,
    thread_id: str,
    graph_input: dict[str, Any] | None,
    context: Context,
) -> int:
    """Stream the run: plan, approval, steps, outcome. Resumable at every step."""
    from langgraph.types import Command

    from graph.providers import chat_model_session
    from graph.threads import error_of, thread_config

    config: dict[str, Any] = thread_config(thread_id)
    view = RunView(console, quiet=args.json)
    view.thread(thread_id)
    with chat_model_session(context):
        config["metadata"] = {name: getattr(context, name) for name in RUN_SETTINGS}
        pending: Any = graph_input
        while True:
            interrupt = view.stream(graph, pending, config, context)
            if interrupt is None:
                break
            approved = ask_approval(args, console, view, interrupt)
            if approved is None:
                return 2
            pending = Command(resume={"approved": approved})
    snapshot = graph.get_state(config)
    error = error_of(snapshot)
    if error:
        raise RunFailed(f"{error}\nthe run is saved; continue with --resume {thread_id}")
    values = snapshot.values
    if args.json:
        print(json.dumps(json_report(thread_id, values, view.estimate), indent=2))
    if values.get("approval") == "rejected":
        view.rejected()
        return 0
    view.outcome(values.get("outcome"), values.get("step_results", []), values.get("plan"))
    return 0


def ask_approval(
    args: argparse.Namespace, console: Console, view: RunView, payload: dict[str, Any]
) -> bool | None:
    from graph.cost import CostEstimate
    from graph.state import Plan

    plan = Plan.model_validate(payload["plan"])
    view.estimate = CostEstimate.model_validate(payload["estimate"])
    if not view.plan_shown:
        view.plan(plan)
    view.show_estimate(view.estimate)
    if args.yes:
        return True
    if not sys.stdin.isatty():
        console.print(
            "[bold red]error:[/] the plan needs approval, but there is no terminal to ask: "
            "pass --yes to approve it (the run is saved; --resume THREAD --yes continues it)"
        )
        return None
    from rich.prompt import Confirm

    return Confirm.ask("Run this plan?", default=False, console=console)


def json_report(
    thread_id: str, values: dict[str, Any], estimate: CostEstimate | None
) -> dict[str, Any]:
    def dump(value: Any) -> Any:
        return value.model_dump(mode="json") if hasattr(value, "model_dump") else value

    return {
        "thread_id": thread_id,
        "request": values.get("request"),
        "approval": values.get("approval"),
        "plan": dump(values.get("plan")),
        "estimate": dump(estimate),
        "planner_usage": dump(values.get("planner_usage")),
        "step_results": [dump(r) for r in values.get("step_results", [])],
        "outcome": dump(values.get("outcome")),
    }


class RunView:
    """Everything the CLI shows while a run streams (rich on a terminal, quiet for --json)."""

    def __init__(self, console: Console, *, quiet: bool) -> None:
        self.console = console
        self.quiet = quiet
        self.plan_shown = False
        self.step_actions: list[str] = []
        self.steps_done = 0
        self.estimate: CostEstimate | None = None

    def stream(
        self, graph: CompiledStateGraph, pending: Any, config: dict[str, Any], context: Context
    ) -> dict[str, Any] | None:
        """Run until the graph ends or pauses; return the interrupt payload if it paused."""
        from contextlib import nullcontext

        # Read the saved progress once (a resumed run starts part way); updates do the rest.
        values = graph.get_state(config).values
        if values.get("plan") is not None:
            self.step_actions = [step.action for step in values["plan"].steps]
        self.steps_done = len(values.get("step_results") or [])
        status = nullcontext() if self.quiet else self.console.status("Planning…")
        with status as spinner:
            for update in graph.stream(
                pending, config, context=context, stream_mode="updates", durability="sync"
            ):
                for node, change in update.items():
                    if node == "__interrupt__":
                        return change[0].value
                    self.on_update(node, change or {})
                if spinner is not None:
                    spinner.update(self.status_text())
        return None

    def status_text(self) -> str:
        total = len(self.step_actions)
        if self.steps_done < total:
            action = self.step_actions[self.steps_done]
            return f"Step {self.steps_done + 1}/{total}: {action}…"
        return "Checking the recommendation…"

    def on_update(self, node: str, change: dict[str, Any]) -> None:
        if node == "planner" and change.get("plan") is not None:
            self.plan(change["plan"])
        for result in change.get("step_results", []):
            self.steps_done += 1
            self.step(result)

    def thread(self, thread_id: str) -> None:
        if not self.quiet:
            self.console.print(f"[dim]thread[/] [bold]{thread_id}[/]")

    def plan(self, plan: Plan) -> None:
        self.step_actions = [step.action for step in plan.steps]
        self.plan_shown = True
        if self.quiet:
            return
        from rich.table import Table

        from graph.prompts import describe_filters

        budget = f"${plan.budget:,.2f}" if plan.budget is not None else "none stated"
        table = Table(title=f"Plan: {plan.goal}  (budget {budget})", title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("kind")
        table.add_column("action")
        table.add_column("query and filters")
        for step in plan.steps:
            detail = f"{step.query!r} ({describe_filters(step)})" if step.is_search else ""
            table.add_row(
                str(step.step), "search" if step.is_search else "reason", step.action, detail
            )
        self.console.print(table)

    def show_estimate(self, estimate: CostEstimate) -> None:
        if self.quiet:
            return
        usd = f"${estimate.usd:.4f}" if estimate.price_known else "unknown price"
        self.console.print(
            f"Estimate: {estimate.llm_calls} more LLM calls, ~{estimate.input_tokens:,} input + "
            f"~{estimate.output_tokens:,} output tokens, {usd} "
            f"[dim]({estimate.model}; {estimate.tokenizer})[/]"
        )

    def step(self, result: StepResult) -> None:
        if self.quiet:
            return
        mark = "[red]✗[/]" if result.error else "[green]✓[/]"
        kind = "search" if result.kind == "search" else "reason"
        line = f"{mark} step {result.step} ({kind}) {result.action}"
        if result.kind == "search" and not result.error:
            line += f" — {len(result.products)} found"
        self.console.print(line + f" [dim]{result.latency_s:.1f}s[/]")
        for product in result.products[:3]:
            self.console.print(f"    {product.id}  {product.title}  ${product.price:,.2f}")
        if result.answer:
            self.console.print(f"    [italic]{result.answer}[/]")
        for text in ([result.error] if result.error else []) + result.warnings:
            self.console.print(f"    [yellow]! {text}[/]")

    def rejected(self) -> None:
        if not self.quiet:
            self.console.print("Plan rejected; nothing was run.")

    def outcome(
        self, outcome: Outcome | None, results: list[StepResult], plan: Plan | None
    ) -> None:
        if self.quiet or outcome is None:
            return
        from rich.table import Table

        table = Table(title="Recommendation (checked against the catalog)", title_justify="left")
        for column in ("id", "product", "price", "rating"):
            table.add_column(column, justify="right" if column in ("price", "rating") else "left")
        for pick in outcome.picks:
            rating = f"{pick.rating:.1f}" if pick.rating is not None else "-"
            table.add_row(pick.id, pick.title, f"${pick.price:,.2f}", rating)
        self.console.print(table)
        budget = f" of ${outcome.budget:,.2f} budget" if outcome.budget is not None else ""
        verdict = {True: "[green]within budget[/]", False: "[red]over budget[/]", None: ""}
        self.console.print(
            f"Total ${outcome.total_price:,.2f}{budget} {verdict[outcome.within_budget]}"
        )
        for warning in outcome.warnings:
            self.console.print(f"[yellow]! {warning}[/]")
        self.usage(results)

    def usage(self, results: list[StepResult]) -> None:
        calls = sum(r.llm_calls for r in results)
        tokens_in = sum(r.usage.input_tokens for r in results)
        tokens_out = sum(r.usage.output_tokens for r in results)
        line = f"Executor usage: {calls} LLM calls, {tokens_in:,} input + {tokens_out:,} output"
        if self.estimate is not None:
            line += (
                f" (estimated {self.estimate.llm_calls} calls, {self.estimate.input_tokens:,} + "
                f"{self.estimate.output_tokens:,})"
            )
        self.console.print(f"[dim]{line}[/]")


def print_threads(console: Console, threads: list[Any]) -> None:
    from rich.table import Table

    table = Table(title="Recent runs")
    for column in ("thread", "status", "steps", "when", "request"):
        table.add_column(column)
    for item in threads:
        when = (item.updated_at or "")[:19].replace("T", " ")
        table.add_row(
            item.thread_id,
            item.status,
            f"{item.steps_done}/{item.steps_total}",
            when,
            item.request[:60],
        )
    console.print(table if threads else "No runs yet.")


def show_history(console: Console, graph: CompiledStateGraph, thread_id: str) -> int:
    from rich.table import Table

    from graph.threads import thread_history

    entries = thread_history(graph, thread_id)
    if not entries:
        raise RunFailed(f"no run with thread id {thread_id!r}; see --list")
    table = Table(title=f"History of {thread_id}")
    for column in ("#", "node", "plan step", "result", "when"):
        table.add_column(column)
    for entry in entries:
        table.add_row(
            str(entry.superstep),
            entry.node,
            str(entry.plan_step or ""),
            entry.summary,
            (entry.created_at or "")[11:19],
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
