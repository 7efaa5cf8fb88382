"""The OpenAI family of providers: OpenAI, Azure OpenAI, and any OpenAI-compatible server
(Ollama, vLLM, llama.cpp), all through langchain-openai.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from catalog.paths import env

# langchain_openai is imported where a model is built, not here: it costs ~0.5 s of start-up
# that `--help` and `--list` never need.
from graph.providers.base import (
    LOCAL_TIMEOUT_S,
    REMOTE_TIMEOUT_S,
    USAGE_UNREADABLE,
    ClientSettings,
    Fault,
    Price,
    Provider,
    ProviderConfigError,
    is_token_count,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
# Public list prices. Unknown models are priced at $0 and flagged as unknown in the estimate.
OPENAI_PRICES: dict[str, Price] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-nano": (0.10, 0.40),
}


# The counts LangChain reads from a usage block, and from its two detail blocks.
_USAGE_COUNTS = ("prompt_tokens", "completion_tokens")
_USAGE_DETAIL_COUNTS = {
    "prompt_tokens_details": ("cached_tokens", "cache_write_tokens", "audio_tokens"),
    "completion_tokens_details": ("reasoning_tokens", "audio_tokens"),
}


def _fields(block: Any) -> Mapping[str, Any] | None:
    """A usage block's fields, whether the SDK parsed it into a model or left a dict."""
    if isinstance(block, Mapping):
        return block
    return dict(block) if isinstance(block, BaseModel) else None


def usage_block_is_sane(block: Any) -> bool:
    """Whether a reply's `usage` block holds token counts LangChain can add up: floats,
    strings, 1e30 or negative numbers there make it raise mid-call, or show nonsense."""
    fields = _fields(block)
    if fields is None or not all(is_token_count(fields.get(name)) for name in _USAGE_COUNTS):
        return False
    total = fields.get("total_tokens")
    if total is not None and not is_token_count(total):
        return False
    for detail, names in _USAGE_DETAIL_COUNTS.items():
        if fields.get(detail) is None:
            continue
        counts = _fields(fields[detail])
        if counts is None or not all(
            counts.get(name) is None or is_token_count(counts.get(name)) for name in names
        ):
            return False
    return True


class UnusableAnswer(ValueError):
    """A server's answer no chat model can read (LangChain fails on it with a TypeError or
    a ValidationError that names no server): the message names what the server sent."""


def unusable_answer(response: Any) -> str | None:
    """What makes a chat completion unreadable: `choices: null`, or a tool call whose
    arguments are JSON but not an object (a JSON string inside the JSON: encoded twice).
    None when LangChain can read it (arguments that are not JSON at all it keeps as an
    invalid tool call, which the nodes report as the model's unusable answer)."""
    answer = response.model_dump() if isinstance(response, BaseModel) else response
    choices = answer.get("choices") if isinstance(answer, Mapping) else None
    if not isinstance(choices, list):
        return f'an answer with no choices ("choices": {json.dumps(choices)[:80]})'
    for choice in choices:
        message = (choice or {}).get("message") or {}
        for call in message.get("tool_calls") or []:
            arguments = (call.get("function") or {}).get("arguments")
            if not isinstance(arguments, str):
                continue
            try:
                decoded = json.loads(arguments)
            except ValueError:
                continue
            if not isinstance(decoded, dict):
                return f"tool call arguments that are not a JSON object: {arguments[:80]}"
    return None


@cache
def usage_checked(chat_class: type) -> type:
    """`chat_class` (ChatOpenAI, AzureChatOpenAI) reading a usage block that is not token
    counts as unknown: the block is dropped before LangChain reads it, and the reply is
    marked USAGE_UNREADABLE, so the run reports its usage as unknown instead of failing.
    An answer it cannot read at all is UnusableAnswer."""
    from langchain_core.outputs import ChatGenerationChunk, ChatResult

    class UsageChecked(chat_class):
        def _create_chat_result(self, response: Any, generation_info: Any = None) -> ChatResult:
            if (problem := unusable_answer(response)) is not None:
                raise UnusableAnswer(problem)
            is_dict = isinstance(response, dict)
            block = response.get("usage") if is_dict else getattr(response, "usage", None)
            if block is None or usage_block_is_sane(block):
                return super()._create_chat_result(response, generation_info)
            if is_dict:
                response = {**response, "usage": None}
            else:
                response = response.model_copy(update={"usage": None})
            result = super()._create_chat_result(response, generation_info)
            for generation in result.generations:
                generation.message.response_metadata[USAGE_UNREADABLE] = True
            return result

        def _convert_chunk_to_generation_chunk(
            self, chunk: dict, default_chunk_class: type, base_generation_info: Any
        ) -> ChatGenerationChunk | None:
            block = chunk.get("usage")
            if block is None or usage_block_is_sane(block):
                return super()._convert_chunk_to_generation_chunk(
                    chunk, default_chunk_class, base_generation_info
                )
            converted = super()._convert_chunk_to_generation_chunk(
                {**chunk, "usage": None}, default_chunk_class, base_generation_info
            )
            if converted is not None:
                converted.message.response_metadata[USAGE_UNREADABLE] = True
            return converted

    UsageChecked.__name__ = UsageChecked.__qualname__ = f"UsageChecked{chat_class.__name__}"
    return UsageChecked


def azure_deployment() -> str:
    deployment = env("AZURE_OPENAI_DEPLOYMENT")
    if not deployment:
        raise ProviderConfigError("provider azure needs AZURE_OPENAI_DEPLOYMENT")
    return deployment


