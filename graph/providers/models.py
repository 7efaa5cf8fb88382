"""The chat model a node uses: the one a test passed in the context, else one built from
the registry and cached, and the session that resolves it once per run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from catalog.paths import env
from graph.context import Context
from graph.providers.base import ProviderFailed
from graph.providers.deadline import allow_calls
from graph.providers.registry import (
    LLM_DEADLINE_ENV,
    LLM_TIMEOUT_ENV,
    PROVIDERS,
    llm_deadline,
    make_chat_model,
    run_model,
    structured_output_method,
)
from graph.providers.retry import describe_provider_error

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.runnables import Runnable


# Built chat models, keyed by everything that shapes one, so Studio and batch runs reuse
# a client (and its connection pool) instead of building one per node call.
_chat_models: dict[tuple[Any, ...], BaseChatModel] = {}
_chat_models_lock = threading.Lock()


# What the nodes make of a built model at every step: its non-streaming copy, its
# structured-output and tool-bound forms. Building one converts a schema to a tool
# schema, milliseconds of CPU a step (bench/load.py, #37), so each is made once per
# model: (the model it was made of, what was made), by the model's id and the shape.
_shaped_models: dict[tuple[Any, ...], tuple[BaseChatModel, Any]] = {}


def forget_chat_models(provider: str) -> None:
    with _chat_models_lock:
        for key in [key for key in _chat_models if key[0] == provider]:
            del _chat_models[key]
        _shaped_models.clear()  # made of models that may be gone; cheap to make again


def _shaped(context: Context, base: BaseChatModel, shape: tuple[Any, ...], make: Any) -> Any:
    """`make(base)`, made once per model built here; a model the context passes in (a
    test's) is shaped anew every time, as it was given."""
    if context.chat_model is not None:
        return make(base)
    key = (id(base), *shape)
    with _chat_models_lock:
        made = _shaped_models.get(key)
    if made is not None and made[0] is base:
        return made[1]
    shaped = make(base)
    with _chat_models_lock:
        _shaped_models[key] = (base, shaped)
    return shaped


def structured_model(
    context: Context, schema: type, *, plain: bool = False
) -> Runnable[LanguageModelInput, dict[str, Any]]:
    """The run's model answering with `schema` (structured output, the raw reply kept):
    the streaming model, or with `plain` the one with streaming off (plain_chat_model).
    Each reply is a dict of "raw", "parsed" and "parsing_error" (include_raw=True, which
    LangChain's return type does not tell apart)."""
    method = structured_output_method(context.provider)
    base = plain_chat_model(context) if plain else chat_model_for(context)
    return _shaped(
        context,
        base,
        ("structured", schema, method),
        lambda model: model.with_structured_output(schema, method=method, include_raw=True),
    )


def tool_model(context: Context, tool: Any) -> Any:
    """The run's model with streaming off, made to call `tool`."""
    return _shaped(
        context,
        plain_chat_model(context),
        ("tool", tool.name),
        lambda model: model.bind_tools([tool], tool_choice=tool.name),
    )


def chat_model_for(context: Context) -> BaseChatModel:
    """The chat model a node should use: the one in the context, else a cached one built
    from the context's settings and the provider's environment."""
    if context.chat_model is not None:
        return context.chat_model
    provider, model = run_model(context.provider, context.model)
    entry = PROVIDERS[provider]
    tuned = (LLM_TIMEOUT_ENV, LLM_DEADLINE_ENV)
    settings = tuple(env(name) for name in (*entry.env_vars, *tuned))
    key = (provider, model, context.max_output_tokens, settings)
    with _chat_models_lock:
        chat_model = _chat_models.get(key)
    if chat_model is None:
        chat_model = make_chat_model(provider, model, max_output_tokens=context.max_output_tokens)
        with _chat_models_lock:
            chat_model = _chat_models.setdefault(key, chat_model)
    return chat_model


def plain_chat_model(context: Context) -> BaseChatModel:
    """The run's chat model with streaming off. Only the planner's call streams (its plan
    is shown as it is written, on a terminal); every other call is asked plainly, so a
    server that cannot stream still answers them."""
    chat_model = chat_model_for(context)
    if chat_model.disable_streaming is True:
        return chat_model
    return _shaped(
        context,
        chat_model,
        ("plain",),
        lambda model: model.model_copy(update={"disable_streaming": True}),
    )


def resolved_context(context: Context) -> Context:
    """`context` with the provider and model its runs use and record: as given beside a
    ready chat model, else resolved from the settings and the environment."""
    if context.chat_model is not None:
        return context
    provider, model = run_model(context.provider, context.model)
    return replace(context, provider=provider, model=model)


@contextmanager
def chat_model_session(context: Context) -> Iterator[Context]:
    """A copy of `context` with the provider and model resolved, its chat model built
    up front (so a bad setting fails before the run); what the provider started (a local
    server) stops when the session ends, normally, on error and on Ctrl-C. A provider
    fault leaves it as ProviderFailed, in one line."""
    if context.chat_model is not None:  # a model passed in: nothing to resolve or stop
        yield context
        return
    resolved = resolved_context(context)
    provider = resolved.provider
    assert provider is not None  # resolved: no chat model was passed in
    entry = PROVIDERS[provider]
    llm_deadline(provider)  # a bad setting fails here, before a local server starts
    structured_output_method(provider)
    allow_calls()  # a Ctrl-C that stopped an earlier session's calls is over
    try:
        chat_model_for(resolved)
        yield resolved
    except Exception as error:
        # Worded while the provider's servers are known (a dead one's exit report).
        what = describe_provider_error(error)
        if what is None:
            raise
        raise ProviderFailed(what) from error
    finally:
        if entry.stop is not None:
            entry.stop()
            forget_chat_models(provider)  # their server is gone
