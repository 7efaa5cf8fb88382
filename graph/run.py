"""Command line: `python -m graph.run "a birthday gift for someone who likes photography"`.

Thin over the session layer (graph/session.py): each command is one session call, and
graph/render.py shows the result. Heavy imports happen after argument parsing, so --help
is fast.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from graph.providers import PROVIDERS

if TYPE_CHECKING:
    from rich.console import Console

    from graph.render import RunView
    from graph.session import ApprovalDecision, ApprovalRequest, Approver, RunResult


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        # The console script and `python -m graph.run` are the same CLI.
        prog="shopping-planner"
        if sys.argv[0].endswith("shopping-planner")
        else "python -m graph.run",
        description="Plan a shopping request, approve the plan, then run it step by step.",
    )
    parser.add_argument("request", nargs="?", help="what you want to buy, in your own words")
    parser.add_argument("--provider", choices=list(PROVIDERS))
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
    parser.add_argument(
        "--stop-server", action="store_true", help="stop the warm local model server now"
    )
    parser.add_argument("--db", help="checkpoint database path (default: per-user data dir)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


@contextlib.contextmanager
def _collector_paused(freeze: bool) -> Iterator[None]:
    """Pause the cyclic garbage collector while the CLI imports LangGraph, LangChain and
    OpenAI: those imports make ~170k objects, which the collector otherwise scans again and
    again as they pile up, about 0.3 s of a 1.5 s start. With `freeze` (the process is this
    CLI) what they made, which lives as long as the process, is kept out of later
    collections too."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # argv None: the real command line, so this process is the CLI (tests pass a list).
    with _collector_paused(freeze=argv is None):
        from dotenv import load_dotenv

        from catalog.terminal import terminal_console

        # What dispatch and a run need, imported here once with the collector paused.
        from graph import builder, checkpoint, render, session, threads, warm_server  # noqa: F401

        if args.request or args.resume:
            import langchain_openai  # noqa: F401  (the chat model, made when the run starts)

    load_dotenv()  # .env configures providers; real environment variables win

    console = terminal_console(stderr=args.json)
    restore = _stop_llm_calls_on_ctrl_c()
    try:
        return dispatch(args, console)
    except KeyboardInterrupt as interrupt:
        from graph.render import interrupted_text

        console.print(interrupted_text(interrupt), soft_wrap=True)
        return 130
    except Exception as error:
        from graph.render import error_text, is_expected_error, traceback_text

        if args.debug or not is_expected_error(error):
            # A traceback carries the provider's error body and URLs: masked like a line.
            sys.stderr.write(traceback_text(error, full=args.debug))
            return 1
        console.print(f"[bold red]error:[/] {error_text(error, args.db)}", soft_wrap=True)
        return 2
    finally:
        restore()


def _stop_llm_calls_on_ctrl_c() -> Callable[[], None]:
    """Make Ctrl-C stop the LLM call in flight as well as the run: the call may be
    waiting in a worker thread that the main thread's KeyboardInterrupt would otherwise
    wait for. Returns what puts the previous handler back."""
    import signal
    import threading

    previous = signal.getsignal(signal.SIGINT)
    if (
        previous is not signal.default_int_handler
        or threading.current_thread() is not threading.main_thread()
    ):
        return lambda: None  # Ctrl-C ignored, or handled by someone else: leave it

    def interrupted(signum: int, frame: Any) -> None:
        from graph.deadline import stop_calls

        stop_calls()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupted)
    return lambda: signal.signal(signal.SIGINT, previous)


