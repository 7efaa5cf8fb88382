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
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import tomli_w
from pydantic import ValidationError

from catalog import CatalogQueryError, SearchArgs
from catalog.models import MAX_PRICE, shown_value
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
from graph.shaping.tidy import steps_before_any_search

PLAN_FIELDS = ("goal", "budget", "pick", "features")
STEP_FIELDS = ("action", "query", *SEARCH_FILTERS)


# What an edit may be before it is parsed or validated. A valid plan nests 4 levels
# (plan, steps, a step, a list in it) and its capped fields come to well under 100,000
# characters, so these refuse only hostile input; and they keep tomllib's and pydantic's
# recursion, and a quadratic dotted key, far from the recursion limit and the clock.
MAX_EDIT_CHARS = 1_000_000
MAX_EDIT_DEPTH = 20
# Lines of problems an edit is refused with: 200,000 unknown fields are not 200,000 lines.
MAX_PROBLEMS = 10


class PlanEditError(ValueError):
    """An edited plan that cannot run; `problems` says why, one readable line each."""

    def __init__(self, problems: list[str]) -> None:
        if len(problems) > MAX_PROBLEMS:
            more = len(problems) - MAX_PROBLEMS + 1
            problems = [*problems[: MAX_PROBLEMS - 1], f"and {more:,} more problems"]
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
    'Or resume with {"revise": "cheaper, and add a tripod"} to have the planner change the '
    "plan as your words say: the revised plan is asked here again, with what changed. "
    'An invalid plan or change, or any other answer, is refused with its reason (in "error") '
    "and the run stays here."
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
    # A TOML basic string on one line, escaped as TOML wants (not JSON: JSON leaves U+007F
    # bare, which TOML forbids, so an unchanged save would not read back).
    return tomli_w.dumps({"v": str(value)}).removeprefix("v = ").removesuffix("\n")


def plan_text(plan: Plan) -> str:
    """The plan as the text a person edits: the header explaining the format, then the
    goal, budget, pick, features and each step's fields (unset ones left out)."""
    lines = [EDIT_HEADER, *_assigned(plan, PLAN_FIELDS)]
    for step in plan.steps:
        lines += ["", f"[[step]]  # step {step.step}", *_assigned(step, STEP_FIELDS)]
    return "\n".join(lines) + "\n"


def _assigned(fields: Plan | PlanStep, names: tuple[str, ...]) -> list[str]:
    """A TOML line for each of the `names` of `fields` that is set, in their order."""
    return [f"{n} = {_toml_value(v)}" for n in names if (v := getattr(fields, n)) is not None]


