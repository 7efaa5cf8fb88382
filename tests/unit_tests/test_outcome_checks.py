"""What the outcome may recommend: nothing for a request that asks for no product, never a
product unrelated to the request, and one product once. A fake chat model stands in for
the LLM (no network)."""

from __future__ import annotations

from pathlib import Path

from fakes import FakeShoppingChatModel, run_graph


def test_a_request_for_no_product_gets_no_search_and_no_recommendation(
    small_catalog_file: Path,
) -> None:
    not_shopping = {
        "goal": "Tell the weather in Paris tomorrow.",
        "budget": None,
        "features": [],
        "shopping": False,
        "steps": [{"step": 1, "action": "Search", "query": "weather paris"}],
    }
    model = FakeShoppingChatModel(replies={"Plan": [not_shopping]})
    # Code decisions off: the model's pick is what is checked (code finds nothing to pick).
    state = run_graph(
        model, small_catalog_file, "what's the weather in Paris tomorrow?", code_decisions=False
    )
    assert model.tools_seen == [["Plan"]]  # the planner only: no search, no pick
    assert state["plan"].steps == [] and state["step_results"] == []
    assert state.get("approval") is None  # nothing to approve: nothing runs
    outcome = state["outcome"]
    assert outcome.not_shopping and outcome.picks == []
    assert "not a shopping request" in outcome.warnings[0]


def test_a_request_stating_a_price_is_never_taken_for_not_shopping(
    small_catalog_file: Path,
) -> None:
    wrong = {"shopping": False, "goal": "g", "budget": None, "steps": []}
    plan = {
        "goal": "A strap.",
        "budget": 40,
        "steps": [
            {"step": 1, "action": "Find straps", "query": "camera strap"},
            {"step": 2, "action": "Pick", "query": None},
        ],
    }
    pick = {"answer": "The padded one.", "product_ids": ["strap-2"]}
    model = FakeShoppingChatModel(replies={"Plan": [wrong, plan], "ReasoningAnswer": [pick]})
    state = run_graph(
        model, small_catalog_file, "a camera strap under $40", code_decisions=False
    )  # the model's pick is what is checked
    assert "states a price or rating limit" in str(model.prompts[1][-1].content)
    assert [p.id for p in state["outcome"].picks] == ["strap-2"]


def test_a_pick_matching_none_of_the_requests_words_is_not_recommended(
    small_catalog_file: Path,
) -> None:
    # The weather request planned as a search anyway: whatever it finds is unrelated.
    plan = {
        "goal": "Weather in Paris tomorrow.",
        "budget": None,
        "steps": [
            {"step": 1, "action": "Search", "query": "burr grinder"},
            {"step": 2, "action": "Pick", "query": None},
        ],
    }
    pick = {"answer": "The grinder.", "product_ids": ["grinder-1"]}
    model = FakeShoppingChatModel(replies={"Plan": [plan], "ReasoningAnswer": [pick]})
    # Code decisions off: the model's pick is what is checked (code finds nothing to pick).
    state = run_graph(
        model, small_catalog_file, "what's the weather in Paris tomorrow?", code_decisions=False
    )
    outcome = state["outcome"]
    assert outcome.picks == []
    assert any("grinder-1 matches none of the request's words" in w for w in outcome.warnings)


def test_one_product_found_by_two_searches_is_counted_once(small_catalog_file: Path) -> None:
    # One item, searched once per feature: both searches find the same strap.
    plan = {
        "goal": "A leather camera strap.",
        "budget": 50,
        "steps": [
            {"step": 1, "action": "Find leather straps", "query": "leather camera strap"},
            {"step": 2, "action": "Find camera straps", "query": "camera strap leather"},
            {"step": 3, "action": "Pick one", "query": None},
        ],
    }
    pick = {"answer": "The leather one, for both.", "product_ids": ["strap-1", "strap-1"]}
    model = FakeShoppingChatModel(replies={"Plan": [plan], "ReasoningAnswer": [pick]})
    state = run_graph(model, small_catalog_file, "a leather camera strap under $50")
    outcome = state["outcome"]
    assert [p.id for p in outcome.picks] == ["strap-1"]
    assert outcome.total_price == 39.0


def test_searches_that_find_the_same_products_are_one_item_with_one_pick(
    small_catalog_file: Path,
) -> None:
    # One sweater searched once per feature: the searches list the same products, so the
    # plan is for one item and the outcome has one pick, not one per search.
    plan = {
        "goal": "A camera strap, padded and leather.",
        "budget": None,
        "steps": [
            {"step": 1, "action": "Find padded straps", "query": "padded camera strap"},
            {"step": 2, "action": "Find leather straps", "query": "leather camera strap"},
            {"step": 3, "action": "Pick", "query": None},
        ],
    }
    pick = {"answer": "Both fit.", "product_ids": ["strap-2", "strap-1"]}
    model = FakeShoppingChatModel(replies={"Plan": [plan], "ReasoningAnswer": [pick]})
    state = run_graph(
        model, small_catalog_file, "a padded leather camera strap", code_decisions=False
    )  # the model's two picks are what is checked
    assert [p.id for p in state["outcome"].picks] == ["strap-2"]
    assert any("one product per kind of item" in w for w in state["step_results"][2].warnings)


def test_with_no_reasoning_pick_each_item_gets_its_best_distinct_product(
    small_catalog_file: Path,
) -> None:
    plan = {
        "goal": "A camera strap and a coffee grinder.",
        "budget": None,
        "steps": [
            {"step": 1, "action": "Find straps", "query": "camera strap"},
            {"step": 2, "action": "Find straps again", "query": "strap camera"},
            {"step": 3, "action": "Find grinders", "query": "burr coffee grinder"},
        ],
    }
    model = FakeShoppingChatModel(replies={"Plan": [plan]})
    state = run_graph(model, small_catalog_file, "a camera strap and a coffee grinder")
    ids = [p.id for p in state["outcome"].picks]
    # Two items: the straps (steps 1 and 2 found the same ones) and the grinder.
    assert len(ids) == len(set(ids)) == 2 and "grinder-1" in ids
