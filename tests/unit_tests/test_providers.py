"""The provider registry: one entry per provider, and everything else reads it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fakes import FakeShoppingChatModel

from graph.cli.main import build_parser
from graph.context import Context
from graph.cost import estimate_plan_cost
from graph.providers import base, registry
from graph.providers.base import ProviderConfigError
from graph.providers.models import chat_model_for, chat_model_session
from graph.providers.registry import (
    PROVIDERS,
    make_chat_model,
    resolve_provider,
    structured_output_method,
)
from graph.schemas import Plan

PLAN = Plan.model_validate(
    {
        "goal": "A strap.",
        "budget": 50,
        "steps": [
            {"step": 1, "action": "Find straps", "query": "camera strap"},
            {"step": 2, "action": "Pick one", "query": None},
        ],
    }
)


@pytest.fixture
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for entry in PROVIDERS.values():
        for name in entry.env_vars:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SHOPPING_LLM_TIMEOUT", raising=False)
    monkeypatch.delenv("OPENAI_STRUCTURED_OUTPUT_METHOD", raising=False)
    return monkeypatch


def provider_choices(parser: Any) -> list[str]:
    action = next(a for a in parser._actions if a.dest == "provider")
    return list(action.choices)


def test_a_new_registry_entry_is_a_cli_choice_and_builds_its_model(
    no_provider_env: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[str, int]] = []

    def factory(
        model: str, max_output_tokens: int, base_url: str | None, client: dict[str, Any]
    ) -> Any:
        built.append((model, max_output_tokens))
        return FakeShoppingChatModel()

    entry = replace(
        PROVIDERS["compatible"],
        name="acme",
        env_vars=("ACME_KEY",),
        configured=lambda: True,
        default_model=lambda: "acme-1",
        factory=factory,
        stop=None,
    )
    no_provider_env.setitem(PROVIDERS, "acme", entry)
    assert "acme" in provider_choices(build_parser())
    assert resolve_provider("acme") == "acme"
    model = chat_model_for(Context(provider="acme", max_output_tokens=99))
    assert isinstance(model, FakeShoppingChatModel) and built == [("acme-1", 99)]
    assert structured_output_method("acme") == "function_calling"


def test_cli_choices_are_the_registry() -> None:
    assert provider_choices(build_parser()) == list(PROVIDERS)
    assert list(PROVIDERS) == ["openai", "azure", "compatible", "local"]


def test_the_environment_selects_the_provider_in_a_fixed_order(
    no_provider_env: pytest.MonkeyPatch,
) -> None:
    no_provider_env.setenv("OPENAI_API_KEY", "sk-test-0000000000")
    assert resolve_provider() == "openai"
    no_provider_env.setenv("AZURE_OPENAI_ENDPOINT", "https://x.example")
    assert resolve_provider() == "azure"
    no_provider_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert resolve_provider() == "compatible"
    assert resolve_provider("openai") == "openai"  # an explicit choice wins
    with pytest.raises(ProviderConfigError, match="choose one of: openai, azure"):
        resolve_provider("nope")


def test_structured_output_and_timeouts_come_from_the_entry(
    no_provider_env: pytest.MonkeyPatch,
) -> None:
    assert structured_output_method("openai") == "json_schema"
    assert structured_output_method("local") == "function_calling"
    assert structured_output_method(None) == "function_calling"  # a model passed in
    no_provider_env.setenv("OPENAI_STRUCTURED_OUTPUT_METHOD", "json_schema")
    assert structured_output_method("compatible") == "json_schema"
    assert structured_output_method("azure") == "json_schema"
    assert registry.llm_timeout("openai") == base.REMOTE_TIMEOUT_S
    assert registry.llm_timeout("compatible") == base.LOCAL_TIMEOUT_S
    no_provider_env.setenv("SHOPPING_LLM_TIMEOUT", "7")
    assert registry.llm_timeout("openai") == 7.0


def test_the_estimate_is_priced_from_the_registry() -> None:
    hosted = estimate_plan_cost(PLAN, Context(provider="openai", model="gpt-4o-mini"))
    assert hosted.price_known and hosted.usd > 0
    unknown = estimate_plan_cost(PLAN, Context(provider="openai", model="mystery-model"))
    assert not unknown.price_known and unknown.usd == 0
    self_hosted = estimate_plan_cost(PLAN, Context(provider="compatible", model="gpt-4o-mini"))
    assert self_hosted.price_known and self_hosted.usd == 0


def test_the_estimate_prices_the_model_that_will_run_under_the_server_as_in_the_cli(
    no_provider_env: pytest.MonkeyPatch,
) -> None:
    """Issue 37: Studio's context names no model (often no provider either); the estimate
    resolves it as the chat model does, from $OPENAI_MODEL, not "unknown" at $0."""
    no_provider_env.setenv("OPENAI_API_KEY", "sk-test")
    no_provider_env.setenv("OPENAI_MODEL", "gpt-4o")
    no_provider_env.delenv("SHOPPING_PROVIDER", raising=False)
    no_provider_env.delenv("SHOPPING_MODEL", raising=False)
    expected = estimate_plan_cost(PLAN, Context(provider="openai", model="gpt-4o"))
    assert expected.price_known and expected.usd > 0
    for form in (Context(provider="openai"), Context()):  # as Studio's form sends them
        estimate = estimate_plan_cost(PLAN, form)
        assert (estimate.model, estimate.usd, estimate.price_known) == (
            "gpt-4o",
            expected.usd,
            True,
        )
    # The CLI's session resolves the same model through the same function.
    assert registry.run_model("openai", None) == ("openai", "gpt-4o")
    with chat_model_session(Context(provider="openai")) as resolved:
        assert resolved.model == "gpt-4o"
        assert estimate_plan_cost(PLAN, resolved) == estimate_plan_cost(PLAN, Context())


def test_an_estimate_the_settings_cannot_resolve_names_no_model(
    no_provider_env: pytest.MonkeyPatch,
) -> None:
    no_provider_env.delenv("SHOPPING_MODEL", raising=False)
    # compatible needs OPENAI_MODEL: the run would fail naming it; the estimate says unknown.
    estimate = estimate_plan_cost(PLAN, Context(provider="compatible"))
    assert estimate.model == "unknown" and estimate.usd == 0
    # A chat model passed in is not the registry's: its context names the model, or none.
    passed = Context(provider="openai", chat_model=FakeShoppingChatModel(replies={}))
    no_provider_env.setenv("OPENAI_MODEL", "gpt-4o")
    assert estimate_plan_cost(PLAN, passed).model == "unknown"


def test_built_models_are_cached_by_key_and_never_written_into_the_context(
    no_provider_env: pytest.MonkeyPatch,
) -> None:
    no_provider_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    context = Context(provider="compatible", model="m")
    first = chat_model_for(context)
    assert context.chat_model is None
    assert chat_model_for(Context(provider="compatible", model="m")) is first
    assert chat_model_for(Context(provider="compatible", model="other")) is not first
    no_provider_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    assert chat_model_for(context) is not first  # the provider's environment changed


def test_a_session_resolves_a_copy_of_the_context(no_provider_env: pytest.MonkeyPatch) -> None:
    no_provider_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    no_provider_env.setenv("OPENAI_MODEL", "served-model")
    context = Context()
    with chat_model_session(context) as resolved:
        assert (resolved.provider, resolved.model) == ("compatible", "served-model")
    assert context.provider is None and context.model is None and context.chat_model is None


def test_make_chat_model_names_what_a_provider_lacks(no_provider_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        make_chat_model("openai", "gpt-4o-mini", max_output_tokens=10)
    with pytest.raises(ProviderConfigError, match="AZURE_OPENAI_ENDPOINT"):
        make_chat_model("azure", "dep", max_output_tokens=10)
    with pytest.raises(ProviderConfigError, match="OPENAI_BASE_URL"):
        make_chat_model("compatible", "m", max_output_tokens=10)
