"""The revision evaluation (#41) on its dev set, replayed from a real recording of the
embedded model on the shipped catalog: each request planned, its plan changed once in the
shopper's words at approval (cheaper, dearer, add, drop, swap, a feature, a rating, a
total; Spanish, French and German among them), the revision approved and run. Recording
also writes the report the live run produced; the replay must reproduce it case by case,
with no case failing to run, and as many of the dev cases doing what the words ask as
were recorded doing so (17 of 18; the issue's bar is 13).

Re-record:
    RECORD=1 python -m pytest -m replay tests/integration_tests/test_revision_eval_replay.py -n 0
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recording import recorded_context
from test_follow_up_eval_replay import reproduced

from graph.builder import build_graph
from graph.evals.follow_ups import load_cases, markdown_table, run_revisions_eval
from graph.runs.checkpoint import open_sqlite_checkpointer

DEV_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "revisions_dev.json"
CASSETTE = "eval-revisions"
# Issue 41 asks 13 of the dev cases on the embedded model; recorded, 16 do.
# Held to what the recording does, so that a change doing less fails.
RECORDED_PASSING = 17


@pytest.mark.replay
def test_the_revision_report_is_reproduced_case_by_case(tmp_path: Path) -> None:
    cases = load_cases(DEV_FILE, "revisions")
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    with recorded_context(CASSETTE) as context:
        report = run_revisions_eval(
            cases, context, graph, label="replay", revisions_file=str(DEV_FILE), progress=False
        )
    passed = reproduced(CASSETTE, report)
    assert passed >= RECORDED_PASSING, markdown_table(report.to_json())
