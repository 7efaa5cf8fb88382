"""The whole graph, offline, replaying real traffic recorded from the embedded local model.

Re-record after any prompt or schema change: RECORD=1 python -m pytest -m replay
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from langgraph.checkpoint.memory import MemorySaver
from recording import CASSETTES, SECRET_HEADERS, recorded_context

from graph.builder import build_graph
from graph.tools import get_catalog

# name -> request; chosen to cover one item, several items under one budget, a search
# that finds nothing, a rating limit, a request not in English, open-ended gifts, and a
# total no choice of products meets.
RECORDED_REQUESTS = {
    "photo-gift": "a birthday gift for someone who likes photography, under $200",
    "multi-item-budget": "running shoes and a water bottle, $150 total",
    "nothing-found": "a theremin, under $300",
    "coffee-pair": "a burr grinder and a pour-over kettle under $120",
    "home-office": "an ergonomic chair and a monitor arm for my home office, budget $500",
    "tent-rating": "a tent for two people rated 4 stars or better under $250",
    "spanish": "un regalo para mi hermana que corre maratones, menos de 100 dólares",
    "gift-runner": "a gift for a runner under $80",
    "over-budget": "running shoes and a water bottle, $130 total",
}


def run_recorded(name: str, tool_mode: str = "direct") -> dict[str, Any]:
    cassette = name if tool_mode == "direct" else f"{name}-{tool_mode}"
    with recorded_context(cassette, tool_mode=tool_mode) as context:
        graph = build_graph(checkpointer=MemorySaver())
        return graph.invoke(
            {"request": RECORDED_REQUESTS[name]},
            {"configurable": {"thread_id": name}},
            context=context,
        )


class RecordedRuns:
    """Each recorded run, replayed once on first use. A run that cannot be replayed (its
    cassette is missing, or it no longer plays the recording) fails the tests that read
    it, not the whole module, and is not cached, so each of those tests reports why."""

    def __init__(self) -> None:
        self._runs: dict[str, dict[str, Any]] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        if name not in self._runs:
            self._runs[name] = run_recorded(name)
        return self._runs[name]

    def values(self) -> list[dict[str, Any]]:
        return [self[name] for name in RECORDED_REQUESTS]


@pytest.fixture(scope="module")
def recorded_runs() -> RecordedRuns:
    return RecordedRuns()


@pytest.mark.replay
@pytest.mark.parametrize("name", list(RECORDED_REQUESTS))
def test_recorded_run_is_a_checked_plan(name: str, recorded_runs: RecordedRuns) -> None:
    state = recorded_runs[name]
    plan = state["plan"]
    assert [s.step for s in plan.steps] == list(range(1, len(plan.steps) + 1))
    results = state["step_results"]
    # Every step ran exactly once, in order (no replanning, no skipped step).
    assert [r.step for r in results] == [s.step for s in plan.steps]
    catalog = get_catalog(None)
    outcome = state["outcome"]
    picked = [p.id for p in outcome.picks]
    assert set(catalog.get(picked)) == set(picked)
    assert outcome.total_price == pytest.approx(sum(p.price for p in outcome.picks))
    if plan.budget is not None and outcome.total_price > plan.budget:
        assert outcome.within_budget is False
    elif plan.budget is not None:
        # "within budget" only for a whole recommendation; a missing item is named (#24).
        assert outcome.within_budget is (True if outcome.picks and not outcome.missing else None)


@pytest.mark.replay
def test_searches_return_catalog_products(recorded_runs: RecordedRuns) -> None:
    catalog = get_catalog(None)
    found = [
        p.id
        for state in recorded_runs.values()
        for r in state["step_results"]
        if r.kind == "search"
        for p in r.products
    ]
    assert found, "no recorded search returned anything"
    assert set(catalog.get(found)) == set(found)


@pytest.mark.replay
def test_demo_request_recommends_a_photography_gift_within_budget(
    recorded_runs: RecordedRuns,
) -> None:
    state = recorded_runs["photo-gift"]
    outcome = state["outcome"]
    assert outcome.budget == 200
    assert outcome.picks and outcome.within_budget is True
    # A gift looks at several kinds of item, and the single best pick is explained (#22).
    assert state["plan"].pick == "one"
    assert len({s.query for s in state["plan"].search_steps}) >= 2
    assert len(outcome.picks) == 1 and outcome.reasons[outcome.picks[0].id]


@pytest.mark.replay
@pytest.mark.parametrize("name", ["photo-gift", "gift-runner", "spanish"])
def test_a_gift_searches_several_kinds_and_explains_its_pick(
    name: str, recorded_runs: RecordedRuns
) -> None:
    state = recorded_runs[name]
    assert len({s.query for s in state["plan"].search_steps}) >= 2
    outcome = state["outcome"]
    assert outcome.picks and all(outcome.reasons.get(p.id) for p in outcome.picks)
    assert outcome.within_budget is True


@pytest.mark.replay
def test_a_total_nothing_meets_shows_the_cheapest_combination(
    recorded_runs: RecordedRuns,
) -> None:
    outcome = recorded_runs["over-budget"]["outcome"]
    assert outcome.budget == 130 and outcome.within_budget is False
    assert len(outcome.picks) == 2  # one shoe, one bottle: the cheapest of each
    assert any("the cheapest is shown" in w for w in outcome.warnings)
    assert sum("the cheapest found is" in w for w in outcome.warnings) == 2


@pytest.mark.replay
def test_zero_result_step_is_flagged_and_later_steps_still_run(
    recorded_runs: RecordedRuns,
) -> None:
    state = recorded_runs["nothing-found"]
    results = state["step_results"]
    empty = [r for r in results if r.kind == "search" and not r.products]
    assert empty, "the recorded 'nothing-found' run found something"
    assert any("no products matched" in w for w in empty[0].warnings)
    assert results[-1].step == len(state["plan"].steps)
    assert any("found no products" in w for w in state["outcome"].warnings)


@pytest.mark.replay
def test_multi_item_request_keeps_one_budget(recorded_runs: RecordedRuns) -> None:
    state = recorded_runs["multi-item-budget"]
    assert state["plan"].budget == 150
    assert len(state["plan"].search_steps) >= 2
    # The README example: a fitting pair exists (below the five shoes shown), so it is met.
    outcome = state["outcome"]
    assert outcome.within_budget is True and outcome.total_price <= 150
    assert not outcome.missing and len(outcome.picks) == 2


@pytest.mark.replay
@pytest.mark.parametrize("name", list(RECORDED_REQUESTS))
def test_cost_estimate_is_within_2x_of_actual_tokens(
    name: str, recorded_runs: RecordedRuns
) -> None:
    from graph.context import Context
    from graph.cost import estimate_plan_cost

    state = recorded_runs[name]
    estimate = estimate_plan_cost(
        state["plan"], Context(provider="local", model="qwen2.5-coder-1.5b")
    )
    results = state["step_results"]
    # The estimate, made before any search, counts a call for every reasoning step; a pick
    # step code answered (graph/choosing/decided.py) made none, so it is compared without.
    decided = {r.step for r in results if r.decided_in_code}
    assert {c.step for c in estimate.calls} >= decided
    made = [c for c in estimate.calls if c.step not in decided]
    assert len(made) == sum(r.llm_calls for r in results)
    estimated = sum(c.input_tokens + c.output_tokens for c in made)
    actual = sum(r.usage.total_tokens for r in results)
    if actual == 0:
        assert estimated == 0
        return
    assert 0.5 <= estimated / actual <= 2.0, (estimated, actual)


_KEY_LIKE = re.compile(r"sk-[A-Za-z0-9_-]{16,}")


def test_no_cassette_holds_an_auth_header_or_a_key() -> None:
    cassettes = sorted(Path(CASSETTES).glob("*.yaml"))
    assert len(cassettes) >= len(RECORDED_REQUESTS), "cassettes are missing"
    for path in cassettes:
        text = path.read_text()
        for interaction in yaml.safe_load(text)["interactions"]:
            for part in ("request", "response"):
                names = {name.lower() for name in interaction[part].get("headers", {})}
                leaked = names & set(SECRET_HEADERS)
                assert not leaked, f"{path.name} records {part} headers {leaked}"
        assert not _KEY_LIKE.search(text), f"{path.name} holds something that looks like a key"
