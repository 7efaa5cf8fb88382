"""Index lifecycle: atomic swaps, reloads under load, the default catalog and the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from catalog import (
    DEFAULT_CATALOG_FILE,
    Catalog,
    CatalogError,
    Product,
    SearchArgs,
    build_index,
    default_index_dir,
    load_catalog,
    load_products,
    open_catalog,
    open_default_catalog,
)

REPO = Path(__file__).resolve().parents[2]


def products(prefix: str, count: int, word: str = "camera") -> list[Product]:
    return [
        Product(
            id=f"{prefix}-{i}",
            title=f"{word} thing {i}",
            category="cameras-photography" if i % 2 else "books",
            price=float(i),
            rating=(i % 6) * 1.0 if i % 7 else None,
        )
        for i in range(count)
    ]


def write_jsonl(path: Path, items: list[Product]) -> Path:
    path.write_text("".join(p.model_dump_json() + "\n" for p in items), encoding="utf-8")
    return path


def versions(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.parent.iterdir() if ".v-" in p.name)


def test_failed_load_leaves_old_index_serving(tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    good = write_jsonl(tmp_path / "good.jsonl", products("g", 10))
    assert load_catalog(good, index_dir) == 10
    catalog = Catalog.open(index_dir)
    before = os.readlink(index_dir)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"id": "x", "title": "t", "category": "c", "price": -1}\n')
    with pytest.raises(CatalogError, match=r"bad.jsonl line 11: price must be a number >= 0"):
        load_catalog(bad, index_dir)
    # A failure while indexing (after loading) must not swap either.
    with pytest.raises(CatalogError, match="duplicate id"):
        build_index([*products("g", 3), *products("g", 3)], index_dir)

    assert os.readlink(index_dir) == before
    assert not [p for p in tmp_path.iterdir() if ".building-" in p.name]
    assert len(catalog.search(SearchArgs("camera", limit=50))) == 10
    catalog.reload()
    assert len(Catalog.open(index_dir)) == 10


def test_reload_picks_up_new_data_and_old_versions_are_pruned(tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    build_index(products("a", 5, word="alpha"), index_dir)
    catalog = Catalog.open(index_dir)
    assert catalog.search(SearchArgs("alpha")) and not catalog.search(SearchArgs("beta"))
    for round_ in range(4):
        build_index(products(f"b{round_}", 7, word="beta"), index_dir)
    # The open catalog keeps serving its snapshot until reloaded.
    assert len(catalog) == 5 and catalog.search(SearchArgs("alpha"))
    catalog.reload()
    assert len(catalog) == 7
    assert catalog.search(SearchArgs("beta")) and not catalog.search(SearchArgs("alpha"))
    assert catalog.get(["b3-1"])
    # Current plus one previous version are kept.
    assert len(versions(index_dir)) == 2


def test_concurrent_searches_during_reloads(tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    build_index(products("v0", 200), index_dir)
    catalog = Catalog.open(index_dir)
    errors: list[BaseException] = []
    stop = threading.Event()
    searches = [0]

    def worker() -> None:
        while not stop.is_set():
            try:
                hits = catalog.search(
                    SearchArgs("camera thing", max_price=150, min_rating=1, limit=20)
                )
                assert hits and all(h.product.price <= 150 for h in hits)
                catalog.search(SearchArgs("", category="books", limit=5))
                searches[0] += 1
            except BaseException as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for version in range(1, 6):
            build_index(products(f"v{version}", 200 + version), index_dir)
            catalog.reload()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors, errors[0]
    assert searches[0] > 0
    assert len(catalog) == 205


def test_index_dir_refuses_to_clobber_foreign_directory(tmp_path: Path) -> None:
    foreign = tmp_path / "stuff"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(CatalogError, match="not a catalog index; refusing"):
        build_index(products("a", 2), foreign)
    assert (foreign / "notes.txt").read_text() == "mine"


def test_default_index_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(tmp_path / "d"))
    assert default_index_dir() == tmp_path / "d" / "catalog"
    monkeypatch.delenv("SHOPPING_PLANNER_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_index_dir() == tmp_path / "xdg" / "shopping-planner" / "catalog"


def test_default_catalog_builds_on_first_use(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(tmp_path))
    catalog = open_default_catalog()
    assert catalog.index_dir == tmp_path / "catalog"
    assert len(catalog) == len(load_products(DEFAULT_CATALOG_FILE)) >= 400
    hits = catalog.search(SearchArgs("camera strap", max_price=200))
    assert hits and all(h.product.price <= 200 for h in hits)
    assert "strap" in hits[0].product.title.lower()
    assert set(catalog.categories()) >= {
        "cameras-photography",
        "running-fitness",
        "coffee-kitchen",
        "home-office",
        "laptops-electronics",
        "outdoor",
        "beauty",
        "toys-games",
        "books",
    }
    # Second use reuses the index (no rebuild: same version directory).
    assert open_default_catalog().directory == catalog.directory
    assert open_catalog().directory == catalog.directory


def test_default_catalog_rebuilds_when_marker_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import catalog.store as store

    shipped = write_jsonl(tmp_path / "shipped.jsonl", products("s", 4))
    monkeypatch.setattr(store, "DEFAULT_CATALOG_FILE", shipped)
    index_dir = tmp_path / "idx"
    assert len(open_default_catalog(index_dir)) == 4
    write_jsonl(shipped, products("s", 6))
    assert len(open_default_catalog(index_dir)) == 6
    # A catalog the user loaded on purpose is not replaced by the shipped one.
    load_catalog(write_jsonl(tmp_path / "mine.jsonl", products("m", 9)), index_dir)
    assert len(open_default_catalog(index_dir)) == 9


def test_open_catalog_file_is_cached_by_hash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(tmp_path / "data"))
    source = write_jsonl(tmp_path / "my catalog.jsonl", products("f", 3))
    first = open_catalog(source)
    assert len(first) == 3
    assert first.index_dir.parent == tmp_path / "data" / "catalogs"
    assert open_catalog(source).directory == first.directory  # cached
    write_jsonl(source, products("f", 8))
    changed = open_catalog(source)
    assert len(changed) == 8 and changed.index_dir != first.index_dir
    # An index directory opens as is.
    assert len(open_catalog(changed.index_dir)) == 8
    with pytest.raises(CatalogError, match="not a catalog index"):
        open_catalog(tmp_path)
    with pytest.raises(CatalogError, match="file not found"):
        open_catalog(tmp_path / "missing.jsonl")


def test_the_tools_catalog_of_a_file_edited_since_it_was_opened_is_the_file_now(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A process that serves several runs (a LangGraph server, a resume in-process) opens a
    catalog file once; a product appended while a run waits at approval is searched after."""
    from graph.tools import get_catalog

    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(tmp_path / "data"))
    source = write_jsonl(tmp_path / "shop.jsonl", products("f", 3))
    first = get_catalog(str(source))
    assert get_catalog(str(source)) is first  # unchanged: the one open handle
    with source.open("a", encoding="utf-8") as handle:
        handle.write(products("appended", 1, word="tripod")[0].model_dump_json() + "\n")
    now = get_catalog(str(source))
    assert now is not first and len(now) == 4
    assert [hit.product.id for hit in now.search(SearchArgs(query="tripod"))] == ["appended-0"]


