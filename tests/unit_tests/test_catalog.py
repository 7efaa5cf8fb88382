"""The catalog contract, tested against every backend: embedded tantivy and PostgreSQL.

Ranking, filters, hostile query text, argument errors, lookups and atomic replacement.

The ``postgres`` parameters run when ``CATALOG_URL=postgresql://...`` is set (each test
session works in its own schema, dropped afterwards). Without it they are skipped
locally and FAIL under ``CI=true``: CI (.ci/run) starts PostgreSQL and must run them.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import math
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from catalog_samples import BY_ID, HOSTILE_QUERIES, PRODUCTS, ids, satisfies
from conftest import postgres_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import (
    Catalog,
    CatalogBackend,
    CatalogError,
    CatalogQueryError,
    Product,
    ProductHit,
    SearchArgs,
    build_index,
    category_slug,
)
from catalog.kinds import KindStock

BACKENDS = ["tantivy", "postgres"]


def with_search_path(url: str, schema: str) -> str:
    option = quote(f"-csearch_path={schema},public", safe="")
    return url + ("&" if "?" in url else "?") + f"options={option}"


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """CATALOG_URL narrowed to a fresh schema for this test session."""
    url = postgres_url("CATALOG_URL")
    import psycopg

    schema = f"test_catalog_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        # In public, so dropping the test schema cannot take it away from others.
        with contextlib.suppress(psycopg.Error):
            conn.execute("CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public")
    try:
        yield with_search_path(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


class Backend:
    """Builds and replaces catalogs named ``key`` on one backend."""

    def __init__(self, name: str, root: Path, url: str | None) -> None:
        self.name, self.root, self.url = name, root, url
        self.opened: list[Any] = []

    def load(self, products: Any, key: str) -> None:
        if self.name == "tantivy":
            build_index(products, self.root / key)
        else:
            from catalog.postgres import load_postgres_catalog

            load_postgres_catalog(self.url, products, table=key)

    def open(self, key: str) -> Any:
        if self.name == "tantivy":
            catalog: Any = Catalog.open(self.root / key)
        else:
            from catalog.postgres import PostgresCatalog

            catalog = PostgresCatalog.open(self.url, key)
            self.opened.append(catalog)
        return catalog

    def create(self, products: Any, key: str | None = None) -> Any:
        key = key or f"t_{uuid.uuid4().hex[:12]}"
        self.load(products, key)
        return self.open(key)

    def close(self) -> None:
        for catalog in self.opened:
            catalog.close()


def _backend(request: pytest.FixtureRequest, root: Path) -> Backend:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    return Backend(request.param, root, url)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = _backend(request, tmp_path)
    yield b
    b.close()


@pytest.fixture(scope="module", params=BACKENDS)
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    b = _backend(request, tmp_path_factory.mktemp("catalog"))
    yield b.create(PRODUCTS)
    b.close()


def test_basic_metadata(catalog: Any) -> None:
    assert len(catalog) == len(PRODUCTS)
    assert catalog.categories() == sorted({p.category for p in PRODUCTS})


# --- the CatalogBackend protocol ------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
BACKEND_CLASSES = ["catalog.index:Catalog", "catalog.postgres:PostgresCatalog"]


def test_backend_satisfies_the_protocol(catalog: Any) -> None:
    assert isinstance(catalog, CatalogBackend)
    assert catalog.source is None or isinstance(catalog.source, str)


def protocol_members() -> dict[str, Any]:
    return {
        name: value
        for name, value in vars(CatalogBackend).items()
        if (not name.startswith("_") or name == "__len__")
        and (callable(value) or isinstance(value, property))
    }


@pytest.mark.parametrize("spec", BACKEND_CLASSES)
def test_backend_class_has_every_protocol_member_with_its_parameters(spec: str) -> None:
    """Without a database: PostgresCatalog is checked here even when CATALOG_URL is unset."""
    module, name = spec.split(":")
    cls = getattr(importlib.import_module(module), name)
    members = protocol_members()
    expected = {
        "source",
        "__len__",
        "categories",
        "get",
        "products",
        "search",
        "kind_stock",
        "reload",
    }
    assert set(members) == expected
    for member, expected in members.items():
        found = getattr(cls, member, None)
        assert found is not None, f"{name} lacks {member}"
        if isinstance(expected, property):
            assert isinstance(found, property), f"{name}.{member} is not a property"
            continue
        wanted = inspect.signature(expected).parameters
        have = inspect.signature(found).parameters
        for param in wanted.values():
            assert param.name in have, f"{name}.{member} lacks parameter {param.name}"
            got = have[param.name]
            assert (got.kind, got.default) == (param.kind, param.default), (name, member, got)
        extra = [p for p in have.values() if p.name not in wanted]
        assert all(p.default is not inspect.Parameter.empty for p in extra), (name, member)


MYPY_PROBE = """
from catalog.backend import CatalogBackend
from catalog.index import Catalog
from catalog.models import ProductHit
from catalog.postgres import PostgresCatalog


