"""The one place where LLM providers are chosen: a registry with one entry per provider,
in the spirit of `llm`'s plugins. Every provider goes through langchain-openai.

- openai: OPENAI_API_KEY, OPENAI_MODEL
- azure: AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY, AZURE_OPENAI_DEPLOYMENT, OPENAI_API_VERSION
- compatible: OPENAI_BASE_URL (+ OPENAI_MODEL, optional OPENAI_API_KEY): Ollama, vLLM, llama.cpp
- local: the embedded llama.cpp server with the packaged Qwen2.5-Coder model (extra `local`)

Adding a provider means adding one `Provider` entry to `PROVIDERS`; the CLI's choices,
the eval harness and the cost estimate all read this table. Importing this module stays
cheap (no LangChain, no LangGraph) so `--help` is fast.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast, get_args

from catalog.paths import env
from graph.context import ProviderName
from graph.providers import openai_api
from graph.providers.base import (
    ClientSettings,
    Fault,
    Price,
    Provider,
    ProviderConfigError,
    StructuredOutputMethod,
)
from graph.providers.local import LOCAL

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

HOW_TO_CONFIGURE = (
    "No LLM provider is configured. Either install the embedded local model "
    "(pip install -e '.[local]', no key needed), or set OPENAI_API_KEY "
    "(or AZURE_OPENAI_* / OPENAI_BASE_URL for an OpenAI-compatible server) in .env; "
    "see .env.example."
)


def client_settings(provider: str) -> ClientSettings:
    """What every provider's chat model shares: its timeout and deadline-bound HTTP client,
    usage on streamed calls (the plan as it is written), temperature 0, and no SDK retries
    (the graph's retry policy is the one)."""
    return {
        "timeout": llm_timeout(provider),
        "stream_usage": True,
        "http_client": _http_client(provider),
        # langchain-openai reads $OPENAI_PROXY itself and refuses it beside a client of
        # ours: the client carries it (_http_client).
        "openai_proxy": None,
        "temperature": 0,
        "max_retries": 0,
    }


PROVIDERS: dict[str, Provider] = {
    entry.name: entry
    for entry in (openai_api.OPENAI, openai_api.AZURE, openai_api.COMPATIBLE, LOCAL)
}
if set(PROVIDERS) != set(get_args(ProviderName)):  # the form's choices are these
    raise AssertionError(f"graph.context.ProviderName must list {', '.join(PROVIDERS)}")
# Without an explicit choice, the first provider the environment configures wins: a
# named server or Azure endpoint is a more deliberate setting than a stray OpenAI key,
# and the embedded model needs no setting at all.
DETECTION_ORDER = ("compatible", "azure", "openai", "local")


def provider_fault(error: BaseException) -> Fault | None:
    """A provider family's reading of the error a call failed with; None if no family's.
    A retry policy, or a message, knows no provider: each family is asked, the local
    model's first, as its server dying looks to the others like any lost connection."""
    readers = dict.fromkeys(entry.fault for entry in (LOCAL, *PROVIDERS.values()))
    return next((fault for read in readers if (fault := read(error)) is not None), None)


def provider_entry(name: str) -> Provider:
    entry = PROVIDERS.get(name)
    if entry is None:
        raise ProviderConfigError(
            f"unknown provider {name!r}; choose one of: {', '.join(PROVIDERS)}"
        )
    return entry


def resolve_provider(explicit: str | None = None) -> str:
    """An explicit choice wins; else whatever the environment configures; else local."""
    if explicit:
        return provider_entry(explicit).name
    for name in DETECTION_ORDER:
        if PROVIDERS[name].configured():
            return name
    raise ProviderConfigError(HOW_TO_CONFIGURE)


LLM_TIMEOUT_ENV = "SHOPPING_LLM_TIMEOUT"
PROXY_ENV = "OPENAI_PROXY"  # as langchain-openai names it
LLM_DEADLINE_ENV = "SHOPPING_LLM_DEADLINE"


# The longest wait a time setting may ask for: a day. Beyond it a value is a typo, and
# 1e12 overflowed the clock arithmetic of the HTTP client (a traceback, not a wait).
MAX_SETTING_SECONDS = 86_400.0


def _seconds_setting(name: str) -> float | None:
    """A number of seconds above 0 and at most a day, from the environment; None when unset."""
    configured = env(name)
    if not configured:
        return None
    try:
        seconds = float(configured)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_SETTING_SECONDS):
        raise ProviderConfigError(
            f"{name} must be a number of seconds above 0 and at most "
            f"{MAX_SETTING_SECONDS:,.0f} (a day), got {configured!r}"
        )
    return seconds


