"""How the CLI shows runs: the plan, its estimate, each step as it finishes, the checked
recommendation, the list of runs, a run's history, and the one line an expected error gets.

Plan text, answers, product titles, requests and thread ids come from the model, the
catalog or the user, so they are printed escaped: rich would read "[...]" in them as markup.
"""

from __future__ import annotations

import sqlite3
import traceback
from pathlib import Path
from typing import Any

import openai
from rich.console import Console
from rich.status import Status
from rich.table import Table
from rich.text import Text

from catalog import CatalogError, CatalogQueryError
from catalog.terminal import (
    ERROR_DISPLAY_CHARS,
    clean_text,
    terminal_markup,
    terminal_text,
)
from graph.checkpoint import (
    CheckpointStoreError,
    default_checkpoint_path,
    sqlite_error_hint,
)
from graph.cost import CostEstimate
from graph.local_model import LocalModelError
from graph.plan_edit import describe_change, plan_that_runs
from graph.prompts import describe_filters
from graph.providers import (
    ProviderConfigError,
    describe_provider_error,
    is_transient_provider_error,
    redact_secrets,
)
from graph.session import EditReview, PlanDraft, RunFailed, UsageTotals
from graph.state import (
    Outcome,
    Plan,
    PlanChange,
    PlanningError,
    RequestError,
    StepResult,
)
from graph.threads import HistoryEntry, ThreadSummary
from graph.warm_server import WarmServer


