"""The evaluation harness on the 15 WebShop dev goals, replayed from a real recording of
the embedded 1.5B model. Recording also writes the report the live run produced, so the
replay must reproduce that report: every field but the run-dependent ones named below.

Record: RECORD=1 python -m pytest -m replay tests/integration_tests/test_eval_replay.py
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_file
from recording import recorded_context, recorded_report

from graph.builder import build_graph
from graph.evals.webshop import load_goals, markdown_table, run_eval
from graph.runs.checkpoint import open_sqlite_checkpointer

CASSETTE = "eval-webshop-dev"


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what differs from one run to the next on the same recording:
    - `latency_s`, per goal and its mean in the summary: wall-clock time of this run;
    - `catalog`: an absolute path, so where the checkout and ../shared happen to sit; the
      file itself (its last two parts, webshop/products_100.jsonl) is compared.
    Thread ids stay in: they are built from the label, the goal's index and its ASIN."""
    data = copy.deepcopy(report)
    data["catalog"] = "/".join(Path(data["catalog"]).parts[-2:])
    del data["summary"]["latency_s"]
    for result in data["results"]:
        del result["latency_s"]
    return data


@pytest.mark.replay
def test_eval_report_is_reproduced_from_the_recording(tmp_path: Path) -> None:
    goals_path = shared_file("webshop", "goals_dev.json")
    catalog_path = shared_file("webshop", "products_100.jsonl")
    goals = load_goals(goals_path)
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    with recorded_context(CASSETTE, catalog=str(catalog_path)) as context:
        report = run_eval(goals, catalog_path, context, graph, label="replay-1.5b", progress=False)
    data = report.to_json()
    recorded = recorded_report(CASSETTE, data)
    assert len(data["results"]) == len(goals) == 15
    # The recording is worth replaying only if most goals ran to a pick.
    assert sum(r["error"] is None for r in recorded["results"]) >= 12
    ours, theirs = comparable(data), comparable(recorded)
    # Goal by goal first, so a failure names the goal; then the whole report.
    for mine, expected in zip(ours["results"], theirs["results"], strict=True):
        assert mine == expected, f"goal {expected['index']} ({expected['asin']}) differs"
    assert ours == theirs
    # A rerun resumes from the checkpoints: finished goals are read back, not re-run (the
    # model is unreachable now, so any new LLM call would turn into an error).
    again = run_eval(goals, catalog_path, context, graph, label="replay-1.5b", progress=False)
    finished = [r for r in report.results if r.error is None]
    rerun = {r.index: r for r in again.results}
    assert all(rerun[r.index].error is None for r in finished)
    assert [rerun[r.index].reward for r in finished] == [r.reward for r in finished]
    assert [rerun[r.index].latency_s for r in finished] == [r.latency_s for r in finished]
    assert "mean reward" in markdown_table([data, recorded])
