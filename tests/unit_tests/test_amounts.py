"""Amounts as shoppers write them (issue 35): digit groups with any separator, k and m
suffixes, number words and digits of the planner's languages, limits in pairs, and
amounts that are no number. The dev set is tests/fixtures/amounts_dev.json: each request
with the reading a person gives it. No model is involved here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeShoppingChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import MemorySaver

from catalog import Product
from graph.builder import build_graph
from graph.choosing.outcome import checked_outcome
from graph.choosing.pool import choice_pool
from graph.cli.render import budget_line
from graph.context import Context
from graph.reading import read_request
from graph.reading.stated import checked_request, read_limits, without_limit_phrases
from graph.schemas import Plan, ProductSummary, RequestError, StepResult
from graph.shaping.limits import limit_warnings, model_read_limits, reconcile_limits

DEV_SET = Path(__file__).parents[1] / "fixtures" / "amounts_dev.json"
PHRASINGS: list[dict[str, Any]] = json.loads(DEV_SET.read_text(encoding="utf-8"))


def test_the_dev_set_is_large_enough() -> None:
    assert len(PHRASINGS) >= 40


@pytest.mark.parametrize("case", PHRASINGS, ids=[c["request"] for c in PHRASINGS])
def test_an_amount_is_read_as_a_person_reads_it(case: dict[str, Any]) -> None:
    stated = read_limits(case["request"])
    assert (stated.max_price, stated.min_price, stated.total) == (
        case["max_price"],
        case["min_price"],
        case["total"],
    )
    assert [[list(c.words), c.max_price] for c in stated.item_caps] == case.get("item_caps", [])
    assert [[c.kind, c.applied] for c in stated.choices] == case.get("choices", [])
    assert list(stated.unreadable) == case.get("unreadable", [])
    assert [[f.currency, list(f.amounts)] for f in stated.foreign] == case.get("foreign", [])
    assert stated.impossible == ()


PLAN = Plan.model_validate(
    {
        "goal": "a kettle and mugs",
        "steps": [
            {"step": 1, "action": "Search kettles", "query": "kettle"},
            {"step": 2, "action": "Pick one", "query": None},
        ],
    }
)


@pytest.mark.parametrize("written", ["$6O", "$1e309"])
def test_an_amount_that_is_no_number_is_named_and_never_applied(written: str) -> None:
    stated = read_limits(f"a kettle and mugs under {written} total")
    assert (stated.max_price, stated.total, stated.prices) == (None, None, ())
    warnings = limit_warnings(stated, PLAN)
    assert any(repr(written) in w and "cannot be read as a number" in w for w in warnings)


def test_two_totals_are_both_shown_with_the_one_applied() -> None:
    stated = read_limits("a lamp and a rug, $30 total, no wait, $40 total")
    assert stated.total == 40 and stated.prices == (30, 40)
    (warning,) = [w for w in limit_warnings(stated, PLAN) if "limits of one kind" in w]
    assert "'$30 total'" in warning and "'$40 total' is applied" in warning


def test_a_cap_on_each_item_and_a_total_are_both_kept() -> None:
    stated = read_limits("socks and a hat under $25 each, $40 total")
    assert (stated.max_price, stated.total, stated.budget) == (25, 40, 40)
    assert stated.choices == ()


def test_number_words_elsewhere_stay_as_written() -> None:
    stated = read_limits("one pair of running shoes and two pairs of socks")
    assert not stated.any and stated.prices == ()


# Issue 57: an amount is read as written, or named at approval; never silently another
# number, never dropped. (request, (max_price, min_price, total), what approval names).
READ_OR_NAMED = [
    ("a camera strap under $1_000", (1000, None, None), None),
    ("a camera strap under $1,50,000", (150000, None, None), None),
    ("a camera strap under $6 0", (None, None, None), "$6 0"),
    ("a camera strap under $6\u200b0", (None, None, None), "$6 0"),
    ("a camera strap under $60.5.5", (None, None, None), "$60.5.5"),
    ("a camera strap under $NaN", (None, None, None), "$NaN"),
    ("a camera strap under $inf", (None, None, None), "$inf"),
    ("a camera strap under $∞", (None, None, None), "$∞"),
    ("a camera strap for a couple hundred dollars", (None, None, None), "couple hundred"),
    ("a camera strap under half a hundred dollars", (None, None, None), "half a hundred"),
    ("a camera strap under fifty-five point five dollars", (55.5, None, None), None),
    ("a camera strap for a dozen dollars", (None, None, None), "a dozen dollars"),
    ("a camera strap and a bag, 60 dollars and 50 cents total", (60.5, None, 60.5), None),
    ("ремешок для камеры до шестидесяти долларов", (None, None, None), "шестидесяти долларов"),
    ("相机背带 六十美元以下", (None, None, None), "六十美元"),
    ("カメラストラップ 六十ドル以下", (None, None, None), "六十ドル"),
    ("حزام كاميرا تحت ستين دولار", (None, None, None), "ستين دولار"),
    ("a camera strap under 40 CHF", (None, None, None), "in CHF"),
    ("a camera strap under USD60", (60, None, None), None),
    ("a camera strap for twenty to thirty dollars", (30, 20, None), None),
]


@pytest.mark.parametrize(("request_text", "limits", "named"), READ_OR_NAMED)
def test_an_amount_is_read_as_written_or_named_at_approval(
    request_text: str, limits: tuple[float | None, ...], named: str | None
) -> None:
    stated = read_limits(request_text)
    assert (stated.max_price, stated.min_price, stated.total) == limits
    warnings = limit_warnings(stated, PLAN)
    if named is None:
        assert stated.unreadable == () and stated.foreign == ()
    else:
        assert any(named in w for w in warnings), warnings


@pytest.mark.parametrize(
    "request_text",
    [
        "a camera strap under -$60",
        "a camera strap under \u2212$60",
        "a camera strap under minus sixty dollars",
        "a camera strap under $-60",
    ],
)
def test_a_negative_amount_is_refused_however_it_is_written(request_text: str) -> None:
    with pytest.raises(RequestError, match="no product can meet"):
        checked_request(request_text)


def test_a_range_with_a_dash_is_no_negative_amount() -> None:
    assert checked_request("a camera strap, $20 - $40")[1].max_price == 40


def test_three_capitals_that_name_no_currency_are_no_price() -> None:
    stated = read_limits("a lamp with 40 LED bulbs")
    assert not stated.any


def test_words_beside_a_currency_that_name_nothing_are_no_amount() -> None:
    assert read_limits("a wallet for US bills, prices in dollars").unreadable == ()


@pytest.mark.parametrize(
    "request_text",
    ["une télécommande sans fil pour le déclencheur", "un sac pour mon ordinateur, 50 dollars"],
)
def test_a_word_ending_in_a_currency_s_letters_is_no_amount(request_text: str) -> None:
    # "déclench-eur", "ordinat-eur": no euro amount in words, nothing cut from the words.
    assert read_limits(request_text).unreadable == ()
    assert "eur" in without_limit_phrases(request_text)


def test_words_before_a_currency_still_name_an_unreadable_amount() -> None:
    assert read_limits("a lamp for a couple hundred euros").unreadable == (
        "a couple hundred euros",
    )


# Two limits: a correction (the later) applies, two caps that both hold the lower, and
# both are shown; a floor above the cap is refused; a cap for a named item is that item's.
# (request, max, min, total, item caps, the limits shown as one kind and the one applied).
TWO_LIMITS = [
    ("a camera strap under $60, no, under $40", 40, None, None, [],
     ("under $60", "under $40", "under $40")),
    ("a strap under $60. Actually under $30", 30, None, None, [],
     ("under $60", "under $30", "under $30")),
    ("a camera strap under $60 and under $40", 40, None, None, [],
     ("under $60", "under $40", "under $40")),
    ("a camera strap under $40 and under $60", 40, None, None, [],
     ("under $40", "under $60", "under $40")),
    ("a camera strap under $40, no, under $60", 60, None, None, [],
     ("under $40", "under $60", "under $60")),
    (
        "a camera strap and a bag, under $40 for the strap and $60 total",
        None, None, 60, [(("strap",), 40)], None,
    ),
    ("a camera strap and a bag, under $30 each, $60 total", 30, None, 60, [], None),
    ("a camera strap for twenty to thirty dollars", 30, 20, None, [], None),
]  # fmt: skip


@pytest.mark.parametrize(("request_text", "cap", "floor", "total", "caps", "shown"), TWO_LIMITS)
def test_two_limits_are_both_kept_or_both_shown_with_the_one_applied(
    request_text: str,
    cap: float | None,
    floor: float | None,
    total: float | None,
    caps: list[tuple[tuple[str, ...], float]],
    shown: tuple[str, str, str] | None,
) -> None:
    stated = read_limits(request_text)
    assert (stated.max_price, stated.min_price, stated.total) == (cap, floor, total)
    assert [(c.words, c.max_price) for c in stated.item_caps] == caps
    choices = [w for w in limit_warnings(stated, PLAN) if "limits of one kind" in w]
    if shown is None:
        assert choices == []
    else:
        (warning,) = choices
        assert f"{shown[0]!r}, {shown[1]!r}; {shown[2]!r} is applied" in warning


def test_a_floor_above_the_cap_is_refused_as_impossible() -> None:
    with pytest.raises(RequestError, match=r"a floor of \$70.00 above a cap of \$60.00"):
        checked_request("a camera strap and a bag, $60 total or less, at least $70 total")


@pytest.mark.parametrize(
    "request_text", ["three camera straps, $25 each", "camera straps, $25 each"]
)
def test_a_cap_on_each_item_is_no_budget_for_the_whole(request_text: str) -> None:
    """#43: with no count of items, "$25 each" was read as a $25 budget for all."""
    stated = read_limits(request_text)
    assert (stated.max_price, stated.budget) == (25, None)
    plan = Plan.model_validate(
        {
            "goal": "three camera straps",
            "budget": 25,
            "steps": [{"step": 1, "action": "Search straps", "query": "camera strap"}],
        }
    )
    reconciled = reconcile_limits(request_text, stated, plan)
    assert reconciled.plan.budget is None and reconciled.plan.steps[0].max_price == 25
    assert reconciled.notes == ["budget $25.00 is the request's cap on each item: removed"]


