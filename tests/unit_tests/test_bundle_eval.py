"""The bundle eval without a model: its file checks, the brute force against a naive one,
the dev sets' promises (a fitting bundle exists, and the top 5 search results of each item
do not hold one), the scoring of a hand-built final state, runs through the graph with a
scripted fake model and fake server, and `--bundles --check`."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, shared_file
from fake_openai_server import FakeScript, fake_openai_server
from fakes import FakeShoppingChatModel
from langgraph.checkpoint.memory import MemorySaver

from catalog import DEFAULT_CATALOG_FILE, Product, load_products
from graph.builder import build_graph
from graph.context import Context
from graph.eval import main
from graph.evals.bundle_sets import (
    BundleFileError,
    BundleRequest,
    ItemKind,
    brute_force,
    catalog_brute_force,
    check_kinds,
    load_bundles,
    rating_of,
    within,
)
from graph.evals.bundles import (
    BundleReport,
    markdown_table,
    new_result,
    run_bundles_eval,
    score_bundle,
    search_pools,
)
from graph.schemas import MissingItem, Outcome, ProductSummary
from graph.tools import POOL_DEPTH

FIXTURES = REPO_ROOT / "tests" / "fixtures"
SHIPPED_DEV = FIXTURES / "bundles_dev.json"
DUMMYJSON_DEV = FIXTURES / "bundles_dev_dummyjson.json"

SHOES = ItemKind("running shoes", ("running shoe",), query="running shoes")
BOTTLE = ItemKind("water bottle", ("water bottle",), query="water bottle")


def product(id: str, title: str, price: float, rating: float | None = 4.0) -> Product:
    return Product(id=id, title=title, category="test", price=price, rating=rating)


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "bundles.json"
    path.write_text(json.dumps(data))
    return path


def a_request(**changes: Any) -> dict[str, Any]:
    request = {
        "id": "r1",
        "request": "running shoes and a water bottle, $150 total",
        "budget": 150,
        "items": [{"kind": "running shoes", "title_has": ["running shoe"]}],
    }
    request.update(changes)
    return request


# --- the file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], r"expected an object with a 'requests' list"),
        ({"requests": []}, r"no requests"),
        ({"requests": [a_request()], "catalgo": "shipped"}, r"unknown key catalgo"),
        ({"requests": [{"id": "r1", "request": "x", "items": []}]}, r"request 1: missing budget"),
        ({"requests": [a_request(budget=-5)]}, r"'r1'\) budget must be a positive"),
        ({"requests": [a_request(budget="150")]}, r"budget must be a number, got '150'"),
        ({"requests": [a_request(budget=True)]}, r"budget must be a number, got True"),
        ({"requests": [a_request(budget=float("nan"))]}, r"budget must be a positive finite"),
        ({"requests": [a_request(items=[])]}, r"items must be a list of 1 to 4 kinds"),
        ({"requests": [a_request(items=[{"kind": "shoes"}])]}, r"give title_has or category"),
        (
            {"requests": [a_request(items=[{"kind": "shoes", "title_has": "shoe"}])]},
            r"item 1: title_has must be a list",
        ),
        (
            {"requests": [a_request(items=[{"kind": "shoes", "title_has": ["shoe"], "cap": 9}])]},
            r"item 1: unknown key cap",
        ),
        (
            {
                "requests": [
                    a_request(items=[{"kind": "shoes", "title_has": ["shoe"], "max_price": 0}])
                ]
            },
            r"item 1 max_price must be a positive",
        ),
        ({"requests": [a_request(), a_request()]}, r"repeated request id r1"),
    ],
)
def test_a_broken_file_is_refused_naming_the_problem(
    tmp_path: Path, data: Any, message: str
) -> None:
    with pytest.raises(BundleFileError, match=message):
        load_bundles(write(tmp_path, data))


def test_a_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bundles.json"
    path.write_text("{not json")
    with pytest.raises(BundleFileError, match=r"cannot read a bundle file"):
        load_bundles(path)


def test_a_kind_no_catalog_product_has_is_a_broken_dev_set(tmp_path: Path) -> None:
    item = {"kind": "hoverboard", "title_has": ["hoverboard"]}
    bundles = load_bundles(write(tmp_path, {"requests": [a_request(items=[item])]}))
    assert bundles.catalog == DEFAULT_CATALOG_FILE  # no catalog named: the shipped one
    with pytest.raises(
        BundleFileError, match=r"^f.json request 'r1': kind 'hoverboard' matches no"
    ):
        check_kinds(bundles.requests, load_products(bundles.catalog), bundles.catalog, "f.json")


def test_a_relative_catalog_is_taken_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, {"catalog": "data/products.json", "requests": [a_request()]})
    monkeypatch.chdir(tmp_path)
    assert load_bundles(path).catalog == tmp_path / "data" / "products.json"
    # --catalog overrides the file's own.
    assert load_bundles(path, DEFAULT_CATALOG_FILE).catalog == DEFAULT_CATALOG_FILE


def test_a_kind_is_read_from_the_title_and_the_category() -> None:
    kind = ItemKind("sneakers", ("sneakers", "trainers"), category="mens-shoes")
    trainers = Product(id="1", title="Puma Trainers", category="mens-shoes", price=90.0)
    elsewhere = Product(id="2", title="Kids Trainers", category="kids", price=30.0)
    assert kind.holds(trainers) and not kind.holds(elsewhere)
    assert ItemKind("phone", (), category="smartphones").holds(
        Product(id="3", title="Realme C35", category="smartphones", price=149.99)
    )


# --- the brute force -------------------------------------------------------------------


def naive(
    items: list[ItemKind], products: list[Product], budget: float
) -> tuple[tuple[float, float] | None, float | None]:
    """Every one-per-kind combination of distinct products: the best (mean rating, total)
    within the budget, and the cheapest total."""
    fitting: list[tuple[float, float]] = []
    totals: list[float] = []
    kinds = [[p for p in products if item.holds(p) and item.within_cap(p)] for item in items]
    for combo in itertools.product(*kinds):
        if len({p.id for p in combo}) < len(combo):
            continue
        total = round(sum(p.price for p in combo), 2)
        totals.append(total)
        if within(total, budget):
            fitting.append((sum(map(rating_of, combo)) / len(combo), -total))
    best = max(fitting) if fitting else None
    return (best[0], -best[1]) if best else None, min(totals) if totals else None


def fast(
    items: list[ItemKind], products: list[Product], budget: float
) -> tuple[tuple[float, float] | None, float | None]:
    found = brute_force(items, [products] * len(items), budget)
    best = (found.best.rating, found.best.total) if found.best else None
    return best, found.cheapest.total if found.cheapest else None


def test_one_product_of_two_kinds_serves_only_one() -> None:
    # The combo pack is of both kinds and dominates the lone bottle (cheaper, better
    # rated); a pruning that dropped the bottle would leave the shoes-kind with nothing
    # once the pack serves as the shoes, or pair the pack with itself.
    pack = product("pack", "Running shoe and water bottle pack", 50.0, 5.0)
    bottle = product("bottle", "Water bottle", 60.0, 3.0)
    shoe = product("shoe", "Running shoe", 80.0, 4.0)
    found = brute_force([SHOES, BOTTLE], [[pack, bottle, shoe]] * 2, budget=150.0)
    assert found.best is not None
    assert sorted(p.id for p in found.best.products) == ["pack", "shoe"]
    assert found.best.total == 130.0
    # Alone, the pack cannot be both items.
    assert brute_force([SHOES, BOTTLE], [[pack]] * 2, budget=150.0).best is None
    only_pack_is_a_shoe = brute_force([SHOES, BOTTLE], [[pack, bottle]] * 2, budget=150.0)
    assert only_pack_is_a_shoe.best is not None
    assert [p.id for p in only_pack_is_a_shoe.best.products] == ["pack", "bottle"]


def test_a_product_without_a_rating_counts_as_zero() -> None:
    unrated = product("s1", "Running shoe", 50.0, None)
    rated = product("s2", "Running shoe", 60.0, 3.0)
    found = brute_force([SHOES], [[unrated, rated]], budget=100.0)
    assert found.best is not None and found.best.products[0].id == "s2"
    assert found.cheapest is not None and found.cheapest.products[0].id == "s1"


def test_equal_products_do_not_prune_each_other() -> None:
    twins = [product(f"s{n}", "Running shoe", 50.0, 4.0) for n in range(4)]
    found = brute_force([SHOES, SHOES], [twins] * 2, budget=100.0)
    assert found.best is not None and found.best.total == 100.0


@pytest.mark.parametrize("seed", range(40))
def test_the_brute_force_agrees_with_every_combination(seed: int) -> None:
    rng = random.Random(seed)
    words = ["running shoe", "water bottle", "sock", "cap"]
    products = []
    for n in range(rng.randint(4, 14)):
        # Some titles hold two kinds' words, so one product can serve either.
        title = " ".join(rng.sample(words, rng.choice([1, 1, 2])))
        rating = rng.choice([None, 3.0, 3.5, 4.0, 4.5, 5.0])
        products.append(product(f"p{n}", title, float(rng.randint(5, 60)), rating))
    kinds = [ItemKind(word, (word,), max_price=rng.choice([None, None, 40.0])) for word in words]
    items = rng.sample(kinds, rng.randint(1, 3))
    budget = float(rng.randint(10, 150))
    assert fast(items, products, budget) == naive(items, products, budget)


# --- the dev sets ----------------------------------------------------------------------


@pytest.fixture(params=["shipped", "dummyjson"])
def dev_set(request: pytest.FixtureRequest) -> tuple[Any, list[Product]]:
    if request.param == "shipped":
        bundles = load_bundles(SHIPPED_DEV)
    else:
        bundles = load_bundles(DUMMYJSON_DEV, shared_file("dummyjson", "products.json"))
    products = load_products(bundles.catalog)
    check_kinds(bundles.requests, products, bundles.catalog)
    return bundles, products


def test_the_dev_sets_hold_fifteen_requests_or_more() -> None:
    shipped = load_bundles(SHIPPED_DEV).requests
    dummyjson = load_bundles(DUMMYJSON_DEV, DEFAULT_CATALOG_FILE).requests
    assert len(shipped) >= 10 and len(dummyjson) >= 5
    # The README's example is among them, and a few state a cap beside the total.
    assert "running shoes and a water bottle, $150 total" in [r.request for r in shipped]
    capped = [r for r in (*shipped, *dummyjson) if any(i.max_price for i in r.items)]
    assert len(capped) >= 2


def test_the_dummyjson_dev_set_names_the_shared_file_from_the_repository_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = shared_file("dummyjson", "products.json")
    monkeypatch.chdir(REPO_ROOT)
    assert load_bundles(DUMMYJSON_DEV).catalog.resolve() == expected.resolve()


def test_every_dev_request_has_a_fitting_bundle(dev_set: tuple[Any, list[Product]]) -> None:
    bundles, products = dev_set
    for request in bundles.requests:
        assert all(item.query for item in request.items), request.id
        found = catalog_brute_force(request, products)
        assert found.best is not None, f"{request.id}: no fitting bundle in the catalog"


def test_no_shipped_dev_request_is_met_by_the_top_five_of_each_search() -> None:
    """Only a deeper pool meets each budget of the shipped set: a bundle from the top 5
    results of each item's natural query (searched at most the budget, or at most the
    item's own cap) is over the budget or a cap. DummyJSON's kinds hold five products
    or so each, all within a search's top 5, so its budgets are tight instead."""
    bundles = load_bundles(SHIPPED_DEV)
    for request in bundles.requests:
        for caps in (False, True):
            pools = search_pools(request, bundles.catalog, caps=caps)
            shallow = brute_force(request.items, pools, request.budget)
            assert shallow.best is None, (
                f"{request.id}: the top 5 hold {[p.id for p in shallow.best.products]}"
            )


