"""What a command prints when it is done: the run's end (or its JSON report), the list of
runs, a run's history, and the warm model servers.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from catalog import money
from catalog.exits import EXIT_OK
from catalog.terminal import terminal_text
from graph.cli.documents import ListedChange, ListedRevision, RunDocument, RunEnd, printed
from graph.cli.exits import EXIT_AWAITING_APPROVAL, print_json
from graph.cli.render import RunView
from graph.runs.follow_ups import ChainLink, in_chain_order
from graph.runs.session import RunResult
from graph.runs.threads import HistoryEntry, ThreadSummary
from graph.schemas import PlanChange
from graph.shaping.edits import describe_change
from graph.state import plan_that_runs
from localmodel.warm import ServerRecord, StopReport


def report(args: argparse.Namespace, view: RunView, result: RunResult) -> int:
    if args.json:  # a paused run's too: a script can show its plan before --resume --yes
        print_json(json_report(result))
    if result.status == "paused":
        return EXIT_AWAITING_APPROVAL
    if result.status == "rejected":
        view.rejected()
        return EXIT_OK
    view.outcome(result.values.get("outcome"), result.totals, result.estimate)
    return EXIT_OK


def json_report(result: RunResult) -> dict[str, Any]:
    """The --json document of a run that ran, was rejected or awaits approval
    (docs/scripting.md); graph.cli.documents.ErrorDocument is the one of a run that failed."""
    status: RunEnd = "awaiting approval" if result.status == "paused" else result.status
    values = result.values
    edit = values.get("plan_edit")
    document = RunDocument(
        status=status,
        exit_code=EXIT_AWAITING_APPROVAL if status == "awaiting approval" else EXIT_OK,
        thread_id=result.thread_id,
        resume=f"--resume {result.thread_id} --yes" if status == "awaiting approval" else None,
        request=values.get("request"),
        approval=values.get("approval"),
        plan=printed(plan_that_runs(values)),
        model_plan=printed(values.get("plan")),
        plan_edited=edit is not None,
        plan_changes=[_listed(change) for change in (edit.changes if edit is not None else [])],
        plan_warnings=list(edit.warnings if edit else values.get("plan_warnings") or []),
        revisions=[
            ListedRevision(
                version=version,
                before=printed(revision.before),
                words=revision.words,
                changes=[_listed(change) for change in revision.changes],
            )
            for version, revision in enumerate(values.get("revisions") or [], start=2)
        ],
        estimate=result.estimate,
        planner_usage=values.get("planner_usage"),
        usage=result.totals,
        step_results=values.get("step_results", []),
        outcome=values.get("outcome"),
        follow_up_of=values.get("follow_up_of"),
        follow_up=values.get("follow_up"),
    )
    return document.model_dump(mode="json")


def _listed(change: PlanChange) -> ListedChange:
    """A change with the line the approval and --history show for it."""
    return ListedChange(**change.model_dump(), description=describe_change(change))


# Room the run list's other columns need beside the thread ids (borders and padding of 5
# columns, then ~8 characters each); narrower, each run gets lines of its own instead.
_OTHER_COLUMNS_WIDTH = 16 + 4 * 8


def print_threads(console: Console, threads: list[ThreadSummary]) -> None:
    """The recent runs. A thread id is never cut (it is typed back into --resume): in the
    table its column keeps its full width and the others wrap; where even that does not
    fit, each run is shown as its id on a line of its own, then its details."""
    if not threads:
        console.print("No runs yet.")
        return
    # Each follow-up under the run it follows, its request indented by its depth.
    placed = in_chain_order(threads)
    threads = [item for _, item in placed]
    depths = [depth for depth, _ in placed]
    ids = [terminal_text(item.thread_id) for item in threads]
    widest = max(len(thread_id) for thread_id in ids)
    if widest + _OTHER_COLUMNS_WIDTH <= console.width:
        table = Table(title="Recent runs")
        table.add_column("thread", no_wrap=True, min_width=widest)
        for column in ("status", "steps", "when", "request"):
            table.add_column(column)
        for thread_id, item, depth in zip(ids, threads, depths, strict=True):
            table.add_row(thread_id, item.status, _steps(item), _when(item), _request(item, depth))
        console.print(table)
    else:
        console.print("Recent runs", style="italic")
        for thread_id, item, depth in zip(ids, threads, depths, strict=True):
            # soft_wrap: the terminal wraps a long id, so a copy of it is one line again.
            console.print(thread_id, style="bold", soft_wrap=True)
            details = f"  {item.status}, {_steps(item)} steps, {_when(item) or '-'}: "
            console.print(Text(details, style="dim") + _request(item, depth))
    for item in threads:
        if item.status in ("unreadable", "newer version") and item.error:
            console.print(terminal_text(f"! {item.error}", style="yellow"))
    if any(item.status == "stopped" for item in threads):
        console.print(
            "stopped: its process ended before the run did; --resume THREAD --yes continues it",
            style="dim",
        )


def _steps(item: ThreadSummary) -> str:
    return f"{item.steps_done}/{item.steps_total}"


def _when(item: ThreadSummary) -> str:
    return (item.updated_at or "")[:19].replace("T", " ")


def _request(item: ThreadSummary, depth: int = 0) -> Text:
    if not depth:
        return terminal_text(item.request, 60)
    # The thread id column stays the id alone (it is typed back); the request is indented.
    return Text("  " * (depth - 1) + "↳ ") + terminal_text(item.request, 60)


def print_chain(console: Console, chain: list[ChainLink]) -> None:
    """A chain of follow-ups, first request first: each request, its plan and outcome."""
    if len(chain) < 2:
        return
    console.print(Text("Follow-ups, first request first", style="bold"))
    for number, link in enumerate(chain, start=1):
        line = Text(f"{number}. ") + terminal_text(link.thread_id, 80) + Text(": ")
        console.print(line + terminal_text(link.request, 120) + Text(f" ({link.status})"))
        searched = ", ".join(repr(q) for q in link.queries) or "nothing"
        console.print(Text("   plan: ") + terminal_text(f"{link.goal} (searched {searched})"))
        for note in link.carried_over:
            console.print(Text("   from the previous run: ") + terminal_text(note))
        if link.total is not None:
            budget = f" of {money(link.budget)} budget" if link.budget is not None else ""
            picks = "; ".join(link.picks) or "nothing recommended"
            outcome = f"{picks} (total {money(link.total)}{budget})"
            console.print(Text("   outcome: ") + terminal_text(outcome))


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def print_model_servers(console: Console, records: list[ServerRecord]) -> None:
    """One status line per warm local model server (shown by --list): "up" only for one
    whose process is alive and answers as ours; a stale record is counted, never shown up."""
    running = [r.server for r in records if r.running and r.server is not None]
    stale = sum(1 for r in records if not r.running and r.server is not None)
    if not running:
        note = f" ({_stale_records(stale)}; --stop-server removes it)" if stale else ""
        console.print(f"[dim]local model server: not running{note}[/]")
    for server in running:
        line = Text("local model server: ", style="dim")
        line.append(server.model_alias, style="bold")
        line.append(
            f" up (pid {server.pid}, 127.0.0.1:{server.port}), stops after "
            f"{_duration(server.keep_alive_s)} idle; --stop-server stops it now",
            style="dim",
        )
        console.print(line)


def _stale_records(count: int) -> str:
    return "a stale record" if count == 1 else f"{count} stale records"


def print_stopped_servers(console: Console, stopped: StopReport) -> None:
    """What --stop-server did; saying "Stopped" only of a server that was running."""
    for server in stopped.stopped:
        console.print(
            Text(f"Stopped the local model server {server.model_alias} (pid {server.pid}).")
        )
    if not stopped.stopped:
        removed = f" (removed {_stale_records(len(stopped.stale))})" if stopped.stale else ""
        console.print(f"No local model server was running{removed}.")


def record_problems(records: list[ServerRecord]) -> str | None:
    """The error line of --list when a file in the servers folder is not a record."""
    broken = [r for r in records if r.problem]
    if not broken:
        return None
    problems = "; ".join(r.problem or "" for r in broken)
    advice = "--stop-server removes it" if all(r.removable for r in broken) else "move it away"
    return f"cannot tell whether a local model server is running: {problems} ({advice})"


def stop_problems(stopped: StopReport) -> str | None:
    """The error line of --stop-server when a file was not a record or stayed behind."""
    lines = list(stopped.left)
    if stopped.not_records:
        lines.append(
            f"removed what was not a local model server record: {'; '.join(stopped.not_records)}"
            " (a server it belonged to, if any, stops by itself once idle)"
        )
    return "; ".join(lines) or None


def print_history(console: Console, thread_id: str, entries: list[HistoryEntry]) -> None:
    table = Table(title=Text("History of ") + terminal_text(thread_id))
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
