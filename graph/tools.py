"""The executor's tools: `search_products` adapts the catalog library into a LangGraph tool."""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import replace
from typing import Any

from langchain_core.tools import tool
from langgraph.runtime import get_runtime

from catalog import (
    CatalogBackend,
    CatalogError,
    CatalogQueryError,
    SearchArgs,
    category_slug,
    open_catalog,
    sources,
)
from graph.schemas import ProductSummary

# What a search step keeps, within its filters: the products it shows (its `limit`, 5 by
# default) and the further matches behind them. A bundle under one total budget is chosen
# in code over these (graph/choosing/choice.py): the cheaper option that makes a bundle fit
# is often below the top five by relevance.
POOL_DEPTH = 50

# One open catalog (and so one tantivy searcher or connection pool) per process, URL and
# path, with the version of the catalog file it was opened from.
_catalogs: dict[tuple[str | None, str | None], tuple[object, CatalogBackend]] = {}
_catalogs_lock = threading.Lock()


def _file_version(path: str) -> tuple[int, int, int] | None:
    """A catalog file's size, change time and inode: a file edited since it was opened (a
    product appended while a run waits at approval) is opened, and indexed, again."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def get_catalog(path: str | None = None, url: str | None = None) -> CatalogBackend:
    """The catalog for a path (file or index dir), or the shipped default for None.

    ``url`` is the run's ``Context.catalog_url`` (``CATALOG_URL``): a postgresql:// URL
    serves the catalog from PostgreSQL; None means the embedded index. A postgresql://
    ``path`` opens that database's default catalog table.
    """
    # The shipped default is a file too: one changed since (an upgrade while a run waited
    # at approval) is opened, and indexed, again, as a catalog file given is.
    key = (url or None, path or None)
    version = _file_version(path or str(sources.DEFAULT_CATALOG_FILE))
    with _catalogs_lock:
        opened = _catalogs.get(key)
        if opened is None or opened[0] != version:
            opened = _catalogs[key] = (version, open_catalog(path or None, url=url or None))
        return opened[1]


def catalog_for(context: Any) -> CatalogBackend:
    """The run's catalog: the one its context holds (a test's, or the one a session
    opened), else the cached one for the context's catalog settings."""
    given: CatalogBackend | None = getattr(context, "catalog_backend", None)
    if given is not None:
        return given
    return get_catalog(getattr(context, "catalog", None), getattr(context, "catalog_url", None))


def resolve_category(
    catalog: CatalogBackend, requested: str | None
) -> tuple[str | None, list[str]]:
    """Map a planner's category onto a catalog category, tolerating near misses.

    An unknown category is dropped with a warning rather than failing the step: small
    models paraphrase category names, and the warning keeps the choice visible.
    """
    if not requested:
        return None, []
    known = catalog.categories()
    slug = category_slug(requested)
    if slug in known:
        return slug, []
    close = [c for c in known if slug and (slug in c or c in slug)]
    if len(close) == 1:
        return close[0], []
    return None, [f"unknown category {requested!r} ignored (known: {', '.join(known)})"]


def search_catalog(catalog: CatalogBackend, args: SearchArgs) -> tuple[str, dict[str, Any]]:
    """Run one search; return (compact text for an LLM, artifact with products, pool and
    warnings). The text and `products` hold the `args.limit` best matches; `pool` holds
    the further matches, up to POOL_DEPTH in all, best first. The category is matched to
    the catalog's first: a near miss is tolerated, and an unknown one is dropped with a
    warning that quotes it as the planner wrote it."""
    resolved, warnings = resolve_category(catalog, args.category)
    if resolved != args.category:
        args = replace(args, category=resolved)
    deep = replace(args, limit=max(args.limit, POOL_DEPTH))
    found = [ProductSummary.of(hit.product).model_dump() for hit in catalog.search(deep)]
    products, pool = found[: args.limit], found[args.limit :]
    if not products:
        warnings.append(f"no products matched {args.query!r}")
    lines = [
        f"{p['id']} | {p['title']} | ${p['price']:.2f} | rating {p['rating'] or 'n/a'}"
        for p in products
    ]
    content = "\n".join(lines + [f"warning: {w}" for w in warnings]) or "no products matched"
    return content, {"products": products, "pool": pool, "warnings": warnings}


def matches_over_total(
    catalog: CatalogBackend, arguments: dict[str, Any], total: float | None
) -> list[dict[str, Any]]:
    """For a search capped at the plan's total that found nothing within it: its matches
    with no cap (up to POOL_DEPTH), so the choice can show the cheapest combination as
    over the total ("a tent and a stove, $0.01 total"), not nothing. A cap of the item's
    own, or a search with no cap, finds none here: nothing is over the total then."""
    cap = arguments.get("max_price")
    if total is None or not isinstance(cap, int | float) or abs(cap - total) >= 0.005:
        return []
    kept = {
        k: v for k, v in arguments.items() if k in ("query", "category", "min_price", "min_rating")
    }
    try:
        _, artifact = search_catalog(catalog, SearchArgs(**kept, limit=POOL_DEPTH))
    except (CatalogError, TypeError):
        return []  # the capped search was answered; this one only adds what is over
    return [*artifact["products"], *artifact["pool"]]


@tool(response_format="content_and_artifact")
def search_products(
    query: str,
    category: str | None = None,
    min_price: float | None = None,
    max_price: float | None = None,
    min_rating: float | None = None,
    limit: int = 5,
) -> tuple[str, dict[str, Any]]:
    """Search the product catalog and return the best matches, best first.

    Args:
        query: Product keywords, e.g. "camera strap". Plain words; no operators.
        category: Restrict to one catalog category, or null.
        min_price: Lowest price in USD, or null.
        max_price: Highest price in USD, or null.
        min_rating: Lowest average rating from 0 to 5, or null.
        limit: How many products to return, 1 to 50.
    """
    # The catalog comes from the run's context. Not an injected ToolRuntime argument:
    # pydantic would try to serialise the whole graph state into the tool input. The
    # arguments stay flat here: this signature is the schema the model sees. A category of
    # no letters ("", " ") is a model's way of writing none.
    if isinstance(category, str) and not category_slug(category):
        category = None
    args = SearchArgs(
        query,
        category=category,
        min_price=min_price,
        max_price=max_price,
        min_rating=min_rating,
        limit=limit,
    )
    return search_catalog(catalog_for(get_runtime().context), args)


def tool_error_message(error: Exception) -> str:
    """ToolNode's handler: a failing search becomes a message (and so a step result)
    with the reason, instead of an exception that kills the run."""
    if isinstance(error, CatalogQueryError):
        return f"invalid search: {error}"
    return f"search_products failed: {type(error).__name__}: {error}"


TOOLS = [search_products]
