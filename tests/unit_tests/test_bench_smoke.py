"""Each benchmark in bench/ runs at a tiny size and prints its figures.

These tests check that the scripts work, not how fast anything is: no timing is asserted
(the figures themselves come from running the scripts by hand, see bench/*.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "bench"


def run_bench(name: str, *args: str, timeout: float = 60) -> str:
    result = subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


CASSETTE = """\
interactions:
- request:
    body: '{"messages": [{"role": "system", "content": "plan it"}, {"role": "user",
      "content": "a tent"}], "model": "qwen2.5-coder-1.5b"}'
    headers: {}
    method: POST
    uri: http://127.0.0.1:9/v1/chat/completions
  response:
    body:
      string: '{"choices": [], "usage": {"prompt_tokens": 321, "completion_tokens": 45,
        "total_tokens": 366}}'
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""


def test_llm_calls_smoke(tmp_path: Path) -> None:
    (tmp_path / "tent.yaml").write_text(CASSETTE)
    out_json = tmp_path / "llm.json"
    out = run_bench(
        "llm_calls.py", "--smoke", "--cassettes", str(tmp_path), "--json", str(out_json)
    )
    for text in ("Per request", "whole-history", "direct", "Linear fit", "Targets", "tent"):
        assert text in out
    data = json.loads(out_json.read_text())
    results = data["data"]["results"]
    # Direct mode: the planner plus one call per reasoning step, searches make none.
    assert results["6"]["direct"]["calls"] == 4 and results["6"]["llm"]["calls"] == 7
    assert data["data"]["cassettes"][0]["prompt_tokens"] == 321
    assert {t["result"] for t in data["targets"]} <= {"PASS", "MISS", "n/a"}


def test_catalog_search_smoke(tmp_path: Path) -> None:
    out_json = tmp_path / "catalog.json"
    out = run_bench("catalog_search.py", "--smoke", "--json", str(out_json))
    for backend in ("linear-scan", "sqlite-fts5", "tantivy-raw", "ours"):
        assert backend in out
    assert "p99" in out and "peak RSS" in out
    data = json.loads(out_json.read_text())
    run = data["data"]["runs"][0]
    assert run["size"] == 2000 and len(run["queries"]) == 80
    assert set(run["timings"]) == {"linear-scan", "sqlite-fts5", "tantivy-raw", "ours"}


def test_graph_overhead_smoke() -> None:
    out = run_bench("graph_overhead.py", "--smoke")
    for text in ("plain loop", "MemorySaver", "SqliteSaver", "ms/step", "Targets"):
        assert text in out


def test_startup_smoke() -> None:
    out = run_bench("startup.py", "--smoke")
    for text in ("graph.run --help", "catalog --help", "heavy", "Targets"):
        assert text in out


@pytest.mark.parametrize("script", ["local_model.py", "ready.py", "runtimes.py"])
def test_local_model_bench_has_help(script: str) -> None:
    # Run by hand only (it starts the real model); here just its command line.
    assert "--model" in run_bench(script, "--help")


def test_bundle_choice_smoke(tmp_path: Path) -> None:
    out_json = tmp_path / "bundle.json"
    out = run_bench("bundle_choice.py", "--smoke", "--json", str(out_json))
    assert "every combination ms" in out and "Targets" in out
    rows = json.loads(out_json.read_text())["data"]["rows"]
    # The exact choice and trying every combination agree on the best score.
    assert [row[0] for row in rows] == [2, 3, 4] and all(row[5] is True for row in rows)


LLAMA_LOG = """\
llama_perf_context_print:        load time =    8483.23 ms
llama_perf_context_print: prompt eval time =    3777.55 ms /   237 tokens (   15.94 ms per token)
llama_perf_context_print:        eval time =    4510.39 ms /    53 runs   (   85.10 ms per token)
llama_perf_context_print:       total time =    8438.67 ms /   290 tokens
INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK
llama_perf_context_print: prompt eval time =      95.00 ms /    19 tokens (    5.00 ms per token)
llama_perf_context_print:        eval time =    1000.00 ms /    19 runs   (   52.63 ms per token)
"""


