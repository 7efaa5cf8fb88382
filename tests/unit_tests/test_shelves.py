"""The shop's nearest shelves (graph/reading/shelves.py): what a gift or hobby request's
planner is shown of the shop, read from the catalog's own index (#34)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import shared_file
from fakes import FakeShoppingChatModel, plan_of, plan_reply, run_graph

from catalog import CatalogError, Product, SearchArgs
from graph.context import Context
from graph.prompts import PLANNER_USER, planner_messages
from graph.reading import nearest_shelves, read_request, search_shelves, unstocked_searches
from graph.reading.shelves import Shelf, _name
from graph.runs.session import usage_totals
from graph.schemas import departments_answer
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
    assert camping and {s.category for s in camping} == {"outdoor"}


def test_no_words_means_no_shelves() -> None:
    assert nearest_shelves(SHOP, "a gift for them", None) == []


def test_words_the_shop_never_uses_leave_the_kinds_to_the_planner() -> None:
    # "baby", "shower" and "expecting" are in no title, label or category, and "first"
    # is only in descriptions: no shelves, so the planner plans what suits the person
    # from what it knows, and each kind the shop lacks is put on its nearest shelf.
    request = "a baby shower present for friends expecting their first"
    assert nearest_shelves(SHOP, request, 45) == []
    plan = plan_of(
        {"action": "Search rattles", "query": "baby rattle"},
        {"action": "Search books", "query": "picture books"},
        {"action": "Pick one", "query": None},
    )
    stocked, notes = stocked_plan(SHOP, plan, [], 45)
    assert len(stocked.search_steps) >= 2 and notes
    for step in stocked.search_steps:
        found = search_shelves(SHOP, step.query or "", 45)
        assert found is not None and found.stocked, step.query


def test_the_shop_carries_a_kind_only_where_a_title_or_label_says_a_product_is_one() -> None:
    # Under $20 the shipped shop's titles with "camera" are wrist camera straps: no camera,
    # which the plan's approval says, naming them as the nearest.
    found = search_shelves(SHOP, "camera", 20)
    assert found is not None and not found.stocked
    within = plan_of({"action": "Search", "query": "camera"}, {"action": "Pick", "query": None})
    [warning] = unstocked_searches(SHOP, within.model_copy(update={"budget": 20}))
    assert "the shop has no camera within $20.00; nearest: Wrist Camera Strap" in warning
    cameras = search_shelves(SHOP, "camera", 200)  # instant cameras
    assert cameras is not None and cameras.stocked
    # DummyJSON's forks and spoons have no "utensil" in their titles, but are tagged so.
    dummy = catalog_for(Context(catalog=str(shared_file("dummyjson", "products.json"))))
    utensils = search_shelves(dummy, "cooking utensils", 30)
    assert utensils is not None and utensils.area == "kitchen-accessories"
    # Its search stands, and the kind added beside it comes from where the utensils are,
    # not from where its first hit is (Cooking Oil, in groceries).
    assert utensils.shelves[0].category == "groceries"
    plan = plan_of(
        {"action": "Search", "query": "cooking utensils"}, {"action": "Pick", "query": None}
    )
    stocked, _ = stocked_plan(
        dummy, plan, [], 30, request_words=read_request("someone who loves to cook").words
    )
    assert [s.category for s in stocked.search_steps] == [None, "kitchen-accessories"]


def test_a_search_for_a_department_becomes_its_nearest_shelf() -> None:
    # No title says "beauty" or "kitchen": two queries copied from departments' names.
    plan = plan_of(
        {"action": "Search beauty", "query": "beauty"},
        {"action": "Search kitchen", "query": "coffee-kitchen"},
        {"action": "Pick one", "query": None},
    )
    shelves = nearest_shelves(SHOP, "a baby shower present", 45)
    stocked, notes = stocked_plan(SHOP, plan, shelves, 45)
    first, second = stocked.search_steps
    assert first.category == "beauty" and first.query != "beauty"
    assert second.category == "coffee-kitchen" and second.query != "coffee-kitchen"
    for step in (first, second):
        found = search_shelves(SHOP, step.query or "", 45)
        assert found is not None and found.stocked
    assert len(notes) == 2 and "instead" in notes[0]
    # A department whose name the titles use ("books") is searched as it is.
    books = plan_of({"action": "Search", "query": "books"}, {"action": "Pick", "query": None})
    assert stocked_plan(SHOP, books, shelves, 45)[0].search_steps[0].query == "books"


def test_a_kind_added_to_a_plan_comes_from_its_own_department_first() -> None:
    plan = plan_of(
        {"action": "Search easels", "query": "photo easels"},
        {"action": "Pick one", "query": None},
    )
    shelves = nearest_shelves(SHOP, "zzqx vrrm", 200)
    stocked, notes = stocked_plan(SHOP, plan, shelves, 200)
    categories = [s.category for s in stocked.search_steps]
    # The easels search finds camera gear; the kind added is more of it, not a
    # department picked at random.
    assert len(categories) == 2 and categories[0] == categories[1], categories
    assert len(notes) == 2


def test_a_search_nothing_ties_to_the_shop_gets_a_shelf_where_the_others_are() -> None:
    # "zzqx gizmo" finds nothing and no department is named for it; the gloves are the
    # hiking backpack. The gizmo is placed last, among the outdoor shelves, not on
    # whatever the whole shop rates best.
    plan = plan_of(
        {"action": "Search gizmos", "query": "zzqx gizmo"},
        {"action": "Search gloves", "query": "hiking gloves"},
        {"action": "Pick one", "query": None},
    )
    stocked, notes = stocked_plan(
        SHOP, plan, [], 70, request_words=read_request("a gift for a keen hiker").words
    )
    gizmo, gloves = stocked.search_steps
    assert gloves.query == "Hiking Day Backpack"
    assert gizmo.category == "outdoor" and gizmo.query != gloves.query, gizmo
    assert len(notes) == 2 and all("instead" in n for n in notes)
    # So too beside two kinds the shop has: a search that can find nothing is replaced
    # from their department by a kind not searched yet, and says so.
    plan = plan_of(
        {"action": "Search camera bags", "query": "camera bag"},
        {"action": "Search gizmos", "query": "zzqx gizmo"},
        {"action": "Search tripods", "query": "travel tripod"},
        {"action": "Pick one", "query": None},
    )
    stocked, [note] = stocked_plan(
        SHOP, plan, [], 200, request_words=read_request("a gift for a photographer").words
    )
    bag, gizmo, tripod = stocked.search_steps
    assert (bag, tripod) == (plan.steps[0], plan.steps[2].model_copy(update={"step": 3}))
    assert gizmo.category == "cameras-photography" and gizmo.query not in {bag.query, tripod.query}
    assert note.startswith("step 2 searched 'zzqx gizmo'")
    found = search_shelves(SHOP, gizmo.query or "", 200)
    assert found is not None and found.stocked


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


def _answered(reply: dict[str, Any], request: str) -> dict[str, Any]:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [reply],
            "Departments": [{"departments": ["outdoor"]}],
            "ReasoningAnswer": [{"answer": "ok", "product_ids": []}],
        }
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
    assert stocked_plan(SHOP, plan, [], 200) == (plan, [])


def test_an_occasion_searched_for_itself_gets_two_kinds_the_shop_has_within_budget() -> None:
    plan = plan_of(
        {"action": "Search presents", "query": "housewarming present"},
        {"action": "Pick one", "query": None},
    )
    # Its words find nothing, nor do the request's: the shop's best-rated shelves serve.
    stocked, notes = stocked_plan(SHOP, plan, [], 50)
    assert [s.step for s in stocked.steps] == [1, 2, 3] and not stocked.steps[2].is_search
    queries = [s.query or "" for s in stocked.search_steps]
    assert "housewarming present" not in queries and len(set(queries)) == 2
    for query in queries:
        found = search_shelves(SHOP, query, 50)
        assert found is not None and found.stocked
    assert notes[0].startswith("step 1 searched 'housewarming present'")
    assert notes[1].startswith("too few kinds the shop has were planned: it also searches")


def test_the_request_shelves_come_before_the_best_rated_when_a_kind_is_added() -> None:
    plan = plan_of(
        {"action": "Search easels", "query": "photography easels"},
        {"action": "Pick one", "query": None},
    )
    shelves = [
        Shelf("The Street Photography Handbook", "books", 3, 24.95, 45.0),
        Shelf("Everyday Sling Camera Bag", "cameras-photography", 4, 43.99, 143.99),
    ]
    stocked, notes = stocked_plan(SHOP, plan, shelves, 200)
    # The easels search finds photography books (its own shelf, replacing it); the plan
    # then looks at one kind, so the request's next shelf is added.
    first, second = stocked.search_steps
    assert first.query == "The Street Photography Handbook"
    assert second.query == "Everyday Sling Camera Bag" and len(notes) == 2


def test_a_plan_the_shop_answers_keeps_its_kinds_and_looks_at_a_second() -> None:
    plan = plan_of(
        {"action": "Search camera bags", "query": "camera bag"},
        {"action": "Pick one", "query": None},
    )
    shelves = [Shelf("Travel Tripod with Ball Head", "cameras-photography", 7, 70.0, 145.99)]
    request = "stocking stuffer for a photographer"
    stocked, notes = stocked_plan(
        SHOP, plan, shelves, 200, request_words=read_request(request).words
    )
    bag, tripod = stocked.search_steps
    assert bag == plan.search_steps[0]
    assert tripod.query == "Travel Tripod with Ball Head" and stocked.steps[-1].query is None
    assert notes == [
        "too few kinds the shop has were planned: it also searches 'Travel Tripod with Ball Head'"
    ]
    # The kind the shopper named is what they want: nothing is added beside it.
    named = "a birthday gift for my sister: a camera bag"
    assert stocked_plan(SHOP, plan, shelves, 200, request_words=read_request(named).words) == (
        plan,
        [],
    )


TEACHER_GIFT = plan_of(
    {"action": "Search gifts", "query": "thank-you gift for teachers"},
    {"action": "Pick one", "query": None},
)


def test_a_kind_the_shop_lacks_goes_to_the_department_named_for_it() -> None:
    asked: list[list[str]] = []

    def departments_of(kinds: list[str]) -> list[str]:
        asked.append(kinds)
        return ["books"]

    stocked, notes = stocked_plan(SHOP, TEACHER_GIFT, [], 30, departments_of)
    assert asked == [["thank-you gift for teachers"]]  # one question, for what it lacks
    first = stocked.search_steps[0]
    assert first.category == "books"
    found = search_shelves(SHOP, first.query or "", 30)
    assert found is not None and found.stocked
    assert notes[0].endswith("(in books, the department named for it)")
    # Without the answer, the word search's own shelf stands, wherever it is.
    alone, _ = stocked_plan(SHOP, TEACHER_GIFT, [], 30, lambda kinds: [])
    assert alone.search_steps[0].category != "books"


def test_the_model_is_asked_only_where_the_shops_own_words_say_nothing() -> None:
    def departments_of(kinds: list[str]) -> list[str]:
        raise AssertionError(f"asked about {kinds}")

    answered = plan_of(
        {"action": "Search camera bags", "query": "camera bag"},
        {"action": "Pick one", "query": None},
    )
    stocked, _ = stocked_plan(SHOP, answered, [], 200, departments_of)
    assert stocked.search_steps[0] == answered.search_steps[0]
    # No gloves, but a title shares "hiking": the word search's shelf is near enough.
    gloves = plan_of(
        {"action": "Search gloves", "query": "hiking gloves"},
        {"action": "Pick one", "query": None},
    )
    stocked, _ = stocked_plan(SHOP, gloves, [], 70, departments_of)
    assert stocked.search_steps[0].query == "Hiking Day Backpack"


def test_the_model_names_departments_of_the_loaded_shop_only_and_its_call_is_counted() -> None:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [plan_reply(*TEACHER_GIFT.model_dump()["steps"])],
            "Departments": [{"departments": ["books"]}],
            "ReasoningAnswer": [{"answer": "ok", "product_ids": []}],
        }
    )
    state = run_graph(model, None, "a thank-you gift for my kid's teacher, nothing over $30")
    asked = next(
        p
        for p, tools in zip(model.prompts, model.tools_seen, strict=True)
        if tools == ["Departments"]
    )
    assert "thank-you gift for teachers" in str(asked[-1].content)
    for department in SHOP.categories():
        assert department in str(asked[-1].content)
    assert state["plan"].search_steps[0].category == "books"
    assert state["planner_calls"] == 2  # the plan and the departments question
    steps = sum(r.llm_calls for r in state["step_results"])
    assert usage_totals(state).llm_calls == 2 + steps


def test_the_departments_answer_can_name_only_the_shops_own() -> None:
    answer = departments_answer(("books", "beauty"))
    assert answer is departments_answer(("books", "beauty"))  # built once per shop
    assert answer.model_validate({"departments": ["books"]})
    with pytest.raises(ValueError):
        answer.model_validate({"departments": ["garden"]})
    schema = answer.model_json_schema()
    assert schema["properties"]["departments"]["items"]["enum"] == ["books", "beauty"]
