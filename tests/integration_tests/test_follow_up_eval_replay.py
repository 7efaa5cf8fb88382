"""The follow-up evaluation (#35) on its dev set, replayed from a real recording of the
embedded 1.5B model on the shipped catalog: each first request, then its follow-up in the
shopper's own words (questions, fragments, polite forms, other languages, refinements by
feature). The planner states each follow-up's kind and code checks it against the run it
follows. Recording also writes the report the live run produced; the replay must
reproduce it case by case, with no case failing to run. The figure it records (30 of 35;
29, 26 and 21 on earlier recordings) is what docs/follow-ups.md reports; not every case
passes on the 1.5B model yet (issue #35 stays open on it). The set in new wording (#40,
`eval-follow-ups-new`, recorded with RECORD=1 like the other) is held to the same: its
pass count and the overrides of the planner's kind are printed, not yet held to the
#40 target.

Record:
    RECORD=1 python -m pytest -m replay tests/integration_tests/test_follow_up_eval_replay.py -n 0
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recording import recorded_context, reproduced_report

from graph.builder import build_graph
from graph.evals.follow_ups import (
    FollowUpReport,
    load_cases,
    markdown_table,
    run_follow_ups_eval,
)
from graph.runs.checkpoint import open_sqlite_checkpointer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# cassette name -> follow-up file
DEV_SETS = {
    "eval-follow-ups": FIXTURES / "follow_ups_dev.json",
    "eval-follow-ups-new": FIXTURES / "follow_ups_new.json",  # in new wording (#40)
}


def reproduced(cassette: str, report: FollowUpReport) -> int:
    """Check that `report` reproduces the one recorded with `cassette`, case by case, with
    no case failing to run, print its summary, and give its pass count."""
    data = report.to_json()
    reproduced_report(cassette, data, ("follow_ups_file",))
    assert all(r.error is None and r.checks for r in report.results)
    passed = sum(r.passed for r in report.results)
    assert f"{passed}/{len(report.results)} follow-ups pass" in markdown_table(data)
    print(json.dumps({cassette: data["summary"]}))
    return passed


@pytest.mark.replay
@pytest.mark.parametrize("cassette", list(DEV_SETS))
def test_the_follow_up_report_is_reproduced_case_by_case(cassette: str, tmp_path: Path) -> None:
    dev_file = DEV_SETS[cassette]
    cases = load_cases(dev_file)
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    with recorded_context(cassette) as context:
        report = run_follow_ups_eval(
            cases,
            context,
            graph,
            label="replay-1.5b",
            follow_ups_file=str(dev_file),
            progress=False,
        )
    reproduced(cassette, report)
