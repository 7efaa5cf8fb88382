"""What the evaluation modes share: the auto-approved run context their CLI arguments
describe, prepared as the CLI prepares a run's, and a report printed and, with --out,
saved (JSON, and its table beside)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graph.context import Context
from graph.evals.inputs import EvalInputError, report_paths, write_atomically
from graph.providers.models import resolved_context
from graph.runs.session import open_run_catalog


def approved_context(args: argparse.Namespace, catalog: Path) -> Context:
    """The context every run of a goal or bundle eval uses: the provider, model and tool
    mode given, the catalog scored against, and each plan approved as the model wrote it."""
    context = Context(
        provider=args.provider, model=args.model, tool_mode=args.tool_mode, catalog=str(catalog)
    )
    context.auto_approve = True
    return context


def prepared(context: Context) -> Context:
    """`context` as its runs record it: prepared as the CLI's runs are (the catalog path
    absolute, the catalog opened, so a bad one fails before the first goal), with the
    provider and model resolved as the model session resolves them, since a rerun is
    compared with the saved runs by these (graph/evals/reruns.py)."""
    return open_run_catalog(resolved_context(context))


def show_and_save(data: dict[str, Any], table: str, out: Path | None) -> None:
    """Print a report's table; with --out, write the report as JSON and the table beside
    (each whole or not at all: main checked --out before the first goal, but a disk can
    still fill up)."""
    print(table)
    if out:
        json_path, table_path = report_paths(out)
        try:
            write_atomically(json_path, json.dumps(data, indent=2) + "\n")
            write_atomically(table_path, table + "\n")
        except OSError as error:
            raise EvalInputError(
                f"--out {out}: cannot write the report: {error.strerror or error}; the runs "
                "are saved, so a rerun with the same --label writes it without running them"
            ) from None
