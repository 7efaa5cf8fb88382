"""Product catalog: loaders, a tantivy BM25 index and a thread-safe searcher.

A plain library (no LangGraph/LangChain imports) used by the graph's tools and
by ``python -m catalog``.
"""

from catalog.errors import CatalogError, CatalogQueryError
from catalog.index import Catalog, build_index
from catalog.loaders import load_products
from catalog.models import Product, ProductHit, category_slug
from catalog.postgres import PostgresCatalog
from catalog.store import (
    DEFAULT_CATALOG_FILE,
    default_index_dir,
    load_catalog,
    open_catalog,
    open_default_catalog,
)

__all__ = [
    "DEFAULT_CATALOG_FILE",
    "Catalog",
    "CatalogError",
    "CatalogQueryError",
    "PostgresCatalog",
    "Product",
    "ProductHit",
    "build_index",
    "category_slug",
    "default_index_dir",
    "load_catalog",
    "load_products",
    "open_catalog",
    "open_default_catalog",
]
