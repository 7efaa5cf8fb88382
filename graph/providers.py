"""The one place where the LLM provider is chosen. Every provider goes through langchain-openai.

- openai: OPENAI_API_KEY, OPENAI_MODEL
- azure: AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY, AZURE_OPENAI_DEPLOYMENT, OPENAI_API_VERSION
- compatible: OPENAI_BASE_URL (+ OPENAI_MODEL, optional OPENAI_API_KEY): Ollama, vLLM, llama.cpp
- local: the embedded llama.cpp server with the packaged Qwen2.5-Coder model (extra `local`)
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from langgraph.types import RetryPolicy

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from graph.context import Context
    from graph.local_model import LocalModelServer

PROVIDERS = ("openai", "azure", "compatible", "local")
StructuredOutputMethod = Literal["json_schema", "function_calling"]

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
# Seconds per LLM call. A 1.5B model on 2 cores reads ~85 prompt tokens/s and writes ~15-25
# tokens/s, so a plan can take a minute; self-hosted servers get the same patience.
LOCAL_TIMEOUT_S = 300.0
REMOTE_TIMEOUT_S = 60.0


def llm_timeout(provider: str) -> float:
    configured = _env("SHOPPING_LLM_TIMEOUT")
    if configured:
        return float(configured)
    return LOCAL_TIMEOUT_S if provider in ("local", "compatible") else REMOTE_TIMEOUT_S


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


def resolve_provider(explicit: str | None = None) -> str:
    """An explicit choice wins; else whatever the environment configures; else local."""
    if explicit:
        if explicit not in PROVIDERS:
            raise ProviderConfigError(
                f"unknown provider {explicit!r}; choose one of: {', '.join(PROVIDERS)}"
            )
        return explicit
    if _env("OPENAI_BASE_URL"):
        return "compatible"
    if _env("AZURE_OPENAI_ENDPOINT"):
        return "azure"
    if _env("OPENAI_API_KEY"):
        return "openai"
    from graph.local_model import local_extra_installed

    if local_extra_installed():
        return "local"
    raise ProviderConfigError(HOW_TO_CONFIGURE)


def structured_output_method(provider: str | None) -> StructuredOutputMethod:
    """OpenAI and Azure accept `response_format=json_schema`; llama.cpp and most
    compatible servers answer it with HTTP 500, but do honour a forced tool call."""
    if provider in ("openai", "azure"):
        return "json_schema"
    override = _env("OPENAI_STRUCTURED_OUTPUT_METHOD")
    if override in ("json_schema", "function_calling"):
        return override  # type: ignore[return-value]
    return "function_calling"


def default_model_name(provider: str, model: str | None) -> str:
    if model:
        return model
    if provider == "openai":
        return _env("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL
    if provider == "azure":
        deployment = _env("AZURE_OPENAI_DEPLOYMENT")
        if not deployment:
            raise ProviderConfigError("provider azure needs AZURE_OPENAI_DEPLOYMENT")
        return deployment
    if provider == "compatible":
        name = _env("OPENAI_MODEL")
        if not name:
            raise ProviderConfigError(
                "provider compatible needs a model name: set OPENAI_MODEL or pass --model"
            )
        return name
    from graph.local_model import DEFAULT_LOCAL_MODEL

    return _env("LOCAL_MODEL") or DEFAULT_LOCAL_MODEL


def make_chat_model(
    provider: str, model: str, *, max_output_tokens: int, base_url: str | None = None
) -> BaseChatModel:
    """Build the chat model. Retries are left to the graph's RetryPolicy (not stacked)."""
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

    common = {"temperature": 0, "max_retries": 0}
    if provider == "openai":
        if not _env("OPENAI_API_KEY"):
            raise ProviderConfigError("provider openai needs OPENAI_API_KEY (see .env.example)")
        return ChatOpenAI(
            model=model, max_tokens=max_output_tokens, timeout=llm_timeout(provider), **common
        )
    if provider == "azure":
        missing = [
            name
            for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION")
            if not _env(name)
        ]
        if missing:
            raise ProviderConfigError(f"provider azure needs {', '.join(missing)}")
        return AzureChatOpenAI(
            azure_deployment=model,
            max_tokens=max_output_tokens,
            timeout=llm_timeout(provider),
            **common,
        )
    if provider in ("compatible", "local"):
        url = base_url or _env("OPENAI_BASE_URL")
        if not url:
            raise ProviderConfigError("provider compatible needs OPENAI_BASE_URL")
        return ChatOpenAI(
            model=model,
            base_url=url,
            # Local servers need no key, but the SDK insists on one being set.
            api_key=_env("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
            # llama.cpp ignores max_completion_tokens (what max_tokens= sends), so the
            # limit goes in the body under its old name.
            extra_body={"max_tokens": max_output_tokens},
            timeout=llm_timeout(provider),
            **common,
        )
    raise ProviderConfigError(f"unknown provider {provider!r}")


# One local server per process and model, shared by every run in the process and
# stopped when the process exits (the CLI stops it earlier through `chat_model_session`).
_local_servers: dict[str, LocalModelServer] = {}
_local_lock = threading.Lock()


def _local_base_url(model: str) -> str:
    from graph.local_model import start_local_server

    with _local_lock:
        server = _local_servers.get(model)
        if server is None:
            server = start_local_server(model)
            server.__enter__()
            _local_servers[model] = server
            atexit.register(stop_local_servers)
        return server.base_url


def _local_alias(model: str) -> str:
    with _local_lock:
        server = _local_servers.get(model)
    return server.model_alias if server is not None else model


def stop_local_servers() -> None:
    with _local_lock:
        servers = list(_local_servers.values())
        _local_servers.clear()
    for server in servers:
        server.__exit__(None, None, None)


def chat_model_for(context: Context) -> BaseChatModel:
    """The chat model a node should use: the one in the context, else built from it."""
    if context.chat_model is not None:
        return context.chat_model
    provider = resolve_provider(context.provider)
    model = default_model_name(provider, context.model)
    base_url = None
    if provider == "local":
        base_url = _local_base_url(model)
        model = _local_alias(model)
    chat_model = make_chat_model(
        provider, model, max_output_tokens=context.max_output_tokens, base_url=base_url
    )
    context.chat_model = chat_model
    return chat_model


@contextmanager
def chat_model_session(context: Context) -> Iterator[Context]:
    """Resolve the provider and build the chat model once for a run; stop a local
    server when the run ends (normally, on error and on Ctrl-C)."""
    context.provider = resolve_provider(context.provider)
    context.model = default_model_name(context.provider, context.model)
    try:
        chat_model_for(context)
        yield context
    finally:
        if context.provider == "local":
            stop_local_servers()


def is_transient_provider_error(error: BaseException) -> bool:
    """Faults worth retrying: timeouts, refused connections, 429 and 5xx, and a body
    that was cut off or is not JSON. Bad requests and auth errors are not retried."""
    import httpx
    import openai

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
    # A truncated or non-JSON body surfaces as a decode error from the SDK.
    return isinstance(error, json.JSONDecodeError)


# Every LLM node runs under this policy: bounded retries with backoff for provider faults
# (the clients' own retries are off, so retries never stack).
LLM_RETRY = RetryPolicy(
    max_attempts=3, initial_interval=1.0, backoff_factor=2.0, retry_on=is_transient_provider_error
)


# Environment variables whose values must never appear in a message.
SECRET_ENV_VARS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY")


def redact_secrets(text: str) -> str:
    """`text` with the configured API keys (and anything shaped like an OpenAI key) masked."""
    import re

    for name in SECRET_ENV_VARS:
        secret = _env(name)
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return re.sub(r"\bsk-[A-Za-z0-9_\-]{8,}", "sk-***", text)


def describe_provider_error(error: BaseException) -> str | None:
    """One line naming a provider failure (what failed, where, after how many attempts),
    or None if `error` is not a provider error."""
    import openai

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
    else:
        what = f"LLM provider error: {error}"
    request = getattr(error, "request", None)
    if request is not None:
        what += f" [{request.method} {request.url}]"
    if transient:
        what += (
            f"; gave up after {LLM_RETRY.max_attempts} attempts "
            "(finished steps are saved: --resume THREAD)"
        )
    return " ".join(what.split())