def dispatch(args: argparse.Namespace, console: Console) -> int:
    from graph import render, session, warm_server
    from graph.builder import build_graph
    from graph.checkpoint import open_checkpointer
    from graph.render import RunView, print_history, print_threads
    from graph.threads import list_threads, thread_history

    if args.stop_server:
        render.print_stopped_servers(console, warm_server.stop_servers())
        return 0
    saver = open_checkpointer(args.db)
    graph = build_graph(checkpointer=saver)
    if args.list:
        print_threads(console, list_threads(graph, saver))
        render.print_model_servers(console, warm_server.running_servers())
        return 0
    if args.history:
        entries = thread_history(graph, args.history)
        if not entries:
            raise session.RunFailed(f"no run with thread id {args.history!r}; see --list")
        print_history(console, args.history, entries)
        return 0
    if args.resume:
        view = RunView(console, args.resume, quiet=args.json)
        view.resuming(session.resumable_status(graph, args.resume))
        approve = approver(args, console, view)
        result = session.resume(graph, args.resume, approve, settings=settings(args), observer=view)
        return report(args, view, result)
    if not args.request:
        console.print('[bold red]error:[/] give a request, e.g. python -m graph.run "a tent"')
        return 2
    # An explicit --thread is checked (even ""): it must be typed back with --resume.
    thread_id = session.new_thread_id() if args.thread is None else args.thread
    session.check_thread_id(thread_id)
    view = RunView(console, thread_id, quiet=args.json)
    result = session.start(
        graph,
        args.request,
        session.run_context(settings(args)),
        approver(args, console, view),
        thread_id=thread_id,
        observer=view,
    )
    return report(args, view, result)


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run settings given on the command line (None: saved or default)."""
    return {
        "provider": args.provider,
        "model": args.model,
        "tool_mode": args.tool_mode,
        "catalog": args.catalog,
        "search_limit": args.limit,
    }


def approver(args: argparse.Namespace, console: Console, view: RunView) -> Approver:
    """The session's approval callback: show the plan and estimate, then ask (or --yes)."""
    from catalog.terminal import terminal_markup

    def approve(request: ApprovalRequest) -> bool | ApprovalDecision | None:
        if not view.plan_shown:
            view.plan(request.plan)
        view.show_estimate(request.estimate)
        view.plan_warnings(request.warnings)
        if request.error:
            view.edit_refused(request.error)
        if args.yes:
            return True
        resume = f"--resume {terminal_markup(view.thread_id, 80)} --yes"
        if not sys.stdin.isatty():
            console.print(
                "[bold red]error:[/] the plan needs approval, but there is no terminal to ask: "
                f"pass --yes to approve it (the run is saved; {resume} continues it)"
            )
            return None
        try:
            return ask_approval(console, view, request)
        except EOFError:  # Ctrl-D: no answer; the run stays paused at its plan
            console.print(f"\nno answer given; the run is saved ({resume} continues it)")
            return None

    return approve


def ask_approval(console: Console, view: RunView, request: ApprovalRequest) -> ApprovalDecision:
    """Ask approve, reject or edit until the person approves or rejects. An edit is read
    back, checked and shown with its changes and estimate; an invalid one never runs."""
    from catalog.terminal import terminal_markup
    from graph.plan_edit import PlanEditError, plan_text, read_plan_text
    from graph.session import ApprovalDecision, review_edit

    current = request.plan  # what approving runs: the model's plan or the last valid edit
    text = plan_text(current)  # what the editor opens: the plan, or a failed edit to fix
    choice = ask(console, "Run this plan?", ("approve", "reject", "edit"))
    while True:
        if choice == "approve":
            return ApprovalDecision(True, None if current == request.plan else current)
        if choice == "reject":
            return ApprovalDecision(False)
        try:
            saved = edit_in_editor(text)
            plan = read_plan_text(saved, current)
        except EditorError as error:
            # The command comes from $EDITOR: shown as text, never as markup.
            console.print(f"[bold red]error:[/] {terminal_markup(str(error))}", soft_wrap=True)
        except PlanEditError as error:
            view.edit_problems(error.problems)
            text = saved
            choice = ask(console, "Edit it again or reject the plan?", ("edit", "reject"))
            continue
        else:
            if plan is None:
                console.print("No edit: the plan is unchanged.")
            else:
                current = plan
                view.edit_review(review_edit(request, plan))
            text = plan_text(current)
        choice = ask(console, "Run this plan?", ("approve", "reject", "edit"))


