"""A small catalog and hostile query strings shared by the catalog tests of every backend."""

from __future__ import annotations

from catalog import Product, ProductHit, category_slug

PRODUCTS = [
    Product(
        id="strap-1",
        title="Leather Camera Strap",
        description="Full-grain leather neck strap with brass rings.",
        category="Cameras & Photography",
        price=39.0,
        rating=4.6,
        brand="Strapworks",
        tags=["strap", "gift"],
    ),
    Product(
        id="bag-1",
        title="Canvas Messenger Bag",
        description="Fits a camera and two lenses; comes with a padded strap.",
        category="cameras-photography",
        price=89.0,
        rating=4.1,
        tags=["bag"],
    ),
    Product(
        id="cam-1",
        title="Mirrorless Camera Body 24MP",
        description="Full-frame sensor, 4K video.",
        category="cameras-photography",
        price=1499.0,
        rating=4.8,
        tags=["mirrorless", "camera"],
    ),
    Product(
        id="card-1",
        title="128GB SD Card",
        description="Fast UHS-I memory card for cameras.",
        category="cameras-photography",
        price=24.99,
        rating=None,  # unrated: must never pass a min_rating filter
        tags=["sd card", "storage"],
    ),
    Product(
        id="shoe-1",
        title="Road Running Shoe",
        description="Cushioned daily trainer.",
        category="running-fitness",
        price=129.0,
        rating=4.3,
        options={"size": ["9", "10"]},
    ),
    Product(
        id="watch-1",
        title="GPS Running Watch",
        description="Tracks pace and heart rate; strap in silicone.",
        category="running-fitness",
        price=249.0,
        rating=3.9,
    ),
    Product(
        id="free-1",
        title="Free Photo Editing Guide",
        description="A zero-cost leaflet.",
        category="books",
        price=0.0,
        rating=5.0,
    ),
    Product(
        id="cafe-1",
        title="Café Espresso Machine",
        description="Dual boiler espresso maker.",
        category="coffee-kitchen",
        price=499.0,
        rating=4.4,
    ),
]
BY_ID = {p.id: p for p in PRODUCTS}

HOSTILE_QUERIES = [
    '"camera strap"',
    "camera*",
    "*",
    "camera NEAR strap",
    "camera OR strap",
    "camera AND strap",
    "NOT camera",
    "+camera -strap",
    "title:camera",
    "category:books",
    "price:[0 TO 10]",
    "camera^10",
    "strap~2",
    "(camera",
    "[camera",
    "camera)",
    "camera]",
    "{strap}",
    "camera; DROP TABLE products",
    "camera -- comment",
    "camera\x00strap",
    "\x00",
    '"',
    "''",
    "\\",
    "AND OR NOT",
    "::",
    "^~*?",
    "camera strap " * 200,
]


def ids(hits: list[ProductHit]) -> list[str]:
    return [h.product.id for h in hits]


def satisfies(
    product: Product,
    *,
    category: str | None = None,
    min_price: float | None = None,
    max_price: float | None = None,
    min_rating: float | None = None,
) -> bool:
    if category is not None and product.category != category_slug(category):
        return False
    if min_price is not None and product.price < min_price:
        return False
    if max_price is not None and product.price > max_price:
        return False
    return min_rating is None or (product.rating is not None and product.rating >= min_rating)
