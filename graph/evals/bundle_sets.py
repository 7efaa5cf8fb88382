"""Bundle dev sets: the file format, the kinds of item a bundle must hold, and the exact
brute force that finds the best bundle a catalog holds. Plain code over catalog products
(no graph, no model); graph/evals/bundles.py runs and scores the requests.

The file format, with an example: docs/evaluation.md ("Bundles under one total budget").
Beside it: a request holds 1 to 4 kinds; `category` may be a name or a slug; `query` is
documentation (the dev set's tests search with it); a relative catalog path is taken from
the working directory, like every path the CLI takes.

The brute force takes one distinct product per kind, each within its cap, the total within
the budget; the best has the highest mean rating (a product without a rating counts as 0),
ties going to the cheaper. It is exact: each kind's products are first cut to those that
fewer than (number of kinds) products of that kind dominate (see `_front`).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from catalog import DEFAULT_CATALOG_FILE, Product
from catalog.models import category_slug
from graph.evals.inputs import EvalInputError

SHIPPED = "shipped"
MAX_ITEMS = 4  # kinds per request: the brute force is a product over the kinds
_REQUEST_KEYS = {"id", "request", "budget", "items"}
_ITEM_KEYS = {"kind", "title_has", "category", "max_price", "query"}


class BundleFileError(EvalInputError):
    """A bundle file that cannot be evaluated; the message names the file and request."""


def rating_of(product: Product) -> float:
    return product.rating or 0.0  # a product without a rating counts as 0


def within(total: float, limit: float) -> bool:
    """`total` is at most `limit`, compared in cents (sums of prices carry float noise)."""
    return round(total, 2) <= round(limit, 2)


@dataclass(frozen=True)
class ItemKind:
    kind: str
    title_has: tuple[str, ...]
    category: str | None = None
    max_price: float | None = None
    query: str | None = None

    def holds(self, product: Product) -> bool:
        """The product is of this kind (whatever its price)."""
        if self.category is not None and product.category != self.category:
            return False
        title = product.title.lower()
        return not self.title_has or any(phrase in title for phrase in self.title_has)

    def within_cap(self, product: Product) -> bool:
        return self.max_price is None or within(product.price, self.max_price)


@dataclass(frozen=True)
class BundleRequest:
    id: str
    request: str
    budget: float
    items: tuple[ItemKind, ...]


@dataclass(frozen=True)
class BundleFile:
    path: Path
    catalog: Path
    requests: tuple[BundleRequest, ...]


def _amount(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BundleFileError(f"{where} must be a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise BundleFileError(f"{where} must be a positive finite number, got {value!r}")
    return float(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BundleFileError(f"{where} must be a non-empty string, got {value!r}")
    return value.strip()


def _keys(record: Any, allowed: set[str], required: set[str], where: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise BundleFileError(f"{where} must be an object, got {type(record).__name__}")
    missing = sorted(required - set(record))
    if missing:
        raise BundleFileError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise BundleFileError(f"{where}: unknown key {', '.join(unknown)}")
    return record


def _item(record: Any, where: str) -> ItemKind:
    record = _keys(record, _ITEM_KEYS, {"kind"}, where)
    phrases, category = record.get("title_has", []), record.get("category")
    if not isinstance(phrases, list):
        raise BundleFileError(f"{where}: title_has must be a list of phrases")
    if not phrases and category is None:
        raise BundleFileError(f"{where}: give title_has or category (or both)")
    slug = category_slug(_text(category, f"{where} category")) if category is not None else None
    if slug == "":
        raise BundleFileError(f"{where}: category must contain a letter or digit")
    cap, query = record.get("max_price"), record.get("query")
    return ItemKind(
        kind=_text(record["kind"], f"{where} kind"),
        title_has=tuple(_text(p, f"{where} title_has").lower() for p in phrases),
        category=slug,
        max_price=_amount(cap, f"{where} max_price") if cap is not None else None,
        query=_text(query, f"{where} query") if query is not None else None,
    )


def _request(record: Any, where: str) -> BundleRequest:
    record = _keys(record, _REQUEST_KEYS, _REQUEST_KEYS, where)
    where = f"{where} ({record['id']!r})"
    items = record["items"]
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
        raise BundleFileError(f"{where}: items must be a list of 1 to {MAX_ITEMS} kinds")
    return BundleRequest(
        id=_text(record["id"], f"{where} id"),
        request=_text(record["request"], f"{where} request"),
        budget=_amount(record["budget"], f"{where} budget"),
        items=tuple(_item(item, f"{where} item {n}") for n, item in enumerate(items, start=1)),
    )


def catalog_path(value: str | Path) -> Path:
    """The catalog a bundle file names: "shipped", or a file (relative: to the cwd)."""
    return DEFAULT_CATALOG_FILE if str(value) == SHIPPED else Path(value).expanduser().absolute()


class _Case(Protocol):
    @property
    def id(self) -> str: ...


Case = TypeVar("Case", bound=_Case)


def read_cases(
    path: Path,
    catalog: Path | None,
    what: str,
    case: Callable[[Any, str], Case],
    error: type[BundleFileError] = BundleFileError,
) -> tuple[Path, tuple[Case, ...]]:
    """The catalog and the requests of a dev-set file ({"catalog", "requests": [...]}),
    each request read by `case`; `catalog` (the CLI's --catalog) overrides the file's.
    Any problem is an `error` naming the file (and the request)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as problem:
        raise error(f"{path}: cannot read {what}: {problem}") from None
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        raise error(f"{path}: expected an object with a 'requests' list")
    unknown = sorted(set(data) - {"catalog", "requests"})
    if unknown:
        raise error(f"{path}: unknown key {', '.join(unknown)}")
    if not data["requests"]:
        raise error(f"{path}: no requests")
    cases = tuple(case(r, f"{path} request {n}") for n, r in enumerate(data["requests"], start=1))
    ids = [c.id for c in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise error(f"{path}: repeated request id {', '.join(repeated)}")
    named = data.get("catalog", SHIPPED)
    return catalog or catalog_path(_text(named, f"{path} catalog")), cases


def load_bundles(path: Path, catalog: Path | None = None) -> BundleFile:
    """Read and check a bundle file; `catalog` (the CLI's --catalog) overrides its own."""
    return BundleFile(Path(path), *read_cases(path, catalog, "a bundle file", _request))


def check_kinds(
    requests: Sequence[BundleRequest], products: Sequence[Product], catalog: Path, source: str = ""
) -> None:
    """Every kind matches some product of the catalog, else the dev set is broken."""
    for request in requests:
        for item in request.items:
            if not any(item.holds(p) for p in products):
                raise BundleFileError(
                    f"{source} request {request.id!r}: kind {item.kind!r} matches no "
                    f"product of {catalog}".strip()
                )


@dataclass(frozen=True)
class Combination:
    products: tuple[Product, ...]

    @property
    def total(self) -> float:
        return round(sum(p.price for p in self.products), 2)

    @property
    def rating(self) -> float:
        return sum(map(rating_of, self.products)) / len(self.products)


@dataclass(frozen=True)
class BruteForce:
    best: Combination | None  # the best fitting combination; None: none fits
    cheapest: Combination | None  # None: some kind has no product within its cap


def _front(item: ItemKind, pool: Sequence[Product], depth: int) -> list[Product]:
    """The pool's products of the kind (within its cap) that some best or cheapest
    combination may need. A product is dropped when `depth` (the number of kinds) others
    dominate it, each at most its price with at least its rating: the other kinds use at
    most depth - 1 of them, so one is free to replace it. Ties are ordered by id, so two
    equal products never drop each other."""
    fitting = sorted(
        (p for p in pool if item.holds(p) and item.within_cap(p)),
        key=lambda p: (p.price, -rating_of(p), p.id),
    )
    kept: list[Product] = []
    for index, product in enumerate(fitting):
        dominators = sum(1 for q in fitting[:index] if rating_of(q) >= rating_of(product))
        if dominators < depth:
            kept.append(product)
    return kept


def brute_force(
    items: Sequence[ItemKind], pools: Sequence[Sequence[Product]], budget: float
) -> BruteForce:
    """Exact search over one distinct product per kind, item i drawn from pools[i] (the
    whole catalog for each, or what a search returned for each)."""
    fronts = [_front(item, pool, len(items)) for item, pool in zip(items, pools, strict=True)]
    best: Combination | None = None
    cheapest: Combination | None = None
    for products in itertools.product(*fronts):
        if len({p.id for p in products}) < len(products):
            continue
        combo = Combination(products)
        if cheapest is None or combo.total < cheapest.total:
            cheapest = combo
        if within(combo.total, budget) and (
            best is None or (combo.rating, -combo.total) > (best.rating, -best.total)
        ):
            best = combo
    return BruteForce(best, cheapest)


def catalog_brute_force(request: BundleRequest, products: Sequence[Product]) -> BruteForce:
    """The best and cheapest bundles of the whole catalog for a request."""
    return brute_force(request.items, [products] * len(request.items), request.budget)


def assign(items: Sequence[ItemKind], picks: Sequence[Product]) -> tuple[Product | None, ...]:
    """The pick serving each kind (None: none), each pick serving at most one: the
    assignment serving most kinds, then within most caps, then with the best rating."""
    options = [[None, *(p for p in picks if item.holds(p))] for item in items]
    best: tuple[Product | None, ...] = (None,) * len(items)
    best_key: tuple[int, int, float] = (0, 0, 0.0)
    for chosen in itertools.product(*options):
        used = [p.id for p in chosen if p is not None]
        if len(set(used)) < len(used):
            continue
        served = [(i, p) for i, p in zip(items, chosen, strict=True) if p is not None]
        key = (
            len(served),
            sum(i.within_cap(p) for i, p in served),
            sum(rating_of(p) for _, p in served),
        )
        if key > best_key:
            best, best_key = chosen, key
    return best
