"""``CatalogBackend``: what every catalog backend offers, checked by the type checker.

The tantivy ``catalog.index.Catalog`` and ``catalog.postgres.PostgresCatalog`` both
satisfy it structurally (neither inherits from it), and ``open_catalog`` returns it, so
callers such as the graph's tools depend on the contract, not on one backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, runtime_checkable

from catalog.kinds import KindStock
from catalog.models import Product, ProductHit
from catalog.validation import SearchArgs


@runtime_checkable
class CatalogBackend(Protocol):
    """A read-only, thread-safe product catalog.

    ``search`` returns ``ProductHit``s best first for one ``SearchArgs`` (checked when it is
    made, so ``CatalogQueryError`` comes from building it); query text is only ever
    treated as words. ``kind_stock`` says whether and where the shop carries a kind of
    product (``SearchArgs.kind``) within a price cap. ``get`` returns the products among
    ``ids`` that exist, keyed by id; ``products`` lists every product. ``len`` and
    ``categories`` describe the catalog being served; ``reload`` makes a catalog replaced
    in the meantime visible at once.
    """

    @property
    def source(self) -> str | None:
        """The marker of the input the served catalog was built from, if recorded."""
        ...

    def __len__(self) -> int: ...

    def categories(self) -> list[str]: ...

    def get(self, ids: Iterable[str]) -> dict[str, Product]: ...

    def products(self) -> Iterator[Product]: ...

    def search(self, args: SearchArgs) -> list[ProductHit]: ...

    def kind_stock(self, kind: str, max_price: float | None = None) -> KindStock: ...

    def reload(self) -> None: ...
