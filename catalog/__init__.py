"""Product catalog: loaders, a tantivy BM25 index and a thread-safe searcher, or the same
contract (``CatalogBackend``) over PostgreSQL.

A plain library (no LangGraph/LangChain imports) used by the graph's tools and
by ``python -m catalog``. Names load on first use (PEP 562), so importing the package
does not start the index engine or the PostgreSQL driver.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from catalog.errors import USER_ERRORS, CatalogError, CatalogQueryError, CatalogUnavailable

if TYPE_CHECKING:
    from catalog.backend import CatalogBackend
    from catalog.index import Catalog, build_index
    from catalog.loaders import load_products
    from catalog.models import Product, ProductHit, category_slug, money
    from catalog.paths import catalog_url_from_env, default_index_dir
    from catalog.postgres import PostgresCatalog
    from catalog.sources import DEFAULT_CATALOG_FILE
    from catalog.store import load_catalog, open_catalog, open_default_catalog
    from catalog.validation import SearchArgs

_LAZY = {
    "CatalogBackend": "catalog.backend",
    "Catalog": "catalog.index",
    "build_index": "catalog.index",
    "load_products": "catalog.loaders",
    "Product": "catalog.models",
    "ProductHit": "catalog.models",
    "category_slug": "catalog.models",
    "money": "catalog.models",
    "catalog_url_from_env": "catalog.paths",
    "default_index_dir": "catalog.paths",
    "PostgresCatalog": "catalog.postgres",
    "DEFAULT_CATALOG_FILE": "catalog.sources",
    "load_catalog": "catalog.store",
    "open_catalog": "catalog.store",
    "open_default_catalog": "catalog.store",
    "SearchArgs": "catalog.validation",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'catalog' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


# What the package hands out: its errors, and the names loaded on first use.
__all__ = ["USER_ERRORS", "CatalogError", "CatalogQueryError", "CatalogUnavailable", *_LAZY]
