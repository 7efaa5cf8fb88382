"""Search behaviour of ``catalog.Catalog``: ranking, filters, hostile query text, arguments."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import (
    Catalog,
    CatalogQueryError,
    Product,
    ProductHit,
    build_index,
    category_slug,
)

PRODUCTS = [
    Product(
        id="strap-1",
        title="Leather Camera Strap",
        description="Full-grain leather neck strap with brass rings.",
        category="Cameras & Photography",
        price=39.0,
        rating=4.6,
        brand="Strapworks",
        tags=["strap", "gift"],
    ),
    Product(
        id="bag-1",
        title="Canvas Messenger Bag",
        description="Fits a camera and two lenses; comes with a padded strap.",
        category="cameras-photography",
        price=89.0,
        rating=4.1,
        tags=["bag"],
    ),
    Product(
        id="cam-1",
        title="Mirrorless Camera Body 24MP",
        description="Full-frame sensor, 4K video.",
        category="cameras-photography",
        price=1499.0,
        rating=4.8,
        tags=["mirrorless", "camera"],
    ),
    Product(
        id="card-1",
        title="128GB SD Card",
        description="Fast UHS-I memory card for cameras.",
        category="cameras-photography",
        price=24.99,
        rating=None,  # unrated: must never pass a min_rating filter
        tags=["sd card", "storage"],
    ),
    Product(
        id="shoe-1",
        title="Road Running Shoe",
        description="Cushioned daily trainer.",
        category="running-fitness",
        price=129.0,
        rating=4.3,
        options={"size": ["9", "10"]},
    ),
    Product(
        id="watch-1",
        title="GPS Running Watch",
        description="Tracks pace and heart rate; strap in silicone.",
        category="running-fitness",
        price=249.0,
        rating=3.9,
    ),
    Product(
        id="free-1",
        title="Free Photo Editing Guide",
        description="A zero-cost leaflet.",
        category="books",
        price=0.0,
        rating=5.0,
    ),
    Product(
        id="cafe-1",
        title="Café Espresso Machine",
        description="Dual boiler espresso maker.",
        category="coffee-kitchen",
        price=499.0,
        rating=4.4,
    ),
]
BY_ID = {p.id: p for p in PRODUCTS}

HOSTILE_QUERIES = [
    '"camera strap"',
    "camera*",
    "*",
    "camera NEAR strap",
    "camera OR strap",
    "camera AND strap",
    "NOT camera",
    "+camera -strap",
    "title:camera",
    "category:books",
    "price:[0 TO 10]",
    "camera^10",
    "strap~2",
    "(camera",
    "[camera",
    "camera)",
    "camera]",
    "{strap}",
    "camera; DROP TABLE products",
    "camera -- comment",
    "camera\x00strap",
    "\x00",
    '"',
    "''",
    "\\",
    "AND OR NOT",
    "::",
    "^~*?",
    "camera strap " * 200,
]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    index_dir = tmp_path_factory.mktemp("catalog") / "index"
    build_index(PRODUCTS, index_dir)
    return Catalog.open(index_dir)


def ids(hits: list[ProductHit]) -> list[str]:
    return [h.product.id for h in hits]


def satisfies(
    product: Product,
    *,
    category: str | None = None,
    min_price: float | None = None,
    max_price: float | None = None,
    min_rating: float | None = None,
) -> bool:
    if category is not None and product.category != category_slug(category):
        return False
    if min_price is not None and product.price < min_price:
        return False
    if max_price is not None and product.price > max_price:
        return False
    return min_rating is None or (product.rating is not None and product.rating >= min_rating)


def test_basic_metadata(catalog: Catalog) -> None:
    assert len(catalog) == len(PRODUCTS)
    assert catalog.categories() == sorted({p.category for p in PRODUCTS})
    assert "cameras-photography" in catalog.categories()


def test_category_slug() -> None:
    assert category_slug("Cameras & Photography") == "cameras-photography"
    assert category_slug("  Home_Office  ") == "home-office"
    assert category_slug("Électronique \u203a Caméras") == "électronique-caméras"
    assert category_slug("!!") == ""


def test_results_round_trip_products(catalog: Catalog) -> None:
    hits = catalog.search("running shoe", limit=1)
    assert hits[0].product == BY_ID["shoe-1"]
    assert hits[0].product.options == {"size": ["9", "10"]}
    assert hits[0].score > 0


def test_title_match_beats_description_only(catalog: Catalog) -> None:
    # "strap" is in strap-1's title but only in the descriptions of bag-1 and watch-1.
    found = ids(catalog.search("strap", limit=10))
    assert found[0] == "strap-1"
    assert set(found) == {"strap-1", "bag-1", "watch-1"}


def test_stemming_and_accents(catalog: Catalog) -> None:
    assert ids(catalog.search("straps", limit=1)) == ["strap-1"]
    assert ids(catalog.search("cafe", limit=1)) == ["cafe-1"]
    assert ids(catalog.search("CAFÉ", limit=1)) == ["cafe-1"]


def test_or_semantics_ranks_more_matches_higher(catalog: Catalog) -> None:
    found = ids(catalog.search("camera strap", limit=10))
    assert found[0] == "strap-1"
    assert {"cam-1", "card-1", "bag-1"} <= set(found)


def test_no_match(catalog: Catalog) -> None:
    assert catalog.search("zeppelin") == []


def test_category_filter(catalog: Catalog) -> None:
    found = ids(catalog.search("strap", category="running-fitness", limit=10))
    assert found == ["watch-1"]
    # Display names are slugged the same way products are.
    assert ids(catalog.search("strap", category="Running & Fitness")) == ["watch-1"]
    assert catalog.search("strap", category="no-such-category") == []


def test_price_filters_are_inclusive(catalog: Catalog) -> None:
    assert set(ids(catalog.search("camera", max_price=89, limit=10))) == {
        "strap-1",
        "bag-1",
        "card-1",
    }
    assert set(ids(catalog.search("camera", min_price=89, limit=10))) == {"bag-1", "cam-1"}
    assert ids(catalog.search("camera", min_price=89, max_price=89)) == ["bag-1"]
    assert ids(catalog.search("", max_price=0, limit=10)) == ["free-1"]


def test_min_rating_excludes_unrated(catalog: Catalog) -> None:
    found = ids(catalog.search("card camera", min_rating=0, limit=10))
    assert "card-1" not in found
    assert "cam-1" in found
    assert ids(catalog.search("", min_rating=4.6, limit=10)) == ["free-1", "cam-1", "strap-1"]


def test_limit(catalog: Catalog) -> None:
    assert len(catalog.search("camera", limit=1)) == 1
    assert len(catalog.search("", limit=50)) == len(PRODUCTS)


def test_empty_query_lists_by_rating(catalog: Catalog) -> None:
    hits = catalog.search("   ", limit=3)
    assert ids(hits) == ["free-1", "cam-1", "strap-1"]
    assert all(h.score == 0.0 for h in hits)
    filtered = ids(catalog.search("", category="cameras-photography", limit=10))
    # Best rated first; the unrated card comes last.
    assert filtered == ["cam-1", "strap-1", "bag-1", "card-1"]
    # Only stop words / punctuation: same as empty.
    assert ids(catalog.search("the and or ?!", max_price=40, limit=10)) == [
        "free-1",
        "strap-1",
        "card-1",
    ]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_query_syntax_is_plain_words(catalog: Catalog, query: str) -> None:
    catalog.search(query, limit=10)  # must not raise
    hits = catalog.search(query, category="books", max_price=10, limit=50)
    assert all(satisfies(h.product, category="books", max_price=10) for h in hits)
    hits = catalog.search(query, min_rating=4.5, limit=50)
    assert all(satisfies(h.product, min_rating=4.5) for h in hits)


def test_field_syntax_does_not_escape_to_other_fields(catalog: Catalog) -> None:
    # "category:books" is two words, not a field query: it must not list the books.
    assert ids(catalog.search("category:books", limit=10)) == []
    assert ids(catalog.search("camera OR strap", max_price=30)) == ["card-1"]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"limit": -1}, "limit"),
        ({"limit": 2.5}, "limit"),
        ({"limit": True}, "limit"),
        ({"min_price": -1}, "min_price"),
        ({"max_price": -0.01}, "max_price"),
        ({"min_price": 10, "max_price": 5}, "min_price"),
        ({"min_price": math.nan}, "min_price"),
        ({"max_price": math.inf}, "max_price"),
        ({"min_price": "10"}, "min_price"),
        ({"min_rating": -0.1}, "min_rating"),
        ({"min_rating": 5.1}, "min_rating"),
        ({"min_rating": math.nan}, "min_rating"),
        ({"category": ""}, "category"),
        ({"category": "--"}, "category"),
        ({"category": 3}, "category"),
    ],
)
def test_invalid_arguments(catalog: Catalog, kwargs: dict, argument: str) -> None:
    with pytest.raises(CatalogQueryError) as info:
        catalog.search("camera", **kwargs)
    assert info.value.argument == argument
    assert str(info.value).startswith(f"{argument}: ")
    assert isinstance(info.value, ValueError)


def test_invalid_query_type(catalog: Catalog) -> None:
    with pytest.raises(CatalogQueryError, match="query"):
        catalog.search(None)  # type: ignore[arg-type]


def test_error_messages_are_clear(catalog: Catalog) -> None:
    with pytest.raises(CatalogQueryError, match=r"limit: must be between 1 and 50, got 0"):
        catalog.search("x", limit=0)
    with pytest.raises(CatalogQueryError, match=r"min_price=10 > max_price=5"):
        catalog.search("x", min_price=10, max_price=5)


def test_get(catalog: Catalog) -> None:
    found = catalog.get(["cam-1", "missing", "shoe-1", "cam-1"])
    assert list(found) == ["cam-1", "shoe-1"]
    assert found["cam-1"] == BY_ID["cam-1"]
    assert catalog.get([]) == {}
    assert catalog.get(iter(["free-1"])) == {"free-1": BY_ID["free-1"]}
    with pytest.raises(CatalogQueryError):
        catalog.get("cam-1")


def _finite(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


ANY_NUMBER = st.one_of(st.none(), st.floats(), st.integers(-10, 3000))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.text(max_size=60),
    category=st.one_of(
        st.none(), st.sampled_from(["cameras-photography", "books", "Running & Fitness"])
    ),
    min_price=st.one_of(st.none(), _finite(0, 2000)),
    max_price=st.one_of(st.none(), _finite(0, 2000)),
    min_rating=st.one_of(st.none(), _finite(0, 5)),
    limit=st.integers(1, 50),
)
def test_property_valid_filters_are_obeyed(
    catalog: Catalog,
    query: str,
    category: str | None,
    min_price: float | None,
    max_price: float | None,
    min_rating: float | None,
    limit: int,
) -> None:
    if min_price is not None and max_price is not None and min_price > max_price:
        min_price, max_price = max_price, min_price
    filters = {
        "category": category,
        "min_price": min_price,
        "max_price": max_price,
        "min_rating": min_rating,
    }
    hits = catalog.search(query, limit=limit, **filters)
    assert len(hits) <= limit
    assert len(set(ids(hits))) == len(hits)
    for hit in hits:
        assert satisfies(hit.product, **filters)
        assert math.isfinite(hit.score)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.text(max_size=30),
    min_price=ANY_NUMBER,
    max_price=ANY_NUMBER,
    min_rating=ANY_NUMBER,
    limit=st.integers(-5, 60),
)
def test_property_arbitrary_arguments_only_raise_query_errors(
    catalog: Catalog,
    query: str,
    min_price: float | None,
    max_price: float | None,
    min_rating: float | None,
    limit: int,
) -> None:
    filters = {"min_price": min_price, "max_price": max_price, "min_rating": min_rating}
    try:
        hits = catalog.search(query, limit=limit, **filters)
    except CatalogQueryError:
        return
    for hit in hits:
        assert satisfies(hit.product, **filters)


def test_open_missing_index_raises(tmp_path: Path) -> None:
    from catalog import CatalogError

    with pytest.raises(CatalogError, match="no catalog index"):
        Catalog.open(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CatalogError, match="not a catalog index"):
        Catalog.open(tmp_path / "empty")