def compatible_model() -> str:
    name = env("OPENAI_MODEL")
    if not name:
        raise ProviderConfigError(
            "provider compatible needs a model name: set OPENAI_MODEL or pass --model"
        )
    return name


def build_openai(
    model: str, max_output_tokens: int, base_url: str | None, client: ClientSettings
) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    if not env("OPENAI_API_KEY"):
        raise ProviderConfigError("provider openai needs OPENAI_API_KEY (see .env.example)")
    return usage_checked(ChatOpenAI)(model=model, max_tokens=max_output_tokens, **client)


def build_azure(
    model: str, max_output_tokens: int, base_url: str | None, client: ClientSettings
) -> BaseChatModel:
    from langchain_openai import AzureChatOpenAI

    needed = ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION")
    missing = [name for name in needed if not env(name)]
    if missing:
        raise ProviderConfigError(f"provider azure needs {', '.join(missing)}")
    return usage_checked(AzureChatOpenAI)(
        azure_deployment=model, max_tokens=max_output_tokens, **client
    )


def self_hosted(
    model: str,
    max_output_tokens: int,
    base_url: str,
    client: ClientSettings,
    api_key: str | None = None,
) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return usage_checked(ChatOpenAI)(
        model=model,
        base_url=base_url,
        # Most self-hosted servers need no key, but the SDK insists on one being set.
        api_key=api_key or env("OPENAI_API_KEY") or "not-needed",
        # llama.cpp ignores max_completion_tokens (what max_tokens= sends), so the
        # limit goes in the body under its old name.
        extra_body={"max_tokens": max_output_tokens},
        **client,
    )


def build_compatible(
    model: str, max_output_tokens: int, base_url: str | None, client: ClientSettings
) -> BaseChatModel:
    url = base_url or env("OPENAI_BASE_URL")
    if not url:
        raise ProviderConfigError("provider compatible needs OPENAI_BASE_URL")
    return self_hosted(model, max_output_tokens, url, client)


def read_fault(error: BaseException) -> Fault | None:
    """The OpenAI family's reading of a failed call (the SDK, its HTTP library, the deadline
    transport), None if `error` is no provider fault. Timeouts, lost connections, 429 and
    5xx, and a body cut off or not JSON are transient; bad requests and auth errors are
    not, nor a call past its whole-call deadline or stopped by Ctrl-C."""
    # Imported here: openai costs ~0.3 s of start-up that --help and --list never need.
    import openai

    from graph.providers.deadline import LLMDeadlineExceeded, httpx, stopping_error

    stopping = stopping_error(error)
    if stopping is not None:
        return Fault(
            f"{stopping}; not retried"
            if isinstance(stopping, LLMDeadlineExceeded)
            else str(stopping)
        )
    # A streamed answer with no event in it (a proxy's HTML page, say): langchain-core
    # raises a bare ValueError for it, and its wording is the only mark.
    empty_stream = isinstance(error, ValueError) and str(error).startswith(
        "No generations found in stream"
    )
    transient = True
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
        transient = isinstance(error, openai.RateLimitError) or error.status_code >= 500
    elif isinstance(error, json.JSONDecodeError | openai.APIResponseValidationError):
        # A truncated or non-JSON body surfaces as a decode error from the SDK.
        what = f"the LLM server sent a response that is not valid JSON ({error})"
    elif isinstance(error, UnusableAnswer):
        what, transient = f"the LLM server sent {error}", False
    elif empty_stream:
        what = "the LLM server sent a streamed response that is not valid JSON events"
    elif isinstance(error, openai.APIError | httpx.TransportError):
        what = f"LLM provider error: {error}"
        transient = isinstance(error, httpx.TransportError)
    else:
        return None
    request = getattr(error, "request", None)
    if request is not None:
        what += f" [{request.method} {request.url}]"
    # A server that cannot stream refuses a streamed call with a 4xx naming "stream", or
    # answers it with a plain body that holds no stream event.
    refused = empty_stream or (
        isinstance(error, openai.APIStatusError)
        and 400 <= error.status_code < 500
        and "stream" in str(error).lower()
    )
    return Fault(what, transient, refused)


OPENAI = Provider(
    name="openai",
    env_vars=("OPENAI_API_KEY", "OPENAI_MODEL", "OPENAI_PROXY"),
    configured=lambda: bool(env("OPENAI_API_KEY")),
    default_model=lambda: env("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL,
    structured_output="json_schema",
    timeout_s=REMOTE_TIMEOUT_S,
    factory=build_openai,
    fault=read_fault,
    prices=OPENAI_PRICES,
)
AZURE = Provider(
    name="azure",
    env_vars=(
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_DEPLOYMENT",
        "OPENAI_API_VERSION",
        "OPENAI_PROXY",
    ),
    configured=lambda: bool(env("AZURE_OPENAI_ENDPOINT")),
    default_model=azure_deployment,
    structured_output="json_schema",
    timeout_s=REMOTE_TIMEOUT_S,
    factory=build_azure,
    fault=read_fault,
    # Deployments named after the model they serve are priced as that model.
    prices=OPENAI_PRICES,
)
COMPATIBLE = Provider(
    name="compatible",
    env_vars=("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_PROXY"),
    configured=lambda: bool(env("OPENAI_BASE_URL")),
    default_model=compatible_model,
    # llama.cpp and most compatible servers answer `response_format=json_schema`
    # with HTTP 500, but do honour a forced tool call.
    structured_output="function_calling",
    structured_output_overridable=True,
    timeout_s=LOCAL_TIMEOUT_S,
    factory=build_compatible,
    fault=read_fault,
)
