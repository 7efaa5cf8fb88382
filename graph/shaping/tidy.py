"""Plan shapes a small model writes that cost calls and time for nothing, tidied in code
before the plan is shown for approval (the person sees the tidied plan and a note)."""

from __future__ import annotations

from itertools import groupby, takewhile

from graph.schemas import Plan, PlanStep


def merge_reasoning_runs(plan: Plan) -> tuple[Plan, list[str]]:
    """Merge reasoning steps that follow one another into one. With no search between
    them they read the same results, so one call does the work of several: a 1.5B model
    planned "filter by reviews", "sort by rating", "pick the top" as three LLM calls."""
    steps: list[PlanStep] = []
    notes: list[str] = []
    for is_search, group in groupby(plan.steps, key=lambda step: step.is_search):
        run = list(group)
        if is_search or len(run) == 1:
            steps += run
            continue
        action = "; ".join(step.action.rstrip(".") for step in run)
        notes.append(
            f"steps {run[0].step}-{run[-1].step} read the same results: merged into one "
            "reasoning step"
        )
        steps.append(run[-1].model_copy(update={"action": action[:1000]}))
    if not notes:
        return plan, []
    numbered = [s.model_copy(update={"step": n}) for n, s in enumerate(steps, start=1)]
    return plan.model_copy(update={"steps": numbered}), notes


def steps_before_any_search(plan: Plan) -> list[str]:
    """A reasoning step planned before any search has no results to read: named at
    approval (the plan still runs as written; nothing replans it)."""
    early = [step.step for step in takewhile(lambda step: not step.is_search, plan.steps)]
    if not early:
        return []
    steps = ", ".join(map(str, early))
    return [
        f"step {steps} (reasoning) comes before any search, so it has no results to compare; "
        "edit the plan to move it after the searches"
    ]
