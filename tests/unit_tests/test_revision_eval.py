"""The revision eval mode (`python -m graph.eval FILE --revisions`, issue 41) over the dev
set on the shipped catalog, with a fake planner (FakeShoppingChatModel) scripted with the
plans and revisions a careful model writes: each case is planned, changed once in its
words at approval, approved and scored. The embedded model's figure needs the model
(tests/integration_tests/test_revision_eval_replay.py replays it once recorded)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeShoppingChatModel
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import MemorySaver
from test_new_dev_sets import (
    test_each_follow_up_names_products_the_shop_carries_within_its_limits as follow_up_check,
)

from graph.builder import build_graph
from graph.context import Context
from graph.evals.follow_ups import CHECKS, load_cases, markdown_table, run_revisions_eval
from graph.evals.main import main

DEV_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "revisions_dev.json"


def searches(*queries: str) -> list[dict[str, Any]]:
    steps = [{"step": n, "action": f"Search {q}", "query": q} for n, q in enumerate(queries, 1)]
    return [*steps, {"step": len(steps) + 1, "action": "Pick the best", "query": None}]


# Case -> (the first plan's queries, the planner's reading of the words, the revision's).
ADD = {"kind": "add", "wants": "lens cleaning kit"}
SCRIPTED = {
    "bag-add-kit": (["camera bag"], ADD, ["lens cleaning kit"]),
    "shoes-drop-bottle": (
        ["running shoes", "water bottle"],
        {"kind": "refine", "item": "water bottle"},
        ["running shoes"],
    ),
    "bag-cheaper": (["camera bag"], {"kind": "cheaper", "item": "camera bag"}, ["camera bag"]),
    "kettle-rating": (["pour-over kettle"], {"kind": "refine"}, ["pour-over kettle"]),
}


def planner_for(cases: list[Any]) -> FakeShoppingChatModel:
    by_request = {case.first: SCRIPTED[case.id] for case in cases}
    by_words = {case.follow_up: SCRIPTED[case.id] for case in cases}

    def plan(messages: list[BaseMessage]) -> dict[str, Any]:
        request = str(messages[-1].content).removeprefix("Shopping request:\n")
        first, _, _ = by_request[request]
        return {"goal": request, "steps": searches(*first)}

    def revision(messages: list[BaseMessage]) -> dict[str, Any]:
        text = str(messages[-1].content)
        assert "It asks to change the plan below" in text
        words = text.removeprefix("Shopping request:\n").split("\n\n")[0]
        _, reading, revised = by_words[words]
        return {"follow_up": reading, "goal": "Revised.", "steps": searches(*revised)}

    def pick(messages: list[BaseMessage]) -> dict[str, Any]:
        ids = re.findall(r"id=(\S+) \|", str(messages[-1].content))
        return {"answer": "The first found.", "product_ids": ids[:1]}

    return FakeShoppingChatModel(
        replies={"Plan": [plan] * 9, "FollowUpPlan": [revision] * 9, "ReasoningAnswer": [pick] * 9}
    )


def test_the_dev_set_has_at_least_15_phrasings_of_every_change_asked() -> None:
    cases = load_cases(DEV_FILE, "revisions")
    assert len(cases) >= 15
    assert all(set(case.expect) <= set(CHECKS) for case in cases)
    changes = {r["change"] for r in json.loads(DEV_FILE.read_text())["revisions"]}
    assert changes == {"cheaper", "dearer", "add", "drop", "swap", "feature", "rating", "total"}


def test_each_case_is_revised_once_and_scored_on_the_run(tmp_path: Path) -> None:
    cases = [c for c in load_cases(DEV_FILE, "revisions") if c.id in SCRIPTED]
    model = planner_for(cases)
    # As `python -m graph.eval` gives it, every plan approved as written: the eval asks.
    context = Context(chat_model=model, auto_approve=True)
    graph = build_graph(checkpointer=MemorySaver())
    report = run_revisions_eval(
        cases, context, graph, label="fake", revisions_file=str(DEV_FILE), progress=False
    )
    results = {r.id: r for r in report.results}
    assert all(r.error is None for r in report.results), [r.error for r in report.results]
    for result in results.values():
        assert result.checks["revised"], result
    assert results["bag-add-kit"].checks == {"revised": True, "kept": True, "new_item": True}
    assert results["shoes-drop-bottle"].checks == {"revised": True, "kept": True, "dropped": True}
    assert results["bag-cheaper"].checks["max_price"]  # the words' $45 replaced the $60
    assert results["kettle-rating"].checks == {
        "revised": True,
        "min_rating": True,
        "max_price": True,  # the request's $60 stays: the words do not change it
    }
    data = report.to_json()
    assert f"{sum(r.passed for r in report.results)}/4 " in markdown_table(data)


def test_the_command_line_asks_for_the_revision_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--revisions"])
    assert "give REVISIONS.json with --revisions" in capsys.readouterr().err


@pytest.mark.parametrize("case", load_cases(DEV_FILE, "revisions"), ids=lambda case: case.id)
def test_each_case_names_products_the_shop_carries_within_its_limits(case: Any) -> None:
    """As the follow-up sets are checked, before any model: a check naming nothing the
    shop sells within the case's limits fails here, not in a recording."""
    follow_up_check(case)
