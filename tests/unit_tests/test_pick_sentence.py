"""The pick step's sentence names no product that is not among its results (#34): a
sentence that invents one is replaced by one written in code from the picks."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeShoppingChatModel, plan_reply, run_graph

from catalog.loaders import load_products
from graph.choosing.said import unknown_names

SHIPPED = Path(__file__).resolve().parents[2] / "catalog" / "data" / "products.jsonl"
CAMERAS = [p for p in load_products(SHIPPED) if p.id in {"cam-104", "cam-105", "cam-106"}]
PLAN_WORDS = "Buy a camera under $200. Search cameras cameras Pick the camera"


@pytest.mark.parametrize(
    ("answer", "ids", "titles"),
    [
        ("The Snapwell Mini 12 Instant Camera is the best pick.", [], []),
        ("The Polaroo Mini 12, rated 4.6, is cheaper.", [], []),
        ("Pick cam-104: it is within the $200 budget.", [], []),
        ("The 'Snapwell Mini 12' is great.", [], []),
        ("cam-104 is best, then cam-999.", ["cam-999"], []),
        ('I recommend "Mountains in Monochrome" by Joanne B.', [], ["Mountains in Monochrome"]),
        (
            "Mountains in Monochrome … by Joanne B. makes a lovely gift.",
            [],
            ["Mountains in Monochrome", "Joanne B"],
        ),
        ("A Zephyr Pro Camera beats them all.", [], ["A Zephyr Pro Camera"]),
    ],
)
def test_a_sentence_names_only_what_the_results_hold(
    answer: str, ids: list[str], titles: list[str]
) -> None:
    unknown = unknown_names(answer, CAMERAS, PLAN_WORDS)
    assert unknown.ids == ids
    assert all(t in unknown.titles for t in titles), unknown.titles
    assert bool(unknown) is bool(ids or titles)


CAMERA_PLAN = plan_reply(
    {"action": "Search cameras", "query": "cameras", "max_price": 200},
    {"action": "Pick the camera", "query": None},
    goal="Buy a camera under $200.",
    budget=200,
)


def run(answer: str) -> dict:
    reply = {"answer": answer, "product_ids": ["cam-104"]}
    model = FakeShoppingChatModel(replies={"Plan": [dict(CAMERA_PLAN)], "ReasoningAnswer": [reply]})
    # Code decisions off: the model writes the pick step's sentence.
    return run_graph(model, None, "a camera under $200", code_decisions=False)


def test_an_invented_title_is_replaced_by_a_sentence_from_the_picks() -> None:
    state = run('I recommend "Mountains in Monochrome" by Joanne B., a lovely photo book.')
    step = state["step_results"][-1]
    outcome = state["outcome"]
    assert "Mountains" not in step.answer and "Joanne" not in step.answer
    assert step.answer.startswith("Written in code from the picks:")
    pick = outcome.picks[0]
    assert pick.id == "cam-104"
    # The sentence is the recommendation's: its pick, price and why-line.
    assert f"{pick.id} {pick.title} ($82.95): {outcome.reasons[pick.id]}" in step.answer
    assert any("Mountains in Monochrome" in w and "replaced" in w for w in step.warnings)
    assert outcome.within_budget is True


def test_a_sentence_about_the_results_stands() -> None:
    said = "The Snapwell Mini 12 Instant Camera (cam-104) is the best rated under $200."
    step = run(said)["step_results"][-1]
    assert step.answer == said
    assert not any("replaced" in w for w in step.warnings)
