"""A pick step answered in code (graph/choosing/decided.py, issue 25): when no pick the model
could make would change the recommendation, or when the best choices tie and the type
check is sure of every product in them, and said so in the step's result."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeShoppingChatModel
from langgraph.checkpoint.memory import MemorySaver
from test_bundle_choice import candidate, one_search_plan, two_item_plan

from graph.builder import build_graph
from graph.choosing.choice import choose, coverage_of, items_of
from graph.choosing.decided import decided_in_code
from graph.choosing.picks import _check_title
from graph.context import Context
from graph.schemas import Plan


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


def test_a_tie_among_products_titled_as_their_kind_is_decided_by_rating() -> None:
    plan = two_item_plan(200, features=["f0"])
    pool = [
        candidate("shoe-a", 90, 1, 1, features=1, rating=4.0, titled=True),
        candidate("shoe-b", 80, 1, 2, features=1, rating=4.8, titled=True),
        candidate("shoe-c", 70, 1, 3, features=0, rating=5.0),  # not tied: no need to be sure
        candidate("bottle-a", 20, 2, 1, features=1, titled=True),
    ]
    decision = decided_in_code(plan, plan.steps[-1], pool)
    assert decision is not None and decision.by_rating
    assert ids(decision.picks) == ["shoe-b", "bottle-a"]
    assert "tie on the kind searched for and the most wanted features" in decision.why
    assert "best rated" in decision.why
    # What the model could have picked instead: the other tied shoe, never shoe-c; but
    # shoe-b outdoes shoe-a on every count (rated higher, cheaper), so it stands (#34).
    assert ids(choose(plan, pool, ["shoe-a"]).picks) == ["shoe-b", "bottle-a"]
    assert ids(choose(plan, pool, ["shoe-c"]).picks) == ids(decision.picks)


def test_a_tie_with_a_product_that_only_names_the_kind_is_left_to_the_model() -> None:
    # A lens cleaning kit whose text names prime lenses ties with a prime lens on type:
    # the kit's title says it is a kit, so which is the lens is the model's judgement.
    plan = one_search_plan("A prime lens.", "prime lens")
    lens = candidate("lens", 134.99, 1, 1, rating=4.7)
    kit = candidate("kit", 15.0, 1, 2, rating=5.0)
    _check_title(lens, "Aperta 50mm f/1.8 Prime Lens for E Mount", ["prime lens"])
    _check_title(kit, "Northlight 5-Piece Lens Cleaning Kit", ["prime lens"])
    assert lens.titled_as_kind and not kit.titled_as_kind
    assert coverage_of(lens, plan) == coverage_of(kit, plan)  # the tie
    assert decided_in_code(plan, plan.steps[-1], [lens, kit]) is None
    kit_titled = candidate("kit", 15.0, 1, 2, rating=5.0, titled=True)  # were it sure
    decision = decided_in_code(plan, plan.steps[-1], [lens, kit_titled])
    assert decision is not None and ids(decision.picks) == ["kit"]


def test_a_gifts_tie_across_kinds_is_left_to_the_model_and_within_one_kind_is_not() -> None:
    plan = two_item_plan(200, pick="one")  # "a gift for a runner": shoes or a bottle
    shoe = candidate("shoe", 90, 1, 1, rating=4.1, titled=True)
    bottle = candidate("bottle", 20, 2, 1, rating=4.7, titled=True)
    assert decided_in_code(plan, plan.steps[-1], [shoe, bottle]) is None  # which kind
    other_shoe = candidate("shoe-b", 80, 1, 2, rating=4.6, titled=True)
    lesser_bottle = candidate("bottle", 20, 2, 1, features=0, titled=True)
    lesser_bottle.type_words = []  # names none of its query's words: out of the tie
    decision = decided_in_code(plan, plan.steps[-1], [shoe, other_shoe, lesser_bottle])
    assert decision is not None and decision.by_rating and ids(decision.picks) == ["shoe-b"]


@pytest.mark.parametrize(
    ("title", "query", "titled"),
    [
        ("Ridgeline 2-Person Ultralight Backpacking Tent", "tents", True),
        ("Ridgeline 30F Synthetic Sleeping Bag", "sleeping bags", True),
        ("Bluetooth Headphones Over Ear, Wireless Headphones with Mic", "headphones", True),
        ("Stainless Steel Water Bottle - 32 oz, Leak Proof", "water bottle", True),
        ("Water Bottle Holder for Bikes", "water bottle", False),
        ("Tent Stakes, 10 Pack", "tent", False),
        ("Case for Phone 15", "phone case", True),
        ("Essence Mascara Lash Princess", "mascara", False),  # a name, not a kind, last
    ],
)
def test_titled_as_kind_reads_the_head_of_each_part_of_the_title(
    title: str, query: str, titled: bool
) -> None:
    product = candidate("p", 10, 1, 1)
    _check_title(product, title, [query])
    assert product.titled_as_kind is titled


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
    # The claim behind skipping the call. Whenever code decides on the checks alone,
    # choose() returns the same picks whatever the model had picked (one id per item, or
    # none). Whenever rating breaks a tie instead, every tied product is titled as its
    # kind, and whatever the model had picked scores the same on kind, features and
    # compound: the model could only have broken the tie another way.
    rng = random.Random(25)
    decided = by_rating = undecided = 0
    for _ in range(400):
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
                titled=rng.random() < 0.7,
            )
            for step in (1, 2)
            for rank in range(1, rng.randint(2, 6))
        ]
        decision = decided_in_code(plan, plan.steps[-1], pool)
        if decision is None:
            undecided += 1
            continue
        options = [[None, *ids(item.options)] for item in items_of(plan, pool)]
        if decision.by_rating:
            by_rating += 1
            assert ids(decision.picks) == ids(choose(plan, pool, []).picks)
        else:
            decided += 1
        for model_ids in itertools.product(*options):
            picked = choose(plan, pool, [i for i in model_ids if i is not None]).picks
            if not decision.by_rating:
                assert ids(picked) == ids(decision.picks), (model_ids, ids(decision.picks))
                continue
            assert all(c.titled_as_kind for c in picked)
            assert summed_checks(picked, plan) == summed_checks(decision.picks, plan)
    # Each kind of case was tested often enough to tell the kinds apart.
    assert decided >= 30 and by_rating >= 30 and undecided >= 30, (decided, by_rating)


def summed_checks(picks: list[Any], plan: Plan) -> tuple[float, ...]:
    scores = [(*coverage_of(c, plan), float(c.names_compound)) for c in picks]
    return tuple(round(sum(part), 9) for part in zip(*scores, strict=True))


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
    # The why-line says who decided: a step code answered is no model's pick.
    assert not any("model's pick" in r for r in state["outcome"].reasons.values())


def test_code_decisions_off_keeps_the_model_call(small_catalog_file: Path) -> None:
    model, state = run(small_catalog_file, code_decisions=False)
    assert model.tools_seen == [["Plan"], ["ReasoningAnswer"]]
    assert not state["step_results"][-1].decided_in_code
    assert any("the model's pick" in r for r in state["outcome"].reasons.values())


def test_one_pick_score_serves_the_choice_and_the_code_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A check added to the request's checks (choice.REQUEST_CHECKS) changes both what
    code chooses and what it decides without the model: there is one score, not two."""
    from graph.choosing import choice

    plan = two_item_plan(200, features=["f0"])
    pool = [
        candidate("shoe-a", 90, 1, 1, features=1),
        candidate("shoe-b", 80, 1, 2, features=1),
        candidate("bottle-a", 20, 2, 1, features=1),
    ]
    # Tied on kind and features: the model's pick decides, so code leaves the step to it.
    assert decided_in_code(plan, plan.steps[-1], pool) is None
    assert ids(choose(plan, pool, ["shoe-a"]).picks) == ["shoe-a", "bottle-a"]

    def cheaper(c: Any, plan: Plan) -> float:
        return -c.summary.price

    monkeypatch.setattr(choice, "REQUEST_CHECKS", (*choice.REQUEST_CHECKS, cheaper))
    decision = decided_in_code(plan, plan.steps[-1], pool)
    assert decision is not None and ids(decision.picks) == ["shoe-b", "bottle-a"]
    # The same check now outranks the model's pick in the choice.
    assert ids(choose(plan, pool, ["shoe-a"]).picks) == ["shoe-b", "bottle-a"]
    # And the why-line compares on it: the model's pick matches less of the request.
    assert (
        "in place of the model's pick shoe-a: matches less of the request"
        in (choose(plan, pool, ["shoe-a"]).reasons["shoe-b"])
    )