def test_several_of_one_item_are_named_and_one_of_each_is_never_within_budget() -> None:
    stated = read_limits("three camera straps, $60 total")
    assert stated.several == ("three camera straps",)
    assert any("'three camera straps'" in w for w in limit_warnings(stated, PLAN))
    plan = Plan.model_validate(
        {
            "goal": "three camera straps",
            "budget": 60,
            "steps": [
                {"step": 1, "action": "Search straps", "query": "camera strap", "max_price": 60},
                {"step": 2, "action": "Pick", "query": None},
            ],
        }
    )
    strap = Product(id="s1", title="Leather Camera Strap", category="misc", price=20, rating=4.5)
    results = [
        StepResult(step=1, kind="search", action="search", products=[ProductSummary.of(strap)])
    ]
    catalog = FakeCatalog(strap)
    reading = read_request("three camera straps, $60 total")
    pool = choice_pool(plan, reading, None, results, catalog)  # type: ignore[arg-type]
    outcome = checked_outcome(
        plan,
        pool,
        results,
        stated=stated,
        follow_up=None,
        plan_warnings=[],
        catalog=catalog,  # type: ignore[arg-type]
    )
    assert [p.id for p in outcome.picks] == ["s1"]
    assert outcome.within_budget is None
    assert "within budget" not in budget_line(outcome)
    assert read_limits("one camera strap, $60 total").several == ()


