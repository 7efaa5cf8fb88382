"""CLI start-up time: `python -m graph.run --help` and `python -m catalog --help`.

    python bench/startup.py             # 7 runs of each command
    python bench/startup.py --runs 3

Each command runs in a fresh subprocess (wall time, median of the runs), beside the bare
interpreter (`python -c pass`) for scale. A second child runs the module's `--help` in
process and reports which heavy modules got imported, and `python -X importtime` names
the slowest imports.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from _common import REPO_ROOT, Report, median

TARGET_S = 1.0
HEAVY = (
    "langchain",
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "openai",
    "tantivy",
    "tiktoken",
    "httpx",
    "psycopg",
    "psycopg_pool",
)
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "python -m graph.run --help": ["-m", "graph.run", "--help"],
    "python -m catalog --help": ["-m", "catalog", "--help"],
}
# Runs a module's --help in this process, then lists the heavy modules it imported.
_PROBE = """
import json, runpy, sys
sys.argv = [{module!r}, "--help"]
try:
    runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
except SystemExit:
    pass
heavy = {heavy!r}
found = sorted(m for m in sys.modules if m.split(".")[0] in heavy and "." not in m)
print("@@" + json.dumps(found))
"""


def time_command(args: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=REPO_ROOT, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return times


def heavy_modules(module: str) -> list[str]:
    code = _PROBE.format(module=module, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    line = next(line for line in out.splitlines() if line.startswith("@@"))
    return json.loads(line[2:])


def parse_importtime(stderr: str) -> list[tuple[str, float, int]]:
    """(module, cumulative ms, nesting depth) for each line of -X importtime output."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        depth = (len(name) - len(name.lstrip(" "))) // 2
        rows.append((name.strip(), int(cumulative) / 1000, depth))
    return rows


def top_imports(args: list[str], top: int) -> list[tuple[str, float]]:
    err = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    outer = [(name, ms) for name, ms, depth in parse_importtime(err) if depth <= 1]
    skip = {"site", "encodings", "_frozen_importlib_external"}
    return sorted((r for r in outer if r[0] not in skip), key=lambda r: -r[1])[:top]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/startup.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="tiny run: 1 run per command")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    runs = 1 if args.smoke else args.runs

    report = Report(f"CLI start-up ({runs} runs per command, fresh subprocesses)")
    timings = {label: time_command(cmd, runs) for label, cmd in COMMANDS.items()}
    modules = {"graph.run": heavy_modules("graph.run"), "catalog": heavy_modules("catalog")}
    report.table(
        "Wall time (s)",
        ["command", "median", "min", "max", "heavy modules imported"],
        [
            [
                label,
                median(values),
                min(values),
                max(values),
                ", ".join(modules.get(label.split()[2], [])) or "none"
                if label.startswith("python -m")
                else "-",
            ]
            for label, values in timings.items()
        ],
    )
    imports: dict[str, Any] = {}
    rows = []
    for label, cmd in COMMANDS.items():
        if not label.startswith("python -m"):
            continue
        imports[label] = top_imports(cmd, 4)
        rows.append([label, "; ".join(f"{name} {ms:.0f} ms" for name, ms in imports[label])])
    report.table("Slowest imports (cumulative, python -X importtime)", ["command", "imports"], rows)
    for label in ("python -m graph.run --help", "python -m catalog --help"):
        value = median(timings[label])
        report.target(f"{label}: median", f"{value:.2f} s", f"< {TARGET_S:.1f} s", value < TARGET_S)
    for module in ("graph.run", "catalog"):
        found = modules[module]
        report.target(
            f"python -m {module} --help: heavy imports",
            ", ".join(found) or "none",
            "none of " + "/".join(("langchain", "langgraph", "openai", "tantivy", "psycopg")),
            not found,
        )
    if modules["catalog"]:
        report.note(
            f"python -m catalog --help imports {', '.join(modules['catalog'])}: "
            "catalog/__init__.py imports catalog.index (tantivy) and catalog.postgres (psycopg) "
            "eagerly, and catalog/__main__.py imports catalog.index at top level; the fix is "
            "lazy imports there (PEP 562 __getattr__ in __init__, imports inside _run in "
            "__main__), outside bench/"
        )
    report.data = {"timings_s": timings, "heavy_modules": modules, "imports": imports}
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
