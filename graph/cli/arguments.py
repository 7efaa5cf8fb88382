"""Arguments that cannot be combined: refused with one line before any work, since the
command that runs would otherwise ignore the rest without a word (`--resume T 'a tent'
--thread X` resumed T and dropped the request and the thread)."""

from __future__ import annotations

import argparse

# What a command line asks for; exactly one at a time.
_COMMANDS = (
    ("request", "a request"),
    ("list", "--list"),
    ("history", "--history"),
    ("resume", "--resume"),
    ("stop_server", "--stop-server"),
)
# Settings of a run, meaningless to the commands that start none.
_RUN_SETTINGS = (
    ("provider", "--provider"),
    ("model", "--model"),
    ("catalog", "--catalog"),
    ("tool_mode", "--tool-mode"),
    ("limit", "--limit"),
    ("yes", "--yes"),
    ("revise", "--revise"),
)


def _given(args: argparse.Namespace, name: str) -> bool:
    value = getattr(args, name)
    # A request or a thread given as "" is given (and checked later), a False flag is not.
    return value is not None and value is not False


def conflict(args: argparse.Namespace) -> str | None:
    """The one line saying which given arguments cannot go together (or that none asks
    for anything), or None."""
    commands = [flag for name, flag in _COMMANDS if _given(args, name)]
    if len(commands) > 1:
        return (
            f"{' and '.join(commands)} cannot be combined: give one of a request, --list, "
            "--history THREAD, --resume THREAD or --stop-server"
        )
    command = commands[0] if commands else "a request"
    if args.thread is not None and command != "a request":
        hint = " (the thread resumed is the one given to --resume)" if args.resume else ""
        return f"--thread names a new run and cannot be combined with {command}{hint}"
    if args.follow_up is not None and command != "a request":
        return f"--follow-up THREAD goes with a follow-up request, not with {command}"
    if args.follow_up is not None and args.request is None:
        return (
            '--follow-up THREAD needs the follow-up request, e.g. --follow-up last "a cheaper one"'
        )
    if args.other_catalog and command != "--resume":
        return "--other-catalog goes with --resume THREAD only"
    if not commands:
        return 'give a request, e.g. python -m graph.run "a tent"'
    if command in ("--list", "--history", "--stop-server"):
        ignored = [flag for name, flag in _RUN_SETTINGS if _given(args, name)]
        if command == "--stop-server" and args.json:
            ignored.append("--json")
        if ignored:
            return f"{', '.join(ignored)} would be ignored by {command}: it starts no run"
    return None
