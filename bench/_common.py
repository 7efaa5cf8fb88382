"""Shared helpers of the benchmark scripts: paths, timing statistics, tables, targets, JSON.

Every script in bench/ is run as ``python bench/NAME.py`` (so this directory is on
sys.path) and prints its figures as a table, with each target marked PASS or MISS.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO_ROOT / "bench"
TESTS_DIR = REPO_ROOT / "tests"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

for _path in (REPO_ROOT, TESTS_DIR):  # graph/, catalog/ and tests/fakes.py importable
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (p99 of 200 samples is the 198th smallest)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float, float]:
    """Least squares line: (slope, intercept, R², max relative deviation from the line)."""
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx if sxx else 0.0
    intercept = mean_y - slope * mean_x
    predicted = [intercept + slope * x for x in xs]
    ss_res = sum((y - p) ** 2 for y, p in zip(ys, predicted, strict=True))
    ss_tot = sum((y - mean_y) ** 2 for y in ys)
    r2 = 1.0 - ss_res / ss_tot if ss_tot else 1.0
    max_dev = max(abs(y - p) / p for y, p in zip(ys, predicted, strict=True) if p)
    return slope, intercept, r2, max_dev


@contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """`env` set in this process's environment (and so in any process it starts) while
    the block runs, and what was there before put back."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def machine_line() -> str:
    return f"python {platform.python_version()} on {platform.machine()}; load {load_average()}"


@dataclass
class Target:
    name: str
    figure: str
    goal: str
    ok: bool | None  # None: not measured in this run

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "MISS", None: "n/a"}[self.ok]


@dataclass
class Report:
    """Tables and targets of one benchmark run, printed with rich and dumped as JSON."""

    title: str
    tables: list[tuple[str, list[str], list[list[Any]]]] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def table(self, title: str, columns: list[str], rows: Iterable[Sequence[Any]]) -> None:
        self.tables.append((title, columns, [list(r) for r in rows]))

    def target(self, name: str, figure: str, goal: str, ok: bool | None) -> None:
        self.targets.append(Target(name, figure, goal, ok))

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def all_passed(self) -> bool:
        return all(t.ok is not False for t in self.targets)

    def print(self) -> None:
        from rich.console import Console
        from rich.table import Table

        console = Console(width=max(120, Console().width))
        console.print(f"[bold]{self.title}[/]  [dim]{machine_line()}[/]")
        for title, columns, rows in self.tables:
            table = Table(title=title, title_justify="left")
            for index, column in enumerate(columns):
                table.add_column(column, justify="left" if index == 0 else "right")
            for row in rows:
                table.add_row(*(fmt(v) for v in row))
            console.print(table)
        if self.targets:
            table = Table(title="Targets", title_justify="left")
            for column in ("target", "measured", "goal", "result"):
                table.add_column(column)
            for t in self.targets:
                colour = {"PASS": "green", "MISS": "red"}.get(t.verdict, "yellow")
                table.add_row(t.name, t.figure, t.goal, f"[{colour}]{t.verdict}[/]")
            console.print(table)
        for text in self.notes:
            console.print(f"[dim]note:[/] {text}", highlight=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "machine": machine_line(),
            "tables": [
                {"title": title, "columns": columns, "rows": rows}
                for title, columns, rows in self.tables
            ],
            "targets": [
                {"name": t.name, "measured": t.figure, "goal": t.goal, "result": t.verdict}
                for t in self.targets
            ],
            "notes": self.notes,
            "data": self.data,
        }

    def finish(self, json_path: str | None) -> int:
        self.print()
        if json_path:
            Path(json_path).write_text(json.dumps(self.to_json(), indent=1, default=str))
        return 0


def fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.3g}" if abs(value) < 0.01 else f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def human_bytes(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def dir_size(path: Path) -> int:
    path = Path(path).resolve()
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
