"""The shop's shelves, and those nearest a request or a search by meaning.

A shelf is one kind of product in one department: the products of a catalog category
whose titles are headed by the same kind (as the catalog stored it, ``Product.kinds``),
named after its best-rated product, with how many it holds and their prices. A catalog's
shelves are worked out once per catalog version and embedded once (``meaning/``, cached in
the data folder), so the nearest to a text is one dot product: "a gift for someone who
likes photography" finds camera bags and tripods, in any language the model reads, though
no title shares a word with it. The planner still has no tools: this is code, before its
call, like the limits.
"""

from __future__ import annotations

import hashlib
import re
import threading
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from catalog import CatalogBackend, CatalogError, CatalogQueryError, Product, money
from catalog.kinds import kind_term
from catalog.paths import data_dir
from catalog.text import (
    head_word,
    kind_words,
    product_words,
    stem,
    title_parts,
    without_measures,
)
from graph.schemas import Plan
from meaning import Embedder, SemanticIndex

SHELVES_SHOWN = 6
# Shelves of one department among those shown: "photography" books must not hide camera
# bags and tripods in another.
PER_DEPARTMENT = 2
_WORDS_IN_NAME = 5
# A text this near one shelf by meaning names that shelf's kind in other words, as a
# shopper's own language does: "bandas de resistencia" and the Resistance Band Set 0.57,
# "moulin à café manuel" and a burr coffee grinder 0.54, "sac de couchage" and a sleeping
# bag 0.50; a kind the shop lacks stays below it ("theremin" 0.12, "culinary school" 0.42,
# "perfume" 0.46). One miss above it: "Kaffeemühle" is nearest a stand mixer (0.52).
SAME_KIND = 0.5
# Words say a thing again, in other words, this near it by meaning. A follow-up's wants
# and the earlier item it asks anew are 0.81-1.0 on the dev sets, another kind of product
# 0.63 at most ("camera strap" beside "hiking camera bags"); a search and the shelf name
# it says again ("portable SSDs", "Portable SSD", which the index's stemmer keeps apart)
# 0.96, while every recorded first plan's search for a kind the shop lacks is 0.72 at
# most from its nearest shelf's name.
SAID_AGAIN = 0.8
_HAS_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Shelf:
    """One kind of product in one department: a name (a title of it, brand and sizes
    aside), the kind it is (the catalog's kind term), the category it is in, how many
    products it holds within the cap asked for, and their prices."""

    name: str
    kind: str
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


class ShopShelves:
    """Every shelf of a catalog, with its vector: the nearest to any text, within a cap."""

    def __init__(self, shelves: list[tuple[Shelf, list[float]]], index: SemanticIndex) -> None:
        self._shelves = shelves  # each shelf, and its products' prices in order
        self._index = index
        self.kinds = {shelf.kind for shelf, _ in shelves}

    def nearest(
        self,
        *texts: str,
        cap: float | None = None,
        shown: int = SHELVES_SHOWN,
        skip: Sequence[str] = (),
    ) -> list[Shelf]:
        """The `shown` shelves nearest the texts together (the sum of their cosines), with
        a product within `cap`, PER_DEPARTMENT at most from one department, none of a
        kind in `skip` (kind terms)."""
        texts = tuple(t for t in texts if t.strip())
        if not texts or not self._shelves:
            return []
        scores = sum(self._index.scores(vector) for vector in self._index.embedder.embed(texts))
        found: list[Shelf] = []
        per_department: dict[str, int] = {}
        for i in np.argsort(-np.asarray(scores), kind="stable"):
            shelf, prices = self._shelves[i]
            within = bisect_right(prices, cap) if cap is not None else len(prices)
            taken = per_department.get(shelf.category, 0)
            named = any(shelf.name == other.name for other in found)
            if not within or taken >= PER_DEPARTMENT or shelf.kind in skip or named:
                continue
            per_department[shelf.category] = taken + 1
            found.append(
                Shelf(shelf.name, shelf.kind, shelf.category, within, prices[0], prices[within - 1])
            )
            if len(found) == shown:
                break
        return found

    def named_by(self, text: str) -> Shelf | None:
        """The shelf `text` names in other words: the nearest by meaning, SAME_KIND near."""
        if not self._shelves or not text.strip():
            return None
        scores = np.asarray(self._index.scores(self._index.embedder.embed([text])[0]))
        return self._shelves[int(scores.argmax())][0] if scores.max() >= SAME_KIND else None


_SHOPS: dict[str, ShopShelves] = {}
_SHOPS_LOCK = threading.Lock()


def shop_shelves(catalog: CatalogBackend) -> ShopShelves:
    """The catalog's shelves, worked out once per process and catalog source (the marker
    of what it was built from, its content's hash); their vectors are cached in the data
    folder by content, so a new process, or a catalog with no source, only reads them back."""
    source = catalog.source
    with _SHOPS_LOCK:
        if source is None:
            return _built(catalog)
        if (shop := _SHOPS.get(source)) is None:
            shop = _SHOPS[source] = _built(catalog)
        return shop


