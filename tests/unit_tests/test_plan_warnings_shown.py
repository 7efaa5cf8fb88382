"""A limit the request states replaces the one the model wrote, and the change is shown at
approval and in --json: the person approving sees exactly what will run. Real CLI
processes against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from conftest import FakeServer
from fake_openai_server import FakeScript, fake_openai_server
from fakes import REASONING_FIRST_PLAN, photo_gift_script

# Requests stating a $20 limit that the fake model's plan (budget and max_price $200)
# does not carry: code removes the $200 the request never states, and fills in the $20.
REQUESTS = [
    "a strap gift under $20",
    "camera strap, no more than $20",
    "a strap for my camera below $20.00 please",
]
REMOVED = [
    "budget $200.00 is not stated in the request: removed",
    "step 1: price cap $200.00 is not stated in the request: removed",
]


@pytest.mark.parametrize("request_text", REQUESTS)
def test_a_wrong_limit_is_replaced_by_the_stated_one_and_shown_at_approval(
    request_text: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    catalog = ("--catalog", str(small_catalog_file))
    with fake_openai_server(photo_gift_script()) as url:
        # No terminal to ask: the run pauses at approval, after showing the plan.
        paused = graph_run_process(
            url, isolated_data_dir, request_text, "--thread", "t1", *catalog, COLUMNS="300"
        )
        resumed = graph_run_process(
            url, isolated_data_dir, "--resume", "t1", "--yes", COLUMNS="300"
        )
    assert paused.returncode == 3, paused.stdout + paused.stderr
    for note in REMOVED:
        assert f"! plan: {note}" in paused.stdout
    # What will run is shown, and where it came from.
    assert "(budget $20.00)" in paused.stdout
    assert "max $20 (from request)" in paused.stdout
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "$200" not in resumed.stdout.split("Recommendation")[-1].split("! plan:")[0]

    with fake_openai_server(photo_gift_script()) as url:
        as_json = graph_run_process(
            url, isolated_data_dir, request_text, "--yes", "--json", *catalog
        )
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    # The limit notes, in order; then only the shop's own check (no strap within $20 here).
    assert report["plan_warnings"][: len(REMOVED)] == REMOVED
    assert all("the shop has no" in w for w in report["plan_warnings"][len(REMOVED) :])
    step = report["plan"]["steps"][0]
    assert step["max_price"] == 20.0 and step["filled_from_request"] == ["max_price"]
    assert report["plan"]["budget"] == 20.0
    outcome = report["outcome"]
    assert outcome["dropped_limit"] is None and outcome["budget"] == 20.0
    # Every product the search could return is within the stated limit.
    assert all(pick["price"] <= 20.0 for pick in outcome["picks"])


def test_a_plan_carrying_the_stated_limit_is_within_budget_without_warnings(
    small_catalog_file: Path, isolated_data_dir: Path, photo_gift_server: FakeServer
) -> None:
    run = graph_run_process(
        photo_gift_server.url,
        isolated_data_dir,
        "a strap gift under $200",
        "--yes",
        "--catalog",
        str(small_catalog_file),
        COLUMNS="300",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "within budget" in run.stdout and "! plan:" not in run.stdout


def test_a_reasoning_step_planned_before_any_search_is_named_at_approval(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#43: a reasoning step planned first ran on no results, with no word about it."""
    early = REASONING_FIRST_PLAN
    with fake_openai_server(FakeScript(replies={"Plan": [early]})) as url:
        # No terminal to ask: the run pauses at approval, after showing the plan.
        paused = graph_run_process(
            url, isolated_data_dir, "a camera strap under $200",
            "--catalog", str(small_catalog_file), COLUMNS="300",
        )  # fmt: skip
    assert paused.returncode == 3, paused.stdout + paused.stderr
    assert (
        "! plan: step 1 (reasoning) comes before any search, so it has no results to compare; "
        "edit the plan to move it after the searches"
    ) in paused.stdout
