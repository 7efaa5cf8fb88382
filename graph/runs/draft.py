"""The plan as the model writes it: the streamed JSON read as a draft, for the CLI to show
step by step before the plan is complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.utils.json import parse_partial_json

DRAFT_PARSE_LIMIT = 64_000  # characters of streamed plan JSON worth showing as a draft


@dataclass
class PlanDraft:
    """The plan as far as the planner has written it: the goal once its text is complete,
    and the steps that are complete (a step is, once its object is closed). Read from the
    streamed arguments of the planner's structured-output call."""

    goal: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    _text: str = ""
    _message_id: str | None = None

    def feed(self, chunk: Any) -> bool:
        """Add one streamed message chunk; True when the goal or a step was completed."""
        if chunk.id != self._message_id:  # the planner's retry starts a fresh answer
            self._message_id, self._text, self.goal, self.steps = chunk.id, "", None, []
        piece = "".join(c.get("args") or "" for c in getattr(chunk, "tool_call_chunks", None) or [])
        if not piece:
            return False
        self._text += piece
        # Parsing the draft again costs its length: only where an item can have ended, and
        # not past a size no valid plan reaches (the model's fields are capped).
        if len(self._text) > DRAFT_PARSE_LIMIT or not any(c in piece for c in '",}]'):
            return False
        try:
            partial = parse_partial_json(self._text)
        except ValueError:
            return False
        if not isinstance(partial, dict):
            return False
        keys = list(partial)
        # The goal's text is complete once a later key has begun.
        goal = partial["goal"] if "goal" in keys[:-1] else None
        listed = partial.get("steps")
        steps: list[Any] = listed if isinstance(listed, list) else []
        finished = [s for s in steps[:-1] if isinstance(s, dict)]
        if steps and isinstance(steps[-1], dict) and _closes_the_last_step(self._text):
            finished.append(steps[-1])  # shown now, not a few tokens later with the next
        changed = (isinstance(goal, str) and goal != self.goal) or len(finished) > len(self.steps)
        if isinstance(goal, str):
            self.goal = goal
        if len(finished) >= len(self.steps):  # once shown, a step stays
            self.steps = finished
        return changed


def _closes_the_last_step(text: str) -> bool:
    """True when `text` ends where the last step's object is closed: just after it (then
    closing the steps list and the plan makes whole JSON), or after the list or the plan
    that it ended. Steps is the only list of objects in a plan."""
    text = text.rstrip()
    if not text.endswith(("}", "]")):
        return False
    for closing in ("]}", "}", ""):
        try:
            json.loads(text + closing)
        except ValueError:
            continue
        return True
    return False