def llm_timeout(provider: str) -> float:
    """Seconds an LLM call may wait for the server between bytes: $SHOPPING_LLM_TIMEOUT,
    else the provider's default."""
    # A setting is above 0 when given: `or` falls back only when it is not.
    return _seconds_setting(LLM_TIMEOUT_ENV) or provider_entry(provider).timeout_s


# Without SHOPPING_LLM_DEADLINE, a whole call may take this many times the wait allowed
# between bytes: room for a long answer written steadily, none for one trickled forever.
DEADLINE_PER_TIMEOUT = 2


def llm_deadline(provider: str) -> float:
    """Seconds a whole LLM call may take, from sending to the last byte:
    $SHOPPING_LLM_DEADLINE, else DEADLINE_PER_TIMEOUT times llm_timeout. Not retried
    when exceeded: a server that slow would only be waited for again."""
    return _seconds_setting(LLM_DEADLINE_ENV) or DEADLINE_PER_TIMEOUT * llm_timeout(provider)


def _http_client(provider: str) -> Any:
    """The HTTP client of a provider's chat model: every call under its deadline, through
    $OPENAI_PROXY for a provider that reads it (not the local server, on loopback)."""
    # Imported here: the deadline transport imports openai (~0.3 s), which the registry's
    # readers (the CLI's --help and --list) never need.
    from graph.providers.deadline import deadline_http_client

    proxy = env(PROXY_ENV) if PROXY_ENV in PROVIDERS[provider].env_vars else None
    try:
        return deadline_http_client(llm_deadline(provider), proxy)
    except (ValueError, ImportError) as error:  # httpx names what is wrong with it
        raise ProviderConfigError(f"{PROXY_ENV} is not a proxy URL: {error}") from None


STRUCTURED_OUTPUT_ENV = "OPENAI_STRUCTURED_OUTPUT_METHOD"
STRUCTURED_OUTPUT_METHODS: tuple[StructuredOutputMethod, ...] = ("json_schema", "function_calling")


def structured_output_override() -> StructuredOutputMethod | None:
    """$OPENAI_STRUCTURED_OUTPUT_METHOD, checked: a typo is refused, never ignored."""
    override = env(STRUCTURED_OUTPUT_ENV)
    if override is None or override in STRUCTURED_OUTPUT_METHODS:
        return override
    raise ProviderConfigError(
        f"{STRUCTURED_OUTPUT_ENV} must be one of {', '.join(STRUCTURED_OUTPUT_METHODS)}, "
        f"got {override!r}"
    )


def structured_output_method(provider: str | None) -> StructuredOutputMethod:
    """The provider's method; an unresolved provider (a model passed in) gets the
    forced tool call, which every server and the test fakes honour."""
    override = structured_output_override()  # checked even where it does not apply
    entry = PROVIDERS.get(provider or "")
    if entry is not None and not entry.structured_output_overridable:
        return entry.structured_output
    if override is not None:
        return override
    return entry.structured_output if entry is not None else "function_calling"


def price_per_mtok(provider: str | None, model: str) -> Price | None:
    """(input, output) USD per million tokens, (0, 0) for a self-hosted server, None if
    unknown. An unresolved provider is priced by model name, as a hosted one."""
    entry = PROVIDERS.get(provider or "")
    prices = entry.prices if entry is not None else openai_api.OPENAI_PRICES
    if prices is None:
        return (0.0, 0.0)
    return prices.get(model)


def run_model(provider: str | None, model: str | None) -> tuple[ProviderName, str]:
    """The provider and model a run with these settings uses: each as given, else what
    the environment configures (resolve_provider, then the provider's default model, e.g.
    $OPENAI_MODEL). The one resolution: the CLI's session, the chat model a node builds
    under `langgraph dev`, and the cost estimate all read it, so the model estimated is
    the model that runs. ProviderConfigError when the settings name none."""
    # A name of PROVIDERS, which lists exactly the ProviderName choices (checked above).
    name = cast("ProviderName", resolve_provider(provider))
    return name, model or PROVIDERS[name].default_model()


def make_chat_model(
    provider: str, model: str, *, max_output_tokens: int, base_url: str | None = None
) -> BaseChatModel:
    """Build the chat model. Retries are left to the graph's RetryPolicy (not stacked)."""
    entry = provider_entry(provider)
    return entry.factory(model, max_output_tokens, base_url, client_settings(entry.name))
