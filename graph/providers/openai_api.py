"""The OpenAI family of providers: OpenAI, Azure OpenAI, and any OpenAI-compatible server
(Ollama, vLLM, llama.cpp), all through langchain-openai.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# langchain_openai is imported where a model is built, not here: it costs ~0.5 s of start-up
# that `--help` and `--list` never need.
from graph.providers.base import (
    LOCAL_TIMEOUT_S,
    REMOTE_TIMEOUT_S,
    ClientSettings,
    Price,
    Provider,
    ProviderConfigError,
    env,
    missing_env,
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


def openai_model() -> str:
    return env("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL


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
    return ChatOpenAI(model=model, max_tokens=max_output_tokens, **client)


def build_azure(
    model: str, max_output_tokens: int, base_url: str | None, client: ClientSettings
) -> BaseChatModel:
    from langchain_openai import AzureChatOpenAI

    missing = missing_env("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION")
    if missing:
        raise ProviderConfigError(f"provider azure needs {', '.join(missing)}")
    return AzureChatOpenAI(azure_deployment=model, max_tokens=max_output_tokens, **client)


def self_hosted(
    model: str,
    max_output_tokens: int,
    base_url: str,
    client: ClientSettings,
    api_key: str | None = None,
) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model,
        base_url=base_url,
        # Most self-hosted servers need no key, but the SDK insists on one being set.
        api_key=api_key or env("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
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


OPENAI = Provider(
    name="openai",
    env_vars=("OPENAI_API_KEY", "OPENAI_MODEL"),
    configured=lambda: bool(env("OPENAI_API_KEY")),
    default_model=openai_model,
    structured_output="json_schema",
    timeout_s=REMOTE_TIMEOUT_S,
    factory=build_openai,
    prices=OPENAI_PRICES,
)
AZURE = Provider(
    name="azure",
    env_vars=(
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_DEPLOYMENT",
        "OPENAI_API_VERSION",
    ),
    configured=lambda: bool(env("AZURE_OPENAI_ENDPOINT")),
    default_model=azure_deployment,
    structured_output="json_schema",
    timeout_s=REMOTE_TIMEOUT_S,
    factory=build_azure,
    # Deployments named after the model they serve are priced as that model.
    prices=OPENAI_PRICES,
)
COMPATIBLE = Provider(
    name="compatible",
    env_vars=("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"),
    configured=lambda: bool(env("OPENAI_BASE_URL")),
    default_model=compatible_model,
    # llama.cpp and most compatible servers answer `response_format=json_schema`
    # with HTTP 500, but do honour a forced tool call.
    structured_output="function_calling",
    structured_output_overridable=True,
    timeout_s=LOCAL_TIMEOUT_S,
    factory=build_compatible,
)