def test_every_dev_request_is_met_within_a_search_steps_pool(
    dev_set: tuple[Any, list[Product]],
) -> None:
    """The fitting bundle is findable: within the POOL_DEPTH results a search step keeps
    for each item's natural query, not only somewhere in the catalog."""
    bundles, _ = dev_set
    for request in bundles.requests:
        pools = search_pools(request, bundles.catalog, caps=True, limit=POOL_DEPTH)
        deep = brute_force(request.items, pools, request.budget)
        assert deep.best is not None, f"{request.id}: no fitting bundle within the pools"


# --- scoring ---------------------------------------------------------------------------


CATALOG = {
    p.id: p
    for p in [
        product("shoe", "Road Running Shoe", 115.99, 4.2),
        product("shoe-b", "Trail Running Shoe", 140.0, 4.8),
        product("bottle", "Insulated Water Bottle", 27.99, 4.0),
        product("pack", "Running shoe with water bottle", 100.0, 3.0),
    ]
}
REQUEST = BundleRequest(
    "b01", "running shoes and a water bottle, $150 total", 150.0, (SHOES, BOTTLE)
)


def fake_final_state(*ids: str, price_claimed: float | None = None) -> dict[str, Any]:
    """A final state built by hand (not recorded traffic): an outcome picking `ids`, whose
    summaries may claim another price than the catalog's."""
    picks = [
        ProductSummary(
            id=i,
            title=CATALOG[i].title if i in CATALOG else "Unknown",
            price=price_claimed if price_claimed is not None else CATALOG[i].price,
            rating=CATALOG[i].rating if i in CATALOG else None,
        )
        for i in ids
    ]
    total = sum(p.price for p in picks)
    outcome = Outcome(picks=picks, total_price=total, budget=150.0, within_budget=True)
    return {"outcome": outcome}


