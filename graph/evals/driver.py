"""The one eval driver the modes plug into (graph/evals/webshop.py, bundles.py, limits.py,
follow_ups.py). A mode brings what is its own: its cases, how one starts, runs and is
scored, the terminal line after it, and its report's fields and table rows. The driver
runs the cases, a failing one never ending the eval; builds the report JSON; lays out the
side-by-side tables; and prints and saves a report.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from rich.progress import Progress

from catalog.terminal import STDOUT, terminal_console, terminal_markup
from graph.context import Context
from graph.evals.inputs import EvalInputError, check_limit, report_paths, write_atomically
from graph.providers.models import resolved_context
from graph.runs.session import open_run_catalog, usage_totals


class CaseResult(Protocol):
    error: str | None


Case = TypeVar("Case")
Result = TypeVar("Result", bound=CaseResult)
Note = Callable[[str], None]  # prints why a case left its usual thread


def approved_context(args: argparse.Namespace, catalog: Path | None = None) -> Context:
    """The context the eval's runs use: the provider, model and tool mode given, the
    catalog scored against (None: the shipped one), each plan approved as written."""
    return Context(
        provider=args.provider,
        model=args.model,
        tool_mode=args.tool_mode,
        catalog=str(catalog) if catalog is not None else None,
        auto_approve=True,
    )


def prepared(context: Context, scored_on: Path | None = None) -> Context:
    """`context` as its runs record it: prepared as the CLI's runs are (the catalog path
    absolute, the catalog opened, so a bad one fails before the first goal), with the
    provider and model resolved as the model session resolves them, since a rerun is
    compared with the saved runs by these (graph/evals/reruns.py). `scored_on`: the
    catalog file the eval scores against, which a catalog file the runs use must be."""
    runs_on = Path(context.catalog) if context.catalog else None
    if scored_on and runs_on and runs_on.is_file() and not os.path.samefile(runs_on, scored_on):
        raise ValueError(f"the runs use {runs_on} but the scores would use {scored_on}")
    return open_run_catalog(resolved_context(context))


def take_usage(result: object, values: Mapping[str, Any]) -> None:
    """Set the result's fields named as usage_totals' (the CLI's own totals) from a run."""
    for name, value in asdict(usage_totals(values)).items():
        if hasattr(result, name):
            setattr(result, name, value)


def run_cases(
    cases: Sequence[Case],
    noun: str,
    start: Callable[[int, Case], Result],
    run: Callable[[Result, Case, Note], None],
    line: Callable[[Result], str],
    *,
    name: Callable[[int, Case], str] | None = None,
    limit: int | None = None,
    progress: bool = True,
) -> list[Result]:
    """Each case's result, of the first `limit` cases: `start` makes it, `run` runs the
    case and scores it there. A case that raises keeps what it got and the error (and,
    where results time their runs, the time it took). The terminal names a case `name`
    (default: noun and its id, else its number) and prints `line` after it, and any error."""
    check_limit(limit)
    cases = cases[:limit]
    results: list[Result] = []
    with Progress(console=terminal_console(), disable=not progress, transient=False) as bar:
        task = bar.add_task(f"{noun}s", total=len(cases))
        for index, case in enumerate(cases, start=1):
            case_id = str(getattr(case, "id", index))  # a case's id, else its number
            shown = name(index, case) if name else f"{noun} {terminal_markup(case_id, 40)}"
            result = start(index, case)
            bar.update(task, description=f"{noun} {index}/{len(cases)}")
            started = time.perf_counter()
            try:
                run(result, case, partial(_print_note, bar, shown))
            except Exception as error:  # one failing case must not end the evaluation
                result.error = f"{type(error).__name__}: {error}"[:500]
                if hasattr(result, "latency_s"):
                    result.latency_s = round(time.perf_counter() - started, 3)
            results.append(result)
            # The error quotes model and server text: shown as data, not markup.
            failure = f" error: {terminal_markup(result.error, 80)}" if result.error else ""
            bar.console.print(f"{shown}: {line(result)}{failure}")
            bar.advance(task)
    return results


def _print_note(bar: Progress, shown: str, note: str) -> None:
    bar.console.print(f"{shown}: {terminal_markup(note, 500)}")


@dataclass(frozen=True)
class Figure:
    """One figure of a report's summary, and its row in the side-by-side table.

    The figure is `value` of the report, or, named by it, the report's "mean", "total" or
    "count" (of results that have it set) of the result field `field` (default: `key`).
    A row shows under `title` (None: no row) the figure, out of figure `of`, with figure
    `beside` in brackets after it; or what `cell` makes of the summary."""

    key: str
    value: Literal["mean", "total", "count"] | Callable[[Any], Any]
    title: str | None = None
    field: str | None = None
    of: str | None = None
    beside: str | None = None
    cell: Callable[[Mapping[str, Any]], str] | None = None

    def of_report(self, report: EvalReport) -> Any:
        if callable(self.value):
            return self.value(report)
        return getattr(report, self.value)(self.field or self.key)

    def text(self, summary: Mapping[str, Any]) -> str:
        """The figure's cell; one an older report lacks shows as a dash."""
        if self.cell is not None:
            return self.cell(summary)
        shown = _shown(summary.get(self.key)) + (f"/{summary[self.of]}" if self.of else "")
        return shown + (f" ({_shown(summary.get(self.beside))})" if self.beside else "")


def _shown(value: Any) -> str:
    """A figure in a table cell: a float to two places, none as a dash."""
    return "–" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def usage_figures(noun: str) -> list[Figure]:
    """A run's use per case (`noun`): its LLM calls, tokens and latency; then the errors."""
    return [
        Figure("llm_calls", "mean", f"LLM calls / {noun}"),
        Figure("input_tokens", "mean", f"input tokens / {noun}"),
        Figure("output_tokens", "mean", f"output tokens / {noun}"),
        Figure("latency_s", "mean", f"latency s / {noun}"),
        Figure("errors", "count", "errors", "error"),
    ]


class EvalReport:
    """A mode's report, a dataclass of its own fields, `label` first and `results` last.
    Its JSON holds them in that order, with the summary (its `figures`) before the results."""

    label: str
    results: Sequence[Any]
    figures: ClassVar[Sequence[Figure]] = ()

    def summary(self) -> dict[str, Any]:
        return {figure.key: figure.of_report(self) for figure in self.figures}

    def to_json(self) -> dict[str, Any]:
        fields = {k: v for k, v in vars(self).items() if k != "results"}
        return {**fields, "summary": self.summary(), "results": [asdict(r) for r in self.results]}

    def mean(self, name: str, digits: int = 4) -> float:
        """The mean of a result field over the results (0 with none)."""
        return round(
            sum(float(getattr(r, name)) for r in self.results) / (len(self.results) or 1), digits
        )

    def total(self, name: str) -> int:
        return sum(getattr(r, name) for r in self.results)

    def count(self, name: str) -> int:
        """How many results have the field set (true, non-zero, non-empty)."""
        return sum(1 for r in self.results if getattr(r, name))


def table_of(figures: Iterable[Figure]) -> Callable[[Sequence[dict[str, Any]]], str]:
    """The Markdown table of reports, one column per report, so two runs compare side by
    side; a row per figure with a title."""
    rows = [figure for figure in figures if figure.title]

    def table(reports: Sequence[dict[str, Any]]) -> str:
        lines = ["| metric | " + " | ".join(r["label"] for r in reports) + " |"]
        lines.append("|---|" + "---:|" * len(reports))
        for row in rows:
            cells = " | ".join(row.text(r["summary"]) for r in reports)
            lines.append(f"| {row.title} | {cells} |")
        return "\n".join(lines)

    return table


def show_and_save(data: dict[str, Any], table: str, out: Path | None) -> None:
    """Print a report's table; with --out, write the report as JSON and the table beside
    (each whole or not at all: main checked --out before the first goal, but a disk can
    still fill up)."""
    print(table, file=STDOUT)
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