class FakeCatalog:
    """The one catalog call the choosing code makes: records by id (a fake catalog)."""

    def __init__(self, *products: Product) -> None:
        self.products = {p.id: p for p in products}

    def get(self, ids: list[str]) -> dict[str, Product]:
        return {i: self.products[i] for i in ids if i in self.products}


STRAP_PLAN = {
    "goal": "a camera strap",
    "budget": None,
    "steps": [
        {"step": 1, "action": "Find camera straps", "query": "camera strap"},
        {"step": 2, "action": "Pick one", "query": None},
    ],
}


@pytest.mark.parametrize(
    ("request_text", "named"),
    [
        ("a camera strap under $6 0", "'$6 0' cannot be read"),
        ("three camera straps, $25 each", "asks for 'three camera straps'"),
        ("a camera strap under $60, no, under $40", "'under $40' is applied"),
    ],
)
def test_what_is_named_reaches_the_approval_prompt(
    small_catalog_file: Path, request_text: str, named: str
) -> None:
    """Through the real graph with a fake planner model: the approval interrupt's warnings."""
    graph = build_graph(checkpointer=MemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "amounts"}}
    model = FakeShoppingChatModel(replies={"Plan": [STRAP_PLAN]})
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": request_text}, config, context=context)
    (interrupt,) = graph.get_state(config).interrupts
    assert any(named in w for w in interrupt.value["warnings"]), interrupt.value["warnings"]


