"""The dev sets in new wording (issue #40): open-ended requests on the shipped catalog and
on DummyJSON, follow-ups and bundles, written apart from the older sets. Each case's
expectations are checked here against the catalog it runs on, before any model: every
expected department exists and holds something within the budget, every word a
follow-up check names is a product the shop carries (within the case's caps and new
total where it states them), every bundle item is a kind the shop carries and every
budget fits a bundle. The sets' figures on the embedded model come from their
recordings (tests/integration_tests/test_*_eval_replay.py)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from conftest import shared_file

from catalog import DEFAULT_CATALOG_FILE, Product, load_products
from graph.evals.bundle_sets import catalog_brute_force, check_kinds, load_bundles, within
from graph.evals.follow_ups import CHECKS, FollowUpCase, _named, load_cases
from graph.evals.main import main
from graph.evals.open_ended import check_categories, load_open_ended
from graph.schemas import FOLLOW_UP_KINDS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OPEN_ENDED_NEW = {
    "shipped": FIXTURES / "open_ended_new_shipped.json",
    "dummyjson": FIXTURES / "open_ended_new_dummyjson.json",
}
FOLLOW_UPS_NEW = FIXTURES / "follow_ups_new.json"
BUNDLES_NEW = FIXTURES / "bundles_new.json"
OLDER = {
    "open-ended": ["open_ended_dev.json", "open_ended_dev_dummyjson.json"],
    "follow-ups": ["follow_ups_dev.json"],
    "bundles": ["bundles_dev.json", "bundles_dev_dummyjson.json", "bundles_shared_dev.json"],
}
OTHER_LANGUAGES = ("es", "fr", "de")
# Two requests this alike would be the same wording with another noun or amount.
ALIKE = 0.75


def shipped() -> list[Product]:
    return load_products(DEFAULT_CATALOG_FILE)


def catalog_of(name: str) -> Path:
    return DEFAULT_CATALOG_FILE if name == "shipped" else shared_file("dummyjson", "products.json")


def older_texts(mode: str) -> list[str]:
    """The shopper's words of the older dev sets of a mode."""
    texts = []
    for name in OLDER[mode]:
        data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
        for case in data.get("requests") or data.get("follow_ups"):
            texts += [case[k] for k in ("request", "first", "follow_up") if k in case]
    return texts


def alike(text: str, others: Sequence[str]) -> list[str]:
    return [o for o in others if SequenceMatcher(None, text.lower(), o.lower()).ratio() > ALIKE]


def language_of(case_id: str) -> str:
    """A request's language, as the set's ids end ("n19-es"); English otherwise."""
    tail = case_id.rsplit("-", 1)[-1]
    return tail if tail in OTHER_LANGUAGES else "en"


# -- open-ended requests


@pytest.mark.parametrize(("name", "least"), [("shipped", 24), ("dummyjson", 12)])
def test_every_expected_department_is_the_catalogs_and_holds_a_pick_within_budget(
    name: str, least: int
) -> None:
    cases = load_open_ended(OPEN_ENDED_NEW[name], catalog_of(name))
    assert len(cases.requests) >= least
    # Raises naming the request whose department the catalog lacks or holds nothing
    # within its budget in.
    check_categories(cases.requests, load_products(cases.catalog), str(cases.path))
    languages = Counter(language_of(r.id) for r in cases.requests)
    assert all(languages[language] >= 1 for language in OTHER_LANGUAGES), languages


def test_there_are_thirty_open_ended_requests_and_their_wording_is_new() -> None:
    requests = [
        r.request
        for name in OPEN_ENDED_NEW
        for r in load_open_ended(OPEN_ENDED_NEW[name], catalog_of(name)).requests
    ]
    assert len(requests) >= 30
    older = older_texts("open-ended")
    assert {r: alike(r, older) for r in requests if alike(r, older)} == {}
    for index, request in enumerate(requests):
        assert not alike(request, requests[index + 1 :]), request


# -- follow-ups


def follow_up_records() -> list[dict]:
    return json.loads(FOLLOW_UPS_NEW.read_text(encoding="utf-8"))["follow_ups"]


def kinds_of(case: FollowUpCase) -> list[str]:
    kind = case.expect["kind"]
    return kind if isinstance(kind, list) else [kind]


