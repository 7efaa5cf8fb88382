"""Cost estimate of a plan before it runs, from the real prompt templates.

Token counts use tiktoken when the model is known to it and its encoding can be loaded
(it is downloaded once, so offline machines may lack it); otherwise the approximation
"one token per 4 characters", which is close for English text on GPT and Qwen tokenizers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache

from pydantic import BaseModel

from graph.context import Context
from graph.prompts import executor_tool_messages, reasoning_messages
from graph.providers.base import ProviderConfigError
from graph.providers.registry import price_per_mtok, run_model
from graph.schemas import Plan, ProductSummary, ReasoningAnswer, StepResult
from graph.tools import search_products

# Typical sizes, measured on the recorded requests, used where the real text is not yet
# known: a catalog title, and the structured answer of a reasoning or tool call.
TYPICAL_TITLE = "Brand Model 2 compact product name with a feature"
REASONING_OUTPUT_TOKENS = 60
TOOL_CALL_OUTPUT_TOKENS = 35
# Chat templates add a few tokens around each message.
TOKENS_PER_MESSAGE = 4


class CallEstimate(BaseModel):
    step: int
    kind: str
    input_tokens: int
    output_tokens: int


class CostEstimate(BaseModel):
    model: str
    tokenizer: str
    llm_calls: int
    input_tokens: int
    output_tokens: int
    usd: float
    price_known: bool
    calls: list[CallEstimate]


@lru_cache(maxsize=8)
def token_counter(model: str) -> tuple[Callable[[str], int], str]:
    """(count function, description of the tokenizer used)."""
    try:
        import tiktoken

        encoding = tiktoken.encoding_for_model(model)
        return (lambda text: len(encoding.encode(text, disallowed_special=()))), (
            f"tiktoken {encoding.name}"
        )
    except Exception:  # unknown model, or its encoding cannot be downloaded here
        return (lambda text: max(1, len(text) // 4)), "approximation: 1 token per 4 characters"


def _schema_text(schema: object) -> str:
    """A JSON schema as the model is shown it: a structured answer's, or a tool's
    arguments (a pydantic model, which @tool builds from the function's signature)."""
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    return json.dumps(schema.model_json_schema())


def _messages_tokens(messages: list, count: Callable[[str], int]) -> int:
    return sum(count(str(m.content)) + TOKENS_PER_MESSAGE for m in messages)


def estimated_model(context: Context) -> tuple[str | None, str]:
    """The provider and model the run will call, as `run_model` resolves them for the
    chat model: the same under the CLI (whose session resolved them already) and under
    `langgraph dev` (whose context holds the form's settings, often none). A chat model
    passed in is not the registry's: it is estimated as the context names it, and a model
    no setting names is "unknown", as is one the settings cannot resolve (the run itself
    then fails, naming the setting)."""
    if context.chat_model is None:
        try:
            return run_model(context.provider, context.model)
        except ProviderConfigError:
            pass
    return context.provider, context.model or "unknown"


def estimate_plan_cost(plan: Plan, context: Context) -> CostEstimate:
    """Estimate the LLM calls the executor will make for this plan, before any step runs."""
    provider, model = estimated_model(context)
    count, tokenizer = token_counter(model)

    calls: list[CallEstimate] = []
    simulated: list[StepResult] = []
    for step in plan.steps:
        if step.is_search:
            if context.tool_mode == "llm":
                tool_schema = _schema_text(search_products.tool_call_schema)
                calls.append(
                    CallEstimate(
                        step=step.step,
                        kind="search (llm picks arguments)",
                        input_tokens=_messages_tokens(executor_tool_messages(step), count)
                        + count(tool_schema),
                        output_tokens=TOOL_CALL_OUTPUT_TOKENS,
                    )
                )
        else:
            messages = reasoning_messages(plan, step, simulated)
            calls.append(
                CallEstimate(
                    step=step.step,
                    kind="reasoning",
                    input_tokens=_messages_tokens(messages, count)
                    + count(_schema_text(ReasoningAnswer)),
                    output_tokens=REASONING_OUTPUT_TOKENS,
                )
            )
        # What the later prompts read of this step: a search's matches, or one pick. Distinct
        # ids per step: the reasoning prompt lists a product found twice only once.
        shown = context.search_limit if step.is_search else 1
        simulated.append(
            StepResult(
                step=step.step,
                kind="search" if step.is_search else "reasoning",
                action=step.action,
                answer="" if step.is_search else "x" * 120,
                products=[
                    ProductSummary(
                        id=f"s{step.step}-p{i}", title=TYPICAL_TITLE, price=99.99, rating=4.5
                    )
                    for i in range(shown)
                ],
            )
        )
    input_tokens = sum(c.input_tokens for c in calls)
    output_tokens = sum(c.output_tokens for c in calls)
    # Prices come from the provider registry: (0, 0) self-hosted, None when unknown.
    price = price_per_mtok(provider, model)
    usd = 0.0
    if price is not None:
        usd = (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
    return CostEstimate(
        model=model,
        tokenizer=tokenizer,
        llm_calls=len(calls),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        usd=round(usd, 6),
        price_known=price is not None,
        calls=calls,
    )