def test_a_corrected_cap_the_model_kept_on_a_search_is_set_to_the_one_applied() -> None:
    request = "a camera strap under $60, no, under $40"
    plan = Plan.model_validate(
        {
            **STRAP_PLAN,
            "budget": 60,
            "steps": [{**STRAP_PLAN["steps"][0], "max_price": 60}, STRAP_PLAN["steps"][1]],  # type: ignore[index]
        }
    )
    reconciled = reconcile_limits(request, read_limits(request), plan)
    assert (reconciled.plan.budget, reconciled.plan.steps[0].max_price) == (40, 40)
    assert "step 1: price cap $60.00 is above the request's cap: set to $40.00" in reconciled.notes


# Issue 54's new wording: a negation a few words before a floor word, in its clause, makes
# it a cap; one before a cap word turns it only right beside it ("no ammonia under $30" is a
# cap), and a comma or a word that adds ends its reach. (request, cap, floor)
NEGATED_IN_ITS_CLAUSE = [
    ("gel pens, a dotted notebook and a weekly planner for school. can't go above $35", 35, None),
    ("a usb-c charger and a usb-c hub for my new laptop, try not to spend over $50", 50, None),
    ("una sartén de hierro fundido y un cuchillo de chef, sin gastar más de 90 dólares", 90, None),
    ("a yoga mat for me and a felt desk mat for my partner, don't want to go over $60", 60, None),
    (
        "a cold brew coffee maker and a pour-over coffee maker, "
        "I can't spend more than $55 on both",
        55,
        None,
    ),
    ("a camera strap that shouldn't cost more than one hundred dollars", 100, None),
    ("a camera strap, not paying over $90", 90, None),
    ("a camera strap that doesn't cost more than $40", 40, None),
    ("a camera strap, I do not want to pay more than $45", 45, None),
    ("uma alça de câmera, não quero gastar mais de 30 dólares", 30, None),
    ("a fountain pen, nothing fancy, under $30", 30, None),
    ("a lamp, no frills, over $20", None, 20),
    ("a lamp, not too big and over $20", None, 20),
    ("a hair dye with no ammonia under $30", 30, None),
    ("a remote without batteries under $20", 20, None),
    ("a lamp, not sure but under $50", 50, None),
    ("un champú sin sulfatos por menos de 20 dólares", 20, None),
    ("a desk lamp under $60, no fees on orders over $25", 60, None),  # the shop's threshold
]


@pytest.mark.parametrize(("request_text", "cap", "floor"), NEGATED_IN_ITS_CLAUSE)
def test_a_negation_turns_the_limit_word_of_its_clause_round(
    request_text: str, cap: float | None, floor: float | None
) -> None:
    stated = read_limits(request_text)
    assert (stated.max_price, stated.min_price) == (cap, floor)


# Issue 54's new wording, and issue 57's number words: a cap the phrases read as a floor
# (a negation they miss) or not at all (no currency, words they cannot read) is the
# planner model's cap where the request writes it, named at approval. (request, its cap)
READ_BY_THE_MODEL = [
    ("a camera strap, I really don't want to have to spend more than $80", 80),
    ("a camera strap without going over eighty", 80),
    ("una correa para cámara, no quiero gastar más de 45", 45),
    ("a camera strap, fifty at most", 50),
    ("A camera strap. Budget is forty.", 40),
    ("a camera strap for a couple hundred dollars", 200),
    ("a camera strap under half a hundred dollars", 50),
    ("a camera strap for a dozen dollars", 12),
    ("ремешок для камеры до шестидесяти долларов", 60),
]