def scored(values: dict[str, Any], request: BundleRequest = REQUEST) -> Any:
    found = catalog_brute_force(request, list(CATALOG.values()))
    result = new_result(request, f"bundle-test-{request.id}", found)
    score_bundle(result, values, request, CATALOG)
    return result


def test_a_bundle_within_budget_is_scored_against_the_best_one() -> None:
    result = scored(fake_final_state("shoe", "bottle"))
    assert result.fitting_exists and result.best_combination == ["shoe", "bottle"]
    assert result.items_present and result.within_budget and result.total == 143.98
    assert result.rating == pytest.approx(4.1) and result.rating_ratio == pytest.approx(1.0)
    assert result.cheapest_total == 127.99  # the pack as shoes, the bottle beside it


def test_the_total_comes_from_the_catalog_not_the_outcome() -> None:
    # The summaries claim $1 each and the outcome says within budget; the catalog's
    # prices make it $167.99.
    result = scored(fake_final_state("shoe-b", "bottle", price_claimed=1.0))
    assert result.items_present and result.total == 167.99 and not result.within_budget
    assert result.rating_ratio is not None and result.rating_ratio > 1  # over budget


def test_one_pick_serves_one_kind() -> None:
    result = scored(fake_final_state("pack"))
    assert not result.items_present
    assert result.missing_kinds in (["water bottle"], ["running shoes"])
    assert result.rating is None and result.rating_ratio is None
    assert result.within_budget  # $100, one pick: within budget, yet not every item


