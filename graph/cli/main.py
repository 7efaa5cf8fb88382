"""Command line: `python -m graph.run "a birthday gift for someone who likes photography"`.

Thin over the session layer (graph/runs/session.py): graph/cli/commands.py maps each
command to one session call, and graph/cli/render.py shows the result. The graph, the
session layer and rich are imported after argument parsing, so --help is fast.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from catalog.exits import (
    EXIT_BAD_INPUT,
    EXIT_BUG,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    StdoutUnwritable,
    stdout_refusals_in_one_line,
)
from catalog.version import add_version_option
from graph.cli.arguments import conflict
from graph.cli.exits import EXIT_CODES_HELP, print_json
from graph.providers.registry import PROVIDERS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        # The console script and `python -m graph.run` are the same CLI.
        prog="shopping-planner"
        if sys.argv[0].endswith("shopping-planner")
        else "python -m graph.run",
        description="Plan a shopping request, approve the plan, then run it step by step.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("request", nargs="?", help="what you want to buy, in your own words")
    parser.add_argument(
        "--provider",
        choices=list(PROVIDERS),
        help="the LLM provider (default: the first configured, else local)",
    )
    parser.add_argument("--model", help="model or deployment name (provider default if unset)")
    parser.add_argument("--catalog", help="catalog file or index directory (default: shipped)")
    parser.add_argument(
        "--tool-mode",
        choices=["direct", "llm"],
        default=None,
        help="direct (default): searches run the plan's query; llm: the model picks them",
    )
    parser.add_argument("--limit", type=int, default=None, help="products per search (1-50)")
    parser.add_argument("--thread", help="name this run's thread (default: a new id)")
    parser.add_argument("--yes", "-y", action="store_true", help="approve the plan without asking")
    parser.add_argument(
        "--revise",
        action="append",
        metavar="WORDS",
        help='change the plan in words before it is asked ("cheaper, and add a tripod"); '
        "each --revise is one revision, in turn",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the run as one JSON object on stdout, also when it fails or waits",
    )
    parser.add_argument("--list", action="store_true", help="list recent runs")
    parser.add_argument("--history", metavar="THREAD", help="show a run's checkpoints in order")
    parser.add_argument("--resume", metavar="THREAD", help="continue an unfinished run")
    parser.add_argument(
        "--follow-up",
        metavar="THREAD",
        help='follow up a finished run with the request given ("a cheaper one"); '
        "THREAD 'last' is the most recent finished run",
    )
    parser.add_argument(
        "--stop-server", action="store_true", help="stop the warm local model server now"
    )
    parser.add_argument(
        "--other-catalog",
        action="store_true",
        help="with --resume: continue on the catalog given now, though the run started on another",
    )
    parser.add_argument("--db", help="checkpoint database path (default: per-user data dir)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    add_version_option(parser)
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


@stdout_refusals_in_one_line  # a run cut there resumes from its last checkpoint
def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if sys.stdout is None:  # started with stdout closed (`>&-`): nothing could be shown
        sys.stderr.write("error: stdout is closed; give the command one (>/dev/null drops it)\n")
        return EXIT_FAILED
    problem = conflict(args)
    if problem is not None:  # before any work: nothing runs, nothing is saved
        sys.stderr.write(f"error: {problem}\n")
        if args.json:  # the error document still: a script reads stdout, not stderr
            refused = argparse.ArgumentError(None, problem)
            _print_error_json(args, "failed", refused, problem, EXIT_BAD_INPUT)
        return EXIT_BAD_INPUT
    # argv None: the real command line, so this process is the CLI (tests pass a list).
    with _collector_paused(freeze=argv is None):
        # Imported here for start-up time (bench/startup.py): --help needs only the parser,
        # while these bring LangGraph, LangChain, OpenAI and rich (~1 s).
        from catalog.paths import keep_data_private
        from catalog.terminal import command_line_text, survive_any_locale, terminal_console
        from graph.cli import commands, errors
        from graph.context import load_env_file
        from graph.providers.deadline import stop_calls

        if args.request or args.resume:
            import langchain_openai  # noqa: F401  (the chat model, made when the run starts)

    # Any locale (LC_ALL=C, UTF-8 mode off): arguments read as UTF-8, output never raises.
    survive_any_locale()
    for name, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, name, command_line_text(value))
    console = terminal_console(stderr=args.json)
    restore = _stop_llm_calls_on_ctrl_c(stop_calls)
    try:
        # .env (of the working directory only) configures providers; real variables win.
        env_file = load_env_file()
        keep_data_private()  # runs, logs and caches: 0700/0600 from the first write
        if args.debug:
            read = f"settings read from {env_file}" if env_file else f"no .env in {Path.cwd()}"
            sys.stderr.write(f"debug: {read}\n")
        return commands.dispatch(args, console)
    except KeyboardInterrupt as interrupt:
        console.print(errors.interrupted_text(interrupt), soft_wrap=True)
        if args.json:
            _print_error_json(args, "interrupted", interrupt, "interrupted", EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except (BrokenPipeError, StdoutUnwritable):
        raise  # stdout is gone: no document can be shown (main says so on stderr)
    except Exception as error:
        # Bad input, a runtime failure or a bug, by the error's type; --debug changes what
        # is shown, never the code.
        code = errors.exit_code(error)
        if args.debug or code == EXIT_BUG:
            # A traceback carries the provider's error body and URLs: masked like a line.
            sys.stderr.write(errors.traceback_text(error, full=args.debug))
            message = errors.bug_message(error)
        else:
            message = errors.error_message(error, args.db)
            shown = errors.error_text(error, args.db)
            console.print(f"[bold red]error:[/] {shown}", soft_wrap=True)
        if args.json:
            _print_error_json(args, "failed", error, message, code)
        return code
    finally:
        restore()


def _print_error_json(
    args: argparse.Namespace,
    status: Literal["failed", "interrupted"],
    error: BaseException,
    message: str,
    code: int,
) -> None:
    """The --json document of a run an error or Ctrl-C stopped, on stdout."""
    from graph.cli.documents import ErrorDocument, StoppingError
    from graph.cli.errors import run_of

    thread_id, resumable = run_of(error)
    stopped = StoppingError(type=type(error).__name__, message=message, resumable=resumable)
    thread_id = thread_id or args.resume or args.thread
    document = ErrorDocument(status=status, exit_code=code, thread_id=thread_id, error=stopped)
    print_json(document.model_dump(mode="json"))


def _stop_llm_calls_on_ctrl_c(stop_calls: Callable[[], None]) -> Callable[[], None]:
    """Make Ctrl-C stop the LLM call in flight (`stop_calls`) as well as the run: the call
    may be waiting in a worker thread that the main thread's KeyboardInterrupt would
    otherwise wait for. Returns what puts the previous handler back."""
    previous = signal.getsignal(signal.SIGINT)
    if (
        previous is not signal.default_int_handler
        or threading.current_thread() is not threading.main_thread()
    ):
        return lambda: None  # Ctrl-C ignored, or handled by someone else: leave it

    def interrupted(signum: int, frame: Any) -> None:
        stop_calls()
        raise KeyboardInterrupt

    def restore() -> None:
        signal.signal(signal.SIGINT, previous)

    signal.signal(signal.SIGINT, interrupted)
    return restore


if __name__ == "__main__":
    sys.exit(main())
