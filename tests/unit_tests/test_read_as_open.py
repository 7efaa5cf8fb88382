"""Whether a first request leaves what to buy open, as the model reads it (#40): a request
that speaks of no gift or occasion is asked about before planning (graph/nodes.py,
_read_as_open), and code keeps it named where it names a shelf of the shop in other
words. The model here is the fake (tests/fakes.py), scripted with each answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel, run_graph

from graph.evals.overrides import overrides_of
from graph.prompts import NAMES_A_PRODUCT_EXAMPLES

PERSON = "my sister works night shifts as a nurse and needs to unwind, $50"
STRAP = "a leather camera strap, $40"


def run_answered(answer: str, request: str, catalog: Path) -> tuple[FakeShoppingChatModel, Any]:
    model = FakeShoppingChatModel(
        replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)] * 3},
        names_a_product=answer,
    )
    return model, run_graph(model, catalog, request=request)


@pytest.mark.parametrize("answer", ["no", "No.", " no, it does not"])
def test_a_request_the_model_reads_as_open_is_shown_the_shelves(
    answer: str, small_catalog_file: Path
) -> None:
    model, state = run_answered(answer, PERSON, small_catalog_file)
    (question,) = model.questions
    assert question[-1].content == PERSON  # the request, cleaned, and nothing else
    # The worked answers come before it, each a request and its answer in turn.
    shown = [(q.type, q.content) for q in question[1:-1]]
    assert shown == [
        turn
        for request, said in NAMES_A_PRODUCT_EXAMPLES
        for turn in (("human", request), ("ai", said))
    ]
    reading = state["reading"]
    assert reading.model_read_open and reading.open_ended
    assert "<shelves>" in str(model.prompts[0][-1].content)
    assert state["planner_calls"] == 2  # the question, then the plan
    # The model's reading ran as it read it: no override of it.
    assert "kept named by a shelf" not in [o.name for o in overrides_of(state)]


@pytest.mark.parametrize("answer", ["yes", "Yes.", "maybe", "", "nothing named"])
def test_a_request_the_model_does_not_read_as_open_stays_named(
    answer: str, small_catalog_file: Path
) -> None:
    model, state = run_answered(answer, PERSON, small_catalog_file)
    assert state["reading"].model_read_open is False
    # The planner sees no shelves (code may still read its plan as leaving the kinds open).
    assert "<shelves>" not in str(model.prompts[0][-1].content)


def test_a_request_naming_a_shelf_in_other_words_stays_named(small_catalog_file: Path) -> None:
    # The small model answers "no" for a request that names a kind the shop carries.
    model, state = run_answered("no", STRAP, small_catalog_file)
    reading = state["reading"]
    assert reading.model_read_open and not reading.open_ended
    assert "<shelves>" not in str(model.prompts[0][-1].content)
    assert [o.name for o in overrides_of(state)][:1] == ["kept named by a shelf"]


def test_a_gift_is_open_without_asking(small_catalog_file: Path) -> None:
    model, state = run_answered(
        "yes", "a birthday gift for a photographer, $200", small_catalog_file
    )
    assert model.questions == [] and state["reading"].open_ended
    assert state["reading"].model_read_open is None


def test_a_request_listing_an_item_of_a_shelf_stays_named(small_catalog_file: Path) -> None:
    # The request as a whole is near no one shelf; its listed items are each near one.
    model, state = run_answered(
        "no", "a camera strap and trail running shoes, $150 for both", small_catalog_file
    )
    reading = state["reading"]
    assert len(reading.items) == 2 and len(model.questions) == 1
    assert reading.model_read_open and not reading.open_ended
    assert "<shelves>" not in str(model.prompts[0][-1].content)


def test_a_word_of_an_open_request_heading_a_kind_does_not_overrule_the_model(
    small_catalog_file: Path,
) -> None:
    # "kit" heads the shop's lens cleaning kit, but here it is the person's interest: the
    # model read the request as naming nothing to buy, and code does not hide the shelves
    # for the word, nor let the plan's one search stand as the shopper's kind (#40).
    request = "my brother just got into photography with our grandad's old camera kit, $200"
    model, state = run_answered("no", request, small_catalog_file)
    assert state["reading"].model_read_open and state["reading"].open_ended
    assert "<shelves>" in str(model.prompts[0][-1].content)
    searches = [s.query for s in state["plan"].search_steps]
    assert searches[0] == "camera strap" and len(searches) == 2, searches
    assert state["plan"].pick == "one"
    added = "too few kinds the shop has were planned"
    assert any(w.startswith(added) for w in state["plan_warnings"])
