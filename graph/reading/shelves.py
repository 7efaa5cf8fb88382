"""The shop's shelves nearest a request that names no kind of product the shop sells
("a gift for someone who likes photography", "my dad took up hiking"): a few lines for
the planner, so it plans kinds the shop carries instead of guessing ("photography
frames", "hiking gloves"). The planner still has no tools: this is code, before its call,
like the limits.

A shelf is what the catalog's own index brings back for the request's words, grouped by
what each title says the product is (its head word, words.title_heads), with how many
products it holds and their price range. Any catalog works, on either backend: the
lookup is one search. A request that names a kind the shop sells (a WebShop goal, a
bundle's items) gets no shelves, and its prompt is as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import zip_longest

from catalog import CatalogBackend, Product, ProductHit, SearchArgs, money
from catalog.kinds import is_of_kind
from catalog.text import (
    head_word,
    kind_words,
    product_words,
    same_word,
    stem,
    title_parts,
    without_measures,
)
from graph.schemas import Plan

SHELVES_SHOWN = 6
# A word's best matches: where a title or label using it ranks, when any does.
_VOCABULARY_LOOKED_AT = 10
# Products looked at: enough to find several kinds, few enough to be the nearest ones.
_PRODUCTS_LOOKED_AT = 40
_WORDS_IN_NAME = 5
_HAS_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Shelf:
    """One kind of product near the request: a name (a title of it, brand and sizes
    aside), the catalog category it is in, how many of the products looked at are of it,
    and their prices."""

    name: str
    category: str
    count: int
    low: float
    high: float

    def line(self) -> str:
        prices = (
            money(self.low) if self.low == self.high else f"{money(self.low)}-{money(self.high)}"
        )
        where = f" ({self.category})" if self.category else ""
        return f"- {self.name}{where}: {self.count} found, {prices}"


def nearest_shelves(
    catalog: CatalogBackend, request: str, budget: float | None = None
) -> list[Shelf]:
    """The shelves nearest `request` (its words without limit phrases) within `budget`:
    the nearest of each category in turn, so that one department whose texts repeat the
    request's word ("photography" books) does not hide the others (camera bags,
    tripods). Empty when the request names a kind of product the catalog sells, or when
    nothing is found."""
    words = kind_words(request)
    if not words:
        return []
    try:
        # Only the words the shop's own titles, labels and categories use: one its
        # descriptions use in passing ("their first", "heading to") says nothing of a kind.
        # With none ("a baby shower present"), the planner plans from what it knows of the
        # person, and shaping.stocked puts each kind the shop lacks on its nearest shelf:
        # listed the shop's departments instead, a small model took the first few.
        spoken = [w for w in words if _in_shop_vocabulary(catalog, w)]
        if not spoken:
            return []
        hits = catalog.search(
            SearchArgs(" ".join(spoken), limit=_PRODUCTS_LOOKED_AT, max_price=budget)
        )
        # Nor does a product that uses them only in its description: "machine washable"
        # puts no plush toy near an espresso machine.
        hits = [hit for hit in hits if _labelled(hit.product, spoken)]
        # A category the request names ("photography": cameras-photography) is a shelf
        # of its own, though its products' texts may never use the word.
        for category in _named_categories(catalog, words):
            listed = SearchArgs("", category=category, limit=_PRODUCTS_LOOKED_AT, max_price=budget)
            hits += [ProductHit(hit.product, 1.0) for hit in catalog.search(listed)]
    except Exception:  # advice only: the plan's own searches report a catalog's errors
        return []
    heads = [_head(hit.product) for hit in hits]
    if any(same_word(head, word) for head in heads if head for word in words):
        return []  # the request names what it wants: the planner needs no shelves
    return _grouped(hits)[:SHELVES_SHOWN]


def unstocked_searches(catalog: CatalogBackend, plan: Plan) -> list[str]:
    """A warning for each of the plan's searches for a kind the shop does not carry (see
    search_shelves). Each names the nearest shelves, for the person who approves the plan
    to edit it."""
    warnings = []
    for step in plan.search_steps:
        query = step.query or ""
        cap = step.max_price if step.max_price is not None else plan.budget
        found = search_shelves(catalog, query, cap)
        if found is None or found.stocked:
            continue
        nearest = ", ".join(s.name for s in found.shelves[:3])
        within = f" within {money(cap)}" if cap is not None else ""
        warnings.append(
            f"step {step.step} searches for {query[:60]!r}, but the shop has no "
            f"{found.kind}{within}" + (f"; nearest: {nearest}" if nearest else "")
        )
    return warnings


@dataclass(frozen=True)
class SearchShelves:
    """What one search's words find: the kind it asks for (its head word), the category of
    the first product found within its cap that is of that kind (its title or labels say
    so; None: none is), and the shelves found."""

    kind: str
    area: str | None
    shelves: list[Shelf]

    @property
    def stocked(self) -> bool:
        return self.area is not None


def search_shelves(catalog: CatalogBackend, query: str, cap: float | None) -> SearchShelves | None:
    """The shelves `query`'s words bring back within `cap`, and whether its kind is among
    them ("photography frames" finds photography books and no frame). None for a query
    naming no kind, or when the catalog cannot answer (advice only: the search step
    reports its own error)."""
    kind = head_word(query)
    if kind is None:
        return None
    words = kind_words(query)
    try:
        hits = catalog.search(SearchArgs(" ".join(words), limit=_PRODUCTS_LOOKED_AT, max_price=cap))
        # A search for a department ("kitchen-accessories", copied from a shelf's line)
        # that no title names finds that department's shelves: it names no kind.
        titled = any(_titled(hit.product, kind) for hit in hits)
        if not titled and (department := _department_named(catalog, words)):
            listed = SearchArgs("", category=department, limit=_PRODUCTS_LOOKED_AT, max_price=cap)
            hits, area = catalog.search(listed), None
        else:
            of_kind = (hit.product for hit in hits if _of_kind(hit.product, kind))
            area = next((product.category or "" for product in of_kind), None)
    except Exception:
        return None
    return SearchShelves(kind, area, _grouped(hits))


def best_rated_shelves(catalog: CatalogBackend, budget: float | None) -> list[Shelf]:
    """The shop's best-rated shelves within `budget`, one department in turn: where an
    open-ended request whose words find nothing ("a housewarming present") starts."""
    try:
        hits = catalog.search(SearchArgs("", limit=_PRODUCTS_LOOKED_AT, max_price=budget))
    except Exception:
        return []
    return _grouped(hits)


def department_shelves(
    catalog: CatalogBackend, query: str, department: str, cap: float | None
) -> list[Shelf]:
    """The shelves of one of the shop's departments within `cap`: those `query`'s words
    find there, else the department's best-rated."""
    try:
        # A query with no words is the department's best-rated: searched once, not twice.
        for words in dict.fromkeys((" ".join(kind_words(query)), "")):
            listed = SearchArgs(
                words, category=department, limit=_PRODUCTS_LOOKED_AT, max_price=cap
            )
            if hits := catalog.search(listed):
                return _grouped(hits)
    except Exception:  # advice only, as nearest_shelves
        return []
    return []


