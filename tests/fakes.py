"""A fake chat model for unit tests: no network, scripted replies, records every prompt;
the plans it is scripted with, and one run of the graph in-process with it.

It answers through tool calls, so `with_structured_output(method="function_calling")`
runs langchain's real parsing and validation path on its replies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fake_openai_server import FakeScript
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import MemorySaver
from pydantic import Field

from graph.builder import build_graph
from graph.context import Context
from graph.prompts import NAMES_A_PRODUCT, follow_up_kind_messages
from graph.schemas import Plan

# A reply is either the arguments for the forced tool (a dict), raw text (a str), or a
# function of the prompt messages that returns one of those.
Reply = dict[str, Any] | str | Callable[[list[BaseMessage]], dict[str, Any] | str]


# The questions asked before planning, by their system prompt: whether a first request
# names what to buy, and what kind of follow-up one is; each answered by the field named.
QUESTIONS = {
    NAMES_A_PRODUCT: "names_a_product",
    str(follow_up_kind_messages("", "")[0].content): "follow_up_kind",
}


class FakeShoppingChatModel(BaseChatModel):
    """Fake model: replies for each forced tool name are taken in order from `replies`."""

    replies: dict[str, list[Reply]] = Field(default_factory=dict)
    # The answer to the question asked before a first plan (prompts.NAMES_A_PRODUCT),
    # unless `replies["names_a_product"]` scripts them: "yes" keeps a request named. The
    # questions are kept apart from `prompts`, which holds the planner's and steps' calls.
    names_a_product: str = "yes"
    # The answer to the question of a follow-up's kind, unless `replies["follow_up_kind"]`
    # scripts them: "" is no kind, so the planner's own reading stands.
    follow_up_kind: str = ""
    questions: list[list[BaseMessage]] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    tools_seen: list[list[str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "fake-shopping"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        specs = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=specs, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        question = QUESTIONS.get(str(messages[0].content)) if messages else None
        if question is not None:
            self.questions.append(list(messages))
            scripted = self.replies.get(question)
            answer = scripted.pop(0) if scripted else getattr(self, question)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=answer))])
        self.prompts.append(list(messages))
        names = [spec["function"]["name"] for spec in kwargs.get("tools", [])]
        self.tools_seen.append(names)
        name = names[0] if names else "text"
        queue = self.replies.get(name)
        if not queue:
            raise AssertionError(f"fake model has no scripted reply left for {name!r}")
        reply = queue.pop(0)
        if callable(reply):
            reply = reply(messages)
        prompt_chars = sum(len(str(m.content)) for m in messages)
        usage = {
            "input_tokens": prompt_chars // 4,
            "output_tokens": 20,
            "total_tokens": prompt_chars // 4 + 20,
        }
        if isinstance(reply, str):
            message = AIMessage(content=reply, usage_metadata=usage)
        else:
            call = {"name": name, "args": reply, "id": f"call-{len(self.prompts)}"}
            message = AIMessage(
                content="",
                tool_calls=[{**call, "type": "tool_call"}],
                usage_metadata=usage,
                additional_kwargs={
                    "tool_calls": [
                        {
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(reply)},
                        }
                    ]
                },
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def all_prompt_text(self) -> str:
        return "\n".join(str(m.content) for prompt in self.prompts for m in prompt)


# A four-step plan over tests/conftest.py SMALL_CATALOG (two searches, two reasoning steps)
# and the answers its reasoning steps give; shared by the CLI and fault tests.
GIFT_PLAN: dict[str, Any] = {
    "goal": "A photography gift under $200.",
    "budget": 200,
    "steps": [
        {"step": 1, "action": "Find camera straps", "query": "camera strap", "max_price": 200},
        {"step": 2, "action": "Shortlist the straps", "query": None},
        {"step": 3, "action": "Find cleaning kits", "query": "lens cleaning kit"},
        {"step": 4, "action": "Pick the gift", "query": None},
    ],
}
GIFT_ANSWERS: list[dict[str, Any]] = [
    {"answer": "Both straps fit.", "product_ids": ["strap-1", "strap-2"]},
    {"answer": "The leather strap.", "product_ids": ["strap-1"]},
]

# The smallest useful plan over SMALL_CATALOG (one search, one reasoning step) and its
# pick; shared by the storage, input, secrets and checkpoint-backend tests.
STRAP_PLAN: dict[str, Any] = {
    "goal": "A photography gift under $200.",
    "budget": 200,
    "steps": [
        {"step": 1, "action": "Find camera straps", "query": "camera strap", "max_price": 200},
        {"step": 2, "action": "Pick the gift", "query": None},
    ],
}
STRAP_PICK: dict[str, Any] = {"answer": "The leather strap.", "product_ids": ["strap-1"]}


def photo_gift_script(runs: int = 1, **options: Any) -> FakeScript:
    """The fake OpenAI server's script for `runs` photo-gift runs over SMALL_CATALOG: each
    is a planner call answered with STRAP_PLAN and a pick answered with STRAP_PICK.
    `options` are FakeScript's (faults, delays...). conftest's photo_gift_server serves it."""
    replies = {
        "Plan": [dict(STRAP_PLAN) for _ in range(runs)],
        "ReasoningAnswer": [dict(STRAP_PICK) for _ in range(runs)],
    }
    return FakeScript(replies=replies, **options)


# The demo request (cassettes/photo-gift.yaml records it): run_graph's default.
PHOTO_GIFT_REQUEST = "a birthday gift for someone who likes photography, under $200"

# A plan whose reasoning step comes before any search (named at approval).
REASONING_FIRST_PLAN = {
    "goal": "A camera strap under $200.",
    "budget": 200,
    "steps": [
        {"step": 1, "action": "Compare the straps", "query": None},
        {"step": 2, "action": "Find camera straps", "query": "camera strap"},
        {"step": 3, "action": "Pick the strap", "query": None},
    ],
}


def run_graph(
    model: BaseChatModel,
    catalog: Path | str | None,
    request: str = PHOTO_GIFT_REQUEST,
    **context: Any,
) -> dict[str, Any]:
    """One run of the graph in-process with `model`, approved at once, on a fresh in-memory
    checkpointer; `catalog` None is the shipped default catalog, `context` sets Context
    fields. Returns the final state, whole (not only the graph's output schema)."""
    ctx = Context(
        chat_model=model,
        catalog=None if catalog is None else str(catalog),
        auto_approve=True,
        **context,
    )
    config = {"configurable": {"thread_id": "t"}}
    graph = build_graph(checkpointer=MemorySaver())
    graph.invoke({"request": request}, config, context=ctx)
    return graph.get_state(config).values


def plan_reply(*steps: dict[str, Any], goal: str = "g", **fields: Any) -> dict[str, Any]:
    """A planner's answer (the Plan tool's arguments): `steps` numbered from 1, `fields`
    (budget, shopping, features...) beside them."""
    numbered = [{"step": n, **step} for n, step in enumerate(steps, start=1)]
    return {**fields, "goal": goal, "steps": numbered}


def plan_of(*steps: dict[str, Any], goal: str = "g", **fields: Any) -> Plan:
    """plan_reply's answer as the validated Plan."""
    return Plan.model_validate(plan_reply(*steps, goal=goal, **fields))