@pytest.mark.parametrize(("request_text", "cap"), READ_BY_THE_MODEL)
def test_a_cap_the_model_reads_is_the_cap_where_the_request_writes_it(
    small_catalog_file: Path, request_text: str, cap: float
) -> None:
    """Through the real graph with a fake planner model that states the cap."""
    graph = build_graph(checkpointer=MemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "model-cap"}}
    model = FakeShoppingChatModel(replies={"Plan": [{**STRAP_PLAN, "budget": cap}]})
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": request_text}, config, context=context)
    state = graph.get_state(config)
    stated, plan = state.values["stated_limits"], state.values["plan"]
    assert (stated.max_price, stated.min_price, stated.budget) == (cap, None, cap)
    assert (plan.budget, plan.steps[0].max_price, plan.steps[0].min_price) == (cap, cap, None)
    (interrupt,) = state.interrupts
    assert any("as the planner read it" in w for w in interrupt.value["warnings"])
    assert state.values["reading"].items == ()  # the clause of the cap lists no item


@pytest.mark.parametrize(
    ("request_text", "model_cap", "limits"),
    [
        # Not written as an amount: "300 reviews" is a count.
        ("a camera strap with at least 300 reviews", 300, (None, None)),
        # The code's cap stands beside another the model states.
        ("a camera strap under $40", 60, (40, None)),
        ("a camera strap over $20", 60, (None, 20)),
        # A cap below the floor the request states is none.
        ("a camera strap, at least $50, without going over forty", 40, (None, 50)),
        # An amount that is no number stays named, whatever the model reads there.
        ("a camera strap under $NaN", 100, (None, None)),
        ("a camera strap under $6 0", 60, (None, None)),
    ],
)
def test_a_cap_the_model_reads_is_taken_only_where_the_request_writes_it(
    request_text: str, model_cap: float, limits: tuple[float | None, float | None]
) -> None:
    plan = Plan.model_validate({**STRAP_PLAN, "budget": model_cap})
    reading, notes = model_read_limits(read_request(request_text), plan)
    stated = reading.limits
    assert ((stated.max_price, stated.min_price), notes) == (limits, [])


@pytest.mark.parametrize(
    ("request_text", "cap"),
    [
        # The model wrote the cap in its pick step's words only (n04's "within $60").
        ("something for my dad who hikes, under 60", 60),
        # An amount the request does not write is no cap, however the model words it.
        ("something for my dad who hikes", None),
        ("something for my dad who hikes, with 60 reviews or more", None),
    ],
)
def test_a_cap_the_model_states_in_its_own_words_is_taken_where_the_request_writes_it(
    request_text: str, cap: float | None
) -> None:
    pick = {"step": 2, "action": "Pick one camera strap within $60", "query": None}
    plan = Plan.model_validate({**STRAP_PLAN, "steps": [STRAP_PLAN["steps"][0], pick]})  # type: ignore[index]
    reading, notes = model_read_limits(read_request(request_text), plan)
    assert (reading.limits.budget, len(notes)) == (cap, int(cap is not None))


@pytest.mark.parametrize(
    ("request_text", "rating"),
    [("eine Kameratasche mit mindestens 4,5 Sternen", 4.5), ("a strap rated 4.5 stars", 4.5)],
)
def test_a_rating_with_a_decimal_comma_is_read_whole(request_text: str, rating: float) -> None:
    assert read_limits(request_text).min_rating == rating


def test_a_half_star_the_model_reads_refines_the_whole_stars_code_read(
    small_catalog_file: Path,
) -> None:
    graph = build_graph(checkpointer=MemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "model-rating"}}
    steps = [{**STRAP_PLAN["steps"][0], "min_rating": 4.5}, STRAP_PLAN["steps"][1]]  # type: ignore[index]
    model = FakeShoppingChatModel(replies={"Plan": [{**STRAP_PLAN, "steps": steps}]})
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": "una correa de cuatro estrellas y media"}, config, context=context)
    state = graph.get_state(config)
    assert state.values["stated_limits"].min_rating == 4.5
    assert state.values["plan"].steps[0].min_rating == 4.5
    (interrupt,) = state.interrupts
    assert any("4 stars are read as 4.5" in w for w in interrupt.value["warnings"])


@pytest.mark.parametrize("model_rating", [3.5, 5.0])
def test_a_rating_the_model_reads_outside_the_stars_written_is_not_taken(
    model_rating: float,
) -> None:
    steps = [{**STRAP_PLAN["steps"][0], "min_rating": model_rating}, STRAP_PLAN["steps"][1]]  # type: ignore[index]
    plan = Plan.model_validate({**STRAP_PLAN, "steps": steps})
    reading, notes = model_read_limits(read_request("a camera strap with 4 stars"), plan)
    assert (reading.limits.min_rating, notes) == (4, [])
