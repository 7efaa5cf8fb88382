"""The limits a request states, as the planner stores them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ItemCap(BaseModel):
    """A price cap on one item of a request that names several: "shoes under $100 and a
    hat under $20". `words` are the product words of the item it follows."""

    model_config = ConfigDict(frozen=True)

    words: tuple[str, ...]
    max_price: float
    text: str


class ForeignLimit(BaseModel):
    """A price limit stated in another currency than the catalog's ("under €200"). It
    is shown as stated and never applied: there are no exchange rates offline."""

    model_config = ConfigDict(frozen=True)

    kind: str  # "max", "min" or "range"
    amounts: tuple[float, ...]
    currency: str
    text: str

    @property
    def shown(self) -> str:
        return " ".join(self.text.split())


class LimitChoice(BaseModel):
    """Limits of one kind a request states where only one can hold ("$50 total or $80
    total", "$30 total, no wait, $40 total"): each as written, and the one applied, the
    last stated (a correction comes after what it corrects), or of two caps joined as both
    holding ("under $40 and under $60") the lower. Shown at approval."""

    model_config = ConfigDict(frozen=True)

    kind: str  # what the limits are, as a note names them: "total", "price cap on each item"
    stated: tuple[str, ...]
    applied: str


class StatedLimits(BaseModel):
    """The limits a request states, read once by the planner (graph/reading/stated.py:
    read_limits) and kept in state for the nodes after it. A price kind stated with
    different values (two items, each with its own cap) has no single value: `item_caps`
    holds each, and `total` the cap on the sum when the request says so ("$300 for
    everything")."""

    model_config = ConfigDict(frozen=True)

    max_price: float | None = None
    min_price: float | None = None
    min_rating: float | None = None
    # Every number the request uses as a price, and as a rating: what a plan's limit
    # may be, however the model read it. Sorted tuples: plain data in a checkpoint.
    prices: tuple[float, ...] = ()
    ratings: tuple[float, ...] = ()
    total: float | None = None
    item_caps: tuple[ItemCap, ...] = ()
    foreign: tuple[ForeignLimit, ...] = ()
    # Limits no product can meet ("under $-5", "under $0", a price too large to be a
    # number), as written: the request is refused with them before any search.
    impossible: tuple[str, ...] = ()
    # Amounts beside a currency that are no number ("$6O" with the letter O, "$1e309"), as
    # written: no limit is taken from them, and the plan says so at approval.
    unreadable: tuple[str, ...] = ()
    choices: tuple[LimitChoice, ...] = ()
    # max_price is a cap on each item ("$25 each"), not what the whole may cost.
    max_price_each: bool = False
    # Items the request asks several of, as written ("three camera straps"): the plan
    # picks one of each, so its total is never called within budget.
    several: tuple[str, ...] = ()
    # A follow-up's (graph/shaping/follow_up.py): the limits above that carry over from
    # the previous run ("max_price", "min_price", "min_rating", "total"), not stated anew.
    carried: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        values = (self.max_price, self.min_price, self.min_rating, self.total)
        return any(v is not None for v in values) or bool(
            self.item_caps or self.foreign or self.impossible or self.unreadable
        )

    @property
    def budget(self) -> float | None:
        """What the whole recommendation may cost: the stated total, else the one cap."""
        if self.total is not None:
            return self.total
        return None if self.max_price_each else self.max_price

    @property
    def product_cap(self) -> float | None:
        """What one product may cost: the cap on each item, else the budget."""
        return self.max_price if self.max_price_each else self.budget