def _built(catalog: CatalogBackend) -> ShopShelves:
    grouped: dict[tuple[str, str], list[Product]] = {}
    for product in catalog.products():
        if kind := _kind_of(product):
            grouped.setdefault((product.category or "", kind), []).append(product)
    shelves = []
    for (category, kind), products in grouped.items():
        best = max(products, key=lambda p: p.rating or 0.0)
        prices = sorted(p.price for p in products)
        shelf = Shelf(_name(best), kind, category, len(prices), prices[0], prices[-1])
        shelves.append((shelf, prices))
    items = [(f"{s.category}/{s.kind}", _text(s)) for s, _ in shelves]
    version = hashlib.sha256(repr(items).encode()).hexdigest()[:16]
    index = SemanticIndex.cached(data_dir() / "meaning", "shelves", version, items, Embedder())
    return ShopShelves(shelves, index)


def _kind_of(product: Product) -> str:
    """The kind term of the product's shelf: its title's head, else its first class."""
    heads = [*product.kinds.title, *product.kinds.classes]
    return next((term for h in heads if (term := stem(h))), "")


def _text(shelf: Shelf) -> str:
    """What a shelf is, to the embedding model: its name and its department's words."""
    department = shelf.category.replace("-", " ")
    return f"{shelf.name} ({department})" if department else shelf.name


def nearest_shelves(
    catalog: CatalogBackend, request: str, budget: float | None = None, by_words: bool = True
) -> list[Shelf]:
    """The shelves nearest `request` (its words without limit phrases) within `budget`.
    Empty when the shop cannot answer, or, `by_words`, when the request names a kind the
    shop's titles are headed by (it says what it wants: the planner needs no shelves)."""
    try:
        shop = shop_shelves(catalog)
    except CatalogError:  # advice only: the plan's own searches report a catalog's errors
        return []
    if by_words and any(kind_term(word) in shop.kinds for word in kind_words(request)):
        return []
    return shop.nearest(request, cap=budget)


# What `carried` answered for each (query, cap) while one plan is made: the open-ended
# plan's searches are checked, then the shaped plan's again, mostly the same ones.
StockAnswers = dict[tuple[str, float | None], bool | None]


def carried(
    catalog: CatalogBackend, query: str, cap: float | None, known: StockAnswers | None = None
) -> bool | None:
    """Whether the shop carries the kind `query` names within `cap` (a product whose title
    or labels say it is one: KindStock); None when the query names no kind or the shop
    cannot answer (the search step reports its own error). Asked once per `known`."""
    known = {} if known is None else known
    if (query, cap) not in known:
        try:
            known[query, cap] = catalog.kind_stock(query, cap).stocked
        except (CatalogQueryError, CatalogError):
            known[query, cap] = None
    return known[query, cap]


def shelf_named_by(catalog: CatalogBackend, text: str) -> Shelf | None:
    """The shelf `text` names in other words (ShopShelves.named_by); None when no shelf
    is that near, or the shop cannot answer (advice only, as the nearest shelves are)."""
    try:
        return shop_shelves(catalog).named_by(text)
    except CatalogError:
        return None


def in_shop_words(
    catalog: CatalogBackend,
    plan: Plan,
    known: StockAnswers | None = None,
    *,
    said_again: bool = False,
) -> tuple[Plan, list[str]]:
    """`plan` with each search for a kind the shop does not carry, in words that name one
    of its shelves by meaning (another language, the shopper's words: "bandas de
    resistencia"), searching that shelf's kind as the shop names it; a note for each.
    `said_again`: only where the search is the shelf's name said again (SAID_AGAIN)."""
    steps, notes = [], []
    for step in plan.steps:
        query = step.query or ""
        # At any price: one the shop has only above the cap is the same kind, in its words.
        # Asked within the step's cap first, the answer unstocked_searches reuses: a kind
        # stocked within it is stocked, and most searches need no second question.
        cap = step.price_cap(plan.budget)
        unstocked = (
            step.is_search
            and carried(catalog, query, cap, known) is False
            and carried(catalog, query, None, known) is False
        )
        shelf = shelf_named_by(catalog, query) if unstocked else None
        if shelf is not None and said_again and not _said_again(query, shelf.name):
            shelf = None
        if shelf is not None:
            notes.append(
                f"step {step.step}: {query!r} is searched as the shop names it: {shelf.name!r}"
            )
            step = step.model_copy(update={"query": shelf.name, "action": f"Search {shelf.name}"})
        steps.append(step)
    return plan.model_copy(update={"steps": steps}), notes


def _said_again(query: str, name: str) -> bool:
    return query != name and float(Embedder().similarity(query, [name])[0]) >= SAID_AGAIN


def unstocked_searches(
    catalog: CatalogBackend, plan: Plan, known: StockAnswers | None = None
) -> list[str]:
    """A warning for each of the plan's searches for a kind the shop does not carry
    within its cap, naming the nearest shelves for the person who approves the plan."""
    warnings = []
    for step in plan.search_steps:
        query = step.query or ""
        cap = step.price_cap(plan.budget)
        if carried(catalog, query, cap, known) is not False:
            continue
        nearest = ", ".join(s.name for s in shop_shelves(catalog).nearest(query, cap=cap)[:3])
        within = f" within {money(cap)}" if cap is not None else ""
        kind = head_word(query) or query
        warnings.append(
            f"step {step.step} searches for {query[:60]!r}, but the shop has no "
            f"{kind}{within}" + (f"; nearest: {nearest}" if nearest else "")
        )
    return warnings


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
