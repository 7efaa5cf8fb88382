"""A person's edit of the plan at approval: the text a person edits, reading it back, the
checks an edit must pass, and what it changed. Nothing here prints or calls a model.

The text is TOML (read with the standard library's `tomllib`), written here by hand so
each field sits on a line of its own. Steps run in the order written and are numbered
from that order, so a person who removes or adds a step never renumbers the rest.
"""

from __future__ import annotations

import difflib
import json
import math
import tomllib
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from catalog import CatalogQueryError
from catalog.validation import check_search_args
from graph.schemas import (
    MAX_PLAN_STEPS,
    SEARCH_FILTERS,
    Plan,
    PlanChange,
    PlanEdit,
    PlanStep,
    PlanValue,
    StatedLimits,
)
from graph.shaping.limits import limit_warnings

PLAN_FIELDS = ("goal", "budget", "pick", "features")
STEP_FIELDS = ("action", "query", *SEARCH_FILTERS)


class PlanEditError(ValueError):
    """An edited plan that cannot run; `problems` says why, one readable line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


EDIT_HEADER = f"""\
# Edit this plan, then save the file and close the editor.
#
# Steps run in the order written here and are numbered from that order: remove a
# step by deleting its [[step]] block, add one by writing a new block, and never
# renumber. A step with a query searches the catalog; a step without one reasons
# over the results of the steps before it. At most {MAX_PLAN_STEPS} steps.
#
# Step fields: action (required), query, category, min_price, max_price (USD for
# one item), min_rating (0 to 5). Delete a line to leave that filter unset.
# budget is the total in USD (delete the line for none); pick is "each" (one
# product per item searched for) or "one" (the single best of all the kinds
# searched, as for a gift); features are short phrases the products must have,
# e.g. ["waterproof", "rubber sole"].
#
# Text goes in double quotes. Lines starting with # are ignored.
# Saving the file unchanged, or empty, means no edit.
"""

# How to answer the approval interrupt over the API (Studio's resume form shows it).
HOW_TO_ANSWER = (
    'Resume with {"approved": true} to run the plan, {"approved": false} to reject it, '
    'or {"approved": true, "plan": {...}} to run your edit of "plan" instead: the same '
    "fields (goal, budget, pick, features, and steps with action, query, category, min_price, "
    "max_price, min_rating). Steps run in the order given and are numbered from it. "
    "An invalid plan is refused and the run stays here."
)


# ---------------------------------------------------------------- the text a person edits


def exact_number(value: float) -> str:
    """A number written so it reads back as the same float, in TOML and to a person:
    1999999, not 2e+06 (which reads back as 2000000); 0.1 as 0.1, not 0.100000000000000005."""
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    return repr(number)  # the shortest text that reads back exactly; inf and nan are TOML


def _toml_value(value: PlanValue) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, float | int) and not isinstance(value, bool):
        return exact_number(value)
    # A JSON string is a valid TOML basic string (same escapes), on one line.
    return json.dumps(str(value), ensure_ascii=False)


def plan_text(plan: Plan) -> str:
    """The plan as the text a person edits: the header explaining the format, then the
    goal, budget, pick, features and each step's fields (unset ones left out)."""
    lines = [EDIT_HEADER, f"goal = {_toml_value(plan.goal)}"]
    if plan.budget is not None:
        lines.append(f"budget = {_toml_value(plan.budget)}")
    lines.append(f"pick = {_toml_value(plan.pick)}")
    lines.append(f"features = {_toml_value(list(plan.features))}")
    for step in plan.steps:
        lines += ["", f"[[step]]  # step {step.step}"]
        for name in STEP_FIELDS:
            value = getattr(step, name)
            if value is not None:
                lines.append(f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _has_content(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def read_plan_text(text: str, model_plan: Plan) -> Plan | None:
    """The plan a person saved, checked with the Plan schema; None for no edit (an empty
    file, or a plan equal to `model_plan`). PlanEditError names what is wrong."""
    if not _has_content(text):
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PlanEditError([f"the file is not valid TOML: {error}"]) from None
    unknown = sorted(set(data) - {*PLAN_FIELDS, "step"})
    if unknown:
        raise PlanEditError(
            [
                f"unknown field {name!r} (plan fields: goal, budget, pick, features, [[step]])"
                for name in unknown
            ]
        )
    steps = data.pop("step", [])
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise PlanEditError(["steps must be written as [[step]] blocks"])
    plan = checked_plan({**data, "steps": steps})
    # Compared field by field as a person sees them (not the markers code keeps).
    return plan if plan_changes(model_plan, plan) else None


# ---------------------------------------------------------------- checks


def checked_plan(data: object) -> Plan:
    """A plan a person wrote (the edit file, or JSON sent to the API), checked with the
    same Plan schema as the model's. Steps are numbered from their order; any numbers
    given are ignored. PlanEditError lists every problem, one readable line each."""
    if not isinstance(data, Mapping):
        raise PlanEditError([f"the plan must be an object, got {type(data).__name__}"])
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise PlanEditError(["the plan needs a list of steps"])
    if len(steps) > MAX_PLAN_STEPS:
        raise PlanEditError(
            [f"a plan has at most {MAX_PLAN_STEPS} steps, this one has {len(steps)}"]
        )
    problems: list[str] = []
    numbered: list[Any] = []
    for index, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            problems.append(f"step {index}: must be an object with an action")
            continue
        fields = {k: v for k, v in step.items() if k != "step"}
        fields.setdefault("query", None)  # no query: a reasoning step
        numbered.append({"step": index, **fields})
    if problems:
        raise PlanEditError(problems)
    try:
        plan = Plan.model_validate({**data, "steps": numbered})
    except ValidationError as error:
        raise PlanEditError(readable_problems(error)) from None
    # The checks the catalog makes on a search's filters (a negative price, a rating off
    # the 0-5 scale, min above max). A model's slip there becomes a failed step, since
    # nothing replans; a person at the prompt can fix the edit before anything runs.
    for step in plan.search_steps:
        try:
            check_search_args(**step.search_arguments())
        except CatalogQueryError as error:
            problems.append(f"step {step.step}: {error}")
    if problems:
        raise PlanEditError(problems)
    return plan


def readable_problems(error: ValidationError) -> list[str]:
    """Each schema error as one line naming the field ("step 2: max_price must be a
    number >= 0"), without pydantic's type codes and documentation links."""
    problems = []
    for item in error.errors(include_url=False):
        where = _where(item["loc"])
        kind = item["type"]
        if kind == "missing":
            text = "is missing"
        elif kind == "extra_forbidden":
            text = f"is not a known field (step fields: {', '.join(STEP_FIELDS)})"
        elif kind.startswith(("float_", "int_")):
            text = "must be a number"
        elif kind.startswith("string_"):
            text = "must be text"
        else:
            text = str(item["msg"]).removeprefix("Value error, ")
            field = str(item["loc"][-1]) if item["loc"] else ""
            if field and text.startswith(f"{field} "):  # "action must describe the step"
                where = where.removesuffix(f" {field}").removesuffix(field)
        problems.append(f"{where} {text}".strip())
    return list(dict.fromkeys(problems))


def _where(loc: tuple[Any, ...]) -> str:
    parts = list(loc)
    if len(parts) >= 2 and parts[0] == "steps" and isinstance(parts[1], int):
        rest = [str(p) for p in parts[2:]]
        return f"step {parts[1] + 1}:" + (f" {'.'.join(rest)}" if rest else "")
    return ".".join(str(p) for p in parts)


def edit_of(stated: StatedLimits, model_plan: Plan, plan: Plan) -> PlanEdit | None:
    """The edit that runs `plan` instead of `model_plan`, with its changes and the same
    code checks against the request's `stated` limits as the model's plan
    (limit_warnings); None when nothing changed."""
    changes = plan_changes(model_plan, plan)
    if not changes:
        return None
    return PlanEdit(plan=plan, changes=changes, warnings=limit_warnings(stated, plan))


# ---------------------------------------------------------------- what changed


def plan_changes(before: Plan, after: Plan) -> list[PlanChange]:
    """The differences between two plans: plan fields, then steps added, removed or
    changed field by field. Steps are matched by their action text, the way a person
    reads a plan; among steps whose actions differ, a search and a search (or two
    reasoning steps) in the same place count as one step rewritten in place."""
    changes = [
        PlanChange(
            kind="plan", field=name, before=getattr(before, name), after=getattr(after, name)
        )
        for name in PLAN_FIELDS
        if getattr(before, name) != getattr(after, name)
    ]
    for old, new in _matched_steps(before.steps, after.steps):
        if new is None and old is not None:
            changes.append(PlanChange(kind="removed", step=old.step, before=old.action))
        elif old is None and new is not None:
            changes.append(PlanChange(kind="added", new_step=new.step, after=new.action))
        elif old is not None and new is not None:
            changes += [
                PlanChange(
                    kind="changed",
                    step=old.step,
                    new_step=new.step,
                    field=name,
                    before=getattr(old, name),
                    after=getattr(new, name),
                )
                for name in STEP_FIELDS
                if getattr(old, name) != getattr(new, name)
            ]
    return changes


Pair = tuple[PlanStep | None, PlanStep | None]


def _matched_steps(old: list[PlanStep], new: list[PlanStep]) -> list[Pair]:
    """(old, new) pairs in plan order: a step kept (maybe changed), removed or added."""
    pairs: list[Pair] = []
    by_action = difflib.SequenceMatcher(
        a=[s.action for s in old], b=[s.action for s in new], autojunk=False
    )
    for tag, i1, i2, j1, j2 in by_action.get_opcodes():
        if tag == "equal":
            pairs += zip(old[i1:i2], new[j1:j2], strict=True)
            continue
        olds, news = old[i1:i2], new[j1:j2]
        by_kind = difflib.SequenceMatcher(
            a=[s.is_search for s in olds], b=[s.is_search for s in news], autojunk=False
        )
        for kind_tag, k1, k2, m1, m2 in by_kind.get_opcodes():
            if kind_tag == "equal":
                pairs += zip(olds[k1:k2], news[m1:m2], strict=True)
            else:
                pairs += [(s, None) for s in olds[k1:k2]]
                pairs += [(None, s) for s in news[m1:m2]]
    return pairs


def _shown(value: PlanValue) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and math.isfinite(value):
        return exact_number(value)  # two values that differ never look the same
    return repr(value)


def describe_change(change: PlanChange) -> str:
    """One line for a change, e.g. "step 3 (now 2): max_price none -> 40"."""
    if change.kind == "plan":
        return f"{change.field}: {_shown(change.before)} -> {_shown(change.after)}"
    if change.kind == "added":
        return f"step {change.new_step} added: {change.after}"
    if change.kind == "removed":
        return f"step {change.step} removed: {change.before}"
    where = f"step {change.step}"
    if change.new_step != change.step:
        where += f" (now {change.new_step})"
    return f"{where}: {change.field} {_shown(change.before)} -> {_shown(change.after)}"


def is_approval(decision: object) -> bool:
    """Accept the natural shapes a person or Studio sends: true, "yes", {"approved": true}."""
    if isinstance(decision, dict):
        decision = decision.get("approved", decision.get("approve", False))
    if isinstance(decision, str):
        return decision.strip().lower() in {"y", "yes", "approve", "approved", "true", "ok"}
    return decision is True
