"""The open-ended evaluation (#34) on its dev sets, replayed from real recordings of the
embedded 1.5B model: gifts, hobbies and occasions on the shipped catalog, and on
DummyJSON's products from ../shared. Recording also writes the report the live run
produced; the replay must reproduce it request by request, with no request failing to
run. The figures recorded are what docs/evaluation.md reports; not every request meets
every check on the 1.5B model yet (issue #34 stays open on it). The sets in new wording
(#40: `-new-` cassettes, recorded with RECORD=1 like the others) are held to the same:
their figures are printed, not yet held to the #40 targets.

Record:
    RECORD=1 python -m pytest -m replay tests/integration_tests/test_open_ended_eval_replay.py -n 0
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_file
from recording import recorded_context, reproduced_report

from catalog.sources import DEFAULT_CATALOG_FILE
from graph.builder import build_graph
from graph.evals.open_ended import load_open_ended, markdown_table, run_open_ended_eval
from graph.runs.checkpoint import open_sqlite_checkpointer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def dev_sets() -> dict[str, tuple[Path, Path]]:
    """cassette name -> (request file, catalog file)."""
    return {
        "eval-open-ended-shipped": (FIXTURES / "open_ended_dev.json", DEFAULT_CATALOG_FILE),
        "eval-open-ended-dummyjson": (
            FIXTURES / "open_ended_dev_dummyjson.json",
            shared_file("dummyjson", "products.json"),
        ),
        # In wording unlike the sets above (#40).
        "eval-open-ended-new-shipped": (
            FIXTURES / "open_ended_new_shipped.json",
            DEFAULT_CATALOG_FILE,
        ),
        "eval-open-ended-new-dummyjson": (
            FIXTURES / "open_ended_new_dummyjson.json",
            shared_file("dummyjson", "products.json"),
        ),
    }


@pytest.mark.replay
@pytest.mark.parametrize(
    "cassette",
    [
        "eval-open-ended-shipped",
        "eval-open-ended-dummyjson",
        "eval-open-ended-new-shipped",
        "eval-open-ended-new-dummyjson",
    ],
)
def test_the_open_ended_report_is_reproduced_request_by_request(
    cassette: str, tmp_path: Path
) -> None:
    requests_path, catalog_path = dev_sets()[cassette]
    requests = load_open_ended(requests_path, catalog_path).requests
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    with recorded_context(cassette, catalog=str(catalog_path)) as context:
        report = run_open_ended_eval(
            requests,
            catalog_path,
            context,
            graph,
            label="replay-1.5b",
            open_ended_file=str(requests_path),
            progress=False,
        )
    data = report.to_json()
    reproduced_report(cassette, data, ("catalog", "open_ended_file"))
    assert all(r.error is None for r in report.results)
    summary = data["summary"]
    assert f"{summary['met']}/{summary['requests']}" in markdown_table([data])
    print(json.dumps({cassette: summary}))
