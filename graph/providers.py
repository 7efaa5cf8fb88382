"""The one place where LLM providers are defined and chosen: a registry with one entry per
provider, in the spirit of `llm`'s plugins. Every provider goes through langchain-openai.

- openai: OPENAI_API_KEY, OPENAI_MODEL
- azure: AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY, AZURE_OPENAI_DEPLOYMENT, OPENAI_API_VERSION
- compatible: OPENAI_BASE_URL (+ OPENAI_MODEL, optional OPENAI_API_KEY): Ollama, vLLM, llama.cpp
- local: the embedded llama.cpp server with the packaged Qwen2.5-Coder model (extra `local`)

Adding a provider means adding one `Provider` entry to `PROVIDERS`; the CLI's choices,
the eval harness and the cost estimate all read this table. Importing this module stays
cheap (no LangChain, no LangGraph) so `--help` is fast.
"""

from __future__ import annotations

import atexit
import functools
import json
import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from graph import local_model, warm_server

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.types import RetryPolicy

    from graph.context import Context

StructuredOutputMethod = Literal["json_schema", "function_calling"]
# (input, output) USD per million tokens.
Price = tuple[float, float]

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
# Seconds per LLM call. A 1.5B model on 2 cores reads ~85 prompt tokens/s and writes ~15-25
# tokens/s, so a plan can take a minute; self-hosted servers get the same patience.
LOCAL_TIMEOUT_S = 300.0
REMOTE_TIMEOUT_S = 60.0
# Public list prices. Unknown models are priced at $0 and flagged as unknown in the estimate.
OPENAI_PRICES: dict[str, Price] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-nano": (0.10, 0.40),
}
# Every LLM node retries provider faults this many times in all, with backoff; the
# clients' own retries are off, so retries never stack.
LLM_MAX_ATTEMPTS = 3
# A server's Retry-After is honoured up to this many seconds; asked for longer, the run
# gives up at once and says how long the server asked for.
RETRY_AFTER_CAP_S = 20.0

HOW_TO_CONFIGURE = (
    "No LLM provider is configured. Either install the embedded local model "
    "(pip install -e '.[local]', no key needed), or set OPENAI_API_KEY "
    "(or AZURE_OPENAI_* / OPENAI_BASE_URL for an OpenAI-compatible server) in .env; "
    "see .env.example."
)


class ProviderConfigError(RuntimeError):
    """The provider cannot be used as configured; the message says how to fix it."""


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


@functools.cache
def llm_retry_policy() -> RetryPolicy:
    """The retry policy every LLM node runs under (built on first use: LangGraph is heavy)."""
    from langgraph.types import RetryPolicy

    return RetryPolicy(
        max_attempts=LLM_MAX_ATTEMPTS,
        initial_interval=1.0,
        backoff_factor=2.0,
        retry_on=retry_provider_error,
    )


