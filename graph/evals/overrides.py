"""Where code changed the planner model's plan, found in a finished run, for the evals to
judge with what each set knows is right (issue #40: "every override of the model is
measured"). The run keeps the plan as the model wrote it (State.model_plan) beside the
plan that ran; a search code kept as written is no change, the others are paired in order
(code shapes a plan in place and adds searches after the model's):

- "kept named by a shelf": the model read what to buy as left open, and code kept the
  request named, as it names a shelf of the shop in other words (graph/nodes.py,
  _read_as_open);
- "search replaced by a shelf": a search for a kind the shop lacks became one of its
  shelves (stocked_plan: the step is put in the shelf's department);
- "search reworded": a search's words changed (the product the request names put back,
  a follow-up's item, the shop's words for it);
- "kind added": a search code added (stocked_plan's nearest shelves, a follow-up's or a
  revision's item);
- "search dropped": a search of the model's that code left out (a revision's "drop");
- "pick decided in code": a pick step code answered with no model call
  (graph/choosing/decided.py), judged by what each eval says a pick decides; the model
  was not asked, so what it would have picked is not known;
- "pick's kind by meaning": the model picked a product of a kind further from a gift
  request by meaning than another that fits, and code chose from the nearer kind
  (graph/choosing/picks.py, near_the_request); judged by the open-ended eval, each pick
  by its department.

A follow-up's kind is judged by the follow-up eval on its own (FollowUp.planner_kind).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from catalog import CatalogBackend, Product, SearchArgs
from graph.evals.driver import Figure
from graph.schemas import Plan, PlanStep, RequestReading

OVERRIDES = (
    "kept named by a shelf",
    "search replaced by a shelf",
    "search reworded",
    "kind added",
    "search dropped",
    "pick decided in code",
    "pick's kind by meaning",
)


@dataclass(frozen=True)
class Override:
    """One change code made to the model's plan: the model's step and code's (None: code
    added a step, dropped one, or changed the whole reading)."""

    name: str
    model: PlanStep | None = None
    code: PlanStep | None = None


@dataclass
class JudgedOverride:
    """An override as a report lists it: what each side searched, and whether each was
    right by the eval's own knowledge (None: the model had no step to judge)."""

    override: str
    model: str | None
    code: str | None
    code_right: bool
    model_right: bool | None


def overrides_of(values: Mapping[str, Any]) -> list[Override]:
    """The overrides of the model's plan in a finished run's values (none when code built
    the plan, or the run kept no model plan)."""
    model_plan: Plan | None = values.get("model_plan")
    plan: Plan | None = values.get("plan")
    reading: RequestReading | None = values.get("reading")
    if model_plan is None or plan is None:
        return []
    found: list[Override] = []
    first_plan = values.get("follow_up") is None
    if first_plan and reading and reading.model_read_open and not reading.open_ended:
        found.append(Override("kept named by a shelf"))
    # A search code kept as the model wrote it is no change, wherever it stands (a
    # revision puts the plan shown first); the others are paired in order.
    mine = [m for m in model_plan.search_steps if m.query not in _queries(plan)]
    code = [c for c in plan.search_steps if c.query not in _queries(model_plan)]
    for m, c in zip(mine, code, strict=False):
        # Code moves a search into a shelf's department only for a first plan.
        shelf = first_plan and c.category is not None and c.category != m.category
        found.append(Override("search replaced by a shelf" if shelf else "search reworded", m, c))
    found += [Override("kind added", None, c) for c in code[len(mine) :]]
    found += [Override("search dropped", m, None) for m in mine[len(code) :]]
    steps = {step.step: step for step in plan.steps}
    decided = [r.step for r in values.get("step_results") or [] if r.decided_in_code]
    found += [Override("pick decided in code", None, steps[n]) for n in decided if n in steps]
    return found


def first_shown(
    shop: CatalogBackend, step: PlanStep, budget: float | None, category: str | None = None
) -> list[Product]:
    """The first five products the shop's search for `step` shows, within its cap (the
    plan's `budget` where it has none), in `category` if one is given: what the evals
    judge a search by."""
    args = SearchArgs(
        step.query or "", max_price=step.price_cap(budget), category=category, limit=5
    )
    return [hit.product for hit in shop.search(args)]


def _queries(plan: Plan) -> set[str | None]:
    return {step.query for step in plan.search_steps}


def judged(
    overrides: Iterable[Override],
    right: Callable[[PlanStep], bool],
    open_ended: bool,
    met: bool = False,
) -> list[JudgedOverride]:
    """Each override judged: a search by `right` (the eval's test of a step), the reading
    by whether the eval's requests are open-ended (`open_ended`), a pick by whether the
    case was `met`."""
    found = []
    for override in overrides:
        model_right: bool | None
        if override.name == "kept named by a shelf":
            code_right, model_right = not open_ended, open_ended
        elif override.name == "pick decided in code":
            code_right, model_right = met, None
        elif override.code is None and override.model is not None:
            # Dropped: right when the model's search does not find what the case wants.
            model_right = right(override.model)
            code_right = not model_right
        else:
            code_right = override.code is not None and right(override.code)
            model_right = None if override.model is None else right(override.model)
        model = override.model.query if override.model else None
        code = override.code.query if override.code else None
        found.append(JudgedOverride(override.name, model, code, code_right, model_right))
    return found


def override_counts(
    listed: Iterable[Iterable[Mapping[str, Any]]],
) -> dict[str, dict[str, int | None]]:
    """Per override, over every result's list (JudgedOverride as a dict): how often it
    fired, how often code was right, and how often the model alone would have been (None
    where the model had no step to judge: a kind code added, a pick it was not asked)."""
    counts: dict[str, dict[str, int | None]] = {}
    for overrides in listed:
        for found in overrides:
            count = counts.setdefault(
                found["override"], {"fired": 0, "code_right": 0, "model_right": None}
            )
            count["fired"] = (count["fired"] or 0) + 1
            count["code_right"] = (count["code_right"] or 0) + bool(found["code_right"])
            if found["model_right"] is not None:
                count["model_right"] = (count["model_right"] or 0) + found["model_right"]
    return {name: counts[name] for name in OVERRIDES if name in counts}


def as_listed(overrides: Iterable[JudgedOverride]) -> list[dict[str, Any]]:
    return [asdict(found) for found in overrides]


def overrides_cell(summary: Mapping[str, Any]) -> str:
    """A report's overrides in one table cell: each one's firings, and how often code and
    the model alone were right."""
    counts = summary.get("overrides") or {}
    cells = [
        f"{name} {c['fired']}: code right {c['code_right']}, model alone "
        + ("not judged" if c["model_right"] is None else str(c["model_right"]))
        for name, c in counts.items()
    ]
    return "; ".join(cells) or "none"


# A summary's count of code's changes to the model's plan, and its row in the table.
OVERRIDES_FIGURE = Figure(
    "overrides",
    lambda report: override_counts(r.overrides for r in report.results),
    "code's changes to the model's plan",
    cell=overrides_cell,
)
