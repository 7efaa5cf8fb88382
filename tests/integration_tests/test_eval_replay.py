"""The evaluation harness on the 15 WebShop dev goals, replayed from a real recording of
the embedded 1.5B model. Recording also writes the report the live run produced, so the
replay must reproduce that report: every field but the run-dependent ones named below.

Record: RECORD=1 python -m pytest -m replay tests/integration_tests/test_eval_replay.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import shared_file
from recording import recorded_context, reproduced_report

from graph.builder import build_graph
from graph.evals.webshop import load_goals, markdown_table, run_eval
from graph.runs.checkpoint import open_sqlite_checkpointer

CASSETTE = "eval-webshop-dev"


@pytest.mark.replay
def test_eval_report_is_reproduced_from_the_recording(tmp_path: Path) -> None:
    goals_path = shared_file("webshop", "goals_dev.json")
    catalog_path = shared_file("webshop", "products_100.jsonl")
    goals = load_goals(goals_path)
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    with recorded_context(CASSETTE, catalog=str(catalog_path)) as context:
        report = run_eval(goals, catalog_path, context, graph, label="replay-1.5b", progress=False)
    data = report.to_json()
    recorded = reproduced_report(CASSETTE, data, ("catalog",))
    assert len(data["results"]) == len(goals) == 15
    # The recording is worth replaying only if most goals ran to a pick.
    assert sum(r["error"] is None for r in recorded["results"]) >= 12
    # A rerun resumes from the checkpoints: finished goals are read back, not re-run (the
    # model is unreachable now, so any new LLM call would turn into an error).
    again = run_eval(goals, catalog_path, context, graph, label="replay-1.5b", progress=False)
    finished = [r for r in report.results if r.error is None]
    rerun = {r.index: r for r in again.results}
    assert all(rerun[r.index].error is None for r in finished)
    assert [rerun[r.index].reward for r in finished] == [r.reward for r in finished]
    assert [rerun[r.index].latency_s for r in finished] == [r.latency_s for r in finished]
    assert "mean reward" in markdown_table([data, recorded])
