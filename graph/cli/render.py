"""How the CLI shows runs: the plan, its estimate, each step as it finishes, the checked
recommendation, the list of runs, a run's history, and the one line an expected error gets.

Plan text, answers, product titles, requests and thread ids come from the model, the
catalog or the user, so they are printed escaped: rich would read "[...]" in them as markup.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.status import Status
from rich.table import Table
from rich.text import Text

from catalog.models import PRICE_CURRENCY, money
from catalog.terminal import (
    ERROR_DISPLAY_CHARS,
    clean_text,
    terminal_markup,
    terminal_text,
)
from graph.cost import CostEstimate
from graph.prompts import describe_filters, format_money
from graph.runs.approval import EditReview
from graph.runs.draft import PlanDraft
from graph.runs.session import UsageTotals
from graph.schemas import FollowUp, Outcome, Plan, PlanChange, StatedLimits, StepResult
from graph.shaping.edits import describe_change
from graph.state import plan_that_runs


class RunView:
    """Everything the CLI shows while a run streams (rich on a terminal, quiet for --json).
    It is the session's observer: the session calls it as nodes finish."""

    def __init__(self, console: Console, thread_id: str, *, quiet: bool) -> None:
        # What the run shows: nothing for --json (a console that prints nothing); why an
        # edit cannot run is shown on `errors` either way.
        self.console = Console(quiet=True) if quiet else console
        self.errors = console
        self.thread_id = thread_id
        self.quiet = quiet
        self.thread_shown = False
        self.plan_shown = False
        self.step_actions: list[str] = []
        self.steps_done = 0
        self._spinner: Status | None = None
        # On a terminal the plan is shown as the planner writes it (its call streams);
        # piped output and --json get the finished plan from a plain call.
        self.wants_plan_draft = not quiet and console.is_terminal

    # -- the session's observer hooks

    def stream_started(self, values: dict[str, Any]) -> None:
        if not self.thread_shown:
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
        for number, step in enumerate(draft.steps, start=1):
            query = step.get("query")
            # The model writes a search step's query only: its action is "Search <query>".
            action = step.get("action") or (f"Search {query}" if query else "")
            lines.append(f"\n  {number}. ").append(Text(str(action)))
            if query:
                lines.append("  ").append(Text(repr(str(query)), style="dim"))
        self._spinner.update(lines)

    def node_finished(self, node: str, change: dict[str, Any]) -> None:
        if node == "planner" and change.get("plan") is not None:
            if self._spinner is not None:  # the draft under it gives way to the full table
                self._spinner.update(Text("Planned."))
            limits, follow_up = change.get("stated_limits"), change.get("follow_up")
            self.plan(change["plan"], limits=limits, follow_up=follow_up)
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
        self.console.print(
            f"Resuming thread [bold]{terminal_markup(self.thread_id)}[/] ({status})."
        )

    def plan(
        self,
        plan: Plan,
        *,
        edited: bool = False,
        limits: StatedLimits | None = None,
        follow_up: FollowUp | None = None,
    ) -> None:
        self.step_actions = [step.action for step in plan.steps]
        self.plan_shown = True
        if plan.not_shopping:
            self.console.print(
                Text("Not a shopping request: ", style="bold") + terminal_text(plan.goal)
            )
            return
        budget = format_money(plan.budget)
        if plan.budget is None and limits is not None and limits.foreign:
            # Shown as the shopper wrote it; never converted (no rates offline).
            stated = ", ".join(f.shown for f in limits.foreign)
            budget = f"{stated} as stated, not applied: prices are in {PRICE_CURRENCY}"
        kind = "Fallback plan" if plan.built_in_code else "Plan"
        label = f"{kind} (your edit): " if edited else f"{kind}: "
        title = Text(label) + terminal_text(plan.goal) + Text(f"  (budget {budget})")
        table = Table(title=title, title_justify="left")
        carried = limits.carried if limits is not None else ()
        table.add_column("#", justify="right")
        table.add_column("kind")
        table.add_column("action")
        table.add_column("query and filters")
        for step in plan.steps:
            detail = (
                f"{step.query!r} ({describe_filters(step, mark_filled=True, carried=carried)})"
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
        for note in follow_up.notes if follow_up is not None else ():
            self.console.print(Text("from the previous run: ", style="cyan") + terminal_text(note))
        if plan.pick == "one" and len(plan.search_steps) > 1:
            self.console.print(
                'Recommends the single best of the kinds searched (pick = "one"; edit the '
                "plan for one of each)"
            )
        if plan.built_in_code:
            self.console.print(
                terminal_text(f"! built in code: {plan.built_in_code}", style="bold yellow")
            )

    def show_estimate(self, estimate: CostEstimate) -> None:
        usd = f"${estimate.usd:.4f}" if estimate.price_known else "unknown price"
        self.console.print(
            f"Estimate: {estimate.llm_calls} more LLM calls, ~{estimate.input_tokens:,} input + "
            f"~{estimate.output_tokens:,} output tokens, {usd} "
            f"[dim]({terminal_markup(estimate.model)}; {terminal_markup(estimate.tokenizer)})[/]"
        )

    def plan_warnings(self, warnings: tuple[str, ...] | list[str]) -> None:
        """Checks of the plan against the request, shown before the plan is approved."""
        for warning in warnings:
            self.console.print(terminal_text(f"! plan: {warning}", style="bold yellow"))

    def edit_review(self, review: EditReview) -> None:
        """A person's edit before they approve it: the edited plan, what it changes from
        the model's plan, its estimate and its code checks."""
        if review.edit is None:
            self.plan(review.plan)
            self.console.print("Your edit matches the model's plan.")
        else:
            self.plan(review.plan, edited=True)
            self.plan_changes(review.edit.changes)
        self.show_estimate(review.estimate)
        self.plan_warnings(review.warnings)

    def plan_changes(self, changes: list[PlanChange]) -> None:
        self.console.print("Changes from the model's plan:")
        for change in changes:
            self.console.print(Text("  ") + terminal_text(describe_change(change)))

    def revision(self, revision: dict[str, Any]) -> None:
        """The plan changed in words: its version, the words, and what they changed."""
        self.console.print(
            Text(f"Plan {revision['version']}, changed as asked: ", style="bold")
            + terminal_text(repr(revision["words"]))
        )
        for line in revision["changes"] or ["(nothing changed)"]:
            self.console.print(Text("  ") + terminal_text(line))

    def edit_problems(self, problems: list[str]) -> None:
        """Why an edited plan cannot run (it is never sent to the graph)."""
        self.errors.print("[bold red]The edited plan cannot run:[/]")
        for problem in problems:
            self.errors.print(Text("  - ") + terminal_text(problem, ERROR_DISPLAY_CHARS))

    def edit_refused(self, error: str) -> None:
        """The approval node refused the edit sent last; the run paused here again."""
        self.errors.print(terminal_text(f"! {error}", ERROR_DISPLAY_CHARS, style="bold red"))

    def step(self, result: StepResult) -> None:
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
                + Text(f"  {money(product.price)}")
            )
        if result.answer:
            self.console.print(Text("    ") + terminal_text(result.answer, style="italic"))
        for text in ([result.error] if result.error else []) + result.warnings:
            self.console.print(Text("    ") + terminal_text(f"! {text}", style="yellow"))

    def rejected(self) -> None:
        self.console.print("Plan rejected; nothing was run.")

    def outcome(
        self,
        outcome: Outcome | None,
        totals: UsageTotals,
        estimate: CostEstimate | None = None,
    ) -> None:
        if outcome is None:
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
                terminal_text(pick.id, 80), terminal_text(pick.title), money(pick.price), rating
            )
        self.console.print(table)
        self.console.print(budget_line(outcome))
        for pick in outcome.picks:
            # Why each pick, from catalog figures (code's reason, never the model's prose).
            reason = outcome.reasons.get(pick.id)
            if reason:
                self.console.print(terminal_text(f"why {pick.id}: {reason}", style="dim"))
        for warning in outcome.warnings:
            self.console.print(terminal_text(f"! {warning}", style="yellow"))
        self.usage(totals, estimate)

    def usage(self, totals: UsageTotals, estimate: CostEstimate | None) -> None:
        tokens = f"{totals.input_tokens:,} input + {totals.output_tokens:,} output"
        if totals.unknown_usage_calls:  # said once, whatever the number of such calls
            tokens = (
                "tokens unknown (the server reported no usable token counts for "
                f"{totals.unknown_usage_calls} of them)"
            )
        line = f"Usage (planner included): {totals.llm_calls} LLM calls, {tokens}"
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
    total = f"Total {money(outcome.total_price)}"
    if not outcome.picks:
        return f"{total} [yellow](nothing could be recommended)[/]"
    if outcome.missing:
        # A part of what was asked for is never "within budget".
        over = outcome.budget is not None and outcome.total_price > outcome.budget
        budget = f" of {money(outcome.budget)} budget" if outcome.budget is not None else ""
        colour, note = ("red", "; over budget") if over else ("yellow", "")
        count = f"{len(outcome.missing)} item(s) missing, named below"
        return f"{total}{budget} [{colour}](incomplete: {count}{note})[/]"
    if outcome.dropped_limit is not None:
        limit = money(outcome.dropped_limit)
        relation = "under" if outcome.total_price <= outcome.dropped_limit else "over"
        colour = "yellow" if relation == "under" else "red"
        return (
            f"{total} [{colour}]({relation} the {limit} limit the request states, which the "
            "plan dropped: check the picks)[/]"
        )
    if outcome.budget is None and outcome.unapplied_limits:
        stated = ", ".join(outcome.unapplied_limits)
        return (
            f"{total} [yellow](the request's limit {terminal_markup(stated)} is in another "
            f"currency than the catalog's {PRICE_CURRENCY}: not applied)[/]"
        )
    if outcome.budget is None:
        return f"{total} (no budget stated)"
    budget = f" of {money(outcome.budget)} budget"
    if outcome.within_budget:
        return f"{total}{budget} [green]within budget[/]"
    if outcome.within_budget is None:
        # One of each item, where the request asks for several (the warnings say which).
        return f"{total}{budget} [yellow](one of each item: not compared, see below)[/]"
    return f"{total}{budget} [red]over budget[/]"