def test_an_item_with_no_pick_is_accounted_for_only_when_the_run_names_it_missing() -> None:
    # #40: "every bundle item is picked or named missing".
    assert scored(fake_final_state("shoe", "bottle")).items_accounted
    silent = scored(fake_final_state("pack"))  # one item lacks a pick, and nothing says so
    assert not silent.items_accounted and silent.named_missing == []
    # Named in the plan's words, in any language, by the item nearest in meaning.
    lacking = silent.missing_kinds[0]
    words = {"water bottle": "botella de agua", "running shoes": "zapatillas para correr"}
    other = "running shoes" if lacking == "water bottle" else "water bottle"
    values = fake_final_state("pack")
    values["outcome"].missing = [MissingItem(step=2, query=words[lacking], reason="none")]
    named = scored(values)
    assert named.items_accounted and named.named_missing == [words[lacking]]
    assert not named.items_present  # named missing is still not picked
    # Naming another item missing accounts for nothing: the missing one is unnamed.
    values["outcome"].missing = [MissingItem(step=1, query=other, reason="none")]
    assert not scored(values).items_accounted


def test_an_unknown_pick_or_no_pick_is_never_within_budget() -> None:
    assert not scored({"outcome": Outcome()}).within_budget
    assert not scored({}).within_budget
    unknown = Outcome(picks=[ProductSummary(id="ghost", title="Ghost", price=1.0)])
    result = scored({"outcome": unknown})
    assert result.unknown_ids == ["ghost"] and not result.within_budget


