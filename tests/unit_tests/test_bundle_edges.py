"""Class 1 of the third red-team round (#39): a bundle tells the truth at its edges. A
total no product can meet still shows the cheapest combination, as over budget; and every
item a request lists is in the plan, picked, or named missing (not searched), so a plan
that left items out (MAX_PLAN_STEPS) is never "within budget". Through the real CLI on
the shipped catalog, text and --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import plan_reply

from graph.schemas import MAX_PLAN_STEPS


def searches(*queries: str) -> dict[str, Any]:
    """A planner's answer: one search per query, then one pick step."""
    steps = [{"action": f"Find {q}", "query": q} for q in queries]
    return plan_reply(*steps, {"action": "Pick one of each", "query": None}, goal="Gear.")


def run(data_dir: Path, plan: dict[str, Any], request: str, *args: str) -> tuple[str, Any]:
    """The CLI's text output and its --json outcome for `request`, planned as `plan`."""
    outputs = []
    for extra in ((), ("--json",)):
        script = FakeScript(
            replies={"Plan": [dict(plan)], "ReasoningAnswer": [{"answer": "-", "product_ids": []}]}
        )
        with fake_openai_server(script) as url:
            done = graph_run_process(url, data_dir, request, "--yes", *args, *extra, COLUMNS="300")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        outputs.append(done.stdout)
    return outputs[0], json.loads(outputs[1])["outcome"]


def test_an_impossible_total_shows_the_cheapest_combination_over_budget(
    isolated_data_dir: Path,
) -> None:
    # No tent or stove costs $0.01: each search finds nothing within the total, yet the
    # shopper is shown the cheapest tent and stove and how far over they are.
    plan = searches("tent", "backpacking stove")
    text, outcome = run(isolated_data_dir, plan, "a tent and a stove, $0.01 total")
    assert len(outcome["picks"]) == 2, outcome
    assert outcome["within_budget"] is False and outcome["missing"] == [], outcome
    cheapest = min(outcome["picks"], key=lambda p: p["price"])
    assert cheapest["price"] > 0.01
    assert "over budget" in text and "within budget" not in text, text
    assert "no choice of one product per item fits the $0.01 total" in text, text


TWELVE = (
    "for a camping trip: a tent, a stove, a sleeping bag, a headlamp, a water filter, a "
    "backpack, a camp chair, a mug, boots, socks, a jacket and a map, $1000 total"
)


def test_items_the_plan_never_searched_are_named_missing_and_never_within_budget(
    isolated_data_dir: Path,
) -> None:
    # The planner fits what it can in MAX_PLAN_STEPS: nine searches and the pick, for
    # twelve items. The mug, the boots and the map are named missing, as not searched.
    plan = searches(
        "tent",
        "backpacking stove",
        "sleeping bag",
        "headlamp",
        "water filter",
        "hiking backpack",
        "camp chair",
        "merino socks",
        "down jacket",
    )
    assert len(plan["steps"]) == MAX_PLAN_STEPS
    text, outcome = run(isolated_data_dir, plan, TWELVE)
    assert len(outcome["picks"]) == 9, outcome
    assert [m["query"] for m in outcome["missing"]] == ["mug", "boots", "map"], outcome
    assert all("not searched" in m["reason"] for m in outcome["missing"])
    assert outcome["within_budget"] is None, outcome
    assert "within budget" not in text, text
    for item in ("mug", "boots", "map"):
        assert f"missing: '{item}': not searched" in text, text
