"""WebShop's reward on hand-computed cases, and the harness's bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import shared_file

from graph.evals.webshop import GoalResult, markdown_table, raw_products, score_goal
from graph.evals.webshop_reward import name_nouns, webshop_reward
from graph.schemas import Outcome, Plan, ProductSummary, StepResult

TARGET = {
    "name": "Trail Running Shoes with Rubber Sole",
    "product_category": "Clothing › Men › Shoes › Athletic › Running",
    "query": "running shoes",
    "Attributes": ["rubber sole", "memory foam"],
    "Title": "Trail Running Shoes with Rubber Sole",
    "BulletPoints": ["Memory foam insole"],
    "Description": "Grippy outsole.",
}
GOAL = {"attributes": ["rubber sole", "memory foam", "slip resistant"], "price_upper": 80.0}


def test_target_product_at_a_good_price_scores_attributes_share() -> None:
    # 2 of 3 attributes + price ok = 3 of 4; same type -> r_type 1.
    reward = webshop_reward(TARGET, 60.0, GOAL, TARGET)
    assert (reward.attributes_matched, reward.price_ok, reward.r_type) == (2, True, 1.0)
    assert reward.reward == pytest.approx(0.75)


def test_over_the_price_cap_loses_the_price_point() -> None:
    reward = webshop_reward(TARGET, 99.0, GOAL, TARGET)
    assert reward.reward == pytest.approx(0.5)  # (2 + 0) / 4


def test_attribute_found_in_description_text_counts() -> None:
    product = {**TARGET, "Attributes": [], "Description": "slip resistant grippy outsole"}
    reward = webshop_reward(product, 10.0, GOAL, TARGET)
    # "rubber sole" in the title, "memory foam" in the bullets, "slip resistant" in the
    # description: 3 + price = 4 of 4.
    assert reward.attributes_matched == 3 and reward.reward == pytest.approx(1.0)


def test_wrong_product_type_scores_zero() -> None:
    lamp = {
        "name": "Ceramic Table Lamp",
        "product_category": "Home › Lighting › Lamps",
        "Attributes": ["rubber sole"],
        "Title": "Ceramic Table Lamp",
    }
    reward = webshop_reward(lamp, 10.0, GOAL, TARGET)
    assert reward.title_score == 0.0 and reward.r_type == 0.0 and reward.reward == 0.0


def test_weak_type_match_is_halved() -> None:
    # One of five target nouns (trail, running, shoes, rubber, sole) is shared, so the
    # title score is 0.2, not above 0.2; no category or query match either: r_type 0.5.
    sandal = {
        "name": "Beach Sandals Shoes",
        "product_category": "Garden",
        "Attributes": [],
        "Title": "Beach Sandals Shoes",
    }
    reward = webshop_reward(sandal, 10.0, GOAL, TARGET)
    assert reward.title_score == pytest.approx(0.2)
    assert reward.r_type == 0.5
    assert reward.reward == pytest.approx(0.125)  # the price point alone, 1 of 4, halved


def test_name_nouns_drop_stop_and_descriptive_words() -> None:
    assert name_nouns("Men's Black Leather Wallet with Zipper") == {
        "men's",
        "leather",
        "wallet",
        "zipper",
    }


def _state(pick: ProductSummary | None, max_price: float | None) -> dict:
    plan = Plan.model_validate(
        {
            "goal": "shoes",
            "budget": None,
            "steps": [
                {"step": 1, "action": "search", "query": "shoes", "max_price": max_price},
                {"step": 2, "action": "pick", "query": None},
            ],
        }
    )
    found = [pick] if pick else []
    return {
        "plan": plan,
        "step_results": [
            StepResult(step=1, kind="search", action="search", products=found),
            StepResult(step=2, kind="reasoning", action="pick", products=found, llm_calls=1),
        ],
        "outcome": Outcome(picks=found),
        "planner_latency_s": 2.5,
    }


def test_score_goal_reports_plan_checks_and_success_flags() -> None:
    raw = {"T1": TARGET}
    goal = {**GOAL, "asin": "T1", "attributes": ["rubber sole", "memory foam"]}
    pick = ProductSummary(id="T1", title="Trail Running Shoes", price=60.0)
    result = GoalResult(1, "T1", "find shoes", "t")
    score_goal(result, _state(pick, 80.0), goal, raw)
    assert result.plan_valid and result.has_search_step and result.price_cap_in_filter
    assert result.exact_success and result.constraint_success and result.target_in_candidates
    assert result.reward == pytest.approx(1.0)
    assert result.llm_calls == 2 and result.latency_s == pytest.approx(2.5)


def test_score_goal_counts_a_product_listed_twice_and_a_search_without_the_cap() -> None:
    pick = ProductSummary(id="T1", title="Trail Running Shoes", price=60.0)
    state = _state(pick, 80.0)
    state["outcome"] = Outcome(picks=[pick, pick])
    state["plan"].steps.insert(
        1, state["plan"].steps[0].model_copy(update={"step": 2, "max_price": None})
    )
    result = GoalResult(1, "T1", "find shoes", "t")
    score_goal(result, state, {**GOAL, "asin": "T1"}, {"T1": TARGET})
    assert result.picks == 2 and result.duplicate_picks == 1
    assert not result.price_cap_in_filter  # one of two searches lacks the cap


def test_score_goal_without_a_pick_scores_zero() -> None:
    result = GoalResult(1, "T1", "find shoes", "t")
    score_goal(result, _state(None, None), {**GOAL, "asin": "T1"}, {"T1": TARGET})
    assert result.reward == 0.0 and not result.price_cap_in_filter
    assert result.zero_result_steps == 1


def test_markdown_table_puts_reports_side_by_side() -> None:
    a = {"label": "direct", "summary": {"mean_reward": 0.5, "errors": 0}}
    b = {"label": "llm", "summary": {"mean_reward": 0.25, "errors": 1}}
    table = markdown_table([a, b])
    assert "| metric | direct | llm |" in table and "| mean reward | 0.50 | 0.25 |" in table


def test_raw_products_reads_the_webshop_file() -> None:
    path: Path = shared_file("webshop", "products_100.jsonl")
    products = raw_products(path)
    assert len(products) == 100
    assert all("product_category" in p and "name" in p for p in products.values())
