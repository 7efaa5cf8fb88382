"""Class 7 of the second red-team round (#24): every item the plan searches for is in the
recommendation or named as missing, with the reason, and an empty recommendation is never
"within budget". An item the model left unpicked is chosen in code (#22), with its reason.
Through the real CLI, text and --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server

TWO_ITEMS: dict[str, Any] = {
    "goal": "A camera strap and a lens cleaning kit under $200.",
    "budget": 200,
    "steps": [
        {"step": 1, "action": "Find camera straps", "query": "camera strap", "max_price": 200},
        {"step": 2, "action": "Find a cleaning kit", "query": "lens cleaning kit"},
        {"step": 3, "action": "Pick one of each", "query": None},
    ],
}
NOTHING_FOUND: dict[str, Any] = {
    **TWO_ITEMS,
    "steps": [
        {"step": 1, "action": "Find straps", "query": "zzqxv"},
        {"step": 2, "action": "Find kits", "query": "qqzxw"},
        {"step": 3, "action": "Pick", "query": None},
    ],
}

CASES = {
    # Every search found nothing.
    "nothing-found": (NOTHING_FOUND, [], ["'zzqxv'", "'qqzxw'"]),
}
# The model picks for one item only, or picks a strap twice (none for the kit): code
# chooses the kit from what its search found, and says so.
UNPICKED = {"one-item-picked": ["strap-1"], "pick-not-among-results": ["strap-1", "strap-2"]}


@pytest.mark.parametrize("case", list(UNPICKED))
@pytest.mark.usefixtures("pick_steps_ask_the_model")  # the scripted picks are the model's
def test_an_item_the_model_left_unpicked_is_chosen_in_code(
    case: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    pick = {"answer": "These.", "product_ids": UNPICKED[case]}
    script = FakeScript(replies={"Plan": [dict(TWO_ITEMS)], "ReasoningAnswer": [pick]})
    request = ("a camera strap and a lens cleaning kit under $200", "--yes", "--json")
    with fake_openai_server(script) as url:
        run = graph_run_process(
            url, isolated_data_dir, *request, "--catalog", str(small_catalog_file)
        )
    assert run.returncode == 0, run.stdout + run.stderr
    outcome = json.loads(run.stdout)["outcome"]
    assert [p["id"] for p in outcome["picks"]] == ["strap-1", "clean-1"]
    assert outcome["missing"] == [] and outcome["within_budget"] is True
    assert "the model's pick" in outcome["reasons"]["strap-1"]
    assert "fits the $200.00 total" in outcome["reasons"]["clean-1"]


@pytest.mark.parametrize("case", list(CASES))
def test_every_searched_item_is_picked_or_named_missing(
    case: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    plan, ids, missing = CASES[case]

    def fake() -> FakeScript:
        pick = {"answer": "These.", "product_ids": ids}
        return FakeScript(replies={"Plan": [dict(plan)], "ReasoningAnswer": [pick]})

    request = ("a camera strap and a lens cleaning kit under $200", "--yes")
    catalog = ("--catalog", str(small_catalog_file))
    with fake_openai_server(fake()) as url:
        text = graph_run_process(url, isolated_data_dir, *request, *catalog, COLUMNS="300")
    with fake_openai_server(fake()) as url:
        as_json = graph_run_process(url, isolated_data_dir, *request, "--json", *catalog)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "within budget" not in text.stdout, text.stdout
    for name in missing:
        assert f"missing: {name}" in text.stdout, text.stdout
    outcome = json.loads(as_json.stdout)["outcome"]
    assert outcome["within_budget"] is None, outcome
    assert len(outcome["missing"]) == len(missing)
    assert all(item["reason"] for item in outcome["missing"])
    if not ids:
        assert "nothing could be recommended" in text.stdout
