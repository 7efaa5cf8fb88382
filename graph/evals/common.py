"""What the evaluation modes share: the auto-approved run context their CLI arguments
describe, and a report printed and, with --out, saved (JSON, and its table beside)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graph.context import Context


def approved_context(args: argparse.Namespace, catalog: Path) -> Context:
    """The context every run of a goal or bundle eval uses: the provider, model and tool
    mode given, the catalog scored against, and each plan approved as the model wrote it."""
    context = Context(
        provider=args.provider, model=args.model, tool_mode=args.tool_mode, catalog=str(catalog)
    )
    context.auto_approve = True
    return context


def show_and_save(data: dict[str, Any], table: str, out: Path | None) -> None:
    """Print a report's table; with --out, write the report as JSON and the table beside."""
    print(table)
    if out:
        out.write_text(json.dumps(data, indent=2) + "\n")
        out.with_suffix(".md").write_text(table + "\n")
