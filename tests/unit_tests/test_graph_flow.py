"""Flow tests of the whole graph with a fake chat model (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import PHOTO_GIFT_REQUEST, REASONING_FIRST_PLAN, FakeShoppingChatModel, run_graph
from langgraph.checkpoint.memory import MemorySaver

from catalog import open_catalog
from graph.builder import build_graph
from graph.context import Context
from graph.schemas import Plan

REQUEST = PHOTO_GIFT_REQUEST

PHOTO_PLAN = {
    "goal": "Find a photography gift under $200.",
    "budget": 200,
    "steps": [
        {"step": 1, "action": "Find camera straps", "query": "camera strap", "max_price": 200},
        # Nothing within $1: no shelf can stand in for it, and it finds nothing.
        {
            "step": 2,
            "action": "Find unicorn telescopes",
            "query": "unicorn telescope",
            "max_price": 1,
        },
        {"step": 3, "action": "Find lens cleaning kits", "query": "lens cleaning kit"},
        {"step": 4, "action": "Pick the best gift within budget", "query": None},
    ],
}


def photo_model(pick: list[str] | None = None) -> FakeShoppingChatModel:
    return FakeShoppingChatModel(
        replies={
            "Plan": [PHOTO_PLAN],
            "ReasoningAnswer": [
                {"answer": "The leather strap.", "product_ids": pick or ["strap-1"]}
            ],
        }
    )


def test_plan_runs_in_order_and_zero_result_step_continues(small_catalog_file: Path) -> None:
    model = photo_model()
    state = run_graph(model, small_catalog_file)

    plan: Plan = state["plan"]
    results = state["step_results"]
    assert [r.step for r in results] == [1, 2, 3, 4]
    assert [r.kind for r in results] == ["search", "search", "search", "reasoning"]
    assert results[0].products[0].id in {"strap-1", "strap-2"}
    assert results[1].products == []
    assert any("no products matched" in w for w in results[1].warnings)
    assert results[2].products[0].id == "clean-1"
    assert plan.budget == 200
    # A gift that names no kind searched: the plan recommends the single best one (#22).
    assert plan.pick == "one"
    outcome = state["outcome"]
    assert [p.id for p in outcome.picks] == ["strap-1"]
    assert outcome.total_price == 39.0 and outcome.within_budget is True
    assert outcome.missing == []
    assert "the model's pick" in outcome.reasons["strap-1"]
    assert any("step 2 found no products" in w for w in outcome.warnings)


def test_a_catalog_passed_in_the_context_is_the_one_searched(small_catalog_file: Path) -> None:
    """A test injects the catalog as it injects the chat model: the tool, the executor
    and verify use the handle in the context, never the catalog path beside it."""
    searched: list[str] = []
    catalog = open_catalog(str(small_catalog_file))
    search = catalog.search

    def counting_search(query: str, *args: Any, **kwargs: Any) -> Any:
        searched.append(query)
        return search(query, *args, **kwargs)

    catalog.search = counting_search  # type: ignore[method-assign]
    state = run_graph(
        photo_model(), small_catalog_file.parent / "no-such-catalog.jsonl", catalog_backend=catalog
    )
    assert searched, "the injected catalog was not searched"
    assert [p.id for p in state["outcome"].picks] == ["strap-1"]


def test_direct_mode_makes_one_call_per_reasoning_step_plus_plan(
    small_catalog_file: Path,
) -> None:
    model = photo_model()
    run_graph(model, small_catalog_file)
    # The planner and one reasoning step; the three searches made no LLM call.
    assert model.tools_seen == [["Plan"], ["ReasoningAnswer"]]


def test_reasoning_step_sees_compact_results_not_the_request(small_catalog_file: Path) -> None:
    model = photo_model()
    run_graph(model, small_catalog_file)
    reasoning_prompt = "\n".join(str(m.content) for m in model.prompts[-1])
    assert "birthday" not in reasoning_prompt and "photography, under" not in reasoning_prompt
    assert "id=strap-1" in reasoning_prompt and "$39.00" in reasoning_prompt
    assert "<catalog_data>" in reasoning_prompt
    # Compact: titles, not descriptions or raw tool payloads.
    assert "Soft leather neck strap" not in reasoning_prompt
    assert '"products"' not in reasoning_prompt


def test_llm_tool_mode_lets_the_model_choose_arguments(small_catalog_file: Path) -> None:
    model = photo_model()
    model.replies["search_products"] = [
        {"query": "leather strap", "max_price": 100},
        {"query": "zzz nothing"},
        {"query": "cleaning kit"},
    ]
    state = run_graph(model, small_catalog_file, tool_mode="llm")
    results = state["step_results"]
    assert results[0].products[0].id == "strap-1"
    assert results[0].llm_calls == 1 and results[0].usage.input_tokens > 0
    assert model.tools_seen.count(["search_products"]) == 3
    # The executor saw only the step, not the request.
    search_prompts = [
        p for p, t in zip(model.prompts, model.tools_seen, strict=False) if t == ["search_products"]
    ]
    assert all("birthday" not in str(m.content) for p in search_prompts for m in p)
    # The search's usage and start time travel in state, not inside the tool-call message.
    assert state["dispatched"].step == 3 and state["dispatched"].llm_calls == 1
    assert all("step_started" not in m.additional_kwargs for m in state["messages"])


def test_search_steps_are_timed_and_counted_from_state(small_catalog_file: Path) -> None:
    state = run_graph(photo_model(), small_catalog_file)
    searches = [r for r in state["step_results"] if r.kind == "search"]
    assert all(r.llm_calls == 0 and r.usage.total_tokens == 0 for r in searches)
    assert all(0 < r.latency_s < 60 for r in searches)
    assert state["dispatched"].step == 3 and state["dispatched"].llm_calls == 0


def two_step_plan(query: str) -> dict[str, Any]:
    return {
        "goal": "A camera gift under $200.",
        "budget": 200,
        "steps": [
            {"step": 1, "action": "Find camera gear", "query": query},
            {"step": 2, "action": "Pick one", "query": None},
        ],
    }


def two_item_plan(budget: float, first: str, second: str) -> dict[str, Any]:
    return {
        "goal": f"Two things for ${budget:g} in total.",
        "budget": budget,
        "steps": [
            {"step": 1, "action": "Find the first", "query": first},
            {"step": 2, "action": "Find the second", "query": second},
            {"step": 3, "action": "Pick one of each", "query": None},
        ],
    }


def test_over_budget_total_is_flagged_when_nothing_fits(small_catalog_file: Path) -> None:
    # Each item is under the $200 cap every search carries; together they are not, and
    # no other choice of one each fits.
    model = FakeShoppingChatModel(
        replies={
            "Plan": [two_item_plan(200, "trail running shoes", "burr coffee grinder")],
            "ReasoningAnswer": [
                {"answer": "Both.", "product_ids": ["shoe-1", "grinder-1", "made-up-9"]}
            ],
        }
    )
    state = run_graph(
        model,
        small_catalog_file,
        request="trail shoes and a coffee grinder, $200 total",
        code_decisions=False,  # the model's picks are what is checked here
    )
    outcome = state["outcome"]
    assert [p.id for p in outcome.picks] == ["shoe-1", "grinder-1"]
    assert outcome.total_price == 218.0
    assert outcome.within_budget is False
    assert any("over the budget" in w for w in outcome.warnings)
    assert any("made-up-9" in w for w in state["step_results"][2].warnings)


def test_over_budget_total_is_replaced_in_code_when_a_choice_fits(
    small_catalog_file: Path,
) -> None:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [two_item_plan(50, "camera strap", "lens cleaning kit")],
            "ReasoningAnswer": [{"answer": "Both.", "product_ids": ["strap-1", "clean-1"]}],
        }
    )
    state = run_graph(
        model,
        small_catalog_file,
        request="a camera strap and a lens cleaner, $50 total",
        code_decisions=False,  # the model's picks are what is checked here
    )
    outcome = state["outcome"]
    assert outcome.total_price <= 50 and outcome.within_budget is True
    replaced = [i for i in ("strap-1", "clean-1") if i not in {p.id for p in outcome.picks}]
    assert replaced, outcome.picks
    assert any(
        f"in place of the model's pick {i}" in r for r in outcome.reasons.values() for i in replaced
    )


def _planned_in_code(catalog_file: Path, request: str) -> tuple[FakeShoppingChatModel, Any]:
    """A run of `request` whose planner returns an invalid plan twice, and its model."""
    bad = {"goal": "x", "budget": None, "steps": [{"step": 2, "action": "a", "query": "q"}]}
    model = FakeShoppingChatModel(
        replies={
            "Plan": [bad, bad],
            "ReasoningAnswer": [{"answer": "The padded one.", "product_ids": ["strap-2"]}],
        }
    )
    return model, run_graph(model, catalog_file, request=request, code_decisions=False)


def test_invalid_plan_twice_gives_a_fallback_plan_built_from_the_request(
    small_catalog_file: Path,
) -> None:
    model, state = _planned_in_code(small_catalog_file, "a padded camera strap, nothing over $30")
    assert model.tools_seen == [["Plan"], ["Plan"], ["ReasoningAnswer"]]
    assert "was rejected" in str(model.prompts[1][-1].content)
    # Each plan the model wrote is a call counted, and the question before them.
    assert len(model.questions) == 1 and state["planner_calls"] == 3
    plan = state["plan"]
    assert plan.built_in_code is not None and "numbered" in plan.built_in_code
    assert "pydantic" not in plan.built_in_code  # no help links in a message for people
    # One search with the request's product words and its stated limit, then a pick: no
    # word of the limit ("nothing") is searched for or wanted.
    [search, pick] = plan.steps
    assert search.query == "padded camera strap"
    assert plan.features == ["padded", "camera", "strap"]
    assert search.max_price == 30 and search.filled_from_request == ["max_price"]
    assert pick.query is None
    assert [p.id for p in state["outcome"].picks] == ["strap-2"]


def test_a_fallback_search_ends_at_the_last_word_the_shop_carries_as_a_kind(
    small_catalog_file: Path,
) -> None:
    # "do" is a product word to the reader, but no kind: a search ending in it would find
    # nothing of its kind (the query's last word), though the shop has padded straps.
    request = "which padded camera straps do you have? nothing over $30"
    _, state = _planned_in_code(small_catalog_file, request)
    assert state["reading"].product_words[-1] == "do"
    assert state["plan"].steps[0].query == "padded camera straps"
    assert [p.id for p in state["outcome"].picks] == ["strap-2"]


def test_invalid_plan_twice_for_a_request_naming_no_product_is_a_planning_error(
    small_catalog_file: Path,
) -> None:
    from graph.schemas import PlanningError

    bad = {"goal": "x", "budget": None, "steps": []}
    model = FakeShoppingChatModel(replies={"Plan": [bad, bad]})
    with pytest.raises(PlanningError, match="names no product to search for"):
        run_graph(model, small_catalog_file, request="🎁 🎁 🎁")


def test_a_plan_over_the_step_limit_twice_is_refused_naming_the_limit(
    small_catalog_file: Path,
) -> None:
    from graph.schemas import MAX_PLAN_STEPS, PlanningError

    steps = [{"step": n, "action": f"Find item {n}", "query": f"item {n}"} for n in range(1, 13)]
    long = {"goal": "A camping kit.", "budget": 300, "steps": steps}
    model = FakeShoppingChatModel(replies={"Plan": [long, long]})
    with pytest.raises(PlanningError) as caught:
        run_graph(model, small_catalog_file, request="a 12-item camping list for $300")
    assert f"more than {MAX_PLAN_STEPS} plan steps" in str(caught.value)
    assert "group" in str(caught.value)


def test_invalid_plan_fixed_on_the_single_retry(small_catalog_file: Path) -> None:
    bad = {"goal": "x", "budget": None, "steps": []}
    model = photo_model()
    model.replies["Plan"].insert(0, bad)
    state = run_graph(model, small_catalog_file)
    assert len(state["plan"].steps) == 4


def start_paused(model: FakeShoppingChatModel, catalog: Path) -> tuple[Any, Context, dict]:
    graph = build_graph(checkpointer=MemorySaver())
    context = Context(chat_model=model, catalog=str(catalog))
    config = {"configurable": {"thread_id": "gate"}}
    graph.invoke({"request": REQUEST}, config, context=context)
    return graph, context, config


def test_plan_waits_for_approval_with_plan_and_estimate(small_catalog_file: Path) -> None:
    graph, _, config = start_paused(photo_model(), small_catalog_file)
    snapshot = graph.get_state(config)
    assert snapshot.next == ("approval",)
    payload = snapshot.interrupts[0].value
    assert [s["step"] for s in payload["plan"]["steps"]] == [1, 2, 3, 4]
    assert payload["estimate"]["llm_calls"] == 1  # one reasoning step; searches are free
    assert payload["estimate"]["usd"] == 0.0
    assert snapshot.values.get("step_results", []) == []


def test_rejected_plan_ends_cleanly_and_no_tool_fires(small_catalog_file: Path) -> None:
    from langgraph.types import Command

    model = photo_model()
    graph, context, config = start_paused(model, small_catalog_file)
    final = graph.invoke(Command(resume={"approved": False}), config, context=context)
    assert final["approval"] == "rejected"
    assert final.get("step_results", []) == [] and final.get("outcome") is None
    # No tool call was ever dispatched (messages are in the thread, not the output).
    assert graph.get_state(config).values.get("messages", []) == []
    assert model.tools_seen == [["Plan"]]  # only the planner node ran
    assert graph.get_state(config).next == ()


def test_approved_plan_resumes_and_runs_every_step(small_catalog_file: Path) -> None:
    from langgraph.types import Command

    graph, context, config = start_paused(photo_model(), small_catalog_file)
    final = graph.invoke(Command(resume="yes"), config, context=context)
    assert final["approval"] == "approved"
    assert [r.step for r in final["step_results"]] == [1, 2, 3, 4]


def test_estimate_counts_llm_calls_per_tool_mode(small_catalog_file: Path) -> None:
    from graph.cost import estimate_plan_cost

    plan = Plan.model_validate(PHOTO_PLAN)
    direct = estimate_plan_cost(plan, Context(tool_mode="direct"))
    llm = estimate_plan_cost(plan, Context(tool_mode="llm"))
    assert direct.llm_calls == 1 and llm.llm_calls == 4
    assert llm.input_tokens > direct.input_tokens > 0
    priced = estimate_plan_cost(plan, Context(provider="openai", model="gpt-4o-mini"))
    assert priced.price_known and priced.usd > 0


def test_one_product_is_kept_per_search_step(small_catalog_file: Path) -> None:
    model = photo_model(pick=["strap-1", "strap-2", "clean-1"])
    state = run_graph(model, small_catalog_file)
    reasoning = state["step_results"][-1]
    # strap-1 and strap-2 both came from the strap search; clean-1 from the kit search.
    assert [p.id for p in reasoning.products] == ["strap-1", "clean-1"]
    assert any("dropped strap-2" in w for w in reasoning.warnings)


def test_price_cap_written_as_min_price_is_moved_to_max_price_with_a_note(
    small_catalog_file: Path,
) -> None:
    swapped = {
        "goal": "A strap under $50.",
        "budget": 50,
        "steps": [
            {"step": 1, "action": "Find straps", "query": "camera strap", "min_price": 50},
            {"step": 2, "action": "Pick one", "query": None},
        ],
    }
    model = FakeShoppingChatModel(
        replies={
            "Plan": [swapped],
            "ReasoningAnswer": [{"answer": "None fit.", "product_ids": []}],
        }
    )
    state = run_graph(model, small_catalog_file, request="a camera strap under $50")
    assert (
        "step 1: price floor $50.00 is the request's cap, not a floor: removed"
        in (state["plan_warnings"])
    )
    step = state["plan"].steps[0]
    assert step.min_price is None and step.max_price == 50
    assert step.filled_from_request == ["max_price"]


def test_planner_tool_schema_is_compact_and_shows_only_what_the_model_writes() -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    tool = convert_to_openai_tool(Plan)["function"]
    assert tool["description"] == Plan.__doc__
    step = tool["parameters"]["properties"]["steps"]["items"]
    assert "description" not in step  # rules live once, in the planner prompt
    assert all("description" not in prop for prop in step["properties"].values())
    assert step["properties"]["max_price"] == {"type": ["number", "null"]}
    # Code fills the step filters from the request (graph/shaping/limits.py), so the model may
    # leave them out, as it may category; fields code writes are not shown to it at all.
    assert step["required"] == ["step", "action", "query"]
    assert "filled_from_request" not in step["properties"]
    # shopping comes first: the model decides there is something to buy, then plans it.
    assert tool["parameters"]["required"] == ["shopping", "goal", "features", "steps"]
    # The budget is read from the request in code, like the step filters.
    assert "budget" not in tool["parameters"]["properties"]
    assert "built_in_code" not in tool["parameters"]["properties"]
    # Code still builds steps with the optional fields left out.
    assert Plan.model_validate(PHOTO_PLAN).steps[1].min_rating is None


def test_reasoning_prompt_stays_small_when_many_searches_overlap() -> None:
    # The shape that overflowed a 4,096-token context: one search per wanted feature,
    # each finding much the same products, all with long catalog titles.
    from graph.prompts import MAX_LISTED_PRODUCTS, MAX_TITLE_CHARS, compact_results
    from graph.schemas import ProductSummary, StepResult

    words = [f"feature{n} free" for n in range(1, 10)]
    plan = Plan.model_validate(
        {
            "goal": "Buy a drink with every feature.",
            "budget": None,
            "features": words,
            "steps": [
                *(
                    {"step": n, "action": f"Search {w}", "query": f"{w} drink"}
                    for n, w in enumerate(words, start=1)
                ),
                {"step": 10, "action": "Pick one drink", "query": None},
            ],
        }
    )
    long_title = "Plant Based Protein Shake, Dairy-Free, Gluten-Free, Soy-Free " * 4
    results = [
        StepResult(
            step=n,
            kind="search",
            action=f"Search {w}",
            # Three of each step's seven products are shared with every other step:
            # 39 distinct products, more than the cap.
            products=[
                ProductSummary(
                    id=f"shared-{r}" if r < 3 else f"s{n}-{r}", title=long_title, price=10 + r
                )
                for r in range(7)
            ],
        )
        for n, w in enumerate(words, start=1)
    ]
    text = compact_results(plan, results)
    listed = [line for line in text.splitlines() if "id=" in line]
    ids = [line.split("id=")[1].split(" |")[0] for line in listed]
    assert len(ids) == len(set(ids)) == MAX_LISTED_PRODUCTS  # each once, capped
    assert {"shared-0", "shared-1", "shared-2"} <= set(ids)
    # Every step keeps its own best-ranked product.
    assert all(f"s{n}-3" in ids for n in range(1, 10))
    assert all(len(line.split(" | ")[1]) <= MAX_TITLE_CHARS for line in listed)
    assert "more: listed under another step or cut for length" in text
    assert len(text) < 30 * 200  # well inside a 4k-token context with the prompt around it


def test_later_reasoning_step_reads_earlier_answers_not_their_searches(
    small_catalog_file: Path,
) -> None:
    # search, reason, search, reason: the second reasoning step reads the first one's
    # answer and pick, and the search after it, but not the search the first condensed.
    plan = {
        "goal": "Buy a camera strap and running shoes.",
        "budget": None,
        "steps": [
            {"step": 1, "action": "Find camera straps", "query": "camera strap"},
            {"step": 2, "action": "Pick the best strap", "query": None},
            {"step": 3, "action": "Find running shoes", "query": "trail running shoes"},
            {"step": 4, "action": "Pick the shoes to go with the strap", "query": None},
        ],
    }
    model = FakeShoppingChatModel(
        replies={
            "Plan": [plan],
            "ReasoningAnswer": [
                {"answer": "The leather strap.", "product_ids": ["strap-1"]},
                {"answer": "The strap and the trail shoes.", "product_ids": ["strap-1", "shoe-1"]},
            ],
        }
    )
    state = run_graph(
        model,
        small_catalog_file,
        "a camera strap and running shoes",
        code_decisions=False,  # what the model's second call reads is checked here
    )
    first, second = ("\n".join(str(m.content) for m in p) for p in model.prompts[-2:])
    assert "id=strap-2" in first  # the first reasoning step saw the whole strap search
    assert "Step 2 answer: The leather strap." in second and "id=strap-1" in second
    assert "id=shoe-1" in second
    assert "id=strap-2" not in second and "Step 1 search" not in second
    assert [p.id for p in state["outcome"].picks] == ["strap-1", "shoe-1"]


def test_openai_strict_schema_still_lists_every_field() -> None:
    # OpenAI and Azure get response_format=json_schema in strict mode, which rejects an
    # object whose properties are not all required; the SDK's strict conversion adds the
    # optional ones back, so the compact schema stays valid there.
    from openai.lib._parsing._completions import type_to_response_format_param

    schema = type_to_response_format_param(Plan)["json_schema"]["schema"]
    step = schema["$defs"]["PlanStep"]
    assert step["required"] == list(step["properties"])
    assert schema["required"] == list(schema["properties"])
    assert step["additionalProperties"] is False and schema["additionalProperties"] is False
    assert all("default" not in prop for prop in step["properties"].values())


def test_a_reasoning_step_planned_before_any_search_is_named_at_approval_and_in_its_result(
    small_catalog_file: Path,
) -> None:
    """It ran on no results with no word about it. The plan still runs as written (no
    replan); an edit with the same shape is checked the same way."""
    from graph.shaping import edit_of
    from graph.state import state_of

    early = REASONING_FIRST_PLAN
    model = FakeShoppingChatModel(
        replies={
            "Plan": [early],
            "ReasoningAnswer": [
                {"answer": "Nothing to compare yet.", "product_ids": []},
                {"answer": "The leather strap.", "product_ids": ["strap-1"]},
            ],
        }
    )
    values = run_graph(model, small_catalog_file, "a camera strap under $200", code_decisions=False)
    named = (
        "step 1 (reasoning) comes before any search, so it has no results to compare; "
        "edit the plan to move it after the searches"
    )
    assert named in values["plan_warnings"]
    first, search, pick = values["step_results"]
    assert first.warnings == ["no search had run before this step: it had no results to read"]
    assert search.warnings == [] and pick.warnings == []
    state = state_of(values)
    assert state.plan is not None and state.stated_limits is not None
    edited = Plan.model_validate({**early, "goal": "An edited goal."})
    edit = edit_of(state.stated_limits, state.plan, edited)
    assert edit is not None and named in edit.warnings
