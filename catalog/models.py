"""The product record shared by loaders, the index and callers."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

MAX_LIMIT = 50  # most products one search returns
# Every catalog's prices are in US dollars (the loaders read plain numbers, no currency).
PRICE_CURRENCY = "USD"

# Anything that is not a unicode letter or digit separates slug words ("_" is in \w,
# so it is excluded explicitly).
_SLUG_SEPARATORS = re.compile(r"[\W_]+")


def category_slug(text: str) -> str:
    """Slug a category name: ``"Cameras & Photography"`` -> ``"cameras-photography"``.

    Unicode letters and digits are kept (casefolded) so non-English categories
    still produce a usable slug; an input without any returns ``""``.
    """
    return _SLUG_SEPARATORS.sub("-", text.casefold()).strip("-")


def _as_number(value: Any, what: str) -> float:
    """Parse a finite number, accepting numeric strings but never booleans."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, got {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise ValueError(f"{what} must be a number, got {value!r}") from None
    else:
        raise ValueError(f"{what} must be a number, got {value!r}")
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return number


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
        try:
            price = _as_number(value, "price")
        except ValueError:
            raise ValueError(f"price must be a number >= 0, got {value!r}") from None
        if price < 0:
            raise ValueError(f"price must be a number >= 0, got {value!r}")
        return price

    @field_validator("rating", mode="before")
    @classmethod
    def _rating(cls, value: Any) -> float | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            rating = _as_number(value, "rating")
        except ValueError:
            raise ValueError(f"rating must be a number between 0 and 5, got {value!r}") from None
        if not 0 <= rating <= 5:
            raise ValueError(f"rating must be a number between 0 and 5, got {value!r}")
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
        seen: dict[str, None] = {}
        for tag in value:
            tag = tag.strip()
            if tag:
                seen.setdefault(tag, None)
        return list(seen)


@dataclass(frozen=True, slots=True)
class ProductHit:
    """A search result: the product and its relevance score (0.0 when no text was queried)."""

    product: Product
    score: float
