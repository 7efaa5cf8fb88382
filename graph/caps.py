"""What a request may be and what the model may write: the request's check, the limits it
states (as the planner stores them), the caps on the model's text, the fields it may leave
out, and the errors when either is unusable.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_REQUEST_CHARS = 4000
# Caps on what the model writes, in characters (and items for lists). A model or server
# gone wrong can send megabytes; a plan or answer over a cap is rejected, never stored or
# sent on in a prompt. The recorded runs (cassettes/) stay far below: their longest goal
# is 177 characters, action 111, query 52, answer 432, with at most 10 features and 4
# picked ids. A product id is ~10 characters, but a small model sometimes writes the
# product's title in its place (113 characters in a recorded run; WebShop titles reach
# ~200): such an id is unknown and verify drops it, so the cap must not fail the whole
# answer over it. The caps are checked by validators, not `max_length`, so the JSON schema
# sent to the model is unchanged. A goal or query may restate the whole request, so those
# two get the request's own limit.
MODEL_TEXT_CAPS = {
    "goal": MAX_REQUEST_CHARS,
    "action": 1000,
    "query": MAX_REQUEST_CHARS,
    "category": 200,
    "feature": 500,
    "answer": 4000,
    "product_id": 1000,
}
MAX_FEATURES = 30
MAX_PICKED_IDS = 50


def within_cap(name: str, value: str | None) -> str | None:
    cap = MODEL_TEXT_CAPS[name]
    if value is not None and len(value) > cap:
        raise ValueError(f"{name} is {len(value):,} characters long; the cap is {cap:,}")
    return value


def within_count(name: str, values: list[str], most: int, each: str) -> list[str]:
    if len(values) > most:
        raise ValueError(f"{name} has {len(values):,} items; the cap is {most}")
    for value in values:
        within_cap(each, value)
    return values


class ReasoningAnswer(BaseModel):
    """Structured output of a reasoning step."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(description="One short sentence.")
    product_ids: list[str] = Field(description="Ids picked, from the data shown; [] if none.")

    @field_validator("answer")
    @classmethod
    def _answer_within_cap(cls, value: str) -> str:
        return within_cap("answer", value) or ""

    @field_validator("product_ids")
    @classmethod
    def _ids_within_cap(cls, value: list[str]) -> list[str]:
        return within_count("product_ids", value, MAX_PICKED_IDS, "product_id")


class RequestError(ValueError):
    """The shopper's request cannot be planned (empty, too long, ...)."""


class PlanningError(RuntimeError):
    """The planner returned no usable plan; `raw` holds what the model actually said."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}\nmodel output: {self.raw[:500]}" if self.raw else text


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


class StatedLimits(BaseModel):
    """The limits a request states, read once by the planner (graph/checks/stated.py:
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
    # A follow-up's (graph/checks/follow_up.py): the limits above that carry over from
    # the previous run ("max_price", "min_price", "min_rating", "total"), not stated anew.
    carried: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        values = (self.max_price, self.min_price, self.min_rating, self.total)
        return any(v is not None for v in values) or bool(
            self.item_caps or self.foreign or self.impossible
        )

    @property
    def budget(self) -> float | None:
        """What the whole recommendation may cost: the stated total, else the one cap."""
        return self.total if self.total is not None else self.max_price


def validate_request(request: object) -> str:
    """Return the request, cleaned of control characters, or raise RequestError.

    Runs before any LLM call, so a bad request never costs a model round trip.
    """
    if not isinstance(request, str):
        raise RequestError(f"the request must be text, got {type(request).__name__}")
    # Control characters (NUL, escape sequences) carry no meaning for a shopper and can
    # confuse terminals and tokenizers; newlines and tabs become plain spaces.
    cleaned = "".join(ch if ch.isprintable() else " " for ch in request)
    cleaned = " ".join(cleaned.split())
    if not cleaned:
        raise RequestError("the request is empty: say what you want to buy")
    if len(cleaned) > MAX_REQUEST_CHARS:
        raise RequestError(
            f"the request is {len(cleaned):,} characters long; the limit is "
            f"{MAX_REQUEST_CHARS:,}. Shorten it to the essentials."
        )
    return cleaned


# Fields the model may leave out. Each one written as null costs a local model about 5
# output tokens per step (~0.3 s on 2 cores). The step filters are among them because
# code reads the request's price and rating limits and fills every search step with them
# (graph/checks/limits.py): a small model dropped stated limits whether they were required or not.
OPTIONAL_FOR_MODEL = frozenset({"category", "min_price", "max_price", "min_rating", "not_shopping"})
# Fields code fills in after the model answers; the model never sees them. The budget is
# the request's stated cap, read in code (graph/checks/stated.py), which overrode the model's
# budget whenever they differed: written by the model it was ~8 tokens of a plan's ~150.
WRITTEN_BY_CODE = frozenset({"budget", "pick", "filled_from_request", "built_in_code"})


def model_facing_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Shape the JSON schema the planner model sees: the shape only, in few tokens.

    The schema is sent with every planner call, so it is kept short: the rules for each
    field live once, in the planner prompt (graph/prompts.py), so property descriptions
    are dropped here, and nullable fields are written as a type list rather than anyOf.
    Every property is required except OPTIONAL_FOR_MODEL, so the model must write each
    limit (null when unused). Python defaults still apply to code building plans.
    Of the docstrings, only Plan's is kept (plan_facing_schema): it becomes the tool's
    description.
    """
    schema.pop("description", None)
    plan_facing_schema(schema, model)


def plan_facing_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """The model-facing shape (see model_facing_schema), keeping the docstring."""
    properties = schema.get("properties", {})
    for name in WRITTEN_BY_CODE:
        properties.pop(name, None)
    schema["required"] = [name for name in properties if name not in OPTIONAL_FOR_MODEL]
    for prop in properties.values():
        prop.pop("default", None)
        prop.pop("description", None)
        variants = prop.get("anyOf")
        if variants and all(set(variant) == {"type"} for variant in variants):
            prop["type"] = [variant["type"] for variant in prop.pop("anyOf")]