def tantivy(catalog: Catalog) -> CatalogBackend:
    return catalog


def postgres(catalog: PostgresCatalog) -> CatalogBackend:
    return catalog


class NoFilters(Catalog):
    def search(self, query: str) -> list[ProductHit]:  # type: ignore[override]
        return []


def no_filters(catalog: NoFilters) -> CatalogBackend:
    return catalog  # the only line mypy must reject
"""


def test_type_checker_verifies_both_backends(tmp_path: Path) -> None:
    """mypy, not a reader, vouches that both backends satisfy CatalogBackend, and a backend
    whose ``search`` lacks the filters is rejected (so the check can fail)."""
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail("CI=true but mypy is not installed (it is in the test extra)")
        pytest.skip("mypy is not installed: pip install -e '.[test]'")
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent(MYPY_PROBE), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--follow-imports=silent",  # check the probe; read catalog/ only for its types
            str(probe),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    bad_line = (
        textwrap.dedent(MYPY_PROBE)
        .splitlines()
        .index("    return catalog  # the only line mypy must reject")
        + 1
    )
    assert len(errors) == 1, result.stdout + result.stderr
    assert f"probe.py:{bad_line}: error: Incompatible return value type" in errors[0]
    assert '"CatalogBackend"' in errors[0]


def test_category_slug() -> None:
    assert category_slug("Cameras & Photography") == "cameras-photography"
    assert category_slug("  Home_Office  ") == "home-office"
    assert category_slug("Électronique \u203a Caméras") == "électronique-caméras"
    assert category_slug("!!") == ""


def test_results_round_trip_products(catalog: Any) -> None:
    hits = catalog.search(SearchArgs("running shoe", limit=1))
    assert hits[0].product == BY_ID["shoe-1"]
    assert hits[0].product.options == {"size": ["9", "10"]}
    assert isinstance(hits[0], ProductHit) and hits[0].score > 0


def test_title_match_beats_description_only(catalog: Any) -> None:
    found = ids(catalog.search(SearchArgs("strap", limit=10)))
    assert found[0] == "strap-1"
    assert set(found) == {"strap-1", "bag-1", "watch-1"}


def test_scores_are_best_first(catalog: Any) -> None:
    hits = catalog.search(SearchArgs("camera strap lens", limit=10))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_stemming_and_accents(catalog: Any) -> None:
    assert ids(catalog.search(SearchArgs("straps", limit=1))) == ["strap-1"]
    assert ids(catalog.search(SearchArgs("cafe", limit=1))) == ["cafe-1"]
    assert ids(catalog.search(SearchArgs("CAFÉ", limit=1))) == ["cafe-1"]


def test_or_semantics_ranks_more_matches_higher(catalog: Any) -> None:
    found = ids(catalog.search(SearchArgs("camera strap", limit=10)))
    assert found[0] == "strap-1"
    assert {"cam-1", "card-1", "bag-1"} <= set(found)


def test_no_match(catalog: Any) -> None:
    assert catalog.search(SearchArgs("zeppelin")) == []


def test_category_filter(catalog: Any) -> None:
    assert ids(catalog.search(SearchArgs("strap", category="running-fitness", limit=10))) == [
        "watch-1"
    ]
    assert ids(catalog.search(SearchArgs("strap", category="Running & Fitness"))) == ["watch-1"]
    assert catalog.search(SearchArgs("strap", category="no-such-category")) == []


def test_price_filters_are_inclusive(catalog: Any) -> None:
    assert set(ids(catalog.search(SearchArgs("camera", max_price=89, limit=10)))) == {
        "strap-1",
        "bag-1",
        "card-1",
    }
    assert set(ids(catalog.search(SearchArgs("camera", min_price=89, limit=10)))) == {
        "bag-1",
        "cam-1",
    }
    assert ids(catalog.search(SearchArgs("camera", min_price=89, max_price=89))) == ["bag-1"]
    assert ids(catalog.search(SearchArgs("", max_price=0, limit=10))) == ["free-1"]


def test_min_rating_excludes_unrated(catalog: Any) -> None:
    found = ids(catalog.search(SearchArgs("card camera", min_rating=0, limit=10)))
    assert "card-1" not in found and "cam-1" in found
    assert ids(catalog.search(SearchArgs("", min_rating=4.6, limit=10))) == [
        "free-1",
        "cam-1",
        "strap-1",
    ]


def test_limit(catalog: Any) -> None:
    assert len(catalog.search(SearchArgs("camera", limit=1))) == 1
    assert len(catalog.search(SearchArgs("", limit=50))) == len(PRODUCTS)


def test_empty_query_lists_by_rating(catalog: Any) -> None:
    hits = catalog.search(SearchArgs("   ", limit=3))
    assert ids(hits) == ["free-1", "cam-1", "strap-1"]
    assert all(h.score == 0.0 for h in hits)
    filtered = ids(catalog.search(SearchArgs("", category="cameras-photography", limit=10)))
    assert filtered == ["cam-1", "strap-1", "bag-1", "card-1"]
    # Only stop words / punctuation: same as empty.
    assert ids(catalog.search(SearchArgs("the and or ?!", max_price=40, limit=10))) == [
        "free-1",
        "strap-1",
        "card-1",
    ]


@pytest.mark.parametrize("query", [*HOSTILE_QUERIES, "x'); DROP TABLE catalog_meta; --", "\\x00"])
def test_query_syntax_is_plain_words(catalog: Any, query: str) -> None:
    catalog.search(SearchArgs(query, limit=10))  # must not raise
    hits = catalog.search(SearchArgs(query, category="books", max_price=10, limit=50))
    assert all(satisfies(h.product, category="books", max_price=10) for h in hits)
    hits = catalog.search(SearchArgs(query, min_rating=4.5, limit=50))
    assert all(satisfies(h.product, min_rating=4.5) for h in hits)
    assert len(catalog) == len(PRODUCTS)


def test_operators_are_words(catalog: Any) -> None:
    assert ids(catalog.search(SearchArgs("category:books", limit=10))) == []
    assert ids(catalog.search(SearchArgs("camera OR strap", max_price=30))) == ["card-1"]
    # A leading "-" is not negation, quotes are not phrases.
    assert "strap-1" in ids(catalog.search(SearchArgs("camera -strap", limit=10)))
    assert ids(catalog.search(SearchArgs('"strap leather"', limit=1))) == ["strap-1"]


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
        ({"kind": ""}, "kind"),
        ({"kind": "the"}, "kind"),  # a word naming no kind of product
        ({"kind": 3}, "kind"),
    ],
)
def test_invalid_arguments(catalog: Any, kwargs: dict, argument: str) -> None:
    with pytest.raises(CatalogQueryError) as info:
        catalog.search(SearchArgs("camera", **kwargs))
    assert info.value.argument == argument
    assert str(info.value).startswith(f"{argument}: ")
    assert isinstance(info.value, ValueError)


def test_error_messages_are_the_same(catalog: Any) -> None:
    with pytest.raises(CatalogQueryError, match=r"limit: must be between 1 and 50, got 0"):
        catalog.search(SearchArgs("x", limit=0))
    with pytest.raises(CatalogQueryError, match=r"min_price=10 > max_price=5"):
        catalog.search(SearchArgs("x", min_price=10, max_price=5))
    with pytest.raises(CatalogQueryError, match="query"):
        catalog.search(SearchArgs(None))


def test_kind_filter_finds_what_each_product_is(catalog: Any) -> None:
    """A product's kinds are worked out when it is loaded and stored with it: a search
    by kind finds the camera, not the strap, bag and card whose texts name cameras."""
    assert len(catalog.search(SearchArgs("camera", limit=10))) == 4
    assert ids(catalog.search(SearchArgs("camera", kind="cameras", limit=10))) == ["cam-1"]
    assert ids(catalog.search(SearchArgs("", kind="camera"))) == ["cam-1"]
    # Its words stemmed as the index stems them: "shoes" is a shoe ("Road Running Shoe").
    assert ids(catalog.search(SearchArgs("", kind="running shoes"))) == ["shoe-1"]
    # The watch's description mentions a strap; only the strap is one.
    assert ids(catalog.search(SearchArgs("strap", kind="strap", limit=10))) == ["strap-1"]
    assert catalog.search(SearchArgs("camera", kind="camera", max_price=1000)) == []
    # Read back from the backend as loaded, never worked out again.
    assert catalog.get(["strap-1"])["strap-1"].kinds == BY_ID["strap-1"].kinds


def test_products_lists_every_product_once_with_its_kinds(catalog: Any) -> None:
    listed = list(catalog.products())
    assert sorted(p.id for p in listed) == sorted(BY_ID)
    assert all(p.kinds == BY_ID[p.id].kinds for p in listed)


def test_kind_stock_says_whether_and_where_the_shop_carries_a_kind(catalog: Any) -> None:
    straps = catalog.kind_stock("camera straps")
    assert straps.departments == {"cameras-photography": 1}
    assert (straps.count, straps.cheapest) == (1, 39.0)
    assert straps.stocked
    # Classed by its labels ("Mirrorless Camera Body" is tagged "camera"), within a cap.
    assert catalog.kind_stock("camera").cheapest == 1499.0
    assert not catalog.kind_stock("camera", max_price=1000).stocked
    # The category's head classes the bag and the card, whose titles say nothing of
    # cameras; not the strap and the camera, which a camera's category is for.
    photography = catalog.kind_stock("photography")
    assert (photography.departments, photography.cheapest) == ({"cameras-photography": 2}, 24.99)
    nothing = catalog.kind_stock("zeppelin")
    assert (nothing.departments, nothing.count, nothing.cheapest) == ({}, 0, None)
    with pytest.raises(CatalogQueryError, match="kind"):
        catalog.kind_stock("the")


def test_kind_stock_lists_the_departments_holding_most_first() -> None:
    rows = [("toys", 1, 3.0), ("kitchen", 2, 5.0), ("garden", 2, 1.0)]
    stock = KindStock.of("pot", rows)
    assert list(stock.departments) == ["garden", "kitchen", "toys"]
    assert (stock.count, stock.cheapest) == (5, 1.0)


def test_get(catalog: Any) -> None:
    found = catalog.get(["cam-1", "missing", "shoe-1", "cam-1", "nul\x00id"])
    assert list(found) == ["cam-1", "shoe-1"]
    assert found["cam-1"] == BY_ID["cam-1"]
    assert catalog.get([]) == {}
    assert catalog.get(iter(["free-1"])) == {"free-1": BY_ID["free-1"]}
    with pytest.raises(CatalogQueryError):
        catalog.get("cam-1")


def _finite(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.text(max_size=60),
    category=st.one_of(st.none(), st.sampled_from(["cameras-photography", "books"])),
    min_price=st.one_of(st.none(), _finite(0, 2000)),
    max_price=st.one_of(st.none(), _finite(0, 2000)),
    min_rating=st.one_of(st.none(), _finite(0, 5)),
    limit=st.integers(1, 50),
)
def test_property_valid_filters_are_obeyed(
    catalog: Any,
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
    hits = catalog.search(SearchArgs(query, limit=limit, **filters))
    assert len(hits) <= limit and len(set(ids(hits))) == len(hits)
    for hit in hits:
        assert satisfies(hit.product, **filters) and math.isfinite(hit.score)


ANY_NUMBER = st.one_of(st.none(), st.floats(), st.integers(-10, 3000))


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.text(max_size=30),
    min_price=ANY_NUMBER,
    max_price=ANY_NUMBER,
    min_rating=ANY_NUMBER,
    limit=st.integers(-5, 60),
)
def test_property_arbitrary_arguments_only_raise_query_errors(
    catalog: Any,
    query: str,
    min_price: float | None,
    max_price: float | None,
    min_rating: float | None,
    limit: int,
) -> None:
    filters = {"min_price": min_price, "max_price": max_price, "min_rating": min_rating}
    try:
        hits = catalog.search(SearchArgs(query, limit=limit, **filters))
    except CatalogQueryError:
        return
    for hit in hits:
        assert satisfies(hit.product, **filters)


def test_open_missing_tantivy_index_raises(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no catalog index"):
        Catalog.open(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CatalogError, match="not a catalog index"):
        Catalog.open(tmp_path / "empty")


# --- atomic replacement ---------------------------------------------------------------

V2 = [
    Product(id="tent-1", title="Two person tent", category="outdoors", price=199.0, rating=4.2),
    Product(id="tent-2", title="Ultralight tent", category="outdoors", price=349.0),
]


def _failing(products: list[Product], after: int) -> Callable[[], Iterator[Product]]:
    def generate() -> Iterator[Product]:
        for number, product in enumerate(products):
            if number == after:
                raise CatalogError("source broke mid-load")
            yield product

    return generate


def test_failed_load_keeps_the_old_catalog_serving(backend: Backend) -> None:
    key = f"t_{uuid.uuid4().hex[:12]}"
    catalog = backend.create(PRODUCTS, key)
    duplicate = [*V2, V2[0]]
    with pytest.raises(CatalogError, match="duplicate id"):
        backend.load(duplicate, key)
    with pytest.raises(CatalogError, match="broke mid-load"):
        backend.load(_failing(V2 * 2, after=2)(), key)
    for reader in (catalog, backend.open(key)):
        reader.reload()
        assert len(reader) == len(PRODUCTS)
        assert ids(reader.search(SearchArgs("strap", limit=1))) == ["strap-1"]
        assert reader.search(SearchArgs("tent")) == []
    if backend.name == "postgres":
        import psycopg

        with psycopg.connect(backend.url) as conn:
            leftovers = conn.execute(
                "SELECT tablename FROM pg_tables WHERE tablename LIKE %s", (f"{key}%",)
            ).fetchall()
        assert leftovers == [(key,)]


def test_successful_load_swaps_atomically_under_concurrent_searches(backend: Backend) -> None:
    key = f"t_{uuid.uuid4().hex[:12]}"
    catalog = backend.create(PRODUCTS, key)
    v1_ids, v2_ids = {p.id for p in PRODUCTS}, {p.id for p in V2}
    errors: list[BaseException] = []
    seen: list[frozenset[str]] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                if backend.name == "tantivy":
                    catalog.reload()
                found = frozenset(ids(catalog.search(SearchArgs("", limit=50))))
                seen.append(found)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for version in (V2, PRODUCTS, V2):
            backend.load(version, key)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors, errors
    # Every search saw one whole version, never a mix or an empty table.
    assert seen and all(found in (v1_ids, v2_ids) for found in seen)
    catalog.reload()
    assert len(catalog) == 2 and catalog.categories() == ["outdoors"]
    assert set(ids(catalog.search(SearchArgs("tent", limit=5)))) == {"tent-1", "tent-2"}


# --- selecting the backend by URL ------------------------------------------------------


def test_catalog_url_selects_postgres_for_files_and_tools(
    pg_url: str, small_catalog_file: Path
) -> None:
    from catalog import open_catalog
    from catalog.postgres import PostgresCatalog, table_for_file
    from graph.tools import get_catalog, search_catalog

    first = open_catalog(small_catalog_file, url=pg_url)
    assert isinstance(first, PostgresCatalog)
    assert first.table == table_for_file(small_catalog_file)
    assert len(first) == 6 and "coffee-kitchen" in first.categories()
    # Unchanged file: the table is reused (same source marker), not reloaded.
    again = open_catalog(small_catalog_file, url=pg_url)
    assert again.source == first.source
    tool_catalog = get_catalog(str(small_catalog_file), pg_url)
    assert isinstance(tool_catalog, PostgresCatalog)
    # The tools' cache keys on the URL it is given: no URL means the embedded index.
    assert isinstance(get_catalog(str(small_catalog_file), None), Catalog)
    _text, artifact = search_catalog(
        tool_catalog, SearchArgs("camera strap", max_price=30, category="Cameras")
    )
    assert [p["id"] for p in artifact["products"]] == ["strap-2", "clean-1"]
    for catalog in (first, again):
        catalog.close()
    # A table an older release loaded (schema version 1: no kinds stored) is loaded again.
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE catalog_meta SET schema_version = 1, source = 'old' WHERE table_name = %s",
            (first.table,),
        )
    reloaded = open_catalog(small_catalog_file, url=pg_url)
    assert reloaded.source == first.source
    assert ids(reloaded.search(SearchArgs("", kind="strap", limit=10))) == ["strap-1", "strap-2"]
    reloaded.close()
    # An index directory given explicitly is still opened with tantivy.
    index_dir = build_index(PRODUCTS, small_catalog_file.parent / f"idx-{uuid.uuid4().hex[:6]}")
    assert isinstance(open_catalog(index_dir, url=pg_url), Catalog)