def test_a_pick_over_its_item_cap_breaks_the_budget() -> None:
    capped = ItemKind("running shoes", ("running shoe",), max_price=120.0)
    request = BundleRequest("b02", "shoes under $120 and a bottle, $200", 200.0, (capped, BOTTLE))
    assert not scored(fake_final_state("shoe-b", "bottle"), request).within_budget
    assert scored(fake_final_state("shoe", "bottle"), request).within_budget


def test_the_summary_counts_over_the_requests_a_bundle_fits() -> None:
    met = scored(fake_final_state("shoe", "bottle"))
    over = scored(fake_final_state("shoe-b", "bottle"))
    impossible = BundleRequest("b03", "both for $10", 10.0, (SHOES, BOTTLE))
    hopeless = scored(fake_final_state("shoe", "bottle"), impossible)
    failed = scored({})
    failed.error = "RunFailed: model unreachable"
    report = BundleReport("fake", "dev.json", "c.jsonl", None, None, "direct", [])
    report.results = [met, over, hopeless, failed]
    summary = report.summary()
    assert summary["requests"] == 4 and summary["fitting_exists"] == 3
    assert summary["all_items_and_within_budget"] == 1
    assert summary["all_items_and_within_budget_share"] == pytest.approx(1 / 3, abs=1e-4)
    assert summary["items_present"] == 3 and summary["within_budget"] == 1
    assert summary["items_accounted"] == 3  # the failed run names nothing
    assert summary["mean_rating_ratio"] == pytest.approx(1.0)
    assert summary["errors"] == 1
    data = report.to_json()
    assert data["bundles_file"] == "dev.json" and len(data["results"]) == 4
    table = markdown_table([data, data])
    assert "| every item, within budget | 1/3 (0.33) | 1/3 (0.33) |" in table
    assert "| every item picked or named missing | 3/4 | 3/4 |" in table


# A plan over tests/conftest.py SMALL_CATALOG: one search per item, then one pick.
STRAP_AND_KIT_PLAN: dict[str, Any] = {
    "goal": "A camera strap and a lens cleaning kit, $60 for both.",
    "budget": 60,
    "steps": [
        {"step": 1, "action": "Find camera straps", "query": "camera strap", "max_price": 60},
        {"step": 2, "action": "Find cleaning kits", "query": "lens cleaning kit", "max_price": 60},
        {"step": 3, "action": "Pick one of each", "query": None},
    ],
}
STRAP_AND_KIT = BundleRequest(
    "s01",
    "a camera strap and a lens cleaning kit, $60 for both",
    60.0,
    (ItemKind("camera strap", ("camera strap",)), ItemKind("cleaning kit", ("cleaning kit",))),
)


def test_each_request_runs_as_one_thread_and_a_rerun_reads_it_back(
    small_catalog_file: Path,
) -> None:
    """run_bundles_eval is called as run_eval is (a replay test can do the same), here
    with a fake model: the padded strap and the kit, $40.49, where the best is the
    leather strap and the kit (4.5 against 4.25)."""
    model = FakeShoppingChatModel(
        replies={
            "Plan": [dict(STRAP_AND_KIT_PLAN)],
            "ReasoningAnswer": [{"answer": "Both.", "product_ids": ["strap-2", "clean-1"]}],
        }
    )
    graph = build_graph(checkpointer=MemorySaver())
    # The model's pick, not the best bundle, is what the report scores here.
    context = Context(
        catalog=str(small_catalog_file), auto_approve=True, chat_model=model, code_decisions=False
    )
    report = run_bundles_eval(
        [STRAP_AND_KIT], small_catalog_file, context, graph, label="fake", progress=False
    )
    (result,) = report.results
    assert result.error is None and result.thread_id == "bundle-fake-s01"
    assert result.picked == ["strap-2", "clean-1"] and result.total == 40.49
    assert result.items_present and result.within_budget
    assert result.best_combination == ["strap-1", "clean-1"] and result.best_rating == 4.5
    assert result.rating_ratio == pytest.approx(4.25 / 4.5, abs=1e-4)
    # The question whether it names what to buy, the plan, the pick.
    assert result.llm_calls == 3 and result.output_tokens > 0
    # The fake has no reply left, so any new call would fail: the finished thread is read.
    again = run_bundles_eval(
        [STRAP_AND_KIT], small_catalog_file, context, graph, label="fake", progress=False
    )
    assert again.results == report.results
    # Another label is another thread: its planner call fails, and the eval goes on.
    other = run_bundles_eval(
        [STRAP_AND_KIT], small_catalog_file, context, graph, label="other", progress=False
    )
    assert other.results[0].error and other.summary()["errors"] == 1
    # Runs on one catalog and scores from another would measure nothing.
    with pytest.raises(ValueError, match=r"the runs use .* but the scores would use"):
        run_bundles_eval([STRAP_AND_KIT], DEFAULT_CATALOG_FILE, context, graph, label="x")