WORD_CHECKS = ("cap_below_pick", "floor_above_pick", "not_below_pick", "kept", "dropped")


def test_thirty_follow_ups_of_every_kind_some_in_spanish_french_and_german() -> None:
    cases, records = load_cases(FOLLOW_UPS_NEW), follow_up_records()
    assert len(cases) >= 30
    assert all(case.expect and set(case.expect) <= set(CHECKS) for case in cases)
    assert {k for case in cases for k in kinds_of(case)} == set(FOLLOW_UP_KINDS)
    for case, record in zip(cases, records, strict=True):
        # The careful reading the case documents is one its expected kinds allow.
        assert record["reading"]["kind"] in kinds_of(case), case.id
    languages = Counter(record["language"] for record in records)
    assert all(languages[language] >= 2 for language in OTHER_LANGUAGES), languages
    older = older_texts("follow-ups")
    assert [c.follow_up for c in cases if alike(c.follow_up, older)] == []


@pytest.mark.parametrize("case", load_cases(FOLLOW_UPS_NEW), ids=lambda case: case.id)
def test_each_follow_up_names_products_the_shop_carries_within_its_limits(
    case: FollowUpCase,
) -> None:
    """Matched by the eval's own rule (a word of the check in a product's title), so a
    check that names nothing the shop sells fails here, not in a recording."""
    products, expect = shipped(), case.expect
    for check in WORD_CHECKS:
        for word in expect.get(check, []):
            assert _named(products, [word]), f"{check}: the shop has no {word!r}"
    named = _named(products, expect.get("new_item", []))
    assert named or "new_item" not in expect, "new_item: the shop has none"
    cap, floor = expect.get("max_price"), expect.get("min_rating")
    if named and cap is not None:
        fitting = [p for p in named if within(p.price, cap)]
        fitting = [p for p in fitting if floor is None or (p.rating or 0) >= floor]
        assert fitting, f"no {expect['new_item']} within {cap} rated {floor} or more"
    for check in ("cap_below_pick", "floor_above_pick"):
        # A cheaper (or dearer) one than the first pick can exist only with two prices,
        # a dearer one within the cap the case keeps.
        for word in expect.get(check, []):
            kind = _named(products, [word])
            prices = {p.price for p in kind if cap is None or within(p.price, cap)}
            assert len(prices) >= 2, word
    if "budget" in expect:
        # The new total holds the kept picks and the new item at their cheapest.
        wanted = [*expect.get("kept", []), *expect.get("new_item", [])]
        cheapest = sum(min(p.price for p in _named(products, [word])) for word in wanted)
        assert within(cheapest, expect["budget"]), (wanted, cheapest)


# -- bundles


def shared_head_word(kinds: Sequence[str]) -> bool:
    """Two of a bundle's kinds end in the same word ("sleeping bag", "dry bag")."""
    heads = [kind.lower().split()[-1] for kind in kinds]
    return len(set(heads)) < len(heads)


def test_every_bundle_item_is_a_kind_the_shop_carries_and_every_budget_fits() -> None:
    bundles = load_bundles(BUNDLES_NEW)
    products = load_products(bundles.catalog)
    assert len(bundles.requests) >= 12
    # No item of this set is one the shop lacks (the format has no mark for one), so
    # each must match some product, or check_kinds raises naming it.
    check_kinds(bundles.requests, products, bundles.catalog, str(BUNDLES_NEW))
    unfit = [r.id for r in bundles.requests if catalog_brute_force(r, products).best is None]
    assert unfit == []
    sharing = [r.id for r in bundles.requests if shared_head_word([i.kind for i in r.items])]
    assert len(sharing) >= 4, sharing
    older = older_texts("bundles")
    assert [r.request for r in bundles.requests if alike(r.request, older)] == []


def test_the_eval_command_reads_the_new_bundle_set(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m graph.eval tests/fixtures/bundles_new.json --bundles --check` (no model)."""
    assert main([str(BUNDLES_NEW), "--bundles", "--check"]) == 0
    out = capsys.readouterr().out
    ids = [r.id for r in load_bundles(BUNDLES_NEW).requests]
    assert all(f"{i}: " in out for i in ids)
    assert out.count("fitting_exists: True") == len(ids)
