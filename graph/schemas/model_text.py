"""What the model may write: the caps on its text, and the schema it is shown."""

from __future__ import annotations

from typing import Any

from pydantic import AfterValidator, BaseModel

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
    # Written by code, not the model (a fallback plan's reason, ~360 characters at most),
    # but an edit sent back over the API carries it: capped like the rest of a plan.
    "built_in_code": 1000,
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


def capped(name: str, most: int | None = None, each: str = "") -> AfterValidator:
    """A field's cap as a validator: text of at most MODEL_TEXT_CAPS[name] characters, or
    with `most`, a list of at most `most` items of `each`'s cap."""
    if most is None:
        return AfterValidator(lambda value: within_cap(name, value))
    return AfterValidator(lambda values: within_count(name, values, most, each))


def blank_is_none(value: str | None) -> str | None:
    """Text of only spaces is none: models write "" for null (for a step's query, "no
    search": that is a reasoning step, not a search for everything)."""
    return value.strip() or None if value is not None else None


# Fields the model may leave out. Each one written as null costs a local model about 5
# output tokens per step (~0.3 s on 2 cores). The step filters are among them because
# code reads the request's price and rating limits and fills every search step with them
# (graph/shaping/limits.py): a small model dropped stated limits whether they were required or not.
OPTIONAL_FOR_MODEL = frozenset({"category", "min_price", "max_price", "min_rating", "not_shopping"})


# Fields code fills in after the model answers; the model never sees them. The budget is
# the request's stated cap, read in code (graph/reading/stated.py), which overrode the model's
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
