"""Plain requests a shopper really types, through the real planner node and CLI with a
fake model: a query that is only a limit, a limit in another currency, an impossible
limit, and a purchase the model called "not shopping" (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import FakeShoppingChatModel, plan_reply, run_graph

from graph.schemas import RequestError

# The planner's answers here: a shopping plan with no features.
PLAIN: dict[str, Any] = {"goal": "Buy it.", "shopping": True, "features": []}


PICK_STEP = {"action": "Pick one", "query": None}


# ---------------------------------------------------------------- a query that is only a limit


@pytest.mark.parametrize(
    "request_text",
    [
        "under 200 dollars a pair of running shoes please",
        "for less than two hundred bucks, trail running shoes",
    ],
)
def test_a_search_for_the_limit_alone_searches_the_product_instead(
    request_text: str, small_catalog_file: Path
) -> None:
    """The model put the limit in the query and the product in the action: the search
    runs for the product, under the limit, and the plan says where its words came from."""
    query = "under 200 dollars" if "200" in request_text else "less than 200 bucks"
    plan = plan_reply({"action": "Search running shoes", "query": query}, PICK_STEP, **PLAIN)
    pick = {"answer": "These.", "product_ids": ["shoe-1"]}
    model = FakeShoppingChatModel(replies={"Plan": [plan], "ReasoningAnswer": [pick]})
    state = run_graph(model, small_catalog_file, request_text)
    search = state["plan"].steps[0]
    assert search.query == "running shoes"
    assert any(
        "searched for 'running shoes' (from the step's action)" in w for w in state["plan_warnings"]
    )
    assert [p.id for p in state["step_results"][0].products] == ["shoe-1"]
    assert [p.id for p in state["outcome"].picks] == ["shoe-1"]


# ---------------------------------------------------------------- an impossible limit


@pytest.mark.parametrize(
    ("request_text", "named"),
    [
        ("a birthday gift under $-5", "$-5"),
        ("a camera for at most 0 dollars", "at most 0 dollars"),
        ("headphones under $" + "9" * 400, "under $999"),
    ],
)
def test_an_impossible_limit_is_refused_before_any_call(
    request_text: str, named: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    model = FakeShoppingChatModel(replies={})
    with pytest.raises(RequestError, match="a limit no product can meet"):
        run_graph(model, small_catalog_file, request_text)
    assert model.prompts == []  # not even the planner was called
    script = FakeScript(replies={})
    with fake_openai_server(script) as url:
        run = graph_run_process(
            url, isolated_data_dir, request_text, "--yes", "--catalog", str(small_catalog_file)
        )
        listing = graph_run_process(url, isolated_data_dir, "--list")
    output = run.stdout + run.stderr
    assert run.returncode == 2 and "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and named in errors[0], output
    assert "--resume" not in output  # nothing was saved: there is nothing to resume
    assert script.requests == []
    assert "no runs" in listing.stdout.lower(), listing.stdout


# ---------------------------------------------------------------- another currency


def test_a_limit_in_euros_is_shown_as_stated_at_approval_and_never_applied(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    plan = plan_reply(
        {"action": "Search coffee grinders", "query": "coffee grinder under €200"}, **PLAIN
    )
    plan["steps"].append({"step": 2, "action": "Pick one", "query": None})
    pick = {"answer": "The burr grinder.", "product_ids": ["grinder-1"]}
    script = FakeScript(replies={"Plan": [plan, dict(plan)], "ReasoningAnswer": [pick]})
    request = "under €200: a coffee grinder"
    catalog = ("--catalog", str(small_catalog_file))
    with fake_openai_server(script) as url:
        paused = graph_run_process(url, isolated_data_dir, request, *catalog, COLUMNS="300")
        as_json = graph_run_process(
            url, isolated_data_dir, request, "--yes", "--json", *catalog, COLUMNS="300"
        )
    assert paused.returncode == 3, paused.stdout + paused.stderr  # paused at approval
    shown = " ".join(paused.stdout.split())  # the plan's title wraps to the table's width
    assert "(budget under €200 as stated, not applied: prices are in USD)" in shown
    assert "'under €200' in EUR, but the catalog's prices are in USD" in shown
    report = json.loads(as_json.stdout)
    assert report["plan"]["budget"] is None
    assert report["plan"]["steps"][0]["query"] == "coffee grinder"  # the limit is no word
    assert report["plan"]["steps"][0]["max_price"] is None  # not converted at any rate
    outcome = report["outcome"]
    assert outcome["unapplied_limits"] == ["under €200 (EUR)"]
    assert outcome["within_budget"] is None


# ---------------------------------------------------------------- "not a shopping request"

NOT_SHOPPING = {"shopping": False, "features": [], "steps": []}


@pytest.mark.parametrize(
    ("request_text", "goal", "reason"),
    [
        # The model's own goal buys something.
        ("control characters camera", "Buy a camera.", "is to buy something"),
        ("i need to order a new strap", "Order a strap.", "is to buy something"),
        # The request names a kind of product the catalog sells.
        ("lens' ; DROP TABLE products; --", "Run a database command.", "catalog sells (lens)"),
        ("tripod", "Say what a tripod is.", "catalog sells (tripod)"),
    ],
)
def test_a_purchase_the_model_called_not_shopping_is_planned(
    request_text: str, goal: str, reason: str
) -> None:
    retry = plan_reply(
        {"action": "Search it", "query": request_text.split("'")[0]}, PICK_STEP, **PLAIN
    )
    pick = {"answer": "None fits.", "product_ids": []}
    model = FakeShoppingChatModel(
        replies={"Plan": [{**NOT_SHOPPING, "goal": goal}, retry], "ReasoningAnswer": [pick]}
    )
    state = run_graph(model, None, request_text)  # the shipped catalog
    assert reason in str(model.prompts[1][-1].content)
    assert not state["plan"].not_shopping and state["plan"].search_steps


@pytest.mark.parametrize(
    ("request_text", "goal"),
    [
        # The shipped cameras are "weather-sealed": a word of a description names no product.
        ("what's the weather in Paris tomorrow?", "Get the weather forecast for Paris."),
        ("what is 17 times 23?", "Calculate 17 times 23."),
        ("tell me a joke about cats", "Tell a joke."),
    ],
)
def test_a_request_for_nothing_on_sale_stays_not_shopping(request_text: str, goal: str) -> None:
    model = FakeShoppingChatModel(replies={"Plan": [{**NOT_SHOPPING, "goal": goal}]})
    state = run_graph(model, None, request_text)
    assert len(model.prompts) == 1  # no retry
    assert state["plan"].not_shopping and state["step_results"] == []
