"""A pick step answered in code (graph/checks/decided.py, issue 25): only when no pick the
model could make would change the recommendation, and said so in the step's result."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

from fakes import FakeShoppingChatModel
from langgraph.checkpoint.memory import MemorySaver
from test_bundle_choice import candidate, two_item_plan

from graph.builder import build_graph
from graph.checks.choice import choose, items_of
from graph.checks.decided import decided_in_code
from graph.context import Context


def ids(candidates: list[Any]) -> list[str]:
    return [c.summary.id for c in candidates]


def test_a_clear_best_per_item_within_budget_is_decided_in_code() -> None:
    plan = two_item_plan(200, features=["f0", "f1"])
    pool = [
        candidate("shoe-a", 90, 1, 1, features=2),
        candidate("shoe-b", 80, 1, 2, features=1, rating=5.0),
        candidate("bottle-a", 20, 2, 1, features=1),
        candidate("bottle-b", 15, 2, 2, features=0),
    ]
    decision = decided_in_code(plan, plan.steps[-1], pool)
    assert decision is not None
    assert ids(decision.picks) == ["shoe-a", "bottle-a"]
    assert decision.why.startswith("Decided in code:")
    assert "$110.00 of the $200.00 budget" in decision.why


def test_a_tie_on_kind_and_features_is_left_to_the_model() -> None:
    plan = two_item_plan(200, features=["f0"])
    pool = [
        candidate("shoe-a", 90, 1, 1, features=1),
        candidate("shoe-b", 80, 1, 2, features=1),
        candidate("bottle-a", 20, 2, 1, features=1),
    ]
    assert decided_in_code(plan, plan.steps[-1], pool) is None


def test_a_budget_shared_between_items_is_decided_when_one_choice_is_best() -> None:
    # The best of each together break the budget; of the choices that fit, one alone
    # matches the most wanted features, so the trade-off is arithmetic.
    plan = two_item_plan(100, features=["f0"])
    pool = [
        candidate("shoe-a", 90, 1, 1, features=1),
        candidate("shoe-b", 60, 1, 2, features=0),
        candidate("bottle-a", 20, 2, 1, features=1),
        candidate("bottle-b", 35, 2, 2, features=0),
    ]
    decision = decided_in_code(plan, plan.steps[-1], pool)
    assert decision is not None
    assert ids(decision.picks) == ["shoe-b", "bottle-a"]  # 1 feature; shoe-a fits with none
    assert "$80.00 of the $100.00 budget" in decision.why


def test_a_shared_budget_with_two_equal_choices_is_left_to_the_model() -> None:
    # Within $100, the best shoe with the plain bottle, or the plain shoe with the best
    # bottle: one feature each way. Which to give up is the model's judgement.
    plan = two_item_plan(100, features=["f0"])
    pool = [
        candidate("shoe-a", 70, 1, 1, features=1),
        candidate("shoe-b", 50, 1, 2, features=0),
        candidate("bottle-a", 40, 2, 1, features=1),
        candidate("bottle-b", 20, 2, 2, features=0),
    ]
    assert decided_in_code(plan, plan.steps[-1], pool) is None


def test_nothing_within_the_budget_is_decided_as_the_cheapest() -> None:
    plan = two_item_plan(50, features=["f0"])
    pool = [
        candidate("shoe-a", 90, 1, 1, features=1),
        candidate("shoe-b", 60, 1, 2, features=1),
        candidate("bottle-a", 20, 2, 1, features=1),
    ]
    decision = decided_in_code(plan, plan.steps[-1], pool)
    assert decision is not None
    assert ids(decision.picks) == ["shoe-b", "bottle-a"]
    assert "no choice of one product per item keeps every limit" in decision.why


def test_nothing_of_the_kinds_searched_is_decided_as_no_pick() -> None:
    plan = two_item_plan(100, features=["f0"])
    pool = [candidate("vest-a", 30, 1, 1, of_kind=False)]  # "running shoes" found a vest
    decision = decided_in_code(plan, plan.steps[-1], pool)
    assert decision is not None and decision.picks == []
    assert "nothing to pick" in decision.why
    assert choose(plan, pool, ["vest-a"]).picks == []  # as verify would have it


def test_only_the_plans_last_step_is_decided() -> None:
    plan = two_item_plan(None, features=["f0"])
    pool = [candidate("shoe-a", 90, 1, 1, features=1), candidate("bottle-a", 9, 2, 1)]
    assert decided_in_code(plan, plan.steps[-1], pool) is not None
    assert decided_in_code(plan, plan.steps[0], pool) is None  # a search step


def test_a_decision_is_what_every_model_pick_would_have_given() -> None:
    # The claim behind skipping the call: whenever code decides, choose() returns the
    # same picks whatever the model had picked (one id per item, or none).
    rng = random.Random(25)
    decided = undecided = 0
    for _ in range(300):
        budget = rng.choice([None, 40.0, 60.0, 90.0, 120.0, 200.0])
        plan = two_item_plan(budget, features=["f0", "f1", "f2"])
        pool = [
            candidate(
                f"s{step}-{rank}",
                round(rng.uniform(5, 100), 2),
                step,
                rank,
                rating=rng.choice([3.0, 4.0, 4.5, 5.0]),
                features=rng.randint(0, 3),
            )
            for step in (1, 2)
            for rank in range(1, rng.randint(2, 6))
        ]
        decision = decided_in_code(plan, plan.steps[-1], pool)
        if decision is None:
            undecided += 1
            continue
        decided += 1
        options = [[None, *ids(item.options)] for item in items_of(plan, pool)]
        for model_ids in itertools.product(*options):
            picked = choose(plan, pool, [i for i in model_ids if i is not None]).picks
            assert ids(picked) == ids(decision.picks), (model_ids, ids(decision.picks))
    assert decided >= 30  # the property was tested on enough decided cases
    assert undecided >= 30  # and ties were found, so the test can tell the two apart


PLAN = {
    "goal": "Buy a padded camera strap.",
    "features": ["padded"],
    "steps": [{"query": "camera strap"}, {"query": None, "action": "Pick one strap"}],
}


def run(catalog: Path, **context: Any) -> tuple[FakeShoppingChatModel, dict[str, Any]]:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [PLAN],
            "ReasoningAnswer": [{"answer": "The padded one.", "product_ids": ["strap-2"]}],
        }
    )
    graph = build_graph(checkpointer=MemorySaver())
    ctx = Context(chat_model=model, catalog=str(catalog), auto_approve=True, **context)
    state = graph.invoke(
        {"request": "a padded camera strap"}, {"configurable": {"thread_id": "t"}}, context=ctx
    )
    return model, state


def test_the_executor_answers_a_decided_step_without_a_call(small_catalog_file: Path) -> None:
    model, state = run(small_catalog_file)
    pick_step = state["step_results"][-1]
    assert model.tools_seen == [["Plan"]]  # the planner only: no reasoning call
    assert pick_step.decided_in_code and pick_step.llm_calls == 0
    assert pick_step.answer.startswith("Decided in code:")
    assert [p.id for p in state["outcome"].picks] == [p.id for p in pick_step.products]
    # Plan steps the model wrote without numbers or a search action are numbered in code.
    assert [s.step for s in state["plan"].steps] == [1, 2]
    assert state["plan"].steps[0].action == "Search camera strap"


def test_code_decisions_off_keeps_the_model_call(small_catalog_file: Path) -> None:
    model, state = run(small_catalog_file, code_decisions=False)
    assert model.tools_seen == [["Plan"], ["ReasoningAnswer"]]
    assert not state["step_results"][-1].decided_in_code
