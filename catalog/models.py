"""The product record shared by loaders, the index and callers."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from catalog.kinds import ProductKinds, kinds_of

MAX_LIMIT = 50  # most products one search returns
# Every catalog's prices are in US dollars (the loaders read plain numbers, no currency).
PRICE_CURRENCY = "USD"
PRICE_SIGN = "$"


def money(value: float) -> str:
    """A catalog price as a shopper reads it ("$1,234.50"): the one money formatter."""
    return f"{PRICE_SIGN}{value:,.2f}"


# No shop lists a product at a billion dollars; under this cap the total of any
# recommendation stays an exact, finite figure (two prices near 1e308 summed to inf).
MAX_PRICE = 1_000_000_000.0
# Characters of a rejected value an error message repeats (a 400-digit price is cut).
_SHOWN_VALUE_CHARS = 40

# Anything that is not a unicode letter or digit separates slug words ("_" is in \w,
# so it is excluded explicitly).
_SLUG_SEPARATORS = re.compile(r"[\W_]+")


def category_slug(text: str) -> str:
    """Slug a category name: ``"Cameras & Photography"`` -> ``"cameras-photography"``.

    Unicode letters and digits are kept (casefolded) so non-English categories
    still produce a usable slug; an input without any returns ``""``.
    """
    return _SLUG_SEPARATORS.sub("-", text.casefold()).strip("-")


def shown_value(value: Any) -> str:
    """`value` as an error message repeats it: its repr, cut to a few dozen characters
    with its full length said, so a 400-digit number makes a short line."""
    text = repr(value) if not isinstance(value, int) else str(value)
    if len(text) <= _SHOWN_VALUE_CHARS:
        return text
    return f"{text[:_SHOWN_VALUE_CHARS]}... ({len(text):,} characters)"


def _parse_number(value: Any) -> float | None:
    """`value` as a float (inf for a whole number too large for one, as a 400-digit
    price is), or None when it is not a number; numeric strings count, booleans never."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, str):
        try:
            return float(value.strip())  # a numeral too large gives inf, never OverflowError
        except ValueError:
            return None
    try:
        return float(value)
    except OverflowError:  # only an int raises it
        return math.inf if value > 0 else -math.inf


class Product(BaseModel):
    """One catalog product; immutable so it can be shared between threads and caches."""

    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    id: str
    title: str
    description: str = ""
    category: str
    price: float
    rating: float | None = None
    brand: str | None = None
    tags: list[str] = []
    options: dict[str, list[str]] = {}
    # What the product is, worked out once from the fields above when it is loaded; a
    # backend stores it beside the product (stored_json) and reads it back as it is.
    # Internal: no printed or published form of a product shows it. A copy made with
    # other fields (model_copy(update=...)) keeps it: build a new Product instead.
    kinds: ProductKinds = Field(
        default_factory=lambda fields: kinds_of(
            fields["title"], fields["category"], fields["tags"], fields["brand"]
        ),
        exclude=True,
        repr=False,
    )

    def stored_json(self) -> str:
        """The product as a backend stores it: its fields and its kinds."""
        return f'{self.model_dump_json()[:-1]},"kinds":{_KINDS.dump_json(self.kinds).decode()}}}'

    @field_validator("id", "title")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("must be a non-empty string")
        return value

    @field_validator("category", mode="before")
    @classmethod
    def _slug(cls, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"category must be a string, got {value!r}")
        slug = category_slug(value)
        if not slug:
            raise ValueError(f"category must contain a letter or digit, got {value!r}")
        return slug

    @field_validator("price", mode="before")
    @classmethod
    def _price(cls, value: Any) -> float:
        price = _parse_number(value)
        if price is None or math.isnan(price) or price < 0:
            raise ValueError(f"price must be a number >= 0, got {shown_value(value)}")
        if price > MAX_PRICE:
            raise ValueError(
                f"price must be at most {MAX_PRICE:,.0f} (USD), got {shown_value(value)}"
            )
        return price

    @field_validator("rating", mode="before")
    @classmethod
    def _rating(cls, value: Any) -> float | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        rating = _parse_number(value)
        # None (not a number), NaN and infinities all fail the range check.
        if rating is None or not 0 <= rating <= 5:
            raise ValueError(f"rating must be a number between 0 and 5, got {shown_value(value)}")
        return rating

    @field_validator("brand", mode="before")
    @classmethod
    def _brand(cls, value: Any) -> str | None:
        # An empty brand carries no information; store it as missing.
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("tags", mode="after")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        # Drop blanks and duplicates but keep the author's order.
        stripped = (tag.strip() for tag in value)
        return list(dict.fromkeys(tag for tag in stripped if tag))


_KINDS = TypeAdapter(ProductKinds)


@dataclass(frozen=True, slots=True)
class ProductHit:
    """A search result: the product and its relevance score (0.0 when no text was queried)."""

    product: Product
    score: float