class RunView:
    """Everything the CLI shows while a run streams (rich on a terminal, quiet for --json).
    It is the session's observer: the session calls it as nodes finish."""

    def __init__(self, console: Console, thread_id: str, *, quiet: bool) -> None:
        self.console = console
        self.thread_id = thread_id
        self.quiet = quiet
        self.thread_shown = False
        self.plan_shown = False
        self.step_actions: list[str] = []
        self.steps_done = 0
        self._spinner: Status | None = None
        # On a terminal the plan is shown as the planner writes it; --json stays quiet.
        self.wants_plan_draft = not quiet

    # -- the session's observer hooks

    def stream_started(self, values: dict[str, Any]) -> None:
        if not self.thread_shown and not self.quiet:
            self.console.print(f"[dim]thread[/] [bold]{terminal_markup(self.thread_id)}[/]")
        self.thread_shown = True
        # A resumed run starts part way: read its saved progress once; updates do the rest.
        plan = plan_that_runs(values)
        if plan is not None:
            self.step_actions = [step.action for step in plan.steps]
        self.steps_done = len(values.get("step_results") or [])
        if not self.quiet:
            self._spinner = self.console.status("Planning…")
            self._spinner.start()

    def plan_drafted(self, draft: PlanDraft) -> None:
        """Show the plan so far under the spinner; the full table replaces it when done."""
        if self._spinner is None:
            return
        lines = Text("Planning…")
        if draft.goal is not None:
            lines.append("\n  goal: ").append(Text(draft.goal))
        for step in draft.steps:
            query = step.get("query")
            lines.append(f"\n  {step.get('step', '?')}. ").append(Text(str(step.get("action", ""))))
            if query:
                lines.append("  ").append(Text(repr(str(query)), style="dim"))
        self._spinner.update(lines)

    def node_finished(self, node: str, change: dict[str, Any]) -> None:
        if node == "planner" and change.get("plan") is not None:
            if self._spinner is not None:  # the draft under it gives way to the full table
                self._spinner.update(Text("Planned."))
            self.plan(change["plan"])
        if change.get("plan_edit") is not None:  # the steps that run are the person's
            self.step_actions = [step.action for step in change["plan_edit"].plan.steps]
        for result in change.get("step_results", []):
            self.steps_done += 1
            self.step(result)
        if self._spinner is not None:
            self._spinner.update(self.status_text())

    def stream_stopped(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    # -- what is shown

    def status_text(self) -> Text:
        total = len(self.step_actions)
        if self.steps_done < total:
            action = self.step_actions[self.steps_done]
            return Text(f"Step {self.steps_done + 1}/{total}: {clean_text(action, 80)}…")
        return Text("Checking the recommendation…")

    def resuming(self, status: str) -> None:
        if not self.quiet:
            self.console.print(
                f"Resuming thread [bold]{terminal_markup(self.thread_id)}[/] ({status})."
            )

    def plan(self, plan: Plan, *, edited: bool = False) -> None:
        self.step_actions = [step.action for step in plan.steps]
        self.plan_shown = True
        if self.quiet:
            return
        if plan.not_shopping:
            self.console.print(
                Text("Not a shopping request: ", style="bold") + terminal_text(plan.goal)
            )
            return
        budget = f"${plan.budget:,.2f}" if plan.budget is not None else "none stated"
        kind = "Fallback plan" if plan.built_in_code else "Plan"
        label = f"{kind} (your edit): " if edited else f"{kind}: "
        title = Text(label) + terminal_text(plan.goal) + Text(f"  (budget {budget})")
        table = Table(title=title, title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("kind")
        table.add_column("action")
        table.add_column("query and filters")
        for step in plan.steps:
            detail = (
                f"{step.query!r} ({describe_filters(step, mark_filled=True)})"
                if step.is_search
                else ""
            )
            # describe_filters quotes the plan's category: all of it is model text.
            table.add_row(
                str(step.step),
                "search" if step.is_search else "reason",
                terminal_text(step.action),
                terminal_text(detail),
            )
        self.console.print(table)
        if plan.built_in_code:
            self.console.print(
                terminal_text(f"! built in code: {plan.built_in_code}", style="bold yellow")
            )

    def show_estimate(self, estimate: CostEstimate) -> None:
        if self.quiet:
            return
        usd = f"${estimate.usd:.4f}" if estimate.price_known else "unknown price"
        self.console.print(
            f"Estimate: {estimate.llm_calls} more LLM calls, ~{estimate.input_tokens:,} input + "
            f"~{estimate.output_tokens:,} output tokens, {usd} "
            f"[dim]({terminal_markup(estimate.model)}; {terminal_markup(estimate.tokenizer)})[/]"
        )

    def plan_warnings(self, warnings: tuple[str, ...] | list[str]) -> None:
        """Checks of the plan against the request, shown before the plan is approved."""
        if self.quiet:
            return
        for warning in warnings:
            self.console.print(terminal_text(f"! plan: {warning}", style="bold yellow"))

    def edit_review(self, review: EditReview) -> None:
        """A person's edit before they approve it: the edited plan, what it changes from
        the model's plan, its estimate and its code checks."""
        if review.edit is None:
            self.plan(review.plan)
            if not self.quiet:
                self.console.print("Your edit matches the model's plan.")
        else:
            self.plan(review.plan, edited=True)
            self.plan_changes(review.edit.changes)
        self.show_estimate(review.estimate)
        self.plan_warnings(review.warnings)

    def plan_changes(self, changes: list[PlanChange]) -> None:
        if self.quiet:
            return
        self.console.print("Changes from the model's plan:")
        for change in changes:
            self.console.print(Text("  ") + terminal_text(describe_change(change)))

    def edit_problems(self, problems: list[str]) -> None:
        """Why an edited plan cannot run (it is never sent to the graph)."""
        self.console.print("[bold red]The edited plan cannot run:[/]")
        for problem in problems:
            self.console.print(Text("  - ") + terminal_text(problem, ERROR_DISPLAY_CHARS))

    def edit_refused(self, error: str) -> None:
        """The approval node refused the edit sent last; the run paused here again."""
        self.console.print(terminal_text(f"! {error}", ERROR_DISPLAY_CHARS, style="bold red"))

    def step(self, result: StepResult) -> None:
        if self.quiet:
            return
        mark = "[red]✗[/]" if result.error else "[green]✓[/]"
        kind = "search" if result.kind == "search" else "reason"
        line = f"{mark} step {result.step} ({kind}) {terminal_markup(result.action)}"
        if result.kind == "search" and not result.error:
            line += f" — {len(result.products)} found"
        self.console.print(line + f" [dim]{result.latency_s:.1f}s[/]")
        for product in result.products[:3]:
            self.console.print(
                Text("    ")
                + terminal_text(product.id, 80)
                + Text("  ")
                + terminal_text(product.title)
                + Text(f"  ${product.price:,.2f}")
            )
        if result.answer:
            self.console.print(Text("    ") + terminal_text(result.answer, style="italic"))
        for text in ([result.error] if result.error else []) + result.warnings:
            self.console.print(Text("    ") + terminal_text(f"! {text}", style="yellow"))

    def rejected(self) -> None:
        if not self.quiet:
            self.console.print("Plan rejected; nothing was run.")

    def outcome(
        self,
        outcome: Outcome | None,
        totals: UsageTotals,
        estimate: CostEstimate | None = None,
    ) -> None:
        if self.quiet or outcome is None:
            return
        if outcome.not_shopping:
            for warning in outcome.warnings:
                self.console.print(terminal_text(warning.capitalize() + "."))
            self.usage(totals, estimate)
            return
        table = Table(title="Recommendation (checked against the catalog)", title_justify="left")
        for column in ("id", "product", "price", "rating"):
            table.add_column(column, justify="right" if column in ("price", "rating") else "left")
        for pick in outcome.picks:
            rating = f"{pick.rating:.1f}" if pick.rating is not None else "-"
            table.add_row(
                terminal_text(pick.id, 80), terminal_text(pick.title), f"${pick.price:,.2f}", rating
            )
        self.console.print(table)
        self.console.print(budget_line(outcome))
        for warning in outcome.warnings:
            self.console.print(terminal_text(f"! {warning}", style="yellow"))
        self.usage(totals, estimate)

    def usage(self, totals: UsageTotals, estimate: CostEstimate | None) -> None:
        line = (
            f"Usage (planner included): {totals.llm_calls} LLM calls, "
            f"{totals.input_tokens:,} input + {totals.output_tokens:,} output"
        )
        if estimate is not None:
            line += (
                f" (estimated {estimate.llm_calls} more after the plan, "
                f"{estimate.input_tokens:,} + {estimate.output_tokens:,})"
            )
        self.console.print(f"[dim]{line}[/]")


def budget_line(outcome: Outcome) -> str:
    """The total and how it compares with the budget, worded honestly: when the plan
    dropped a limit the request states, the plan's budget is not the shopper's, so the
    total is compared with the stated limit and never called "within budget" in green."""
    total = f"Total ${outcome.total_price:,.2f}"
    if outcome.dropped_limit is not None:
        limit = f"${outcome.dropped_limit:,.2f}"
        relation = "under" if outcome.total_price <= outcome.dropped_limit else "over"
        colour = "yellow" if relation == "under" else "red"
        return (
            f"{total} [{colour}]({relation} the {limit} limit the request states, which the "
            "plan dropped: check the picks)[/]"
        )
    if outcome.budget is None:
        return f"{total} (no budget stated)"
    budget = f" of ${outcome.budget:,.2f} budget"
    if outcome.within_budget:
        return f"{total}{budget} [green]within budget[/]"
    return f"{total}{budget} [red]over budget[/]"


def print_threads(console: Console, threads: list[ThreadSummary]) -> None:
    table = Table(title="Recent runs")
    for column in ("thread", "status", "steps", "when", "request"):
        table.add_column(column)
    for item in threads:
        when = (item.updated_at or "")[:19].replace("T", " ")
        table.add_row(
            terminal_text(item.thread_id, 80),
            item.status,
            f"{item.steps_done}/{item.steps_total}",
            when,
            terminal_text(item.request, 60),
        )
    console.print(table if threads else "No runs yet.")


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def print_model_servers(console: Console, servers: list[WarmServer]) -> None:
    """One status line per warm local model server (shown by --list)."""
    if not servers:
        console.print("[dim]local model server: not running[/]")
    for server in servers:
        line = Text("local model server: ", style="dim")
        line.append(server.model_alias, style="bold")
        line.append(
            f" up (pid {server.pid}, 127.0.0.1:{server.port}), stops after "
            f"{_duration(server.keep_alive_s)} idle; --stop-server stops it now",
            style="dim",
        )
        console.print(line)


def print_stopped_servers(console: Console, servers: list[WarmServer]) -> None:
    if not servers:
        console.print("No local model server was running.")
    for server in servers:
        console.print(
            Text(f"Stopped the local model server {server.model_alias} (pid {server.pid}).")
        )


def print_history(console: Console, thread_id: str, entries: list[HistoryEntry]) -> None:
    table = Table(title=Text("History of ") + terminal_text(thread_id, 80))
    for column in ("#", "node", "plan step", "result", "when"):
        table.add_column(column)
    for entry in entries:
        table.add_row(
            str(entry.superstep),
            terminal_text(entry.node, 80),
            str(entry.plan_step or ""),
            terminal_text(entry.summary),
            (entry.created_at or "")[11:19],
        )
    console.print(table)
    for entry in entries:
        if entry.details:
            console.print(Text(f"#{entry.superstep} {entry.node}:", style="bold"))
        for line in entry.details:
            console.print(terminal_text(line))


def traceback_text(error: BaseException, *, full: bool) -> str:
    """The traceback of `error` (the last 4 frames unless `full`), with secrets masked and
    hidden characters shown, for --debug and for bugs."""
    frames = None if full else -4
    text = "".join(traceback.format_exception(error, limit=frames))
    return clean_text(redact_secrets(text), 200_000, keep_newlines=True) + "\n"


def interrupted_text(error: BaseException) -> str:
    """The line shown after Ctrl-C."""
    advice = resume_advice(error) or "finished steps are saved; see --list"
    return f"[yellow]interrupted.[/] {terminal_markup(advice, ERROR_DISPLAY_CHARS)}"


def is_expected_error(error: Exception) -> bool:
    """Errors with a message meant for the user (everything else is a bug: traceback)."""
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
    # A provider fault that outlived the retries (e.g. a non-JSON body from a proxy), or a
    # local model server that died under a call.
    return (
        isinstance(error, expected)
        or is_transient_provider_error(error)
        or describe_provider_error(error) is not None
    )


def resume_advice(error: BaseException) -> str:
    """What the shopper can do about a run an error stopped: --resume with the real thread
    id when something is saved, nothing to resume when nothing is, "" if not a run error."""
    thread_id = getattr(error, "thread_id", None)
    if thread_id is None:
        return ""
    saved = getattr(error, "thread_saved", None)
    resume = f"--resume {thread_id}"
    if saved is True:
        return f"finished steps are saved; continue with {resume}"
    if saved is False:
        return "nothing of this run was saved; start it again"
    return f"if the run was saved (see --list), {resume} continues it"


def error_text(error: BaseException, db: str | None = None) -> str:
    """The one message shown for an expected error, with any API key masked."""
    advice = resume_advice(error)
    if isinstance(error, sqlite3.Error):
        path = Path(db).expanduser() if db else default_checkpoint_path()
        hint = sqlite_error_hint(error, path)
        notes = "; ".join(part for part in (hint, advice) if part)
        text = f"checkpoint database {path}: {error}" + (f" ({notes})" if notes else "")
    else:
        text = describe_provider_error(error) or str(error)
        if advice and "--resume" not in text:
            text += f" ({advice})"
    # Shown as data: a model's output or a URL may hold "[...]" or escape sequences.
    return terminal_markup(redact_secrets(text), ERROR_DISPLAY_CHARS, keep_newlines=True)
