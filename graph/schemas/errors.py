"""The errors of a request or a plan that cannot be used (both meant for the shopper)."""

from __future__ import annotations

from catalog.exits import EXIT_BAD_INPUT
from graph.errors import ShoppingError


class RequestError(ShoppingError, ValueError):
    """The shopper's request cannot be planned (empty, too long, ...)."""

    exit_code = EXIT_BAD_INPUT


class PlanningError(ShoppingError, RuntimeError):
    """The planner returned no usable plan; `raw` holds what the model actually said."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}\nmodel output: {self.raw[:500]}" if self.raw else text


USER_ERRORS = (RequestError, PlanningError)
