"""Stated limits are read from the request in code and reach every search step's filters;
limits the request does not state are removed. No model is involved here."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import shared_file

from graph.checks.limits import limit_warnings, read_limits, reconcile_limits
from graph.state import Plan

# (request, max_price, min_price, min_rating): the forms people write limits in, and
# numbers that are not prices or ratings at all.
PHRASINGS = [
    ("a birthday gift for someone who likes photography, under $200", 200, None, None),
    ("below 50 dollars", 50, None, None),
    ("less than 30 bucks", 30, None, None),
    ("price lower than 40.00 dollars", 40, None, None),
    ("priced under 40", 40, None, None),
    ("budget 150", 150, None, None),
    ("no more than $1,200 for a laptop", 1200, None, None),
    ("shoes and socks, $150 total", 150, None, None),
    ("a $25 gift", 25, None, None),
    ("$100 to $300", 300, 100, None),
    ("$20-$40", 40, 20, None),
    ("something between $300 and $100", 300, 100, None),
    ("priced within the $5 to $15 range", 15, 5, None),
    ("at least $20", None, 20, None),
    ("4 stars or higher", None, None, 4),
    ("at least 4.5-star", None, None, 4.5),
    ("4+ stars", None, None, 4),
    ("4.5+ star rating", None, None, 4.5),
    ("rated above 4", None, None, 4),
    ("a rating of at least 4.5 from 300 users", None, None, 4.5),
    ("a tent rated 4 stars or better under $300", 300, None, 4),
    # Sizes, counts, review numbers and a shop's thresholds are not limits.
    ("a 10 to 10.9 inches tablet", None, None, None),
    ("a power strip with 6 to 8 outlets", None, None, None),
    ("at least 300 reviews", None, None, None),
    ("a minimum of 300 customer reviews", None, None, None),
    ("resistance bands from 10 to 50 pounds", None, None, None),
    ("size 10 sneakers", None, None, None),
    ("free shipping for purchases exceeding $50", None, None, None),
    ("free shipping on orders over $25, a lamp under $60", 60, None, None),
    ("an auto shutoff kettle priced under $100", 100, None, None),
    ("a 12 pack of pens under 10 USD", 10, None, None),
    ("two pairs under $100 and a hat under $20", None, None, None),  # one cap per item
]


@pytest.mark.parametrize(("request_text", "cap", "floor", "rating"), PHRASINGS)
def test_stated_limits_are_read_in_the_forms_people_write(
    request_text: str, cap: float | None, floor: float | None, rating: float | None
) -> None:
    stated = read_limits(request_text)
    assert (stated.max_price, stated.min_price, stated.min_rating) == (cap, floor, rating)


def plan_of(budget: float | None, *steps: dict[str, Any]) -> Plan:
    numbered = [{"step": n, **s} for n, s in enumerate(steps, start=1)]
    return Plan.model_validate({"goal": "g", "budget": budget, "steps": numbered})


PICK = {"action": "Pick", "query": None}


def test_a_limit_the_model_left_out_is_filled_in_every_search_and_marked() -> None:
    plan = plan_of(
        None,
        {"action": "Find shoes", "query": "running shoes"},
        {"action": "Find socks", "query": "wool socks", "max_price": 150},
        PICK,
    )
    request = "running shoes and wool socks, $150 total, 4.5 stars or higher, $20 minimum"
    reconciled = reconcile_limits(read_limits(request), plan)
    first, second, pick = reconciled.plan.steps
    assert reconciled.plan.budget == 150
    assert (first.max_price, first.min_price, first.min_rating) == (150, 20, 4.5)
    assert first.filled_from_request == ["max_price", "min_price", "min_rating"]
    assert second.max_price == 150 and second.filled_from_request == ["min_price", "min_rating"]
    assert (pick.max_price, pick.min_rating) == (None, None)  # a pick runs no search
    assert reconciled.notes == []
    assert limit_warnings(read_limits(request), reconciled.plan) == []


@pytest.mark.parametrize(
    ("request_text", "step", "note"),
    [
        # "at least 300 reviews" read as a price floor.
        (
            "a speaker with at least 300 reviews",
            {"min_price": 300},
            "step 1: price floor $300.00 is not stated in the request: removed",
        ),
        # A budget nobody stated (three emoji became $100).
        ("🎁🎁🎁 camera", {"max_price": 100}, "step 1: price cap $100.00 is not stated"),
        ("size 10 shoes", {"min_rating": 4}, "step 1: minimum rating 4 stars is not stated"),
    ],
)
def test_a_limit_the_request_does_not_state_is_removed_with_a_note(
    request_text: str, step: dict[str, Any], note: str
) -> None:
    plan = plan_of(None, {"action": "Find it", "query": "speaker shoes camera", **step}, PICK)
    reconciled = reconcile_limits(read_limits(request_text), plan)
    search = reconciled.plan.steps[0]
    assert (search.max_price, search.min_price, search.min_rating) == (None, None, None)
    assert any(n.startswith(note) for n in reconciled.notes), reconciled.notes


def test_an_invented_budget_is_removed_and_a_price_range_fills_both_ends() -> None:
    plan = plan_of(50, {"action": "Find a watch", "query": "sports watch"}, PICK)
    reconciled = reconcile_limits(read_limits("a sports watch between $300 and $100"), plan)
    assert reconciled.notes == ["budget $50.00 is not stated in the request: removed"]
    search = reconciled.plan.steps[0]
    assert (search.min_price, search.max_price) == (100, 300)
    assert reconciled.plan.budget == 300


def test_a_budget_other_than_the_one_stated_cap_becomes_the_cap() -> None:
    plan = plan_of(400, {"action": "Find a blender", "query": "blender"}, PICK)
    reconciled = reconcile_limits(read_limits("a blender in the $400 to $600 range"), plan)
    assert reconciled.plan.budget == 600
    assert reconciled.notes == ["budget $400.00 is not the request's cap: set to $600.00"]
    assert (reconciled.plan.steps[0].min_price, reconciled.plan.steps[0].max_price) == (400, 600)


def test_each_items_own_cap_stands_when_the_request_gives_several() -> None:
    plan = plan_of(
        None,
        {"action": "Find shoes", "query": "shoes", "max_price": 100},
        {"action": "Find a hat", "query": "hat", "max_price": 20},
        PICK,
    )
    reconciled = reconcile_limits(read_limits("shoes under $100 and a hat under $20"), plan)
    assert [s.max_price for s in reconciled.plan.steps[:2]] == [100, 20]
    assert reconciled.notes == []


def test_a_search_for_a_limit_alone_is_removed_and_the_steps_renumbered() -> None:
    plan = plan_of(
        None,
        {"action": "Find speakers", "query": "bluetooth speaker"},
        {"action": "Filter by rating", "query": "rating: 4.5 stars"},
        {"action": "Filter by reviews", "query": "300 customer reviews"},
        PICK,
    )
    reconciled = reconcile_limits(
        read_limits("a bluetooth speaker, 4.5 stars, 300 customer reviews"), plan
    )
    steps = reconciled.plan.steps
    assert [(s.step, s.query) for s in steps] == [(1, "bluetooth speaker"), (2, None)]
    assert steps[0].min_rating == 4.5
    assert len(reconciled.notes) == 2 and "a limit and no product: removed" in reconciled.notes[0]


def test_a_persons_plan_is_checked_the_same_way_but_not_changed() -> None:
    """limit_warnings is what an edited plan is checked with: it names, never fixes."""
    plan = plan_of(None, {"action": "Find it", "query": "camera strap", "min_price": 300}, PICK)
    warnings = limit_warnings(
        read_limits("a camera strap under $40 with at least 300 reviews"), plan
    )
    assert warnings == [
        "the request states a price cap of $40.00, but step 1 does not carry it",
        "step 1: price floor $300.00 is not stated in the request",
    ]


def test_the_labelled_deepshop_limits_are_read_from_the_requests() -> None:
    """The hand labels (tests/fixtures/deepshop_limits.json, rule written there) against
    the reader, on 46 real requests with review counts, sizes and shop thresholds."""
    from pathlib import Path

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "deepshop_limits.json"
    labels = json.loads(fixture.read_text())["labels"]
    requests = shared_file("deepshop", "requests_dev.jsonl").read_text().splitlines()
    by_id = {r["id"]: r["ques"] for r in map(json.loads, requests) if r}
    assert set(labels) == set(by_id) and len(labels) == 46
    for request_id, label in labels.items():
        stated = read_limits(by_id[request_id])
        got = {k: getattr(stated, k) for k in ("max_price", "min_price", "min_rating")}
        assert got == label, request_id
