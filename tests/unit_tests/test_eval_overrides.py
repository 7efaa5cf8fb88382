"""Code's changes to the model's plan, found in a run and judged by an eval (#40: every
override of the model is measured): graph/evals/overrides.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog import open_catalog
from graph.evals.follow_ups import FollowUpCase, judged_searches
from graph.evals.overrides import (
    judged,
    override_counts,
    overrides_cell,
    overrides_of,
)
from graph.reading import read_request
from graph.schemas import Plan, PlanStep, StepResult


def plan(*queries: str | None, categories: dict[int, str] | None = None) -> Plan:
    categories = categories or {}
    steps = [
        {"step": n, "action": f"step {n}", "query": q, "category": categories.get(n)}
        for n, q in enumerate(queries, start=1)
    ]
    return Plan.model_validate({"goal": "g", "steps": steps})


def values(request: str, model: Plan | None, ran: Plan, **more: Any) -> dict[str, Any]:
    reading = read_request(request)
    return {"reading": reading, "model_plan": model, "plan": ran, **more}


def test_each_search_code_changed_or_added_is_found_in_order() -> None:
    model = plan("hiking gloves", "camera bag", None)
    ran = plan(
        "Hiking Day Backpack",
        "hiking camera bag",
        "Merino Running Socks",
        None,
        categories={1: "outdoor", 3: "running-fitness"},
    )
    found = overrides_of(values("a gift for a hiker, $80", model, ran))
    assert [(o.name, o.model and o.model.query, o.code and o.code.query) for o in found] == [
        ("search replaced by a shelf", "hiking gloves", "Hiking Day Backpack"),
        ("search reworded", "camera bag", "hiking camera bag"),
        ("kind added", None, "Merino Running Socks"),
    ]


def test_a_search_kept_as_written_is_no_change_wherever_it_stands() -> None:
    # A revision puts the plan shown first and the words' item after it; a search the
    # words drop is gone.
    model = plan("lens cleaning kit", "hiking camera bags", "tripod", None)
    ran = plan("hiking camera bags", "lens cleaning kit", None)
    found = overrides_of(values("a camera bag for hiking under $60", model, ran))
    assert [(o.name, o.model and o.model.query) for o in found] == [("search dropped", "tripod")]
    (judgement,) = judged(found, lambda step: step.query == "tripod", open_ended=False)
    assert (judgement.code_right, judgement.model_right) == (False, True)


def test_no_override_where_code_kept_the_plan_or_built_it() -> None:
    same = plan("running shoes", None)
    assert overrides_of(values("running shoes under $90", same, same)) == []
    assert overrides_of(values("running shoes under $90", None, same)) == []  # code's plan


def test_a_request_the_model_read_open_and_code_kept_named_is_an_override() -> None:
    request = "my sister works night shifts as a nurse, $50"
    kept = read_request(request).model_copy(update={"model_read_open": True})
    same = plan("night cream", None)
    found = overrides_of({"reading": kept, "model_plan": same, "plan": same})
    assert [o.name for o in found] == ["kept named by a shelf"]
    # Read open as the model read it, or by its words (a gift): no override; nor in a
    # follow-up.
    opened = kept.model_copy(update={"open_ended": True})
    gift = read_request("a gift for a nurse, $50")
    for reading in (opened, gift):
        assert overrides_of({"reading": reading, "model_plan": same, "plan": same}) == []
    follow = {"reading": kept, "model_plan": same, "plan": same, "follow_up": object()}
    assert overrides_of(follow) == []


def test_each_override_is_judged_for_code_and_for_the_model_alone() -> None:
    model = plan("hiking gloves", None)
    ran = plan("Hiking Day Backpack", "Merino Running Socks", None, categories={1: "outdoor"})
    reading = read_request("my brother hikes, $80").model_copy(update={"model_read_open": True})
    found = overrides_of({"reading": reading, "model_plan": model, "plan": ran})

    def right(step: PlanStep) -> bool:
        return step.query == "Hiking Day Backpack"

    listed = judged(found, right, open_ended=True)
    assert [(j.override, j.code_right, j.model_right) for j in listed] == [
        ("kept named by a shelf", False, True),
        ("search replaced by a shelf", True, False),
        ("kind added", False, None),  # the model had no step: nothing to judge
    ]
    # In a set whose requests name their items, keeping one named is code's right call.
    assert judged(found[:1], right, open_ended=False)[0].code_right is True


def test_a_pick_code_decided_is_judged_by_the_case() -> None:
    same = plan("running shoes", None)
    decided = StepResult(step=2, kind="reasoning", action="pick", decided_in_code=True)
    found = overrides_of(values("running shoes under $90", same, same, step_results=[decided]))
    assert [(o.name, o.code and o.code.step) for o in found] == [("pick decided in code", 2)]
    for met in (True, False):
        (judgement,) = judged(found, lambda step: False, open_ended=False, met=met)
        assert (judgement.code_right, judgement.model_right) == (met, None)


def test_the_counts_say_how_often_code_and_the_model_alone_were_right() -> None:
    first = [
        {"override": "search replaced by a shelf", "code_right": True, "model_right": False},
        {"override": "kind added", "code_right": False, "model_right": None},
    ]
    second = [{"override": "search replaced by a shelf", "code_right": False, "model_right": True}]
    counts = override_counts([first, second, []])
    assert counts == {
        "search replaced by a shelf": {"fired": 2, "code_right": 1, "model_right": 1},
        "kind added": {"fired": 1, "code_right": 0, "model_right": None},
    }
    cell = overrides_cell({"overrides": counts})
    assert cell == (
        "search replaced by a shelf 2: code right 1, model alone 1; "
        "kind added 1: code right 0, model alone not judged"
    )
    assert overrides_cell({}) == "none"


def test_a_follow_ups_changed_search_is_judged_by_the_items_the_case_wants(
    small_catalog_file: Path,
) -> None:
    catalog = open_catalog(small_catalog_file)
    case = FollowUpCase("c", "a camera strap", "and a lens cleaning kit", {"new_item": ["kit"]})
    model = plan("camera strap", "trail running shoes", None)  # the wrong item
    ran = plan("camera strap", "lens cleaning kit", None)
    run = values("and a lens cleaning kit", model, ran)
    [judgement] = judged_searches(case, run, catalog)
    assert judgement["override"] == "search reworded"
    assert (judgement["code_right"], judgement["model_right"]) == (True, False)
    # A case that names no item it wants leaves the searches unjudged.
    assert judged_searches(FollowUpCase("d", "a", "b", {"kind": "refine"}), run, catalog) == []
