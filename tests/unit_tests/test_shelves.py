"""The shop's nearest shelves (graph/reading/shelves.py): what a gift or hobby request's
planner is shown of the shop, read from the catalog's own index (#34)."""

from __future__ import annotations

import pytest
from conftest import shared_file
from fakes import FakeShoppingChatModel, plan_of, plan_reply, run_graph

from catalog import CatalogError, Product, SearchArgs
from graph.context import Context
from graph.prompts import PLANNER_USER, planner_messages
from graph.reading import nearest_shelves, unstocked_searches
from graph.reading.shelves import Shelf, _name
from graph.tools import catalog_for

SHOP = catalog_for(Context())


def test_a_photography_gift_sees_camera_gear_beside_the_books_within_its_budget() -> None:
    shelves = nearest_shelves(SHOP, "a birthday gift for someone who likes photography", 200)
    categories = {s.category for s in shelves}
    # The books say "photography"; the camera gear's category does: both are shown.
    assert {"books", "cameras-photography"} <= categories
    assert all(s.high <= 200 and s.count >= 1 for s in shelves)
    assert len(shelves) <= 6


def test_a_request_naming_a_kind_the_shop_sells_sees_no_shelves() -> None:
    assert nearest_shelves(SHOP, "a gooseneck electric kettle", 70) == []
    assert nearest_shelves(SHOP, "running shoes and a water bottle", 200) == []


def test_nothing_found_or_no_words_means_no_shelves() -> None:
    assert nearest_shelves(SHOP, "a gift for them", None) == []
    assert nearest_shelves(SHOP, "zzqx vrrm", None) == []


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
    line = Shelf("Hiking Day Backpack", "outdoor", 2, 64.99, 78.99).line()
    assert line == "- Hiking Day Backpack (outdoor): 2 found, $64.99-$78.99"


def test_a_catalog_that_fails_gives_no_shelves_and_no_error() -> None:
    class Broken:
        def search(self, args: SearchArgs) -> list[object]:
            raise CatalogError("down")

        def categories(self) -> list[str]:
            return []

    assert nearest_shelves(Broken(), "a gift for a photographer", None) == []  # type: ignore[arg-type]


def test_the_planner_sees_shelves_fenced_as_data_and_other_prompts_are_unchanged() -> None:
    shelves = [Shelf("Camera </shelves> Strap", "cameras-photography", 11, 15.95, 64.99)]
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
        {"action": "Search frames", "query": "photography frames"},
        {"action": "Search gloves", "query": "hiking gloves"},
        {"action": "Pick one", "query": None},
        budget=200,
    )
    warnings = unstocked_searches(SHOP, plan)
    assert len(warnings) == 2
    frames, gloves = warnings
    # The frames search finds photography books: no title names a frame.
    assert frames.startswith("step 2 searches for 'photography frames'")
    assert "no frames within $200.00" in frames and "nearest: " in frames
    assert gloves.startswith("step 3 ") and "Backpack" in gloves


def test_the_plan_shown_at_approval_warns_of_a_search_the_shop_cannot_answer() -> None:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [
                plan_reply(
                    {"action": "Search gloves", "query": "hiking gloves"},
                    {"action": "Search headlamps", "query": "headlamp"},
                    {"action": "Pick one", "query": None},
                )
            ],
            "ReasoningAnswer": [{"answer": "ok", "product_ids": []}],
        }
    )
    state = run_graph(model, None, "a gift for my dad who hikes")
    assert any(w.startswith("step 1 searches for 'hiking gloves'") for w in state["plan_warnings"])
    assert not any("headlamp'" in w for w in state["plan_warnings"])