def run_cli(
    *args: str, data_dir: Path, catalog_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SHOPPING_PLANNER_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO),
        "COLUMNS": "200",
    }
    if catalog_url is not None:
        env["CATALOG_URL"] = catalog_url
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_cli_search_json_on_default_catalog(tmp_path: Path) -> None:
    result = run_cli(
        "search",
        "camera strap",
        "--max-price",
        "200",
        "--limit",
        "3",
        "--json",
        data_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert 1 <= len(hits) <= 3
    assert all(h["price"] <= 200 and "score" in h and "id" in h for h in hits)

    table = run_cli("search", "tripod", "--category", "cameras-photography", data_dir=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "Tripod" in table.stdout

    cats = run_cli("categories", "--json", data_dir=tmp_path)
    assert "cameras-photography" in json.loads(cats.stdout)


def test_cli_load_and_errors(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "c.jsonl", products("c", 5))
    index_dir = tmp_path / "idx"
    loaded = run_cli("load", str(source), "--index-dir", str(index_dir), data_dir=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert "5" in loaded.stdout and "idx" in loaded.stdout
    found = run_cli("search", "camera", "--index-dir", str(index_dir), "--json", data_dir=tmp_path)
    assert len(json.loads(found.stdout)) == 5

    bad = tmp_path / "bad.csv"
    bad.write_text("id,title,category,price\na,t,c,-3\n")
    failed = run_cli("load", str(bad), "--index-dir", str(index_dir), data_dir=tmp_path)
    assert failed.returncode == 2
    assert "bad.csv line 2: price must be a number >= 0" in failed.stderr
    assert "Traceback" not in failed.stderr

    invalid = run_cli(
        "search", "x", "--limit", "99", "--index-dir", str(index_dir), data_dir=tmp_path
    )
    assert invalid.returncode == 2 and "limit" in invalid.stderr

    debug = run_cli(
        "--debug", "search", "x", "--index-dir", str(tmp_path / "none"), data_dir=tmp_path
    )
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_corrupt_index_raises_catalog_error(tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    build_index(products("c", 3), index_dir)
    (index_dir / "meta.json").write_text("{not json")
    with pytest.raises(CatalogError, match="corrupt or unreadable index"):
        Catalog.open(index_dir)
    (index_dir / "catalog-manifest.json").write_text('{"schema_version": 99}')
    with pytest.raises(CatalogError, match="schema version 99"):
        Catalog.open(index_dir)


# --- CATALOG_URL: read once, at the entry points, then passed down ----------------------

CODE_DIRS = ("catalog", "graph", "scripts", "bench")
_READER_CALL = re.compile(r"(?<!def )\bcatalog_url_from_env\(\)")


def code_files() -> dict[str, str]:
    return {
        str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
        for package in CODE_DIRS
        for path in sorted((REPO / package).rglob("*.py"))
    }


def test_catalog_url_is_read_from_the_environment_in_one_place() -> None:
    files = code_files()
    # The variable's name, and every constant that holds it (e.g. CATALOG_URL_ENV).
    names = {"CATALOG_URL"} | {
        name
        for text in files.values()
        for name in re.findall(r"\b([A-Z_]+)\s*=\s*[\"']CATALOG_URL[\"']", text)
    }
    alternatives = "|".join(sorted(names, key=len, reverse=True))
    read = re.compile(rf"(?:environ|getenv|\benv)\W[^\n]*\b(?:{alternatives})\b")
    assert "CATALOG_URL_ENV" in names  # else the scan below would prove nothing
    assert sorted(path for path, text in files.items() if read.search(text)) == ["catalog/paths.py"]
    # The entry points call that one reader and pass the URL down explicitly.
    callers = sorted(path for path, text in files.items() if _READER_CALL.search(text))
    assert callers == ["catalog/__main__.py", "catalog/postgres.py", "graph/context.py"]


def test_catalog_url_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalog.paths import catalog_url_from_env

    monkeypatch.setenv("CATALOG_URL", "  postgresql://u:p@h/db  ")
    assert catalog_url_from_env() == "postgresql://u:p@h/db"
    monkeypatch.setenv("CATALOG_URL", " ")
    assert catalog_url_from_env() is None
    monkeypatch.delenv("CATALOG_URL")
    assert catalog_url_from_env() is None


def test_open_catalog_takes_the_url_explicitly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(tmp_path / "data"))
    source = write_jsonl(tmp_path / "c.jsonl", products("u", 3))
    # The environment no longer reaches open_catalog: without url= it is the embedded index.
    monkeypatch.setenv("CATALOG_URL", "mysql://user:secret@db/shop")
    assert isinstance(open_catalog(source), Catalog)
    with pytest.raises(CatalogError, match="unsupported catalog URL") as raised:
        open_catalog(source, url="mysql://user:secret@db/shop")
    assert "secret" not in str(raised.value) and "user:***@" in str(raised.value)


def test_context_reads_catalog_url_once_and_keeps_it_private(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import TypeAdapter

    from graph.context import Context

    url = "postgresql://shopper:secret@db/shopping"
    monkeypatch.setenv("CATALOG_URL", url)
    context = Context()
    assert context.catalog_url == url
    assert Context(catalog_url="postgresql://other/db").catalog_url == "postgresql://other/db"
    # Not a form field (a run's context cannot redirect the server), never in a repr.
    assert "catalog_url" not in TypeAdapter(Context).json_schema()["properties"]
    assert "secret" not in repr(context)
    monkeypatch.delenv("CATALOG_URL")
    assert Context().catalog_url is None


def test_cli_passes_catalog_url_to_open_catalog(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "c.jsonl", products("c", 2))
    env_url = "mysql://user:secret@db/shop"  # rejected before any connection is tried
    result = run_cli(
        "search", "camera", "--catalog", str(source), data_dir=tmp_path, catalog_url=env_url
    )
    assert result.returncode == 2, result.stderr
    assert "unsupported catalog URL" in result.stderr and "secret" not in result.stderr
    # Without the variable the same command searches the embedded index.
    embedded = run_cli("search", "camera", "--catalog", str(source), "--json", data_dir=tmp_path)
    assert embedded.returncode == 0 and len(json.loads(embedded.stdout)) == 2


def test_graph_passes_the_context_url_to_every_catalog_use(
    monkeypatch: pytest.MonkeyPatch, small_catalog_file: Path
) -> None:
    """The search tool, the reasoning step and verify all open the catalog with the run's
    Context.catalog_url (recorded here; the embedded index stands in for PostgreSQL)."""
    from fakes import FakeShoppingChatModel
    from langgraph.checkpoint.memory import MemorySaver

    import graph.tools
    from graph.builder import build_graph
    from graph.context import Context

    url = f"postgresql://recorded@nowhere/{os.getpid()}"  # unique: the tools cache by URL
    asked: list[tuple[str | None, str | None]] = []

    def recording_open(path: str | None = None, *, url: str | None = None) -> Catalog:
        asked.append((path, url))
        return open_catalog(path)

    monkeypatch.setattr(graph.tools, "open_catalog", recording_open)
    model = FakeShoppingChatModel(
        replies={
            "Plan": [
                {
                    "goal": "A camera strap.",
                    "budget": 50,
                    "steps": [
                        {"step": 1, "action": "Find straps", "query": "camera strap"},
                        {"step": 2, "action": "Pick one", "query": None},
                    ],
                }
            ],
            "ReasoningAnswer": [{"answer": "This one.", "product_ids": ["strap-2"]}],
        }
    )
    context = Context(
        chat_model=model, catalog=str(small_catalog_file), catalog_url=url, auto_approve=True
    )
    state = build_graph(checkpointer=MemorySaver()).invoke(
        {"request": "a camera strap under $50"},
        {"configurable": {"thread_id": "url"}},
        context=context,
    )
    assert [r.kind for r in state["step_results"]] == ["search", "reasoning"]
    # Opened once (the tools cache it), with the URL from the context, not the environment.
    assert asked == [(str(small_catalog_file), url)]
    assert graph.tools.get_catalog(str(small_catalog_file), url) is not None
    assert len(asked) == 1
