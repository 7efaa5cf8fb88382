"""Amounts as shoppers write them (issue 35): digit groups with any separator, k and m
suffixes, number words and digits of the planner's languages, limits in pairs, and
amounts that are no number. The dev set is tests/fixtures/amounts_dev.json: each request
with the reading a person gives it. No model is involved here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.reading.stated import read_limits
from graph.schemas import Plan
from graph.shaping.limits import limit_warnings

DEV_SET = Path(__file__).parents[1] / "fixtures" / "amounts_dev.json"
PHRASINGS: list[dict[str, Any]] = json.loads(DEV_SET.read_text(encoding="utf-8"))


def test_the_dev_set_is_large_enough() -> None:
    assert len(PHRASINGS) >= 40


@pytest.mark.parametrize("case", PHRASINGS, ids=[c["request"] for c in PHRASINGS])
def test_an_amount_is_read_as_a_person_reads_it(case: dict[str, Any]) -> None:
    stated = read_limits(case["request"])
    assert (stated.max_price, stated.min_price, stated.total) == (
        case["max_price"],
        case["min_price"],
        case["total"],
    )
    assert [[list(c.words), c.max_price] for c in stated.item_caps] == case.get("item_caps", [])
    assert [[c.kind, c.applied] for c in stated.choices] == case.get("choices", [])
    assert list(stated.unreadable) == case.get("unreadable", [])
    assert [[f.currency, list(f.amounts)] for f in stated.foreign] == case.get("foreign", [])
    assert stated.impossible == ()


PLAN = Plan.model_validate(
    {
        "goal": "a kettle and mugs",
        "steps": [
            {"step": 1, "action": "Search kettles", "query": "kettle"},
            {"step": 2, "action": "Pick one", "query": None},
        ],
    }
)


@pytest.mark.parametrize("written", ["$6O", "$1e309"])
def test_an_amount_that_is_no_number_is_named_and_never_applied(written: str) -> None:
    stated = read_limits(f"a kettle and mugs under {written} total")
    assert (stated.max_price, stated.total, stated.prices) == (None, None, ())
    warnings = limit_warnings(stated, PLAN)
    assert any(repr(written) in w and "cannot be read as a number" in w for w in warnings)


def test_two_totals_are_both_shown_with_the_one_applied() -> None:
    stated = read_limits("a lamp and a rug, $30 total, no wait, $40 total")
    assert stated.total == 40 and stated.prices == (30, 40)
    (warning,) = [w for w in limit_warnings(stated, PLAN) if "limits of one kind" in w]
    assert "'$30 total'" in warning and "'$40 total' is applied" in warning


def test_a_cap_on_each_item_and_a_total_are_both_kept() -> None:
    stated = read_limits("socks and a hat under $25 each, $40 total")
    assert (stated.max_price, stated.total, stated.budget) == (25, 40, 40)
    assert stated.choices == ()


def test_number_words_elsewhere_stay_as_written() -> None:
    stated = read_limits("one pair of running shoes and two pairs of socks")
    assert not stated.any and stated.prices == ()