def _of_kind(product: Product, kind: str) -> bool:
    """Whether the product is of `kind`, as a pick step judges it (catalog.kinds): a
    "Wrist Camera Strap" is no camera, a spatula tagged "utensils" is a utensil."""
    return is_of_kind(kind, product.kinds, _titled(product, kind))


def _titled(product: Product, word: str) -> bool:
    return any(same_word(word, w) for w in product_words(product.title))


def _in_shop_vocabulary(catalog: CatalogBackend, word: str) -> bool:
    """Whether the shop names products with `word`: a title, a label or a category of
    one its search finds has it."""
    hits = catalog.search(SearchArgs(word, limit=_VOCABULARY_LOOKED_AT))
    return any(_labelled(hit.product, [word]) for hit in hits)


def _labelled(product: Product, words: list[str]) -> bool:
    """Whether the product's title, a label or its category uses one of `words`."""
    named = " ".join([product.title, *product.tags, (product.category or "")])
    return any(same_word(w, n) for n in product_words(named.replace("-", " ")) for w in words)


def _grouped(hits: list[ProductHit]) -> list[Shelf]:
    """`hits` as shelves: grouped by category and title head, the nearest of each
    category in turn (nearest category first), each group's hit scores summed."""
    groups: dict[tuple[str, str], list[Product]] = {}
    scores: dict[tuple[str, str], float] = {}
    for hit in hits:
        if head := _head(hit.product):
            key = (hit.product.category or "", stem(head))
            groups.setdefault(key, []).append(hit.product)
            scores[key] = scores.get(key, 0.0) + hit.score
    by_category: dict[str, list[tuple[str, str]]] = {}
    for key in sorted(groups, key=lambda k: -scores[k]):
        by_category.setdefault(key[0], []).append(key)
    turns = zip_longest(*by_category.values())
    return [_shelf(groups[key]) for turn in turns for key in turn if key is not None]


def _department_named(catalog: CatalogBackend, words: list[str]) -> str | None:
    """The category whose every word `words` holds, and nothing else ("kitchen
    accessories" names kitchen-accessories)."""
    for category in catalog.categories():
        named = product_words(category.replace("-", " "))
        if len(named) == len(words) and all(any(same_word(w, c) for w in words) for c in named):
            return category
    return None


def _named_categories(catalog: CatalogBackend, words: list[str]) -> list[str]:
    return [
        category
        for category in catalog.categories()
        if any(same_word(w, c) for w in words for c in product_words(category.replace("-", " ")))
    ]


def _head(product: Product) -> str | None:
    return next(iter(product.kinds.title), None)


def _shelf(products: list[Product]) -> Shelf:
    prices = [p.price for p in products]
    first = products[0]
    return Shelf(_name(first), first.category or "", len(products), min(prices), max(prices))


def _name(product: Product) -> str:
    """The product's title as a kind: its first part, brand, sizes and numbers aside
    ("Trailpack 22L Hiking Day Backpack" is a "Hiking Day Backpack")."""
    title = next(iter(title_parts(product.title)), product.title)
    title = without_measures(title.split(":")[0])
    brand = (product.brand or "").strip()
    if brand and title.lower().startswith(brand.lower()):
        title = title[len(brand) :]
    words = [w for w in title.split() if not _HAS_DIGIT.search(w)]
    start = max(len(words) - _WORDS_IN_NAME, 0)
    while start > 0 and words[start].islower():
        start -= 1  # not cut mid-name: "Rails of the North Board Game"
    words = words[start:]
    return " ".join(words) or " ".join(product_words(product.title)[-2:])
