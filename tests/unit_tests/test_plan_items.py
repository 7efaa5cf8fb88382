"""Items are what the plan names (#34): two searches are one item only when they name one
kind, or one of them names no kind (only wanted features), never because their results
overlap; a product answers one item; every item is picked or named missing. Plain data
through the real choosing code (candidates_of, choose, checked_outcome), no model."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from catalog import DEFAULT_CATALOG_FILE, CatalogBackend, Product, open_catalog
from graph.choosing.choice import choose
from graph.choosing.outcome import checked_outcome
from graph.choosing.picks import (
    candidates_and_records,
    candidates_of,
    item_of_step,
    missing_items,
)
from graph.choosing.pool import choice_pool
from graph.evals.bundle_sets import load_bundles
from graph.reading import read_request
from graph.reading.stated import listed_items
from graph.schemas import (
    FollowUp,
    Outcome,
    Plan,
    PreviousPick,
    PreviousRun,
    ProductSummary,
    StatedLimits,
    StepResult,
)

Row = tuple[str, str, float, float]  # id, title, price, rating
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class FakeCatalog:
    """The one catalog call the choosing code makes: records by id."""

    def __init__(self, products: Iterable[Product]) -> None:
        self.products = {p.id: p for p in products}

    def get(self, ids: Iterable[str]) -> dict[str, Product]:
        return {i: self.products[i] for i in ids if i in self.products}


def product(row: Row, category: str = "misc", tags: tuple[str, ...] = ()) -> Product:
    id, title, price, rating = row
    return Product(
        id=id, title=title, category=category, price=price, rating=rating, tags=list(tags)
    )


def outcome_of(
    plan: Plan,
    request: str,
    results: list[StepResult],
    catalog: FakeCatalog,
    stated: StatedLimits | None = None,
    follow_up: FollowUp | None = None,
) -> Outcome:
    """The outcome the verify node records for `plan` after `results`."""
    pool = choice_pool(plan, read_request(request), follow_up, results, catalog)  # type: ignore[arg-type]
    return checked_outcome(
        plan,
        pool,
        results,
        stated=stated or StatedLimits(),
        follow_up=follow_up,
        plan_warnings=[],
        catalog=catalog,  # type: ignore[arg-type]  # only .get is read
    )


def plan_of(queries: list[str], budget: float | None = None, **fields: Any) -> Plan:
    steps = [{"step": i, "action": f"Find {q}", "query": q} for i, q in enumerate(queries, 1)]
    steps.append({"step": len(queries) + 1, "action": "Pick one of each", "query": None})
    return Plan.model_validate({"goal": "g", "budget": budget, "steps": steps, **fields})


def searched(
    shown: list[list[Row]],
) -> tuple[list[StepResult], FakeCatalog]:
    results = [
        StepResult(
            step=step,
            kind="search",
            action="search",
            products=[ProductSummary.of(product(r)) for r in rows],
        )
        for step, rows in enumerate(shown, 1)
    ]
    return results, FakeCatalog(product(r) for rows in shown for r in rows)


CHARGERS: list[Row] = [
    ("chg-1", "USB-C Laptop Charger 65W", 25.0, 4.5),
    ("chg-2", "USB-C Wall Charger 30W", 15.0, 4.2),
]
STAND_AND_HUB: list[list[Row]] = [
    [("stand-1", "Aluminium Laptop Stand", 29.0, 4.6), *CHARGERS],
    [*CHARGERS, ("hub-1", "7-in-1 USB-C Hub", 22.0, 4.4)],
    [("mat-1", "Felt Desk Mat", 15.0, 4.7)],
]


def test_searches_for_different_kinds_are_different_items_though_their_results_overlap() -> None:
    # Both the stand search and the hub search show the same two chargers: a stand is no
    # hub all the same, so the shopper's three items stay three.
    plan = plan_of(["laptop stand", "usb-c hub", "desk mat"], budget=69)
    results, catalog = searched(STAND_AND_HUB)
    candidates = candidates_of(plan, results, catalog)
    assert item_of_step(candidates, plan) == {1: 1, 2: 2, 3: 3}
    choice = choose(plan, candidates, [])
    assert sorted(c.summary.id for c in choice.picks) == ["hub-1", "mat-1", "stand-1"]


def test_an_item_no_product_answers_is_named_missing_and_never_within_budget() -> None:
    # The hub search found only chargers: the hub is missing, with its reason, and the
    # stand and mat are not "within budget", being only part of what was asked.
    plan = plan_of(["laptop stand", "usb-c hub", "desk mat"], budget=69)
    results, catalog = searched([STAND_AND_HUB[0], CHARGERS, STAND_AND_HUB[2]])
    request = "a laptop stand, a usb-c hub and a desk mat"
    outcome = outcome_of(
        plan, request, results, catalog, StatedLimits(max_price=69, prices=(69.0,))
    )
    assert sorted(p.id for p in outcome.picks) == ["mat-1", "stand-1"]
    assert [m.query for m in outcome.missing] == ["usb-c hub"]
    assert "of the kind searched for" in outcome.missing[0].reason
    assert outcome.within_budget is None


def test_searches_naming_one_kind_are_one_item() -> None:
    sweaters: list[Row] = [("sw-1", "Wool Crew Neck Sweater", 40.0, 4.5)]
    straps: list[Row] = [("strap-1", "Leather Camera Strap", 30.0, 4.5)]
    for queries, rows in [
        (["wool sweater", "crew neck sweater"], sweaters),  # the heads agree
        (["leather camera strap", "camera strap leather"], straps),  # each names the other's
    ]:
        plan = plan_of(queries)
        results, catalog = searched([rows, rows])
        assert item_of_step(candidates_of(plan, results, catalog), plan) == {1: 1, 2: 1}
    # Different heads, whatever the results share: a watch is not socks.
    plan = plan_of(["running watch", "running socks"])
    results, catalog = searched([sweaters, sweaters])
    assert item_of_step(candidates_of(plan, results, catalog), plan) == {1: 1, 2: 2}


def test_two_listed_items_of_one_head_are_told_apart_by_meaning() -> None:
    # #40: the plan searched "running open-ear headphones" for the request's "open-ear
    # sport headphones"; both listed items are headphones, and the query holds the words
    # of neither whole, so the two searches had been one item and one pick "answered" both.
    headphones: list[Row] = [
        ("nc-1", "Quietline Noise-Cancelling Headphones", 180.0, 4.5),
        ("oe-1", "Soundrift Run Open-Ear Sport Headphones", 100.0, 4.4),
    ]
    plan = plan_of(["office noise-cancelling headphones", "running open-ear headphones"])
    results, catalog = searched([headphones, headphones])
    listed = ["noise cancelling headphones", "open ear sport headphones"]
    candidates = candidates_of(plan, results, catalog)
    assert item_of_step(candidates, plan, listed) == {1: 1, 2: 2}
    assert item_of_step(candidates, plan) == {1: 1, 2: 1}  # no list: the heads agree


def test_a_product_is_of_the_listed_item_of_its_head_that_it_is_nearest_by_meaning() -> None:
    # #40: "a cold brew coffee maker and a pour-over coffee maker": both are makers by
    # their titles' heads, so a cold brew maker the pour-over search found was picked as
    # the pour-over one. Of the two listed makers it is nearest the cold brew one.
    makers: list[Row] = [
        ("cb-1", "Kettle & Pine Cold Brew Coffee Maker 2L", 26.0, 4.6),
        ("po-1", "Bellacasa Glass Pour-Over Coffee Maker 600ml", 20.99, 4.5),
    ]
    plan = plan_of(["cold brew coffee maker", "pour-over coffee maker"], budget=55)
    results, catalog = searched([makers, makers])
    listed = ["cold brew coffee maker", "pour coffee maker"]
    candidates, _ = candidates_and_records(plan, results, catalog, listed)
    of_kind = {(c.source_step, c.summary.id) for c in candidates if c.of_searched_kind}
    assert of_kind == {(1, "cb-1"), (2, "po-1")}
    # With nothing listed (or one maker), the head word alone says what is a maker.
    alone, _ = candidates_and_records(plan, results, catalog)
    assert all(c.of_searched_kind for c in alone)
    choice = choose(plan, candidates, [])
    assert sorted(c.summary.id for c in choice.picks) == ["cb-1", "po-1"]


def test_a_title_naming_a_listed_head_as_a_modifier_is_judged_by_meaning() -> None:
    # #40 (nb06): "a hiking day backpack plus a camera backpack". The shop's camera
    # backpack is a "Travel Backpack Camera Bag", tagged a camera bag: a bag by its
    # record's words, so the camera backpack search had found none of its kind. Its title
    # mentions the listed head, and of the two listed backpacks it is nearest the camera one.
    day = product(("day-1", "Ridgeline 22L Hiking Day Backpack", 78.99, 4.7), "outdoor",
                  ("backpack", "hiking"))  # fmt: skip
    bag = product(("cam-1", "Halden 20L Travel Backpack Camera Bag", 111.0, 4.6),
                  "cameras-photography", ("camera bag",))  # fmt: skip
    catalog = FakeCatalog([day, bag])
    results = [
        StepResult(
            step=step,
            kind="search",
            action="search",
            products=[ProductSummary.of(day), ProductSummary.of(bag)],
        )
        for step in (1, 2)
    ]
    plan = plan_of(["hiking day backpacks", "camera backpacks"], budget=200)
    listed = ["hiking day backpack", "camera backpack"]
    candidates, _ = candidates_and_records(plan, results, catalog, listed)
    of_kind = {(c.source_step, c.summary.id) for c in candidates if c.of_searched_kind}
    assert of_kind == {(1, "day-1"), (2, "cam-1")}
    choice = choose(plan, candidates, [])
    assert sorted(c.summary.id for c in choice.picks) == ["cam-1", "day-1"]
    # With no two listed backpacks to tell apart, the bag is no backpack: its words decide.
    alone, _ = candidates_and_records(plan, results, catalog)
    assert {(c.source_step, c.summary.id) for c in alone if c.of_searched_kind} == {
        (1, "day-1"),
        (2, "day-1"),
    }


def test_a_search_for_a_wanted_feature_alone_joins_the_item_it_found() -> None:
    # "machine wash" names no kind: it is a feature of the sweater searched for, listed
    # before or after the sweater search.
    rows: list[Row] = [("sw-1", "Machine Wash Wool Sweater", 40.0, 4.5)]
    for queries in (["wool sweater", "machine wash"], ["machine wash", "wool sweater"]):
        plan = plan_of(queries, features=["machine wash"])
        results, catalog = searched([rows, rows])
        items = item_of_step(candidates_of(plan, results, catalog), plan)
        assert items[1] == items[2]
        assert len(choose(plan, candidates_of(plan, results, catalog), []).picks) == 1


def test_a_product_answers_one_item_only() -> None:
    # One pick found by both searches fills one item, not two: the other is missing.
    plan = plan_of(["tent", "tent footprint"])
    rows: list[Row] = [("tent-1", "Two-Person Tent with Footprint", 120.0, 4.5)]
    results, catalog = searched([rows, rows])
    candidates = candidates_of(plan, results, catalog)
    choice = choose(plan, candidates, [])
    assert [c.summary.id for c in choice.picks] == ["tent-1"]  # never twice
    picks = [ProductSummary.of(product(rows[0]))]
    filled = {item.step for item in choice.items.values()}
    missing = missing_items(plan, results, picks, filled, candidates)
    assert [m.query for m in missing] == ["tent footprint"]


def test_the_item_a_pick_fills_is_the_one_the_choice_chose_it_for() -> None:
    # A search for a kind the shop lacks ("steel shoes", a model's slip for a skillet)
    # finds the knife the knife search finds too, by a word of its title. The knife fills
    # the knife, as the choice chose it; the shoes are named missing, never the knife.
    plan = plan_of(["steel shoes", "chef knife"])
    knife: Row = ("knife-1", "8-Inch Stainless Steel Chef's Knife", 53.95, 4.4)
    pan: Row = ("pan-1", "12-Inch Stainless Steel Frying Pan", 59.99, 4.5)
    results, catalog = searched([[pan, knife], [knife]])
    outcome = outcome_of(
        plan, "una sartén de hierro fundido y un cuchillo de chef", results, catalog
    )
    assert [p.id for p in outcome.picks] == ["knife-1"]
    assert outcome.items == {"knife-1": "chef knife"}
    assert [m.query for m in outcome.missing] == ["steel shoes"]
    assert "of the kind searched for" in outcome.missing[0].reason


def test_two_searches_ending_in_one_word_are_the_two_items_the_request_lists() -> None:
    # The model wrote "for my laptop" into both queries: their last word is one, but the
    # request lists a power bank and a charger, and each search finds its own.
    plan = plan_of(["power bank laptop", "USB-C charger laptop"], budget=75)
    banks: list[Row] = [("bank-1", "Zentrix 20000mAh Power Bank", 45.95, 4.6)]
    results, catalog = searched([banks, CHARGERS])
    candidates = candidates_of(plan, results, catalog)
    assert item_of_step(candidates, plan) == {1: 1, 2: 1}  # by the queries alone: one
    listed = ["power bank", "usb-c charger"]
    assert item_of_step(candidates, plan, listed) == {1: 1, 2: 2}


def test_a_listed_feature_is_no_item_of_its_own() -> None:
    # "dairy free, nut free drinks": the listed "dairy" heads no title found (a title's
    # first part says what it is), so both searches stay one item, the drink.
    plan = plan_of(["dairy free oat drink", "nut free oat drink"])
    drinks: list[Row] = [("oat-1", "Oat Drink, Dairy Free, Nut Free", 3.5, 4.4)]
    results, catalog = searched([drinks, drinks])
    candidates = candidates_of(plan, results, catalog)
    assert item_of_step(candidates, plan, ["dairy", "nut", "oat drinks"]) == {1: 1, 2: 1}


def test_the_words_of_a_total_are_never_a_listed_item() -> None:
    assert listed_items("a water bottle and a running belt, $60 altogether") == [
        "water bottle",
        "running belt",
    ]
    assert listed_items("a mug and a kettle, $10 apiece") == ["mug", "kettle"]
    # Nor the noun that names a cap after its amount.
    for cap in ("limit", "budget", "cap"):
        request = f"gift ideas, $150 {cap}, she likes jewellery and bags"
        assert listed_items(request) == ["jewellery", "bags"], cap


@pytest.fixture(scope="module")
def shipped_catalog(tmp_path_factory: pytest.TempPathFactory) -> CatalogBackend:
    return open_catalog(DEFAULT_CATALOG_FILE, tmp_path_factory.mktemp("index"))


def listed_in(catalog: CatalogBackend, request: str) -> list[str]:
    """The items a request lists, as the planner node reads them."""
    return list(read_request(request, catalog).items)


# The items the English requests of the bundle set in new wording list (#40); the others
# read their lists as one clause and list nothing, which names nothing missing either.
BUNDLES_NEW_ITEMS = {
    "nb01": ["sleeping bag", "dry bag"],
    "nb02": ["board game", "card game"],
    "nb03": ["yoga mat", "felt desk mat"],
    "nb04": ["cold brew coffee maker", "pour coffee maker"],
    "nb05": ["noise cancelling headphones", "open ear sport headphones"],
    "nb06": ["hiking day backpack", "camera backpack"],
    "nb07": ["fitness tracker", "gps running watch"],
    "nb08": ["gel pens", "dotted notebook", "weekly planner"],
    "nb09": ["usb charger", "usb hub"],
}


def test_a_budget_written_with_a_verb_is_never_a_listed_item(
    shipped_catalog: CatalogBackend,
) -> None:
    # Each request of the set states its budget in its last clause ("..., trying to spend
    # no more than $140"); a word only that clause uses ("trying", "keep", "can't go",
    # "gastar") was listed, and so named missing, as an item.
    bundles = load_bundles(FIXTURES / "bundles_new.json").requests
    for bundle in bundles:
        *items_part, budget = re.split(r"[,;.](?!\d)", bundle.request)
        budget_only = set(budget.lower().split()) - set(" ".join(items_part).lower().split())
        listed = listed_in(shipped_catalog, bundle.request)
        assert not {w for item in listed for w in item.split()} & budget_only, bundle.id
        assert listed == BUNDLES_NEW_ITEMS.get(bundle.id, listed), bundle.id


def test_a_clause_with_an_amount_lists_its_item_where_the_shop_carries_it(
    shipped_catalog: CatalogBackend,
) -> None:
    # "under $200" is the watch's cap: the shop carries watches, so it stays an item.
    request = "a GPS running watch under $200 and running shoes, $300 for both"
    assert listed_in(shipped_catalog, request) == ["gps running watch", "running shoes"]
    # With no amount, an item the shop lacks stays listed, to be named missing.
    request = "a theremin and a tripod, keep it under $300"
    assert listed_in(shipped_catalog, request) == ["theremin", "tripod"]
    # Read with no catalog (an older run's saved request), a clause's words are kept.
    assert read_request(request).items == ("theremin", "tripod", "keep")


def test_a_gift_s_kinds_are_weighed_by_the_person_and_a_follow_up_s_are_not() -> None:
    # A first request describes a person: the kettle is further from a dad who loves
    # camping than the camp chair (#40). A follow-up's words ("something else") describe
    # none, so its candidates are all as near.
    plan = plan_of(["camp chair", "gooseneck electric kettle"], budget=120, pick="one")
    results, catalog = searched(
        [[("chair-1", "Camp Chair", 79.0, 4.5)], [("kettle-1", "Gooseneck Kettle", 49.0, 4.8)]]
    )
    first = choice_pool(plan, read_request("my dad loves camping"), None, results, catalog)
    assert {c.summary.id: c.near_request for c in first.candidates} == {
        "chair-1": True,
        "kettle-1": False,
    }
    previous = PreviousRun(thread_id="t", request="my dad loves camping", limits=StatedLimits())
    follow_up = FollowUp(previous=previous, kind="refine")
    results, catalog = searched(
        [[("chair-1", "Camp Chair", 79.0, 4.5)], [("kettle-1", "Gooseneck Kettle", 49.0, 4.8)]]
    )
    later = choice_pool(plan, read_request("something else"), follow_up, results, catalog)
    assert all(c.near_request for c in later.candidates)


def test_a_product_named_in_another_language_by_meaning_is_about_the_request() -> None:
    # "moulin à café manuel" shares no word with the shop's titles; the search, renamed to
    # the shelf it names by meaning, finds a manual grinder and a kettle. The grinder is
    # what the words name, by meaning, and is picked; the kettle is about nothing asked.
    plan = plan_of(["Electric Conical Burr Coffee Grinder"])
    grinder: Row = ("grinder-1", "Manual Hand Burr Coffee Grinder", 49.99, 4.5)
    kettle: Row = ("kettle-1", "Gooseneck Electric Kettle 1L", 45.99, 4.6)
    results, catalog = searched([[kettle, grinder]])
    request = "un moulin à café manuel"
    pool = choice_pool(plan, read_request(request), None, results, catalog)  # type: ignore[arg-type]
    assert pool.unrelated == {"kettle-1"}
    assert [p.id for p in outcome_of(plan, request, results, catalog).picks] == ["grinder-1"]


def test_each_pick_s_item_is_the_kept_pick_s_or_the_one_the_choice_filled() -> None:
    # An add after a run an older version saved, whose pick has no item: the kept pick
    # keeps none, and the strap is the strap search's.
    bag: Row = ("bag-1", "Sling Camera Bag", 43.99, 4.6)
    strap: Row = ("strap-1", "Quick-Release Camera Strap", 24.0, 4.5)
    kept = PreviousPick(id="bag-1", title=bag[1], price=bag[2])
    previous = PreviousRun(thread_id="t", request="a camera bag", limits=StatedLimits())
    follow_up = FollowUp(previous=previous, kind="add", kept=(kept,), added="camera strap")
    plan = plan_of(["camera strap"])
    results, catalog = searched([[strap]])
    catalog.products["bag-1"] = product(bag)
    outcome = outcome_of(plan, "and a camera strap", results, catalog, follow_up=follow_up)
    assert [p.id for p in outcome.picks] == ["bag-1", "strap-1"]
    assert outcome.items == {"bag-1": "", "strap-1": "camera strap"}
