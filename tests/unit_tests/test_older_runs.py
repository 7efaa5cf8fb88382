"""A run an older version saved, without the fields this version stores, is brought up to
this version's shape where it is read (graph/state.py: State.upgrade_older_shapes): a run
paused at approval gets the cleaned request and its limits read from its request; a
finished one is followed up as it was saved (its request as given, no limits carried);
an outcome saved before it named each pick's item names the search that found it."""

from __future__ import annotations

from typing import Any

from graph.parent_run import previous_run_of
from graph.reading.stated import read_limits
from graph.schemas import Outcome, Plan, ProductSummary, StatedLimits
from graph.state import state_of

REQUEST = "  wireless headphones under $100  and a case "
PLAN = Plan.model_validate(
    {
        "goal": "Headphones and a case.",
        "steps": [
            {"query": "wireless headphones"},
            {"query": "headphone case"},
            {"query": None, "action": "Pick one of each"},
        ],
    }
)


def pick(product_id: str, title: str) -> ProductSummary:
    return ProductSummary(id=product_id, title=title, price=20.0, rating=4.0, category="audio")


def test_a_run_paused_at_approval_by_an_older_version_reads_its_limits_from_its_request() -> None:
    state = state_of({"request": REQUEST, "plan": PLAN})
    assert state.reading is not None
    assert state.reading.text == "wireless headphones under $100 and a case"
    assert state.stated_limits == read_limits(state.reading.text)
    assert state.stated_limits.max_price == 100


def test_a_finished_run_an_older_version_saved_is_followed_up_as_it_was_saved() -> None:
    picks = [pick("a", "Sony Wireless Headphones"), pick("b", "Hard Case"), pick("c", "Banana")]
    saved: dict[str, Any] = {
        "request": REQUEST,
        "plan": PLAN.model_dump(),  # plain data, as a strict serializer loads it
        "outcome": Outcome(picks=picks, items={"b": "headphone case"}).model_dump(),
    }
    previous = previous_run_of("old", saved)
    assert previous.request == REQUEST
    assert previous.limits == StatedLimits()
    items = {p.id: p.item for p in previous.picks}
    assert items == {"a": "wireless headphones", "b": "headphone case", "c": ""}
