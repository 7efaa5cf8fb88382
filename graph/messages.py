"""What the nodes read from a model's messages: token usage, the raw text of an answer,
a validation error in one line, and a reply with its secrets masked before it is stored.
"""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage, BaseMessage

from graph.providers.base import USAGE_UNREADABLE, is_token_count
from graph.providers.secrets import redact_tree
from graph.schemas import Usage


def usage_of(message: BaseMessage | None) -> Usage:
    """The tokens a reply reports; unknown (never negative, fractional or astronomical)
    when its server's usage block was not token counts."""
    if message is None:
        return Usage()
    if (getattr(message, "response_metadata", None) or {}).get(USAGE_UNREADABLE):
        return Usage(unknown_calls=1)
    metadata = getattr(message, "usage_metadata", None) or {}
    counts = (metadata.get("input_tokens", 0) or 0, metadata.get("output_tokens", 0) or 0)
    if not all(is_token_count(count) for count in counts):
        return Usage(unknown_calls=1)
    return Usage(input_tokens=counts[0], output_tokens=counts[1])


def raw_text_of(message: BaseMessage | None) -> str:
    """What the model said, whether as text or as (possibly invalid) tool-call arguments."""
    if message is None:
        return ""
    parts: list[str] = []
    if message.content:
        parts.append(message.content if isinstance(message.content, str) else str(message.content))
    for call in getattr(message, "tool_calls", None) or []:
        parts.append(json.dumps(call.get("args", {}), ensure_ascii=False))
    for call in getattr(message, "invalid_tool_calls", None) or []:
        parts.append(str(call.get("args", "")))
    return "\n".join(parts)


def short_error(error: object) -> str:
    """A validation error in one line: what is wrong, without the model's whole output or
    pydantic's help links."""
    details = getattr(error, "errors", None)
    if callable(details):
        try:
            text = "; ".join(
                f"{'.'.join(map(str, e.get('loc', ()))) or 'plan'}: {e.get('msg', '')}"
                for e in details()
            )
        except (TypeError, ValueError):
            text = str(error)
    else:
        text = str(error)
    text = re.sub(r"\s*For further information visit \S+", "", text)
    return " ".join(text.split())[:300]


def masked_reply(message: BaseMessage) -> BaseMessage:
    """The executor's reply as stored in state: its text and tool-call arguments with
    secrets masked (the provider's raw payload, which repeats them, is left out)."""
    if not isinstance(message, AIMessage):
        return message
    return AIMessage(
        content=redact_tree(message.content),
        tool_calls=[{**call, "args": redact_tree(call["args"])} for call in message.tool_calls],
        usage_metadata=message.usage_metadata,
        id=message.id,
    )