# --- the CLI ---------------------------------------------------------------------------


def graph_eval(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graph.eval", *args],
        cwd=REPO_ROOT,
        env={**os.environ, "SHOPPING_PLANNER_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_prints_each_request_with_no_model(isolated_data_dir: Path) -> None:
    run = graph_eval(isolated_data_dir, str(SHIPPED_DEV), "--bundles", "--check")
    assert run.returncode == 0, run.stderr
    for request in load_bundles(SHIPPED_DEV).requests:
        assert f"{request.id}: {request.request}" in run.stdout
    assert "fitting_exists: False" not in run.stdout
    assert "best:     run-003 " in run.stdout  # the README's $115.99 shoes


def test_a_broken_bundle_file_is_one_line_on_stderr(tmp_path: Path) -> None:
    path = write(tmp_path, {"requests": [a_request(budget=0)]})
    run = graph_eval(tmp_path / "data", str(path), "--bundles", "--check")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("error: ") and "budget must be a positive" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_compare_knows_a_bundle_report(tmp_path: Path) -> None:
    report = BundleReport("run-a", "dev.json", "c.jsonl", None, None, "direct", [])
    report.results = [scored(fake_final_state("shoe", "bottle"))]
    paths = []
    for label in ("run-a", "run-b"):
        data = {**report.to_json(), "label": label}
        paths.append(tmp_path / f"{label}.json")
        paths[-1].write_text(json.dumps(data))
    run = graph_eval(tmp_path / "data", "--compare", *map(str, paths))
    assert run.returncode == 0, run.stderr
    assert "| metric | run-a | run-b |" in run.stdout
    assert "| every item, within budget | 1/1 (1.00) | 1/1 (1.00) |" in run.stdout


def test_the_cli_runs_the_bundles_and_writes_the_report(
    small_catalog_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--bundles` end to end through the HTTP path, against the fake OpenAI-compatible
    server (scripted answers, not a model): every plan approved, the report written."""
    path = write(
        tmp_path,
        {
            "catalog": str(small_catalog_file),
            "requests": [
                {
                    "id": "s01",
                    "request": STRAP_AND_KIT.request,
                    "budget": 60,
                    "items": [
                        {"kind": "camera strap", "title_has": ["camera strap"]},
                        {"kind": "cleaning kit", "title_has": ["cleaning kit"]},
                    ],
                }
            ],
        },
    )
    out = tmp_path / "report.json"
    script = FakeScript(
        replies={
            "Plan": [STRAP_AND_KIT_PLAN],
            "ReasoningAnswer": [{"answer": "Both.", "product_ids": ["strap-1", "clean-1"]}],
        }
    )
    with fake_openai_server(script) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        args = [str(path), "--bundles", "--label", "cli", "--out", str(out)]
        assert main([*args, "--db", str(tmp_path / "runs.sqlite")]) == 0
    data = json.loads(out.read_text())
    (result,) = data["results"]
    assert result["thread_id"] == "bundle-cli-s01" and result["error"] is None
    assert result["picked"] == ["strap-1", "clean-1"] and result["rating_ratio"] == 1.0
    assert data["summary"]["all_items_and_within_budget"] == 1
    assert "| every item, within budget | 1/1 (1.00) |" in out.with_suffix(".md").read_text()
