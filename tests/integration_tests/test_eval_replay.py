"""The evaluation harness on the 15 WebShop dev goals, replayed from a real recording of
the embedded 1.5B model. Recording also writes the report the live run produced, so the
replay must reproduce its scores exactly.

Record: RECORD=1 python -m pytest -m replay tests/integration_tests/test_eval_replay.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_file
from recording import CASSETTES, recorded_context, recording

from graph.builder import build_graph
from graph.checkpoint import open_sqlite_checkpointer
from graph.eval import load_goals, markdown_table, run_eval

CASSETTE = "eval-webshop-dev"
RECORDED_REPORT = CASSETTES / f"{CASSETTE}.report.json"


@pytest.mark.replay
def test_eval_scores_are_reproduced_from_the_recording(tmp_path: Path) -> None:
    goals_path = shared_file("webshop", "goals_dev.json")
    catalog_path = shared_file("webshop", "products_100.jsonl")
    goals = load_goals(goals_path)
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    with recorded_context(CASSETTE, catalog=str(catalog_path)) as context:
        report = run_eval(goals, catalog_path, context, graph, label="replay-1.5b", progress=False)
    data = report.to_json()
    if recording():
        RECORDED_REPORT.write_text(json.dumps(data, indent=2) + "\n")
    recorded = json.loads(RECORDED_REPORT.read_text())
    assert len(data["results"]) == len(goals) == 15
    # A goal whose plan failed is scored 0 and reported, in the replay as in the recording.
    assert [r["error"] for r in data["results"]] == [r["error"] for r in recorded["results"]]
    assert sum(r["error"] is None for r in data["results"]) >= 12
    assert [r["picked"] for r in data["results"]] == [r["picked"] for r in recorded["results"]]
    assert [r["reward"] for r in data["results"]] == [r["reward"] for r in recorded["results"]]
    assert data["summary"]["mean_reward"] == recorded["summary"]["mean_reward"]
    # A rerun resumes from the checkpoints: finished goals are read back, not re-run (the
    # model is unreachable now, so any new LLM call would turn into an error).
    again = run_eval(goals, catalog_path, context, graph, label="replay-1.5b", progress=False)
    finished = [r for r in report.results if r.error is None]
    rerun = {r.index: r for r in again.results}
    assert all(rerun[r.index].error is None for r in finished)
    assert [rerun[r.index].reward for r in finished] == [r.reward for r in finished]
    assert [rerun[r.index].latency_s for r in finished] == [r.latency_s for r in finished]
    assert "mean reward" in markdown_table([data, recorded])