# Answers accepted beside each choice's name and first letter.
_SYNONYMS = {"approve": ("y", "yes"), "reject": ("n", "no")}


def ask(console: Console, question: str, choices: tuple[str, ...]) -> str:
    """Ask until the answer names one of `choices` (or its first letter); an empty
    answer asks again, so Enter alone never runs nor discards a plan. EOFError on Ctrl-D."""
    from rich.text import Text

    options = ", ".join(f"[{choice[0]}]{choice[1:]}" for choice in choices)
    prompt = Text(f"{question} {options}: ")  # Text: the brackets are not rich markup
    while True:
        answer = console.input(prompt).strip().lower()
        for choice in choices:
            if answer in (choice, choice[0], *_SYNONYMS.get(choice, ())):
                return choice
        console.print(f"Answer {' or '.join(choices)}.")


class EditorError(RuntimeError):
    """The editor could not be started or did not save the plan."""


MAX_EDIT_CHARS = 1_000_000  # far above any valid plan (its fields are capped)


def editor_command() -> list[str] | None:
    """$VISUAL, then $EDITOR (split like a shell would), then nano or vi if installed."""
    import os
    import shlex
    import shutil

    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                return shlex.split(value)
            except ValueError as error:
                raise EditorError(f"${name} cannot be read as a command: {error}") from None
    for fallback in ("nano", "vi"):
        path = shutil.which(fallback)
        if path:
            return [path]
    return None


def edit_in_editor(text: str) -> str:
    """Open `text` in the person's editor in a private temporary file; return what they
    saved. EditorError when no editor can run or it exits with an error."""
    import os
    import subprocess
    import tempfile

    command = editor_command()
    if not command:
        raise EditorError("no editor found: set $VISUAL or $EDITOR (e.g. export EDITOR=nano)")
    handle, path = tempfile.mkstemp(prefix="shopping-plan-", suffix=".toml")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            done = subprocess.run([*command, path], check=False)
        except OSError as error:
            raise EditorError(
                f"cannot start the editor {command[0]!r} ({error.strerror}): "
                "set $VISUAL or $EDITOR to one that is installed"
            ) from None
        if done.returncode != 0:
            raise EditorError(f"the editor exited with status {done.returncode}; no edit made")
        with open(path, encoding="utf-8", errors="replace") as file:
            saved = file.read(MAX_EDIT_CHARS + 1)
        if len(saved) > MAX_EDIT_CHARS:
            raise EditorError(f"the saved file is over {MAX_EDIT_CHARS:,} characters; no edit made")
        return saved
    finally:
        os.unlink(path)


def report(args: argparse.Namespace, view: RunView, result: RunResult) -> int:
    if result.status == "paused":
        return 2
    values = result.values
    if args.json:
        print(json.dumps(json_report(result), indent=2))
    if result.status == "rejected":
        view.rejected()
        return 0
    view.outcome(values.get("outcome"), result.totals, result.estimate)
    return 0


def json_report(result: RunResult) -> dict[str, Any]:
    def dump(value: Any) -> Any:
        return value.model_dump(mode="json") if hasattr(value, "model_dump") else value

    from graph.plan_edit import describe_change, plan_that_runs

    values = result.values
    edit = values.get("plan_edit")
    return {
        "thread_id": result.thread_id,
        "request": values.get("request"),
        "approval": values.get("approval"),
        # The plan that ran (a person's edit, if any) and the plan the model wrote.
        "plan": dump(plan_that_runs(values)),
        "model_plan": dump(values.get("plan")),
        "plan_edited": edit is not None,
        "plan_changes": [
            {**dump(change), "description": describe_change(change)}
            for change in (edit.changes if edit is not None else [])
        ],
        "plan_warnings": list(edit.warnings if edit else values.get("plan_warnings") or []),
        "estimate": dump(result.estimate),
        "planner_usage": dump(values.get("planner_usage")),
        "usage": asdict(result.totals),
        "step_results": [dump(r) for r in values.get("step_results", [])],
        "outcome": dump(values.get("outcome")),
    }


if __name__ == "__main__":
    sys.exit(main())