def retry_after_s(error: BaseException) -> float | None:
    """Seconds the server asked to wait before a retry (Retry-After as seconds or as an
    HTTP date, or OpenAI's retry-after-ms), or None if it did not ask."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    try:
        if milliseconds is not None:
            seconds = float(milliseconds) / 1000
        elif value is None:
            return None
        else:
            try:
                seconds = float(value)
            except ValueError:
                from datetime import UTC, datetime
                from email.utils import parsedate_to_datetime

                seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
    except (TypeError, ValueError, OverflowError):
        return None  # unreadable: the usual backoff applies
    return max(0.0, seconds) if math.isfinite(seconds) else None


def retry_provider_error(error: BaseException) -> bool:
    """The LLM nodes' retry predicate: retry transient faults, first waiting what the
    server asked for in Retry-After (the policy's own backoff follows). A wait longer
    than RETRY_AFTER_CAP_S is not retried: the run gives up at once."""
    if not is_transient_provider_error(error):
        return False
    wait = retry_after_s(error)
    if wait is None:
        return True
    if wait > RETRY_AFTER_CAP_S:
        return False
    import time

    time.sleep(wait)
    return True


# ---------------------------------------------------------------- the registry

# factory(model, max_output_tokens, base_url) -> a chat model with retries and temperature off
ChatModelFactory = Callable[[str, int, "str | None"], "BaseChatModel"]


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
    # USD per million tokens by model name; None for a self-hosted server (costs nothing).
    prices: Mapping[str, Price] | None = None
    # Self-hosted servers differ: OPENAI_STRUCTURED_OUTPUT_METHOD may override the method.
    structured_output_overridable: bool = False
    # Releases what the factory started (the local server), at the end of a session.
    stop: Callable[[], None] | None = None


def _missing(*names: str) -> list[str]:
    return [name for name in names if not _env(name)]


def _openai_model() -> str:
    return _env("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL


def _azure_deployment() -> str:
    deployment = _env("AZURE_OPENAI_DEPLOYMENT")
    if not deployment:
        raise ProviderConfigError("provider azure needs AZURE_OPENAI_DEPLOYMENT")
    return deployment


def _compatible_model() -> str:
    name = _env("OPENAI_MODEL")
    if not name:
        raise ProviderConfigError(
            "provider compatible needs a model name: set OPENAI_MODEL or pass --model"
        )
    return name


def _local_model() -> str:
    return _env("LOCAL_MODEL") or local_model.DEFAULT_LOCAL_MODEL


def _client_settings(provider: str) -> dict[str, Any]:
    """What every provider's chat model shares: its timeout and deadline-bound HTTP client,
    usage on streamed calls (the plan as it is written), temperature 0, and no SDK retries
    (the graph's retry policy is the one)."""
    return {
        "timeout": llm_timeout(provider),
        "stream_usage": True,
        "http_client": _http_client(provider),
        "temperature": 0,
        "max_retries": 0,
    }


def _build_openai(model: str, max_output_tokens: int, base_url: str | None) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    if not _env("OPENAI_API_KEY"):
        raise ProviderConfigError("provider openai needs OPENAI_API_KEY (see .env.example)")
    return ChatOpenAI(model=model, max_tokens=max_output_tokens, **_client_settings("openai"))


def _build_azure(model: str, max_output_tokens: int, base_url: str | None) -> BaseChatModel:
    from langchain_openai import AzureChatOpenAI

    missing = _missing("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION")
    if missing:
        raise ProviderConfigError(f"provider azure needs {', '.join(missing)}")
    return AzureChatOpenAI(
        azure_deployment=model, max_tokens=max_output_tokens, **_client_settings("azure")
    )


def _self_hosted(
    provider: str, model: str, max_output_tokens: int, base_url: str, api_key: str | None = None
) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model,
        base_url=base_url,
        # Most self-hosted servers need no key, but the SDK insists on one being set.
        api_key=api_key or _env("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
        # llama.cpp ignores max_completion_tokens (what max_tokens= sends), so the
        # limit goes in the body under its old name.
        extra_body={"max_tokens": max_output_tokens},
        **_client_settings(provider),
    )


def _build_compatible(model: str, max_output_tokens: int, base_url: str | None) -> BaseChatModel:
    url = base_url or _env("OPENAI_BASE_URL")
    if not url:
        raise ProviderConfigError("provider compatible needs OPENAI_BASE_URL")
    return _self_hosted("compatible", model, max_output_tokens, url)


def _build_local(model: str, max_output_tokens: int, base_url: str | None) -> BaseChatModel:
    """The embedded model: a warm llama.cpp server (reused, or started to stay up for
    LOCAL_MODEL_KEEP_ALIVE), or with a keep-alive of 0 one started for this process;
    unless `base_url` names one already running."""
    api_key = None
    if base_url is None:
        server = _local_server(model)
        base_url, model, api_key = server.base_url, server.model_alias, server.api_key
    return _self_hosted("local", model, max_output_tokens, base_url, api_key)


# The local servers this process uses, per model: leases on warm servers, or servers it
# owns (keep-alive 0). A session gives them up when its run ends (through `Provider.stop`),
# and the process at exit.
_local_servers: dict[str, warm_server.Lease | local_model.LocalModelServer] = {}
_local_lock = threading.Lock()


def _local_server(model: str) -> warm_server.Lease | local_model.LocalModelServer:
    with _local_lock:
        server = _local_servers.get(model)
        if server is None:
            if warm_server.keep_alive_seconds() > 0:
                server = warm_server.acquire(model)
            else:
                server = local_model.start_local_server(model)
                server.__enter__()
            _local_servers[model] = server
            atexit.register(stop_local_servers)
        return server


def stopped_local_server() -> str | None:
    """Why a local server this process uses is gone, if it stopped on its own (it crashed
    or was killed): a call failing against it is then not worth retrying."""
    with _local_lock:
        servers = list(_local_servers.values())
    for server in servers:
        report = server.exit_report(grace_s=0.5)
        if report:
            return report
    return None


def _lost_local_server(error: BaseException) -> str | None:
    """The exit report of a local server that died, when `error` is a lost or refused
    connection (what a call to a dead server fails with); None otherwise."""
    known: str | None = getattr(error, "local_server_exit", None)
    if known or not _local_servers:
        return known
    import httpx
    import openai

    if not isinstance(error, openai.APIConnectionError | httpx.TransportError):
        return None
    report = stopped_local_server()
    if report:
        # Kept on the error: the run's session stops and forgets its servers before the
        # CLI words the error.
        error.local_server_exit = report  # type: ignore[attr-defined]
    return report


def stop_local_servers() -> None:
    with _local_lock:
        servers = list(_local_servers.values())
        _local_servers.clear()
    _forget_chat_models("local")  # their server is gone
    for server in servers:
        if isinstance(server, warm_server.Lease):
            server.release()  # the server stays up for the next run, until idle
        else:
            server.__exit__(None, None, None)


PROVIDERS: dict[str, Provider] = {
    entry.name: entry
    for entry in (
        Provider(
            name="openai",
            env_vars=("OPENAI_API_KEY", "OPENAI_MODEL"),
            configured=lambda: bool(_env("OPENAI_API_KEY")),
            default_model=_openai_model,
            structured_output="json_schema",
            timeout_s=REMOTE_TIMEOUT_S,
            factory=_build_openai,
            prices=OPENAI_PRICES,
        ),
        Provider(
            name="azure",
            env_vars=(
                "AZURE_OPENAI_ENDPOINT",
                "AZURE_OPENAI_API_KEY",
                "AZURE_OPENAI_DEPLOYMENT",
                "OPENAI_API_VERSION",
            ),
            configured=lambda: bool(_env("AZURE_OPENAI_ENDPOINT")),
            default_model=_azure_deployment,
            structured_output="json_schema",
            timeout_s=REMOTE_TIMEOUT_S,
            factory=_build_azure,
            # Deployments named after the model they serve are priced as that model.
            prices=OPENAI_PRICES,
        ),
        Provider(
            name="compatible",
            env_vars=("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"),
            configured=lambda: bool(_env("OPENAI_BASE_URL")),
            default_model=_compatible_model,
            # llama.cpp and most compatible servers answer `response_format=json_schema`
            # with HTTP 500, but do honour a forced tool call.
            structured_output="function_calling",
            structured_output_overridable=True,
            timeout_s=LOCAL_TIMEOUT_S,
            factory=_build_compatible,
        ),
        Provider(
            name="local",
            env_vars=("LOCAL_MODEL", "OPENAI_API_KEY"),
            configured=lambda: local_model.local_extra_installed(),
            default_model=_local_model,
            structured_output="function_calling",
            structured_output_overridable=True,
            timeout_s=LOCAL_TIMEOUT_S,
            factory=_build_local,
            stop=stop_local_servers,
        ),
    )
}
# Without an explicit choice, the first provider the environment configures wins: a
# named server or Azure endpoint is a more deliberate setting than a stray OpenAI key,
# and the embedded model needs no setting at all.
DETECTION_ORDER = ("compatible", "azure", "openai", "local")


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
LLM_DEADLINE_ENV = "SHOPPING_LLM_DEADLINE"


def _seconds_setting(name: str) -> float | None:
    """A positive, finite number of seconds from the environment; None when unset."""
    configured = _env(name)
    if not configured:
        return None
    try:
        seconds = float(configured)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ProviderConfigError(f"{name} must be a number of seconds above 0, got {configured!r}")
    return seconds


def llm_timeout(provider: str) -> float:
    """Seconds an LLM call may wait for the server between bytes: $SHOPPING_LLM_TIMEOUT,
    else the provider's default."""
    configured = _seconds_setting(LLM_TIMEOUT_ENV)
    return configured if configured is not None else provider_entry(provider).timeout_s


# Without SHOPPING_LLM_DEADLINE, a whole call may take this many times the wait allowed
# between bytes: room for a long answer written steadily, none for one trickled forever.
DEADLINE_PER_TIMEOUT = 2


def llm_deadline(provider: str) -> float:
    """Seconds a whole LLM call may take, from sending to the last byte:
    $SHOPPING_LLM_DEADLINE, else DEADLINE_PER_TIMEOUT times llm_timeout. Not retried
    when exceeded: a server that slow would only be waited for again."""
    configured = _seconds_setting(LLM_DEADLINE_ENV)
    return configured if configured is not None else DEADLINE_PER_TIMEOUT * llm_timeout(provider)


def _http_client(provider: str) -> Any:
    """The HTTP client of a provider's chat model: every call under its deadline."""
    from graph.deadline import deadline_http_client

    return deadline_http_client(llm_deadline(provider))


def structured_output_method(provider: str | None) -> StructuredOutputMethod:
    """The provider's method; an unresolved provider (a model passed in) gets the
    forced tool call, which every server and the test fakes honour."""
    entry = PROVIDERS.get(provider or "")
    if entry is not None and not entry.structured_output_overridable:
        return entry.structured_output
    override = _env("OPENAI_STRUCTURED_OUTPUT_METHOD")
    if override in ("json_schema", "function_calling"):
        return override  # type: ignore[return-value]
    return entry.structured_output if entry is not None else "function_calling"


def price_per_mtok(provider: str | None, model: str) -> Price | None:
    """(input, output) USD per million tokens, (0, 0) for a self-hosted server, None if
    unknown. An unresolved provider is priced by model name, as a hosted one."""
    entry = PROVIDERS.get(provider or "")
    prices = entry.prices if entry is not None else OPENAI_PRICES
    if prices is None:
        return (0.0, 0.0)
    return prices.get(model)


def default_model_name(provider: str, model: str | None) -> str:
    return model or provider_entry(provider).default_model()


def make_chat_model(
    provider: str, model: str, *, max_output_tokens: int, base_url: str | None = None
) -> BaseChatModel:
    """Build the chat model. Retries are left to the graph's RetryPolicy (not stacked)."""
    return provider_entry(provider).factory(model, max_output_tokens, base_url)


# Built chat models, keyed by everything that shapes one, so Studio and batch runs reuse
# a client (and its connection pool) instead of building one per node call.
_chat_models: dict[tuple[Any, ...], BaseChatModel] = {}
_chat_models_lock = threading.Lock()


def _forget_chat_models(provider: str) -> None:
    with _chat_models_lock:
        for key in [key for key in _chat_models if key[0] == provider]:
            del _chat_models[key]


def chat_model_for(context: Context) -> BaseChatModel:
    """The chat model a node should use: the one in the context, else a cached one built
    from the context's settings and the provider's environment."""
    if context.chat_model is not None:
        return context.chat_model
    provider = resolve_provider(context.provider)
    model = default_model_name(provider, context.model)
    entry = PROVIDERS[provider]
    tuned = (LLM_TIMEOUT_ENV, LLM_DEADLINE_ENV)
    settings = tuple(_env(name) for name in (*entry.env_vars, *tuned))
    key = (provider, model, context.max_output_tokens, settings)
    with _chat_models_lock:
        chat_model = _chat_models.get(key)
    if chat_model is None:
        chat_model = make_chat_model(provider, model, max_output_tokens=context.max_output_tokens)
        with _chat_models_lock:
            chat_model = _chat_models.setdefault(key, chat_model)
    return chat_model


@contextmanager
def chat_model_session(context: Context) -> Iterator[Context]:
    """A copy of `context` with the provider and model resolved, its chat model built
    up front (so a bad setting fails before the run); what the provider started (a local
    server) stops when the session ends, normally, on error and on Ctrl-C."""
    if context.chat_model is not None:  # a model passed in: nothing to resolve or stop
        yield context
        return
    provider = resolve_provider(context.provider)
    resolved = replace(
        context, provider=provider, model=default_model_name(provider, context.model)
    )
    entry = PROVIDERS[provider]
    llm_deadline(provider)  # a bad setting fails here, before a local server starts
    from graph.deadline import allow_calls

    allow_calls()  # a Ctrl-C that stopped an earlier session's calls is over
    try:
        chat_model_for(resolved)
        yield resolved
    finally:
        if entry.stop is not None:
            entry.stop()


def is_transient_provider_error(error: BaseException) -> bool:
    """Faults worth retrying: timeouts, refused connections, 429 and 5xx, and a body
    that was cut off or is not JSON. Bad requests and auth errors are not retried."""
    import httpx
    import openai

    from graph.deadline import stopping_error

    if _lost_local_server(error):
        return False  # the process is gone: a retry would only be refused again
    if stopping_error(error) is not None:
        return False  # past its whole-call deadline, or stopped by Ctrl-C
    if isinstance(
        error,
        openai.APITimeoutError
        | openai.APIConnectionError
        | openai.RateLimitError
        | openai.InternalServerError
        | openai.APIResponseValidationError
        | httpx.TransportError,
    ):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code >= 500
    # A truncated or non-JSON body surfaces as a decode error from the SDK, and a streamed
    # answer with no event in it (a proxy's HTML page, say) as LangChain's empty stream.
    return isinstance(error, json.JSONDecodeError) or _is_empty_stream(error)


def _is_empty_stream(error: BaseException) -> bool:
    # langchain-core raises a bare ValueError for it; its wording is the only mark.
    return isinstance(error, ValueError) and str(error).startswith("No generations found in stream")


# Environment variables whose values must never appear in a message.
SECRET_ENV_VARS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY")
# Environment variables holding URLs whose credentials (user:password@) must not either.
SECRET_URL_ENV_VARS = ("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "CATALOG_URL", "CHECKPOINT_URL")


def _configured_secrets() -> list[str]:
    from urllib.parse import unquote, urlsplit

    secrets = [value for name in SECRET_ENV_VARS if (value := _env(name))]
    for name in SECRET_URL_ENV_VARS:
        url = _env(name)
        try:
            parts = urlsplit(url) if url else None
        except ValueError:
            parts = None
        if parts is not None and parts.password:
            # As written, and percent-decoded (as a client may print it).
            secrets += [parts.password, unquote(parts.password)]
    return [secret for secret in secrets if len(secret) >= 6]


def redact_secrets(text: str) -> str:
    """`text` with the configured API keys, the passwords inside configured URLs, the
    credentials of any URL in it, and anything shaped like an OpenAI key masked."""
    import re

    from catalog.paths import redact_url

    for secret in sorted(_configured_secrets(), key=len, reverse=True):
        text = text.replace(secret, "***")
    return re.sub(r"\bsk-[A-Za-z0-9_\-]{8,}", "sk-***", redact_url(text))


def redact_tree(value: Any) -> Any:
    """`value` (model output as plain data: dicts, lists, strings) with secrets masked."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    return value


def describe_provider_error(error: BaseException) -> str | None:
    """One line naming a provider failure (what failed, where, after how many attempts),
    or None if `error` is not a provider error."""
    import openai

    stopped = _lost_local_server(error)
    if stopped:
        return " ".join(stopped.split())
    from graph.deadline import LLMDeadlineExceeded, stopping_error

    stopping = stopping_error(error)
    if isinstance(stopping, LLMDeadlineExceeded):
        return f"{stopping}; not retried"
    if stopping is not None:
        return str(stopping)
    transient = is_transient_provider_error(error)
    if not isinstance(error, openai.APIError) and not transient:
        return None
    if isinstance(error, openai.APITimeoutError):
        what = "the LLM server did not answer in time (SHOPPING_LLM_TIMEOUT)"
    elif isinstance(error, openai.APIConnectionError):
        # The root cause (refused, reset, body cut off) is at the end of the chain.
        cause: BaseException | None = error
        detail = ""
        while cause is not None:
            if str(cause) and not isinstance(cause, openai.APIError):
                detail = f": {type(cause).__name__}: {cause}"
            cause = cause.__cause__ or cause.__context__
        what = f"cannot reach the LLM server (connection failed{detail})"
    elif isinstance(error, openai.APIStatusError):
        what = f"the LLM server answered HTTP {error.status_code}: {error.message}"
    elif isinstance(error, json.JSONDecodeError | openai.APIResponseValidationError):
        what = f"the LLM server sent a response that is not valid JSON ({error})"
    elif _is_empty_stream(error):
        what = "the LLM server sent a streamed response that is not valid JSON events"
    else:
        what = f"LLM provider error: {error}"
    request = getattr(error, "request", None)
    if request is not None:
        what += f" [{request.method} {request.url}]"
    wait = retry_after_s(error)
    if transient and wait is not None and wait > RETRY_AFTER_CAP_S:
        what += (
            f"; the server asked to wait {wait:,.0f} s before retrying, more than the "
            f"{RETRY_AFTER_CAP_S:.0f} s this client waits, so it gave up at once"
        )
    elif transient:
        # What was saved, and the --resume command, is added by the caller, which
        # knows the thread (graph.render.error_text).
        what += f"; gave up after {llm_retry_policy().max_attempts} attempts"
    return " ".join(what.split())
