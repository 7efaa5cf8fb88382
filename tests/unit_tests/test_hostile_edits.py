"""Hostile plan edits (#39, red team round 3): an edit file or an API edit nested
thousands deep, too large, with a limit that is no finite price, or over a field's cap,
is refused in one line naming the field and its limit, never with a traceback, and the
plan stays at approval to be edited again. The edit reader, the approval node, and the
real CLI on a pseudo-terminal against the fake OpenAI-compatible server."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runs import run_on_terminal
from fake_openai_server import FakeScript, fake_openai_server
from fakes import GIFT_ANSWERS, GIFT_PLAN, STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel
from langgraph.checkpoint.memory import MemorySaver
from langgraph.types import Command

from graph.builder import build_graph
from graph.context import Context
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config
from graph.schemas import Plan
from graph.shaping.edits import MAX_PROBLEMS, PlanEditError, plan_text, read_plan_text

MODEL_PLAN = Plan.model_validate(STRAP_PLAN)
TEXT = plan_text(MODEL_PLAN)
PRICE_CAP = "from 0 to 1,000,000,000 (the catalog's price cap)"
DEEP = "nested more than 20 levels deep; the cap is 20"


def with_line(line: str) -> str:
    """The model's plan as a person saved it with `line` in place of step 1's price cap."""
    return TEXT.replace("max_price = 200", line, 1)


def with_features(value: str) -> str:
    return re.sub(r"^features = .*$", lambda _: f"features = {value}", TEXT, flags=re.M)


def refused(text: str) -> list[str]:
    with pytest.raises(PlanEditError) as error:
        read_plan_text(text, MODEL_PLAN)
    return error.value.problems


# ---------------------------------------------------------------- the edit file


HOSTILE_FILES = {
    "an array 20,000 deep": (
        with_features("[" * 20_000 + "]" * 20_000),
        f"features: {DEEP}",
    ),
    "an inline table 5,000 deep": (
        with_features("{a = " * 5_000 + "1" + "}" * 5_000),
        f"features: {DEEP}",
    ),
    # tomllib builds a dotted key in quadratic time: 100,000 dots took minutes.
    "a dotted key 2,000 deep": (
        TEXT + "\nfeatures" + ".a" * 2_000 + " = 1\n",
        f"line {TEXT.count(chr(10)) + 2}: {DEEP}",
    ),
    "max_price = nan": (
        with_line("max_price = nan"),
        f"step 1: max_price: must be a finite number {PRICE_CAP}, got nan",
    ),
    "max_price = inf": (
        with_line("max_price = inf"),
        f"step 1: max_price: must be a finite number {PRICE_CAP}, got inf",
    ),
    "max_price = 1e400": (  # TOML reads it as inf
        with_line("max_price = 1e400"),
        f"step 1: max_price: must be a finite number {PRICE_CAP}, got inf",
    ),
    "max_price = 1e300": (
        with_line("max_price = 1e300"),
        f"step 1: max_price: must be a finite number {PRICE_CAP}, got 1e+300",
    ),
    "min_price = -inf": (
        with_line("min_price = -inf"),
        f"step 1: min_price: must be a finite number {PRICE_CAP}, got -inf",
    ),
    "a 400-digit min_price": (
        with_line("min_price = 1" + "0" * 400),
        f"step 1: min_price: must be a finite number {PRICE_CAP}, "
        "got 1000000000000000000000000000000000000000... (401 characters)",
    ),
    "budget = inf": (
        TEXT.replace("budget = 200", "budget = inf"),
        f"budget: must be a finite number {PRICE_CAP}, got inf",
    ),
    "min_rating = nan": (
        with_line("min_rating = nan"),
        "step 1: min_rating: must be a finite number from 0 to 5, got nan",
    ),
    "min_price 50 above max_price 10": (
        TEXT.replace("max_price = 200", "min_price = 50\nmax_price = 10", 1),
        "step 1: min_price: must not exceed max_price, got min_price=50 > max_price=10",
    ),
    "features of 100,000 strings": (
        with_features("[" + ", ".join(['"x"'] * 100_000) + "]"),
        "features has 100,000 items; the cap is 30",
    ),
    "a 5,000-character goal": (
        TEXT.replace('goal = "A photography gift under $200."', 'goal = "' + "g" * 5_000 + '"'),
        "goal is 5,000 characters long; the cap is 4,000",
    ),
    "a number past Python's digit limit": (
        with_line("max_price = 1" + "0" * 5_000),
        "a number in the file is over 4,300 digits long; the cap is 4,300",
    ),
    "a file over 1,000,000 characters": (
        TEXT + "# " + "x" * 1_000_000 + "\n",
        "the file is 1,00",  # its length, then the cap
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE_FILES))
def test_a_hostile_edit_file_is_refused_in_one_line_naming_the_field_and_its_limit(
    case: str,
) -> None:
    text, problem = HOSTILE_FILES[case]
    [line] = refused(text)
    assert line.startswith(problem), line
    if case == "a file over 1,000,000 characters":
        assert line.endswith("characters long; the cap is 1,000,000"), line


def test_fifty_thousand_unknown_fields_are_not_fifty_thousand_lines() -> None:
    problems = refused("\n".join(f"field{i} = 1" for i in range(50_000)))
    assert len(problems) == MAX_PROBLEMS
    assert problems[0].startswith("unknown field 'field0'")
    assert problems[-1] == "and 49,991 more problems"


def test_brackets_in_strings_and_comments_are_not_nesting() -> None:
    brackets = "[" * 30 + "{" * 30
    text = TEXT.replace(
        'goal = "A photography gift under $200."',
        f'goal = "{brackets} \\" {brackets}"  # {brackets}\n'
        f"features = ['{brackets}', \"\"\"\n{brackets}\"\"\", '''{brackets}''']",
    ).replace("features = []\n", "")
    edited = read_plan_text(text, MODEL_PLAN)
    assert edited is not None
    assert edited.goal == f'{brackets} " {brackets}'
    assert edited.features == [brackets, brackets, brackets]


def test_a_price_over_the_cap_that_the_model_wrote_is_kept_when_another_field_is_edited() -> None:
    # The cap is on what a person writes: the model's own price runs if approved unedited.
    dear = Plan.model_validate({**STRAP_PLAN, "budget": 3e300})
    edited = read_plan_text(plan_text(dear).replace("camera strap", "leather strap"), dear)
    assert edited is not None and edited.budget == 3e300
    assert edited.steps[0].query == "leather strap"
    with pytest.raises(PlanEditError, match="price cap"):
        read_plan_text(plan_text(dear).replace("budget = 3e+300", "budget = 4e300"), dear)


# ---------------------------------------------------------------- the API


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _sent(plan: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    """The model's plan as an API client sends it, with `step` over step 1's fields."""
    first, *rest = plan["steps"]
    return {**plan, "steps": [{**first, **step}, *rest]}


def api_edits(plan: dict[str, Any]) -> dict[str, tuple[dict[str, Any], str]]:
    """Hostile edits of `plan` (the paused payload's JSON) and the refusal each gets."""
    return {
        "features nested 100 deep": ({**plan, "features": nested(100)}, f"features: {DEEP}"),
        "a query nested 50 deep": (_sent(plan, {"query": nested(50)}), f"step 1: query: {DEEP}"),
        "budget NaN": (
            {**plan, "budget": float("nan")},
            f"budget: must be a finite number {PRICE_CAP}, got nan",
        ),
        "budget 1e300": (
            {**plan, "budget": 1e300},
            f"budget: must be a finite number {PRICE_CAP}, got 1e+300",
        ),
        "max_price 1e400": (
            _sent(plan, {"max_price": float("1e400")}),  # as JSON's 1e400 reads
            f"step 1: max_price: must be a finite number {PRICE_CAP}, got inf",
        ),
        "filled_from_request of 50,000 strings": (
            _sent(plan, {"filled_from_request": ["max_price"] * 50_000}),
            "step 1: filled_from_request has 50,000 items; the cap is 4",
        ),
        "filled_from_request naming no filter": (
            _sent(plan, {"filled_from_request": ["nosuch"]}),
            "step 1: filled_from_request names only search filters",
        ),
        "a 100,000-character built_in_code": (
            {**plan, "built_in_code": "x" * 100_000},
            "built_in_code is 100,000 characters long; the cap is 1,000",
        ),
        "1,000,001 characters in all": (
            {**plan, "features": ["x" * 1_000_001]},
            "features: the plan is over 1,000,000 characters, the cap for a plan",
        ),
    }


def test_hostile_api_edits_are_refused_by_name_and_the_run_stays_at_approval(
    small_catalog_file: Path,
) -> None:
    model = FakeShoppingChatModel(
        replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )
    graph, config = build_graph(checkpointer=MemorySaver()), thread_config("api")
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": "a strap gift under $200"}, config, context=context)
    shown = graph.get_state(config).interrupts[0].value["plan"]
    for case, (edit, problem) in api_edits(shown).items():
        graph.invoke(Command(resume={"approved": True, "plan": edit}), config, context=context)
        state = graph.get_state(config)
        assert state.next == ("approval",), case  # paused again, to be edited again
        error = state.values["edit_error"]
        assert error.startswith(f"the edited plan was refused: {problem}"), (case, error)
        assert "\n" not in error and len(error) < 300, (case, error)  # one short line
        assert state.values.get("approval") is None and not state.values.get("step_results")
    # The plan as shown, sent back whole (its code-written fields too), still runs.
    graph.invoke(Command(resume={"approved": True, "plan": shown}), config, context=context)
    values = graph.get_state(config).values
    assert values["approval"] == "approved" and values["edit_error"] is None
    assert values.get("plan_edit") is None  # nothing a person sees changed
    assert len(values["step_results"]) == len(shown["steps"])


# ---------------------------------------------------------------- the CLI


# Python that edits `text`, the file the CLI opens, and the line that refuses the edit.
CLI_CASES = {
    "an array 20,000 deep": (
        "text = re.sub('^features = .*$', 'features = ' + '[' * 20_000 + ']' * 20_000, text,"
        " flags=re.M)",
        f"features: {DEEP}",
    ),
    "an inline table 5,000 deep": (
        "text = re.sub('^features = .*$', 'features = ' + '{a = ' * 5_000 + '1' + '}' * 5_000,"
        " text, flags=re.M)",
        f"features: {DEEP}",
    ),
    "max_price = nan": (
        "assert 'max_price = 200' in text\n"
        "text = text.replace('max_price = 200', 'max_price = nan', 1)",
        f"step 1: max_price: must be a finite number {PRICE_CAP}, got nan",
    ),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_the_cli_refuses_a_hostile_edit_file_in_one_line_and_asks_again(
    case: str, tmp_path: Path, small_catalog_file: Path
) -> None:
    edit, problem = CLI_CASES[case]
    script = tmp_path / "editor.py"
    script.write_text(
        "import pathlib, re, sys\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "text = path.read_text()\n"
        f"{edit}\n"
        "path.write_text(text)\n"
    )
    data = tmp_path / "data"
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]})
    with fake_openai_server(fake) as url:
        code, out = run_on_terminal(
            url,
            data,
            b"e\n\x04",  # edit, then Ctrl-D at the question that follows the refusal
            "a strap gift under $200",
            "--thread",
            "t",
            "--catalog",
            str(small_catalog_file),
            EDITOR=f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
        )
    assert "Traceback" not in out and "RecursionError" not in out, out
    assert "The edited plan cannot run:" in out, out
    [line] = [line for line in out.splitlines() if line.startswith("  - ")]
    assert line == f"  - {problem}", out
    assert "Edit it again or reject the plan? [e]dit, [r]eject:" in out, out
    assert "Plan rejected" not in out, out
    assert code == 3 and "--resume t --yes continues it" in out, out
    graph = build_graph(checkpointer=open_checkpointer(str(data / "checkpoints.sqlite")))
    values = graph.get_state(thread_config("t")).values
    assert values.get("approval") is None and not values.get("step_results")  # still pending
