"""What each command does: one session call (or one listing), shown through graph.cli.render."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from rich.console import Console

from catalog.paths import data_dir
from graph.builder import build_graph
from graph.cli.editor import approver
from graph.cli.render import RunView
from graph.cli.report import (
    print_chain,
    print_history,
    print_json,
    print_model_servers,
    print_stopped_servers,
    print_threads,
    record_problems,
    report,
    stop_problems,
)
from graph.runs import follow_ups, session
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import list_threads, thread_history
from localmodel import warm
from localmodel.errors import LocalModelError


def dispatch(args: argparse.Namespace, console: Console) -> int:
    if args.stop_server:
        stopped = warm.stop_servers(data_dir())
        print_stopped_servers(console, stopped)
        if problem := stop_problems(stopped):
            raise LocalModelError(problem)
        return 0
    saver = open_checkpointer(args.db)
    graph = build_graph(checkpointer=saver)
    if args.list:
        threads = list_threads(graph, saver)
        if args.json:
            print_json([asdict(thread) for thread in threads])
            return 0
        print_threads(console, threads)
        records = warm.server_records(data_dir())
        print_model_servers(console, records)
        if problem := record_problems(records):
            raise LocalModelError(problem)
        return 0
    if args.history:
        entries = thread_history(graph, args.history)
        if not entries:
            raise session.RunRefused(f"no run with thread id {args.history!r}; see --list")
        chain = follow_ups.chain_of(graph, args.history)
        if args.json:
            print_json(
                {
                    "thread_id": args.history,
                    "follow_up_of": chain[-1].follow_up_of if chain else None,
                    "chain": [asdict(link) for link in chain],
                    "history": [asdict(e) for e in entries],
                }
            )
            return 0
        print_chain(console, chain)
        print_history(console, args.history, entries)
        return 0
    if args.resume:
        view = RunView(console, args.resume, quiet=args.json)
        view.resuming(session.resumable_status(graph, args.resume))
        approve = approver(args, console, view)
        result = session.resume(
            graph,
            args.resume,
            approve,
            settings=settings(args),
            observer=view,
            other_catalog=args.other_catalog,
        )
        return report(args, view, result)
    # An explicit --thread is checked (even ""): it must be typed back with --resume.
    thread_id = session.new_thread_id() if args.thread is None else args.thread
    session.check_thread_id(thread_id)
    view = RunView(console, thread_id, quiet=args.json)
    # A follow-up's parent is checked in the session before any model or catalog work;
    # its settings (its catalog, its model) carry over like its limits, those given now win.
    result = session.start(
        graph,
        args.request,
        settings(args),
        approver(args, console, view),
        thread_id=thread_id,
        observer=view,
        follow_up_of=args.follow_up,
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
