"""The recommendation, chosen in code from what the searches found (no LangGraph, no
LLM): what it is chosen from (`choice_pool`), a pick step answered in code or the
candidates the model is shown (`decide_pick_step`), the model's picks checked
(`checked_model_picks`) and its sentence (`checked_answer`), and the checked outcome
(`checked_outcome`). One pick score
(choice.py: REQUEST_CHECKS, pick_score) serves the choice, the decision and the why-lines."""

from __future__ import annotations

from graph.choosing.decided import checked_model_picks, decide_pick_step
from graph.choosing.outcome import checked_outcome
from graph.choosing.pool import ChoicePool, choice_pool
from graph.choosing.said import checked_answer