def _has_content(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def read_plan_text(text: str, model_plan: Plan) -> Plan | None:
    """The plan a person saved, checked with the Plan schema; None for no edit (an empty
    file, or a plan equal to `model_plan`). PlanEditError names what is wrong."""
    if not _has_content(text):
        return None
    if len(text) > MAX_EDIT_CHARS:
        raise PlanEditError(
            [f"the file is {len(text):,} characters long; the cap is {MAX_EDIT_CHARS:,}"]
        )
    too_deep = _toml_too_deep(text)
    if too_deep is not None:
        raise PlanEditError([_too_deep_problem(too_deep)])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PlanEditError([f"the file is not valid TOML: {error}"]) from None
    except ValueError:
        # int() refusing a whole number past Python's digit limit, raised through tomllib.
        digits = sys.get_int_max_str_digits()
        raise PlanEditError(
            [f"a number in the file is over {digits:,} digits long; the cap is {digits:,}"]
        ) from None
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
    plan = checked_plan({**data, "steps": steps}, model_plan)
    # Compared field by field as a person sees them (not the markers code keeps).
    return plan if plan_changes(model_plan, plan) else None


# Where a scan of TOML text stops: a comment, a quote, a bracket, or what ends a key.
_TOML_MARKS = re.compile(r"[#\"'\[\]{}=,.\n]")
_STRING_ENDS = {'"': re.compile(r'[\\"\n]'), "'": re.compile(r"['\n]")}


def _toml_too_deep(text: str) -> str | None:
    """Where TOML text nests past MAX_EDIT_DEPTH (the key being written, or the line),
    or None. Arrays and inline tables count a level each, and so does each dot of a
    dotted key (tomllib builds those in quadratic time); strings and comments are
    skipped as tomllib reads them. A scan without parsing, since tomllib recurses once
    per level and would fail on the recursion limit, not on a cap."""
    depth = dots = 0
    line, line_start, key = 1, 0, ""
    at = 0
    while (mark := _TOML_MARKS.search(text, at)) is not None:
        char, at = mark.group(), mark.end()
        if char == "#":
            end = text.find("\n", at)
            at = len(text) if end < 0 else end
        elif char in "\"'":
            at = _string_end(text, mark.start())
        elif char == "\n":
            line, line_start, dots = line + 1, at, 0
            key = key if depth else ""
        elif char == ".":
            dots += 1
        else:
            if char == "=" and depth == 0:
                key = text[line_start : mark.start()].strip()
            depth += 1 if char in "[{" else -1 if char in "]}" and depth else 0
            dots = 0
        if depth + dots > MAX_EDIT_DEPTH:
            return key or f"line {line}"
    return None


def _string_end(text: str, start: int) -> int:
    """Where the TOML string opening at `start` ends: basic ("...") strings have escapes,
    literal ('...') ones none; one-line strings end at the line, as tomllib refuses them."""
    quote = text[start]
    close = quote * 3 if text.startswith(quote * 3, start) else quote
    at = start + len(close)
    while (mark := _STRING_ENDS[quote].search(text, at)) is not None:
        char, at = mark.group(), mark.end()
        if char == "\\":
            at += 1  # the escaped character, which may be a quote
        elif char == "\n":
            if len(close) == 1:
                return mark.start()
        elif text.startswith(close, mark.start()):
            return mark.start() + len(close)
    return len(text)


def _too_deep_problem(where: str) -> str:
    if len(where) > 40:
        where = where[:40] + "..."
    return f"{where}: nested more than {MAX_EDIT_DEPTH} levels deep; the cap is {MAX_EDIT_DEPTH}"


def _shape_problem(plan: Mapping[Any, Any]) -> str | None:
    """The first place a plan sent as a value (JSON over the API, or read from TOML) nests
    past MAX_EDIT_DEPTH or grows past MAX_EDIT_CHARS (each string's characters and each
    item counting), named by its field; None when neither. Walked without recursion."""
    size = 0
    pending: list[tuple[object, int, str]] = [(plan, 1, "")]
    while pending:
        value, depth, where = pending.pop()
        if depth > MAX_EDIT_DEPTH:
            return _too_deep_problem(where or "the plan")
        size += len(value) if isinstance(value, str) else 1
        if size > MAX_EDIT_CHARS:
            where = where or "the plan"
            return f"{where}: the plan is over {MAX_EDIT_CHARS:,} characters, the cap for a plan"
        if isinstance(value, Mapping):
            for name, item in value.items():
                size += len(name) if isinstance(name, str) else 1
                pending.append((item, depth + 1, _field_of(where, depth, name)))
        elif isinstance(value, list | tuple):
            pending += [
                (item, depth + 1, _field_of(where, depth, i)) for i, item in enumerate(value)
            ]
    return None


def _field_of(where: str, depth: int, key: object) -> str:
    """The field a value at `depth` + 1 belongs to: "features", "step 2: query"."""
    if depth == 1:
        return str(key)
    if depth == 2 and where == "steps" and isinstance(key, int):
        return f"step {key + 1}"
    if depth == 3 and where.startswith("step "):
        return f"{where}: {key}"
    return where


def _number_problem(name: str, value: object, kept: frozenset[float]) -> str | None:
    """A price past the catalog's cap, or any limit that is not a finite number: the
    checks the schema and the catalog leave out (they refuse a negative price, a rating
    above 5 and min above max, and say so). None when the value passes, or is no number.
    A price in `kept` (the model's plan holds it) passes: it runs if the plan is approved
    unedited, so saving it back unchanged is no reason to refuse the edit."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # the schema says what is wrong with a value that is not a number
    # A whole number is finite however long (and math.isfinite cannot take a huge one).
    finite = isinstance(value, int) or math.isfinite(value)
    if name == "min_rating":
        if finite:
            return None
        return f"{name}: must be a finite number from 0 to 5, got {shown_value(value)}"
    if finite and (value <= MAX_PRICE or value in kept):
        return None
    return (
        f"{name}: must be a finite number from 0 to {MAX_PRICE:,.0f} "
        f"(the catalog's price cap), got {shown_value(value)}"
    )


def _prices_of(plan: Plan | None) -> frozenset[float]:
    """The prices `plan` holds: its budget and its steps' price limits."""
    if plan is None:
        return frozenset()
    prices = [plan.budget, *(s.min_price for s in plan.steps), *(s.max_price for s in plan.steps)]
    return frozenset(price for price in prices if price is not None)


# ---------------------------------------------------------------- checks


def checked_plan(data: object, model_plan: Plan | None = None) -> Plan:
    """A plan a person wrote (the edit file, or JSON sent to the API), checked with the
    same Plan schema as the model's, and held to the catalog's price cap (but for prices
    `model_plan`, the plan edited, holds already). Steps are numbered from their order;
    any numbers given are ignored. PlanEditError lists every problem, one readable line
    each."""
    if not isinstance(data, Mapping):
        raise PlanEditError([f"the plan must be an object, got {type(data).__name__}"])
    shape = _shape_problem(data)
    if shape is not None:
        raise PlanEditError([shape])
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise PlanEditError(["the plan needs a list of steps"])
    if len(steps) > MAX_PLAN_STEPS:
        raise PlanEditError(
            [f"a plan has at most {MAX_PLAN_STEPS} steps, this one has {len(steps)}"]
        )
    problems: list[str] = []
    # Limits no plan may hold (a price past the catalog's cap, a NaN): each said here,
    # once, and left out of what the schema checks so it does not say it again.
    limits: list[str] = []
    numbered: list[Any] = []
    kept = _prices_of(model_plan)
    for index, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            problems.append(f"step {index}: must be an object with an action")
            continue
        fields = {k: v for k, v in step.items() if k != "step"}
        fields.setdefault("query", None)  # no query: a reasoning step
        for name in ("min_price", "max_price", "min_rating"):
            limit = _number_problem(name, fields.get(name), kept)
            if limit is not None:
                limits.append(f"step {index}: {limit}")
                del fields[name]
        numbered.append({"step": index, **fields})
    if problems:
        raise PlanEditError(problems)
    plan_fields = dict(data)
    budget = _number_problem("budget", plan_fields.get("budget"), kept)
    if budget is not None:
        limits.insert(0, budget)
        del plan_fields["budget"]
    try:
        plan = Plan.model_validate({**plan_fields, "steps": numbered})
    except ValidationError as error:
        raise PlanEditError(limits + readable_problems(error)) from None
    if limits:
        raise PlanEditError(limits)
    # The checks the catalog makes on a search's filters (a negative price, a rating off
    # the 0-5 scale, min above max). A model's slip there becomes a failed step, since
    # nothing replans; a person at the prompt can fix the edit before anything runs.
    for step in plan.search_steps:
        try:
            arguments: dict[str, Any] = step.search_arguments()  # loose values, checked here
            SearchArgs(**arguments)
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
    warnings = steps_before_any_search(plan) + limit_warnings(stated, plan)
    return PlanEdit(plan=plan, changes=changes, warnings=warnings)


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


APPROVE_WORDS = frozenset({"y", "yes", "approve", "approved", "true", "ok"})
REJECT_WORDS = frozenset({"n", "no", "reject", "rejected", "false"})
# The fields of an answer sent as an object; `approve` is read as `approved`.
ANSWER_FIELDS = ("approved", "plan", "revise")
APPROVED_ALIAS = "approve"
# How much of an unreadable answer its refusal quotes.
MAX_QUOTED = 60


class AnswerError(ValueError):
    """An answer at approval that is neither a clear approve, a clear reject nor an edit;
    the message says why, in one line. The run stays at approval to ask again."""


@dataclass(frozen=True)
class ApprovalAnswer:
    """An answer read at approval: run the plan (`approved`), with `plan` the edit as sent
    (to be checked with checked_plan; None: no edit), or reject it."""

    approved: bool
    plan: object = None
    revise: str | None = None  # a change asked in words: neither run nor rejected yet


def _quoted(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= MAX_QUOTED else text[:MAX_QUOTED] + "..."


def read_answer(decision: object) -> ApprovalAnswer:
    """The answer to the approval interrupt, in the natural shapes a person or Studio
    sends: true or false, "yes" or "no" (and approve, reject, ok...), {"approved": true}
    or {"approved": false}, {"approved": true, "plan": {...}} (an edit). Anything else
    (a misspelt field, a plan without "approved": true, "false" as text, "sure") is no
    clear answer: AnswerError says why, and the plan is neither run nor dropped.
    A rejection that also sends a plan is a rejection: the edit is not run."""
    if isinstance(decision, bool):
        return ApprovalAnswer(decision)
    if isinstance(decision, str):
        word = decision.strip().lower()
        if word in APPROVE_WORDS or word in REJECT_WORDS:
            return ApprovalAnswer(word in APPROVE_WORDS)
        if word.startswith("{"):
            raise AnswerError(
                "the answer is text that looks like an object: send the object itself "
                '(JSON, not a string), e.g. {"approved": true}'
            )
        raise AnswerError(
            f"{_quoted(decision)} is neither yes nor no; answer true to run the plan or "
            "false to reject it"
        )
    if not isinstance(decision, Mapping):
        raise AnswerError(
            f'an answer is true, false, "yes", "no" or an object with "approved", '
            f"got {_quoted(decision)}"
        )
    unknown = [name for name in decision if name not in (*ANSWER_FIELDS, APPROVED_ALIAS)]
    if unknown:
        shown = ", ".join(_quoted(name) for name in unknown[:MAX_PROBLEMS])
        more = f" and {len(unknown) - MAX_PROBLEMS:,} more" if len(unknown) > MAX_PROBLEMS else ""
        raise AnswerError(
            f"unknown field{'s' if len(unknown) > 1 else ''} {shown}{more} "
            '(an answer has "approved": true or false, and "plan" for an edit; or "revise")'
        )
    if "revise" in decision:
        return ApprovalAnswer(False, revise=_change_in_words(decision))
    if "approved" in decision and APPROVED_ALIAS in decision:
        raise AnswerError('send "approved" once, not both "approved" and "approve"')
    plan = decision.get("plan")
    if "approved" not in decision and APPROVED_ALIAS not in decision:
        if plan is not None:
            raise AnswerError(
                'a plan was sent without "approved": true; send {"approved": true, '
                '"plan": {...}} to run it, or {"approved": false} to reject'
            )
        raise AnswerError('"approved" is missing: send {"approved": true} or {"approved": false}')
    approved = decision.get("approved", decision.get(APPROVED_ALIAS))
    if not isinstance(approved, bool):
        kind = "the text " if isinstance(approved, str) else ""
        raise AnswerError(
            f'"approved" must be true or false (a JSON boolean), got {kind}{_quoted(approved)}'
        )
    return ApprovalAnswer(approved, plan if approved else None)


def _change_in_words(decision: Mapping[str, object]) -> str:
    """The words of a {"revise": "..."} answer; AnswerError when they are not text, are
    empty, or come with another answer (which of the two is meant is unclear)."""
    words = decision["revise"]
    if len(decision) > 1:
        raise AnswerError('"revise" goes alone: send {"revise": "..."}, then answer the revision')
    if not isinstance(words, str):
        raise AnswerError(f'"revise" must be text saying what to change, got {_quoted(words)}')
    if not words.strip():
        raise AnswerError('"revise" is empty: say what to change, e.g. "cheaper, under $40"')
    return words
