"""The open-ended eval without a model (#34): its dev sets, its scoring of runs through
the graph with a scripted fake planner, dominated picks, and its place in the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, shared_file
from fakes import FakeShoppingChatModel, plan_of, plan_reply
from langgraph.checkpoint.memory import MemorySaver

from catalog import DEFAULT_CATALOG_FILE, load_products
from graph.builder import build_graph
from graph.choosing.picks import Candidate
from graph.context import Context
from graph.eval import main
from graph.evals.bundle_sets import catalog_brute_force, load_bundles
from graph.evals.bundles import search_pools
from graph.evals.main import parse_arguments
from graph.evals.open_ended import (
    OpenEndedFileError,
    OpenEndedReport,
    OpenEndedRequest,
    _dominated,
    _kind_by_meaning,
    check_categories,
    load_open_ended,
    markdown_table,
    run_open_ended_eval,
)
from graph.schemas import ProductSummary, StepResult
from graph.tools import POOL_DEPTH, get_catalog

FIXTURES = REPO_ROOT / "tests" / "fixtures"
SHIPPED_DEV = FIXTURES / "open_ended_dev.json"
DUMMYJSON_DEV = FIXTURES / "open_ended_dev_dummyjson.json"
SHARED_BUNDLES = FIXTURES / "bundles_shared_dev.json"


# --- the dev sets ----------------------------------------------------------------------


@pytest.mark.parametrize(("path", "least"), [(SHIPPED_DEV, 20), (DUMMYJSON_DEV, 10)])
def test_the_dev_sets_ask_for_what_the_catalog_holds(path: Path, least: int) -> None:
    catalog = shared_file("dummyjson", "products.json") if path == DUMMYJSON_DEV else None
    cases = load_open_ended(path, catalog)
    assert len(cases.requests) >= least
    products = load_products(cases.catalog)
    check_categories(cases.requests, products, str(path))  # raises when one cannot be had
    # Varied wording: no two requests open with the same three words.
    openings = [" ".join(r.request.lower().split()[:3]) for r in cases.requests]
    assert len(set(openings)) == len(openings)


def test_a_category_the_catalog_lacks_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "open.json"
    record = {"id": "x", "request": "a gift", "budget": 20, "categories": ["spaceships"]}
    path.write_text(json.dumps({"requests": [record]}))
    cases = load_open_ended(path)
    with pytest.raises(OpenEndedFileError, match="no product of category 'spaceships'"):
        check_categories(cases.requests, load_products(DEFAULT_CATALOG_FILE), str(path))
    path.write_text(json.dumps({"requests": [{**record, "categories": ["books"], "budget": 1}]}))
    with pytest.raises(OpenEndedFileError, match="nothing in its categories within"):
        check_categories(load_open_ended(path).requests, load_products(DEFAULT_CATALOG_FILE))
    path.write_text(json.dumps({"requests": [{**record, "categories": []}]}))
    with pytest.raises(OpenEndedFileError, match="categories must be a non-empty list"):
        load_open_ended(path)


def test_the_shared_product_bundles_fit_and_their_searches_share_products() -> None:
    # Items whose searches find the same products (a laptop-stand search and a hub search
    # both find USB-C chargers): the bundle must still hold one product per item.
    bundles = load_bundles(SHARED_BUNDLES)
    products = load_products(bundles.catalog)
    assert any("laptop stand, a usb-c hub and a desk mat" in r.request for r in bundles.requests)
    for request in bundles.requests:
        assert catalog_brute_force(request, products).best is not None, request.id
        pools = [
            {p.id for p in pool}
            for pool in search_pools(request, bundles.catalog, limit=POOL_DEPTH)
        ]
        assert any(a & b for i, a in enumerate(pools) for b in pools[i + 1 :]), request.id


# --- scoring runs ----------------------------------------------------------------------

PHOTO = OpenEndedRequest(
    "o01",
    "a birthday gift for someone who likes photography, under $200",
    200,
    ("cameras-photography", "books", "toys-games"),
)
COFFEE = OpenEndedRequest("o02", "something for a coffee lover under $60", 60, ("coffee-kitchen",))


def gift_plan(goal: str, budget: float, *queries: str) -> dict[str, Any]:
    steps = [{"action": f"Search {q}", "query": q, "max_price": budget} for q in queries]
    return plan_reply(
        *steps, {"action": "Pick the gift", "query": None}, goal=goal, budget=budget, pick="one"
    )


def run_eval(plans: list[dict[str, Any]], cases: list[OpenEndedRequest]) -> Any:
    model = FakeShoppingChatModel(
        replies={
            "Plan": plans,
            "ReasoningAnswer": [{"answer": "This one.", "product_ids": []}] * len(cases),
        }
    )
    context = Context(auto_approve=True, chat_model=model)
    graph = build_graph(checkpointer=MemorySaver())
    return run_open_ended_eval(
        cases, DEFAULT_CATALOG_FILE, context, graph, label="fake", progress=False
    )


def test_the_scores_of_a_plan_that_knows_the_shop_and_of_one_that_does_not() -> None:
    named = OpenEndedRequest(
        "o03", "a coffee grinder and a unicorn saddle, under $60", 60, ("coffee-kitchen",)
    )
    report = run_eval(
        [
            gift_plan("A photography gift under $200.", 200, "instant camera", "photography book"),
            # Unicorn saddles are no kind the shop sells: for a gift code searches a kind
            # it has instead (graph/shaping/stocked.py), and the eval scores the plan run.
            gift_plan("A coffee gift under $60.", 60, "coffee grinder", "unicorn saddle"),
            # Named by the shopper, the saddle is kept: that search finds none of its kind.
            gift_plan("A grinder and a saddle.", 60, "coffee grinder", "unicorn saddle"),
        ],
        [PHOTO, COFFEE, named],
    )
    photo, coffee, saddle = report.results
    assert photo.error is None and coffee.error is None and saddle.error is None
    assert photo.thread_id == "open-fake-o01"
    assert photo.pick_mode == "one" and len(photo.picked) == 1
    assert photo.kinds_planned == ["instant camera", "photography book"]
    assert photo.kinds_found == photo.kinds_planned and photo.kinds_found_share == 1.0
    assert photo.right_category and photo.within_budget and photo.nothing_lost
    assert photo.dominated_by == {} and photo.met
    assert coffee.kinds_planned[0] == "coffee grinder" and len(coffee.kinds_planned) == 2
    assert "unicorn saddle" not in coffee.kinds_planned and coffee.kinds_found_share == 1.0
    assert coffee.pick_categories == ["coffee-kitchen"] and coffee.right_category
    assert saddle.kinds_planned == ["coffee grinder", "unicorn saddle"]
    assert saddle.kinds_found == ["coffee grinder"] and saddle.kinds_found_share == 0.5
    assert saddle.pick_mode == "each" and not saddle.nothing_lost and not saddle.met
    summary = report.summary()
    assert summary["requests"] == 3 and summary["pick_one"] == 2
    assert summary["kinds_found_share"] == round(2.5 / 3, 4) and summary["met"] == 2
    table = markdown_table([report.to_json()])
    assert f"searches finding their kind | {2.5 / 3:.2f}" in table
    assert "every check met | 2/3 (0.67)" in table


def test_an_older_report_without_a_figure_compares_with_a_dash() -> None:
    # A report saved before met_share was kept: --compare shows the figure it lacks as a
    # dash rather than failing on it.
    report = OpenEndedReport("old", "dev.json", "c.jsonl", None, None, "direct", []).to_json()
    del report["summary"]["met_share"]
    assert "| every check met | 0/0 (–) |" in markdown_table([report])


def test_a_pick_from_the_wrong_part_of_the_catalog_or_over_budget_is_scored_so() -> None:
    # The request states no budget, so the plan's $300 stands; the case's is $40, and it
    # expects books: the plan finds grinders and espresso machines dearer than that, in
    # another category.
    wrong = OpenEndedRequest("o03", "something for a coffee lover", 40, ("books",))
    plan = gift_plan("A coffee gift.", 300, "flat burr coffee grinder", "espresso machine")
    report = run_eval([plan], [wrong])
    (result,) = report.results
    assert result.picked and result.pick_categories == ["coffee-kitchen"]
    assert not result.right_category and not result.within_budget and not result.met


def candidate(id: str, price: float, rating: float, *, item: int = 1) -> Candidate:
    summary = ProductSummary(id=id, title=id, price=price, rating=rating)
    found = Candidate(summary, source_step=item, rank=1, within_limits=True, item=item)
    found.of_searched_kind = True
    found.type_words, found.query_length = ["x"], 1
    return found


def test_a_pick_another_product_outdoes_on_every_count_is_dominated() -> None:
    plan = plan_of(
        {"action": "a", "query": "mugs"},
        {"action": "b", "query": "candles"},
        {"action": "c", "query": None},
        pick="one",
        budget=50,
    )
    pick, better, dearer = candidate("p", 30, 4.0), candidate("q", 25, 4.5), candidate("r", 40, 5)
    assert _dominated(plan, ["p"], [pick, better, dearer]) == {"p": "q"}
    assert _dominated(plan, ["p"], [pick, dearer]) == {}
    # Across kinds too: a "one" plan's kinds are one item.
    other_kind = candidate("s", 20, 4.8, item=2)
    assert _dominated(plan, ["p"], [pick, other_kind]) == {"p": "s"}
    each = plan.model_copy(update={"pick": "each"})
    assert _dominated(each, ["p"], [pick, other_kind]) == {}


# --- the CLI ---------------------------------------------------------------------------


def test_the_cli_takes_an_open_ended_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parse_arguments([str(SHIPPED_DEV), "--open-ended"])
    assert args.open_ended and args.goals == SHIPPED_DEV
    with pytest.raises(SystemExit):
        parse_arguments(["--open-ended"])
    bad = tmp_path / "open.json"
    bad.write_text(
        json.dumps(
            {"requests": [{"id": "x", "request": "a gift", "budget": 9, "categories": ["moon"]}]}
        )
    )
    # Refused before any model starts.
    assert main([str(bad), "--open-ended", "--db", str(tmp_path / "e.sqlite")]) == 2
    assert "no product of category 'moon'" in capsys.readouterr().err


def test_a_pick_code_took_from_a_kind_nearer_the_request_is_judged_by_its_department() -> None:
    # The model picked the kettle (coffee-kitchen) for a dad who loves camping; code took
    # the camp chair (outdoor), of the kind nearer the request by meaning (#40).
    dad = OpenEndedRequest("o04", "my dad loves camping, max 120 dollars", 120, ("outdoor",))
    chair, kettle = candidate("out-031", 101.99, 4.6), candidate("kit-021", 49.0, 4.8, item=2)
    kettle.near_request = False
    said = StepResult(
        step=3,
        kind="reasoning",
        action="Pick",
        products=[ProductSummary(id="kit-021", title="k", price=49.0)],
    )
    shop = get_catalog(str(DEFAULT_CATALOG_FILE))
    [judged] = _kind_by_meaning([said], [chair, kettle], ["out-031"], shop, dad)
    assert (judged.override, judged.model, judged.code) == (
        "pick's kind by meaning",
        "kit-021",
        "out-031",
    )
    assert judged.code_right and judged.model_right is False
    # The model's own pick taken, or a pick code made with no model: nothing overruled.
    assert _kind_by_meaning([said], [chair, kettle], ["kit-021"], shop, dad) == []
    decided = said.model_copy(update={"decided_in_code": True})
    assert _kind_by_meaning([decided], [chair, kettle], ["out-031"], shop, dad) == []