def test_the_calls_bench_reads_llama_cpp_timings_from_a_server_log() -> None:
    sys.path.insert(0, str(BENCH))
    import _calls

    calls = _calls.calls_in(LLAMA_LOG)
    assert calls == [
        _calls.Call(prompt_tokens=237, prompt_s=3.77755, generated_tokens=53, generation_s=4.51039),
        _calls.Call(prompt_tokens=19, prompt_s=0.095, generated_tokens=19, generation_s=1.0),
    ]
    # The AVX2 host's wait from the counts: 256 prompt tokens at 22/s, 72 written at 9.5/s.
    assert _calls.avx2_estimate_s(calls) == pytest.approx(256 / 22 + 72 / 9.5)
    assert "--calls" in run_bench("local_model.py", "--help")


def test_catalog_load_smoke(tmp_path: Path) -> None:
    out_json = tmp_path / "load.json"
    out = run_bench("catalog_load.py", "--smoke", "--json", str(out_json))
    assert "build s" in out and "peak RSS" in out and "Targets" in out
    (run,) = json.loads(out_json.read_text())["data"]["runs"]
    assert run["size"] == run["count"] == 2000
    assert run["seconds"] > 0 and run["peak_mb"] > run["imports_mb"] > 0


def test_the_load_bench_sees_a_step_run_twice() -> None:
    sys.path.insert(0, str(BENCH))
    import load

    tag = "[test cli-000-abcdef]"

    def call(tool: str, text: str) -> load.Call:
        return load.Call(tool, "cli-worker-0", f'[{{"content": "{text} {tag}"}}]', 0.0, 0.2)

    once = [
        call("Plan", "A camera strap"),
        call("search_products", "Step 1: Find camera straps"),
        call("search_products", "Step 2: Find lens cleaning kits"),
        call("ReasoningAnswer", "Step 3: Pick one strap and one kit"),
    ]
    counts = load.call_counts(once, tag)
    assert load.all_asked(counts) and not load.ran_twice(counts), counts
    # Step 2 asked again (a worker or replica ran it once more): counted, and seen.
    twice = load.call_counts([*once, once[2]], tag)
    assert twice["step 2"] == 2 and load.ran_twice(twice)
    # A call of the run that no step accounts for counts too; another run's calls do not.
    assert load.ran_twice(load.call_counts([*once, call("ReasoningAnswer", "Step 9")], tag))
    assert not load.ran_twice(load.call_counts([*once, *once], "[test cli-001-abcdef]"))
    assert not load.all_asked(load.call_counts(once[:3], tag))
    # The approval wait (from the checkpoint where the run paused) is not graph time.
    checkpoints = [(0.0, False), (0.3, True), (5.3, False), (5.5, False)]
    assert load.graph_seconds(checkpoints) == pytest.approx(0.5)


def test_semantic_index_smoke(tmp_path: Path) -> None:
    out_json = tmp_path / "semantic.json"
    out = run_bench("semantic_index.py", "--smoke", "--json", str(out_json), timeout=300)
    assert "products/s" in out and "query ms" in out
    (run,) = json.loads(out_json.read_text())["data"]["runs"]
    assert run["products"] == run["embedded"] == 200 and not run["projected"]
    assert run["products_s"] > 0 and run["query_ms"] > 0 and run["rss_mb"] > run["before_model_mb"]
    # The index and the shelves the graph builds from it are timed.
    assert run["index_s"] > 0 and run["shelves_s"] > 0 and run["kinds"] > 0
    assert "shelves s (CPU)" in out


def test_kind_order_smoke(tmp_path: Path) -> None:
    # The fake model names the first kind listed: each rotation answers otherwise, and
    # the six-way vote is a tie, no kind.
    out_json = tmp_path / "order.json"
    out = run_bench("kind_order.py", "--smoke", "--json", str(out_json))
    assert "vote of the six" in out and "4 of 4" in out
    data = json.loads(out_json.read_text())
    assert data["data"]["answers"][0] == ["cheaper", "dearer", "refine", "replace", "add", "new"]
    assert [t["result"] for t in data["targets"]] == ["MISS"]
