"""What every provider entry is made of: the `Provider` record, its errors, a family's reading
of a failed call (`Fault`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from catalog.exits import EXIT_BAD_INPUT
from graph.errors import ShoppingError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

StructuredOutputMethod = Literal["json_schema", "function_calling"]
# (input, output) USD per million tokens.
Price = tuple[float, float]
# Seconds per LLM call. A 1.5B model on 2 cores reads ~85 prompt tokens/s and writes ~15-25
# tokens/s, so a plan can take a minute; self-hosted servers get the same patience.
LOCAL_TIMEOUT_S = 300.0
REMOTE_TIMEOUT_S = 60.0


# The most tokens one call can report: far above any model's context, so a count beyond it
# (1e30, a 400-digit number) is a broken server's, not a figure to add up and show.
MAX_TOKENS_PER_CALL = 100_000_000
# Set in a reply's response_metadata when the server's usage block was not token counts
# (floats, strings, negative or huge numbers): its usage is unknown, not zero.
USAGE_UNREADABLE = "shopping_usage_unreadable"


def is_token_count(value: object) -> bool:
    """A count of tokens as a server may report it: a whole number from 0 to the cap."""
    return type(value) is int and 0 <= value <= MAX_TOKENS_PER_CALL


class ProviderConfigError(ShoppingError, RuntimeError):
    """The provider cannot be used as configured; the message says how to fix it."""

    exit_code = EXIT_BAD_INPUT


class ProviderFailed(ShoppingError, RuntimeError):
    """A call failed for good (retried where that may help), or the provider's server could
    not start: its family's one line on it."""


@dataclass(frozen=True)
class Fault:
    """A provider family's reading of an error one of its calls failed with."""

    what: str  # what failed, and where, in words
    transient: bool = False  # a retry may help (a timeout, 429, 5xx, a body cut off)
    streaming_refused: bool = False  # the server cannot stream: ask it plainly


# What every provider's chat model shares (timeout, HTTP client, retries off, ...), as
# keyword arguments for the LangChain model; the registry builds them per provider.
ClientSettings = dict[str, Any]
# factory(model, max_output_tokens, base_url, client settings) -> a chat model
ChatModelFactory = Callable[[str, int, "str | None", ClientSettings], "BaseChatModel"]


@dataclass(frozen=True)
class Provider:
    """One LLM provider: what configures it, its defaults, and how to build its model."""

    name: str
    # Environment variables it reads (a change to any of them means a new chat model).
    env_vars: tuple[str, ...]
    # True when the environment selects this provider (no --provider given).
    configured: Callable[[], bool]
    default_model: Callable[[], str]
    structured_output: StructuredOutputMethod
    timeout_s: float
    factory: ChatModelFactory
    # Its family's reading of an error a call failed with; None: no provider fault.
    fault: Callable[[BaseException], Fault | None]
    # USD per million tokens by model name; None for a self-hosted server (costs nothing).
    prices: Mapping[str, Price] | None = None
    # Self-hosted servers differ: OPENAI_STRUCTURED_OUTPUT_METHOD may override the method.
    structured_output_overridable: bool = False
    # Releases what the factory started (the local server), at the end of a session.
    stop: Callable[[], None] | None = None
