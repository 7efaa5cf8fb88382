"""Search and lookup argument checks, and the check of what is stored, shared by every
catalog backend.

Backend-neutral on purpose: no index engine or database driver is imported here, so
``catalog.index`` and ``catalog.postgres`` both build on it without importing each other.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from catalog.errors import CatalogError, CatalogQueryError
from catalog.kinds import kind_term
from catalog.models import MAX_LIMIT, Product, category_slug

# Bounds the query size so a pasted essay cannot make one search expensive.
MAX_QUERY_TOKENS = 32


def bounded_terms(terms: Iterable[str]) -> list[str]:
    """A query's distinct terms in order, the first ``MAX_QUERY_TOKENS`` of them: what
    either backend searches for, from the terms its own analysis gives."""
    return list(islice(dict.fromkeys(terms), MAX_QUERY_TOKENS))


def _check_number(name: str, value: Any, low: float, high: float | None = None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogQueryError(name, f"must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise CatalogQueryError(name, f"must be a finite number, got {value!r}")
    if number < low or (high is not None and number > high):
        bound = f"between {low:g} and {high:g}" if high is not None else f">= {low:g}"
        raise CatalogQueryError(name, f"must be {bound}, got {value!r}")
    return number


@dataclass(frozen=True)
class SearchArgs:
    """One search: its query and filters, checked when it is made, so a ``SearchArgs`` is
    always valid. The one type for search filters, from the graph's tool to both backends'
    ``search``; ``CatalogQueryError`` names the first bad field."""

    query: str
    # A category name as given ("Cameras & Photography"); backends match its slug.
    category: str | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_rating: float | None = None
    limit: int = 5
    # A kind of product ("strap", "running shoes"): only products of it (ProductKinds.terms).
    kind: str | None = None

    def __post_init__(self) -> None:
        query, limit = self.query, self.limit
        if not isinstance(query, str):
            raise CatalogQueryError("query", f"must be a string, got {type(query).__name__}")
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise CatalogQueryError("limit", f"must be an integer, got {limit!r}")
        if not 1 <= limit <= MAX_LIMIT:
            raise CatalogQueryError("limit", f"must be between 1 and {MAX_LIMIT}, got {limit}")
        low = _check_number("min_price", self.min_price, 0.0)
        high = _check_number("max_price", self.max_price, 0.0)
        if low is not None and high is not None and low > high:
            raise CatalogQueryError(
                "min_price",
                f"must not exceed max_price, got min_price={low:g} > max_price={high:g}",
            )
        rating = _check_number("min_rating", self.min_rating, 0.0, 5.0)
        if self.category is not None:
            if not isinstance(self.category, str):
                raise CatalogQueryError("category", f"must be a string, got {self.category!r}")
            if not category_slug(self.category):
                raise CatalogQueryError(
                    "category", f"must contain a letter or digit, got {self.category!r}"
                )
        kind: object = self.kind  # a caller without a type checker may pass anything
        if kind is not None and not (isinstance(kind, str) and kind_term(kind)):
            raise CatalogQueryError("kind", f"must name a kind of product, got {kind!r}")
        # Numbers as floats ("5" is refused above, 5 becomes 5.0), set the one way a
        # frozen dataclass allows.
        for name, value in (("min_price", low), ("max_price", high), ("min_rating", rating)):
            object.__setattr__(self, name, value)

    @property
    def category_slug(self) -> str | None:
        """The category as the backends store it ("cameras-photography")."""
        return category_slug(self.category) if self.category is not None else None

    @property
    def kind_term(self) -> str | None:
        """The kind as the backends index it (kind_term: "running shoes" -> "shoe")."""
        return kind_term(self.kind) if self.kind is not None else None


def check_ids(ids: Any) -> list[str]:
    """Validate ``get`` arguments: the distinct ids in order; ``CatalogQueryError`` if bad."""
    if isinstance(ids, str):
        raise CatalogQueryError("ids", "must be an iterable of ids, not a single string")
    wanted = list(dict.fromkeys(ids))
    for item in wanted:
        if not isinstance(item, str):
            raise CatalogQueryError("ids", f"every id must be a string, got {item!r}")
    return wanted


def distinct_products(
    products: Iterable[Any], categories: set[str], path: Path | None = None
) -> Iterator[Product]:
    """``products`` as a backend stores them: each a ``Product`` with an id not seen before
    (else ``CatalogError`` naming its item number), its category added to ``categories``."""
    seen: set[str] = set()
    for number, product in enumerate(products, start=1):
        if not isinstance(product, Product):
            raise CatalogError(
                f"item {number}: expected a Product, got {type(product).__name__}", path=path
            )
        if product.id in seen:
            raise CatalogError(f"item {number}: duplicate id {product.id!r}", path=path)
        seen.add(product.id)
        categories.add(product.category)
        yield product
