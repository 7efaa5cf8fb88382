"""Command line: `python -m graph.run "a birthday gift for someone who likes photography"`.

Thin over the session layer (graph/session.py): each command is one session call, and
graph/render.py shows the result. Heavy imports happen after argument parsing, so --help
is fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from graph.providers import PROVIDERS

if TYPE_CHECKING:
    from rich.console import Console

    from graph.render import RunView
    from graph.session import ApprovalRequest, Approver, RunResult


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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from dotenv import load_dotenv

    load_dotenv()  # .env configures providers; real environment variables win
    from catalog.terminal import terminal_console

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

    def approve(request: ApprovalRequest) -> bool | None:
        if not view.plan_shown:
            view.plan(request.plan)
        view.show_estimate(request.estimate)
        view.plan_warnings(request.warnings)
        if args.yes:
            return True
        resume = f"--resume {terminal_markup(view.thread_id, 80)} --yes"
        if not sys.stdin.isatty():
            console.print(
                "[bold red]error:[/] the plan needs approval, but there is no terminal to ask: "
                f"pass --yes to approve it (the run is saved; {resume} continues it)"
            )
            return None
        from rich.prompt import Confirm

        try:
            return Confirm.ask("Run this plan?", default=False, console=console)
        except EOFError:  # Ctrl-D: no answer; the run stays paused at its plan
            console.print(f"\nno answer given; the run is saved ({resume} continues it)")
            return None

    return approve


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

    values = result.values
    return {
        "thread_id": result.thread_id,
        "request": values.get("request"),
        "approval": values.get("approval"),
        "plan": dump(values.get("plan")),
        "plan_warnings": list(values.get("plan_warnings") or []),
        "estimate": dump(result.estimate),
        "planner_usage": dump(values.get("planner_usage")),
        "usage": asdict(result.totals),
        "step_results": [dump(r) for r in values.get("step_results", [])],
        "outcome": dump(values.get("outcome")),
    }


if __name__ == "__main__":
    sys.exit(main())
