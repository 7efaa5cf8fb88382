"""A plan warning (e.g. a price limit the plan dropped) is shown at approval, in the final
summary and in --json, and the total is never called "within budget" against a budget the
shopper did not set. Real CLI processes against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN

DROPPED = "the request states a limit of $20.00, but the plan does not carry it"
# Requests stating a limit the plan (budget and max_price $200) does not carry.
REQUESTS = [
    "a photo gift under $20",
    "camera strap, no more than $20",
    "a strap for my camera below $20.00 please",
]


def fake() -> FakeScript:
    return FakeScript(replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]})


@pytest.mark.parametrize("request_text", REQUESTS)
def test_dropped_limit_is_shown_at_approval_in_the_summary_and_in_json(
    request_text: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    catalog = ("--catalog", str(small_catalog_file))
    with fake_openai_server(fake()) as url:
        # No terminal to ask: the run pauses at approval, after showing the plan.
        paused = graph_run_process(
            url, isolated_data_dir, request_text, "--thread", "t1", *catalog, COLUMNS="300"
        )
        resumed = graph_run_process(
            url, isolated_data_dir, "--resume", "t1", "--yes", COLUMNS="300"
        )
    assert paused.returncode == 2, paused.stdout + paused.stderr
    assert f"! plan: {DROPPED}" in paused.stdout
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"! plan: {DROPPED}" in resumed.stdout  # the final summary's warnings
    assert "within budget" not in resumed.stdout
    assert (
        "(under the $20.00 limit the request states, which the plan dropped" in (resumed.stdout)
        or "(over the $20.00 limit the request states" in resumed.stdout
    )

    with fake_openai_server(fake()) as url:
        as_json = graph_run_process(
            url, isolated_data_dir, request_text, "--yes", "--json", *catalog
        )
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["plan_warnings"] == [DROPPED]
    assert report["outcome"]["dropped_limit"] == 20.0
    assert report["outcome"]["within_budget"] is None
    assert f"plan: {DROPPED}" in report["outcome"]["warnings"]


def test_a_plan_carrying_the_stated_limit_is_within_budget_without_warnings(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(fake()) as url:
        run = graph_run_process(
            url,
            isolated_data_dir,
            "a photo gift under $200",
            "--yes",
            "--catalog",
            str(small_catalog_file),
            COLUMNS="300",
        )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "within budget" in run.stdout and "! plan:" not in run.stdout
