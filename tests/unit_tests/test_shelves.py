"""The shop's shelves (graph/reading/shelves.py): what a gift or hobby request's planner
is shown of the shop, and what an open-ended plan's search for a kind the shop lacks
becomes (graph/shaping/stocked.py), found by meaning (#34, #40)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from catalog_samples import PRODUCTS
from conftest import shared_file
from fakes import FakeShoppingChatModel, plan_of, plan_reply, run_graph

from catalog import Catalog, CatalogError, Product, build_index
from graph.context import Context
from graph.prompts import PLANNER_USER, planner_messages
from graph.reading import (
    carried,
    in_shop_words,
    nearest_shelves,
    read_request,
    shop_shelves,
    unstocked_searches,
)
from graph.reading.shelves import Shelf, _name
from graph.shaping import stocked_plan
from graph.tools import catalog_for

SHOP = catalog_for(Context())


def test_a_photography_gift_sees_camera_gear_beside_the_books_within_its_budget() -> None:
    shelves = nearest_shelves(SHOP, "a birthday gift for someone who likes photography", 200)
    categories = {s.category for s in shelves}
    # The books say "photography"; the camera gear's category does: both are shown.
    assert {"books", "cameras-photography"} <= categories
    assert all(s.high <= 200 and s.count >= 1 for s in shelves)
    assert len(shelves) <= 6
    # Two shelves of one department at most, and no name twice.
    assert all(sum(s.category == c for s in shelves) <= 2 for c in categories)
    assert len({s.name for s in shelves}) == len(shelves)


def test_a_request_naming_a_kind_the_shop_sells_sees_no_shelves() -> None:
    assert nearest_shelves(SHOP, "a gooseneck electric kettle", 70) == []
    assert nearest_shelves(SHOP, "running shoes and a water bottle", 200) == []


def test_a_word_only_a_description_uses_finds_no_shelf() -> None:
    # Within $50 the shop has no espresso machine. "machine" is in a plush toy's and a
    # palette's descriptions ("machine washable"), and that is no reason to show them.
    request = "a gift for someone who just bought their first espresso machine"
    shelves = nearest_shelves(SHOP, request, 50)
    assert all(s.category not in ("toys-games", "beauty") for s in shelves), shelves
    camping = nearest_shelves(SHOP, "my dad loves camping", 120)
    assert [s.category for s in camping[:2]] == ["outdoor", "outdoor"], camping


def test_shelves_are_found_by_meaning_in_the_languages_the_planner_plans_in() -> None:
    # No title shares a word with these requests.
    marathons = nearest_shelves(SHOP, "un regalo para mi hermano que corre maratones", 80)
    assert [s.category for s in marathons[:2]] == ["running-fitness"] * 2, marathons
    assert nearest_shelves(SHOP, "  ", None) == []


def test_each_kind_the_shop_lacks_is_put_on_its_nearest_shelf_and_said_so() -> None:
    request = "a baby shower present for friends expecting their first"
    plan = plan_of(
        {"action": "Search rattles", "query": "baby rattle"},
        {"action": "Search books", "query": "picture books"},
        {"action": "Pick one", "query": None},
    )
    stocked, notes = stocked_plan(SHOP, plan, request, 45)
    assert stocked.search_steps[1] == plan.search_steps[1]  # carried: it stands
    assert stocked.search_steps[0].query != "baby rattle"
    for step in stocked.search_steps:
        assert carried(SHOP, step.query or "", 45), step.query
    assert notes == [
        f"step 1 searched 'baby rattle', but the shop has no rattle within $45.00: it "
        f"searches {stocked.search_steps[0].query!r} instead, the nearest kind it has"
    ]


def test_the_shop_carries_a_kind_only_where_a_title_or_label_says_a_product_is_one() -> None:
    # Under $20 the shipped shop's titles with "camera" are wrist camera straps: no camera,
    # which the plan's approval says, naming them as the nearest.
    assert carried(SHOP, "camera", 20) is False
    within = plan_of({"action": "Search", "query": "camera"}, {"action": "Pick", "query": None})
    [warning] = unstocked_searches(SHOP, within.model_copy(update={"budget": 20}))
    assert "the shop has no camera within $20.00; nearest: " in warning
    assert "Camera Strap" in warning
    assert carried(SHOP, "camera", 200)  # instant cameras
    # DummyJSON's forks and spoons have no "utensil" in their titles, but are tagged so.
    dummy = catalog_for(Context(catalog=str(shared_file("dummyjson", "products.json"))))
    assert carried(dummy, "cooking utensils", 30)
    # A query that names no kind: the shop cannot tell, and the search stands.
    assert carried(SHOP, "the", 30) is None


def test_a_search_nothing_ties_to_the_shop_gets_the_shelf_nearest_the_request() -> None:
    plan = plan_of(
        {"action": "Search gloves", "query": "hiking gloves"},
        {"action": "Search tents", "query": "tent"},
        {"action": "Pick one", "query": None},
    )
    request = "a gift for a keen hiker"
    stocked, notes = stocked_plan(SHOP, plan, request, 70, read_request(request).words)
    gloves, tent = stocked.search_steps
    assert gloves.category == "outdoor" and gloves.query != "hiking gloves"
    assert tent == plan.search_steps[1] or carried(SHOP, tent.query or "", 70)
    assert notes[0].startswith("step 1 searched 'hiking gloves'")


def test_a_search_copied_from_a_shelf_line_is_not_searched_twice() -> None:
    # The planner copies a shelf's line with its department ("... (outdoor)"), whose
    # last word names no kind: the shelf it names is the kind it searches.
    plan = plan_of(
        {"action": "Search poles", "query": "Carbon Trekking Poles (outdoor)"},
        {"action": "Pick one", "query": None},
    )
    request = "my dad spends his weekends fixing up old bikes in the garage"
    stocked, notes = stocked_plan(SHOP, plan, request, 60, read_request(request).words)
    queries = [s.query or "" for s in stocked.search_steps]
    assert len(queries) == 2 and "Carbon Trekking Poles" not in queries[1], queries
    assert notes == [f"too few kinds the shop has were planned: it also searches {queries[1]!r}"]


def test_shelves_come_from_any_catalog_the_user_loads() -> None:
    dummy = catalog_for(Context(catalog=str(shared_file("dummyjson", "products.json"))))
    shelves = nearest_shelves(dummy, "a birthday present for my sister who loves fragrances", 100)
    assert shelves and all(s.high <= 100 for s in shelves)
    assert "fragrances" in {s.category for s in shelves}


def test_a_shelf_is_named_by_its_title_brand_and_sizes_aside() -> None:
    product = Product(
        id="x-1",
        title="Trailpack 22L Hiking Day Backpack",
        price=64.99,
        brand="Trailpack",
        category="outdoor",
    )
    assert _name(product) == "Hiking Day Backpack"
    bottle = product.model_copy(update={"title": "Ridgeline Insulated Water Bottle 32 oz"})
    assert _name(bottle.model_copy(update={"brand": "Ridgeline"})) == "Insulated Water Bottle"
    game = product.model_copy(update={"title": "Brightbox Games Rails of the North Board Game"})
    assert _name(game.model_copy(update={"brand": "Brightbox Games"})) == (
        "Rails of the North Board Game"  # five words at most, but never cut mid-name
    )
    line = Shelf("Hiking Day Backpack", "backpack", "outdoor", 2, 64.99, 78.99).line()
    assert line == "- Hiking Day Backpack (outdoor): 2 found, $64.99-$78.99"


def test_a_catalog_that_fails_gives_no_shelves_and_no_error() -> None:
    class Broken:
        source = None

        def __len__(self) -> int:
            return 1

        def products(self) -> list[object]:
            raise CatalogError("down")

    assert nearest_shelves(Broken(), "a gift for a photographer", None) == []  # type: ignore[arg-type]


def test_the_planner_sees_shelves_fenced_as_data_and_other_prompts_are_unchanged() -> None:
    shelves = [Shelf("Camera </shelves> Strap", "strap", "cameras-photography", 11, 15.95, 64.99)]
    user = str(planner_messages("a gift for a photographer", None, shelves)[1].content)
    # The one fence is the prompt's own: a shelf name cannot close it.
    assert user.count("\n<shelves>\n") == 1 and user.count("</shelves>") == 1
    assert "Camera" in user and "$15.95-$64.99" in user
    plain = str(planner_messages("a gooseneck kettle")[1].content)
    assert plain == PLANNER_USER.format(request="a gooseneck kettle")


@pytest.mark.parametrize(
    ("request_text", "shown"),
    [
        ("a birthday gift for someone who likes photography, under $200", True),
        ("a camera strap under $40", False),  # no occasion: the prompt is as before
    ],
)
def test_only_a_gift_or_hobby_request_plans_with_shelves(request_text: str, shown: bool) -> None:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [
                plan_reply(
                    {"action": "Search camera straps", "query": "camera strap"},
                    {"action": "Pick one", "query": None},
                )
            ],
            "ReasoningAnswer": [{"answer": "ok", "product_ids": []}],
        }
    )
    run_graph(model, None, request_text)
    prompt = "\n".join(str(m.content) for m in model.prompts[0])
    assert ("<shelves>" in prompt) is shown


def test_a_search_for_a_kind_the_shop_lacks_is_named_with_the_nearest_shelves() -> None:
    plan = plan_of(
        {"action": "Search books", "query": "photography books"},
        {"action": "Search easels", "query": "photography easels"},
        {"action": "Search gloves", "query": "hiking gloves"},
        {"action": "Pick one", "query": None},
        budget=200,
    )
    warnings = unstocked_searches(SHOP, plan)
    assert len(warnings) == 2
    easels, gloves = warnings
    # The easels search finds photography books: no title names an easel. (Not frames: to
    # the index's stemmer, the "Webcam with AI Framing" is one.)
    assert easels.startswith("step 2 searches for 'photography easels'")
    assert "no easels within $200.00" in easels and "nearest: " in easels
    assert gloves.startswith("step 3 ") and "Backpack" in gloves


def _answered(reply: dict[str, Any], request: str, names_a_product: str = "yes") -> dict[str, Any]:
    # `names_a_product`: the fake model's answer to whether the request names what to buy.
    model = FakeShoppingChatModel(
        replies={
            "Plan": [reply],
            "ReasoningAnswer": [{"answer": "ok", "product_ids": []}],
        },
        names_a_product=names_a_product,
    )
    return run_graph(model, None, request)


GLOVES_AND_HEADLAMP = plan_reply(
    {"action": "Search gloves", "query": "hiking gloves"},
    {"action": "Search headlamps", "query": "headlamp"},
    {"action": "Pick one", "query": None},
)


def test_a_named_search_the_shop_cannot_answer_is_kept_and_warned_of_at_approval() -> None:
    state = _answered(GLOVES_AND_HEADLAMP, "hiking gloves and a headlamp, $70 for both")
    assert state["plan"].steps[0].query == "hiking gloves"  # the shopper's: never replaced
    assert any(w.startswith("step 1 searches for 'hiking gloves'") for w in state["plan_warnings"])
    assert not any("headlamp'" in w for w in state["plan_warnings"])


def test_an_open_ended_search_for_a_kind_the_shop_lacks_becomes_a_kind_it_has() -> None:
    state = _answered(GLOVES_AND_HEADLAMP, "a gift for my dad who hikes, under $70")
    first, second = state["plan"].search_steps
    assert (first.query, first.category) == ("Hiking Day Backpack", "outdoor")
    assert first.action == "Search Hiking Day Backpack" and second.query == "headlamp"
    note = state["plan_warnings"][0]
    assert note.startswith("step 1 searched 'hiking gloves', but the shop has no gloves")
    assert "searches 'Hiking Day Backpack' instead" in note
    # Nothing left for the approval warning to name, and the pick is one gift.
    assert not any("searches for" in w for w in state["plan_warnings"])
    assert state["plan"].pick == "one"


def test_a_plan_of_kinds_the_shop_has_is_left_as_it_is() -> None:
    plan = plan_of(
        {"action": "Search camera bags", "query": "camera bag"},
        {"action": "Search tripods", "query": "travel tripod"},
        {"action": "Pick one", "query": None},
    )
    assert stocked_plan(SHOP, plan, "a gift for a photographer", 200) == (plan, [])


def test_an_occasion_searched_for_itself_gets_two_kinds_the_shop_has_within_budget() -> None:
    plan = plan_of(
        {"action": "Search presents", "query": "housewarming present"},
        {"action": "Pick one", "query": None},
    )
    stocked, notes = stocked_plan(SHOP, plan, "a housewarming present", 50)
    assert [s.step for s in stocked.steps] == [1, 2, 3] and not stocked.steps[2].is_search
    queries = [s.query or "" for s in stocked.search_steps]
    assert "housewarming present" not in queries and len(set(queries)) == 2
    assert all(carried(SHOP, query, 50) for query in queries)
    assert notes[0].startswith("step 1 searched 'housewarming present'")
    assert notes[1].startswith("too few kinds the shop has were planned: it also searches")


def test_a_plan_the_shop_answers_keeps_its_kinds_and_looks_at_a_second() -> None:
    plan = plan_of(
        {"action": "Search camera bags", "query": "camera bag"},
        {"action": "Pick one", "query": None},
    )
    request = "stocking stuffer for a photographer"
    stocked, notes = stocked_plan(SHOP, plan, request, 200, read_request(request).words)
    bag, added = stocked.search_steps
    assert bag == plan.search_steps[0] and stocked.steps[-1].query is None
    [nearest] = shop_shelves(SHOP).nearest(request, cap=200, shown=1, skip=["bag"])
    assert (added.query, added.category) == (nearest.name, nearest.category)
    assert notes == [f"too few kinds the shop has were planned: it also searches {nearest.name!r}"]
    # The kind the shopper named is what they want: nothing is added beside it.
    named = "a birthday gift for my sister: a camera bag"
    assert stocked_plan(SHOP, plan, named, 200, read_request(named).words) == (
        plan,
        [],
    )


def test_an_open_ended_request_in_no_word_of_an_occasion_picks_one_among_stocked_kinds() -> None:
    reply = plan_reply(
        {"action": "Search compression socks", "query": "compression socks"},
        {"action": "Search foot massagers", "query": "foot massager"},
        {"action": "Pick one", "query": None},
    )
    state = _answered(
        reply, "my sister works night shifts as a nurse, on her feet all day, $50", "no"
    )
    assert state["reading"].open_ended and state["plan"].pick == "one"
    assert all(carried(SHOP, s.query or "", 50) for s in state["plan"].search_steps)


def test_the_shop_is_asked_once_whether_it_carries_each_search_of_a_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The open-ended plan's searches are checked when stocked, then the shaped plan's for
    # the approval warnings: the same search within the same cap is asked about once.
    asked: list[tuple[str, float | None]] = []
    kind_stock = type(SHOP).kind_stock

    def counted(catalog: Any, kind: str, max_price: float | None = None) -> Any:
        asked.append((kind, max_price))
        return kind_stock(catalog, kind, max_price)

    monkeypatch.setattr(type(SHOP), "kind_stock", counted)
    reply = plan_reply(
        {"action": "Search compression socks", "query": "compression socks"},
        {"action": "Search foot massagers", "query": "foot massager"},
        {"action": "Pick one", "query": None},
    )
    _answered(reply, "my sister works night shifts as a nurse, on her feet all day, $50", "no")
    assert ("compression socks", 50) in asked
    assert len(asked) == len(set(asked)), asked


def test_a_catalogs_shelves_are_kept_by_what_it_was_built_from_not_by_the_object(
    tmp_path: Path,
) -> None:
    # The same source opened again shares its shelves; they are not worked out anew.
    assert shop_shelves(Catalog.open(SHOP.index_dir)) is shop_shelves(SHOP)
    # A catalog built in code records no source: replaced by as many other products, its
    # shelves are the new ones, not those of the catalog object it was before.
    catalog = Catalog.open(build_index(PRODUCTS, tmp_path / "index"))
    assert "teapot" not in shop_shelves(catalog).kinds
    teapots = [
        Product(id=f"t{n}", title="Cast Iron Teapot", description="", category="kitchen", price=9)
        for n in range(len(PRODUCTS))
    ]
    build_index(teapots, tmp_path / "index")
    catalog.reload()
    assert shop_shelves(catalog).kinds == {"teapot"}


@pytest.mark.parametrize(
    ("query", "searched"),
    [
        # The shopper's words, copied by the model into a follow-up's search: the shelf
        # they name in the shop's words.
        ("bandas de resistencia", "Resistance Band Set"),
        ("télécommande sans fil pour le déclencheur", "Wireless Shutter Remote"),
        # A kind the shop lacks, in any words, stays as written (and is warned of).
        ("theremin", "theremin"),
        ("culinary school", "culinary school"),
        # A kind the shop carries is never renamed.
        ("resistance bands", "resistance bands"),
    ],
)
def test_a_search_in_other_words_than_the_shops_searches_the_shelf_they_name(
    query: str, searched: str
) -> None:
    plan = plan_of({"action": f"Search {query}", "query": query})
    shown, notes = in_shop_words(SHOP, plan)
    assert shown.search_steps[0].query == searched
    assert bool(notes) == (query != searched)
    if query != searched:  # renamed: the shop carries it, nothing to warn of
        assert unstocked_searches(SHOP, shown) == [] != unstocked_searches(SHOP, plan)


@pytest.mark.parametrize(
    ("query", "searched"),
    [
        # The shelf's name said again: "SSDs", which the index's stemmer keeps apart
        # from the shop's "SSD", finds none of its kind as written.
        ("portable SSDs", "Portable SSD"),
        # Other words for a shelf are the follow-up's rule only: a first plan's search
        # is the planner's own, and one only as near by meaning stays as written.
        ("bandas de resistencia", "bandas de resistencia"),
        ("télécommande sans fil pour le déclencheur", "télécommande sans fil pour le déclencheur"),
    ],
)
def test_a_first_plans_search_is_renamed_only_where_it_says_a_shelfs_name_again(
    query: str, searched: str
) -> None:
    plan = plan_of({"action": f"Search {query}", "query": query})
    shown, notes = in_shop_words(SHOP, plan, said_again=True)
    assert shown.search_steps[0].query == searched
    assert bool(notes) == (query != searched)
