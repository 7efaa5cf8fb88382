"""Class 7 of the second red-team round (#24): every item the plan searches for is in the
recommendation or named as missing, with the reason, and an empty recommendation is never
"within budget". Through the real CLI, text and --json."""

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
    # The model picks for one item only.
    "one-item-picked": (TWO_ITEMS, ["strap-1"], ["'lens cleaning kit' (step 2)"]),
    # Its pick for the kit is not among that item's results (a strap twice).
    "pick-not-among-results": (TWO_ITEMS, ["strap-1", "strap-2"], ["'lens cleaning kit'"]),
    # Every search found nothing.
    "nothing-found": (NOTHING_FOUND, [], ["'zzqxv'", "'qqzxw'"]),
}


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
