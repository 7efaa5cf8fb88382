"""Editing the plan at approval (issue 17): the text a person edits, its checks, the diff,
the approval node's answer over the graph API, and the CLI's approve / reject / edit.

The CLI tests run main() in-process against the fake OpenAI-compatible server, with a
terminal stood in for by a StringIO that says it is one, and $EDITOR set to a small
Python script written into tmp_path that edits the file the CLI opens.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_main, run_on_terminal
from fake_openai_server import FakeScript, fake_openai_server
from fakes import GIFT_ANSWERS, GIFT_PLAN, FakeShoppingChatModel
from langgraph.checkpoint.memory import MemorySaver
from langgraph.types import Command

from graph.builder import build_graph
from graph.context import Context
from graph.reading import read_request
from graph.reading.stated import read_limits
from graph.runs.checkpoint import open_sqlite_checkpointer
from graph.runs.threads import thread_config
from graph.schemas import Plan
from graph.shaping.edits import (
    HOW_TO_ANSWER,
    AnswerError,
    ApprovalAnswer,
    PlanEditError,
    checked_plan,
    describe_change,
    plan_changes,
    plan_text,
    read_answer,
    read_plan_text,
)
from graph.shaping.limits import reconcile_limits
from graph.shaping.occasion import pick_mode

# The fake model's plan as the planner node leaves it for the tests' request: the stated
# $200 cap filled in on step 3 (graph/shaping/limits.py), and the single best of the kinds
# searched recommended, as for any gift naming none of them (graph/shaping/occasion.py).
_READING = read_request("a strap gift under $200")
_RECONCILED = reconcile_limits(
    _READING.product_words, _READING.limits, Plan.model_validate(GIFT_PLAN)
).plan
MODEL_PLAN = _RECONCILED.model_copy(update={"pick": pick_mode(_READING, _RECONCILED)})
# The edit the tests make: step 1's query changed, step 2 removed, a price cap on step 3.
EDITED = {
    "goal": GIFT_PLAN["goal"],
    "budget": 200,
    "pick": "one",  # as the plan has it: unchanged
    "steps": [
        {"action": "Find camera straps", "query": "leather strap", "max_price": 200},
        {"action": "Find cleaning kits", "query": "lens cleaning kit", "max_price": 20},
        {"action": "Pick the gift", "query": None},
    ],
}
EDITED_CHANGES = [
    "step 1: query 'camera strap' -> 'leather strap'",
    "step 2 removed: Shortlist the straps",
    "step 3 (now 2): max_price 200 -> 20",
]
# Python that edits `text` (the file's content) into EDITED, as a person would by hand.
EDIT_SCRIPT = """
text = text.replace('query = "camera strap"', 'query = "leather strap"')
start, end = text.index("[[step]]  # step 2"), text.index("[[step]]  # step 3")
text = text[:start] + text[end:]
kits = text.index('query = "lens cleaning kit"')
head, tail = text[:kits], text[kits:]
# The kits' cap: set to $20 (the line may be there, filled in from the request, or not).
lines = [line for line in tail.split("\\n") if not line.startswith("max_price")]
lines.insert(1, "max_price = 20")
text = head + "\\n".join(lines)
"""


# ---------------------------------------------------------------- the text and its checks


def test_the_text_reads_back_as_the_same_plan_so_saving_it_unchanged_is_no_edit() -> None:
    text = plan_text(MODEL_PLAN)
    assert text.startswith("# Edit this plan")
    assert "Saving the file unchanged, or empty, means no edit." in text
    assert "numbered from that order" in text
    assert read_plan_text(text, MODEL_PLAN) is None
    assert read_plan_text("", MODEL_PLAN) is None
    assert read_plan_text("# only comments\n\n   \n", MODEL_PLAN) is None


def test_text_that_looks_like_toml_syntax_survives_the_round_trip() -> None:
    tricky = Plan.model_validate(
        {
            "goal": 'A "quoted" goal \\ with [brackets] and # no comment',
            "budget": 12.5,
            "features": ['water"proof', "ünïcode"],
            "steps": [{"step": 1, "action": "a\tb [[step]]", "query": "x = 1"}],
        }
    )
    edited = read_plan_text(plan_text(tricky).replace("12.5", "13"), tricky)
    assert edited is not None
    assert edited.model_dump() == {**tricky.model_dump(), "budget": 13.0}


@pytest.mark.parametrize("character", ["\x7f", "\x00", "\x1b", "\u2028", "\U0001f600"])
def test_a_character_toml_must_escape_survives_an_unchanged_save(character: str) -> None:
    # JSON leaves U+007F bare, and TOML forbids it in a string: written with tomli-w, the
    # file an unchanged save leaves reads back as the same plan (no edit).
    plan = Plan.model_validate(
        {
            "goal": f"a gift{character} for a photographer",
            "features": [f"water{character}proof"],
            "steps": [{"step": 1, "action": f"Find{character} straps", "query": "strap"}],
        }
    )
    text = plan_text(plan)
    assert read_plan_text(text, plan) is None
    edited = read_plan_text(text.replace('query = "strap"', 'query = "leather strap"'), plan)
    assert edited is not None and edited.goal == plan.goal
    assert edited.features == plan.features and edited.steps[0].action == plan.steps[0].action


def test_an_edit_is_read_with_steps_numbered_from_their_order_and_diffed_field_by_field() -> None:
    text = plan_text(MODEL_PLAN)
    namespace = {"text": text}
    exec(EDIT_SCRIPT, namespace)
    edited = read_plan_text(namespace["text"], MODEL_PLAN)
    assert edited is not None
    assert edited == checked_plan(EDITED)
    assert [s.step for s in edited.steps] == [1, 2, 3]
    changes = plan_changes(MODEL_PLAN, edited)
    assert [describe_change(c) for c in changes] == EDITED_CHANGES
    added = checked_plan({**EDITED, "steps": [*EDITED["steps"], {"action": "Wrap it"}]})
    assert describe_change(plan_changes(MODEL_PLAN, added)[-1]) == "step 4 added: Wrap it"


def _problems(text: str) -> list[str]:
    with pytest.raises(PlanEditError) as refused:
        read_plan_text(text, MODEL_PLAN)
    return refused.value.problems


def test_invalid_edits_are_refused_with_a_line_naming_the_problem() -> None:
    text = plan_text(MODEL_PLAN)
    no_action = text.replace('action = "Shortlist the straps"\n', "")
    negative = text.replace("max_price = 200", "max_price = -5", 1)
    eleven = text + "".join(f'\n[[step]]\naction = "Extra step {i}"\n' for i in range(7))
    assert _problems(no_action) == ["step 2: action is missing"]
    assert _problems(negative) == ["step 1: max_price: must be >= 0, got -5.0"]
    assert _problems(eleven) == ["a plan has at most 10 steps, this one has 11"]
    # The catalog's own checks of a search's filters, made before anything runs.
    rating = text.replace('query = "lens cleaning kit"', 'query = "kit"\nmin_rating = 9')
    assert _problems(rating) == ["step 3: min_rating: must be between 0 and 5, got 9.0"]
    assert _problems(text.replace("max_price = 200", "max_price = 20\nmin_price = 30", 1)) == [
        "step 1: min_price: must not exceed max_price, got min_price=30 > max_price=20"
    ]
    assert _problems(text.replace("budget = 200", 'budget = "lots"')) == ["budget must be a number"]
    assert _problems(text + "\n[[step]]\nacton = 'typo'\n")[-1].startswith(
        "step 5: acton is not a known field"
    )
    assert _problems('goal = "unclosed\n')[0].startswith("the file is not valid TOML")
    for problems in (_problems(no_action), _problems(negative), _problems(eleven)):
        assert not any("pydantic" in p or "http" in p or "Traceback" in p for p in problems)


# ---------------------------------------------------------------- the approval node (API)


def _graph_at_approval() -> tuple[Any, FakeShoppingChatModel, dict[str, Any]]:
    model = FakeShoppingChatModel(
        replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(GIFT_ANSWERS[1])]}
    )
    graph = build_graph(checkpointer=MemorySaver())
    return graph, model, thread_config("api")


def test_the_api_resumes_with_an_edited_plan_and_refuses_an_invalid_one(
    small_catalog_file: Path,
) -> None:
    graph, model, config = _graph_at_approval()
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": "a strap gift under $200"}, config, context=context)
    proposed = graph.get_state(config).values["plan"]  # as the planner node left it
    [paused] = graph.get_state(config).interrupts
    assert paused.value["how_to_answer"] == HOW_TO_ANSWER
    assert '{"approved": true, "plan": {...}}' in HOW_TO_ANSWER
    assert "error" not in paused.value

    # A search step's action may be left out (it is "Search <query>"); a pick step's not.
    invalid = {**EDITED, "steps": [{"query": None}, *EDITED["steps"][1:]]}
    graph.invoke(Command(resume={"approved": True, "plan": invalid}), config, context=context)
    state = graph.get_state(config)
    assert state.next == ("approval",)  # paused at approval again, not ended, not replanned
    assert state.values["edit_error"] == "the edited plan was refused: step 1: action is missing"
    assert state.interrupts[0].value["error"] == state.values["edit_error"]
    assert state.values.get("approval") is None and not state.values.get("step_results")
    assert len(model.prompts) == 1  # the planner only

    graph.invoke(Command(resume={"approved": True, "plan": EDITED}), config, context=context)
    values = graph.get_state(config).values
    assert values["approval"] == "approved" and values["edit_error"] is None
    assert values["plan"] == proposed  # the proposed plan is kept as it was shown
    assert values["plan_edit"].plan == checked_plan(EDITED)
    assert [describe_change(c) for c in values["plan_edit"].changes] == EDITED_CHANGES
    assert [(r.step, r.action) for r in values["step_results"]] == [
        (1, "Find camera straps"),
        (2, "Find cleaning kits"),
        (3, "Pick the gift"),
    ]
    assert _search_calls(values) == [
        {"query": "leather strap", "max_price": 200},
        {"query": "lens cleaning kit", "max_price": 20},
    ]
    assert len(model.prompts) == 2  # planner and the one reasoning step: the edit is free


def test_an_edit_sent_with_a_rejection_is_ignored(small_catalog_file: Path) -> None:
    graph, model, config = _graph_at_approval()
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": "a strap gift under $200"}, config, context=context)
    graph.invoke(Command(resume={"approved": False, "plan": EDITED}), config, context=context)
    values = graph.get_state(config).values
    assert values["approval"] == "rejected" and values.get("plan_edit") is None
    assert not values.get("step_results")


# Issue 37: answers that are none of approve, reject or an edit, and why each is refused.
UNREADABLE_ANSWERS: dict[str, tuple[object, str]] = {
    "misspelt field": ({"aproved": True}, 'unknown field "aproved"'),
    "plan without approved": ({"plan": EDITED}, 'a plan was sent without "approved": true'),
    "approved as text": (
        {"approved": "false"},
        '"approved" must be true or false (a JSON boolean), got the text "false"',
    ),
    "unclear word": ("sure", '"sure" is neither yes nor no'),
    "object as text": ('{"approved": true}', "send the object itself (JSON, not a string)"),
    "a number": (1, 'an answer is true, false, "yes", "no" or an object'),
    "nothing": (None, 'an answer is true, false, "yes", "no" or an object'),
    "empty object": ({}, '"approved" is missing'),
    "approved as a number": ({"approved": 1}, '"approved" must be true or false'),
    "both spellings": ({"approved": True, "approve": False}, 'send "approved" once'),
    "edit with a stray field": (
        {"approved": True, "plan": EDITED, "budget": 10},
        'unknown field "budget"',
    ),
}
# Command(resume=...) cannot carry these two to the node (LangGraph reads None as no
# resume and {} as a map of interrupt ids), so only read_answer is asked about them.
NOT_RESUMABLE = {"nothing", "empty object"}


@pytest.mark.parametrize("kind", list(UNREADABLE_ANSWERS))
def test_an_unreadable_answer_is_refused_with_its_reason(kind: str) -> None:
    answer, reason = UNREADABLE_ANSWERS[kind]
    with pytest.raises(AnswerError) as refused:
        read_answer(answer)
    assert reason in str(refused.value)


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        (True, ApprovalAnswer(True)),
        (False, ApprovalAnswer(False)),
        ("yes", ApprovalAnswer(True)),
        (" No ", ApprovalAnswer(False)),
        ("approve", ApprovalAnswer(True)),
        ("reject", ApprovalAnswer(False)),
        ({"approved": True}, ApprovalAnswer(True)),
        ({"approved": False}, ApprovalAnswer(False)),
        ({"approve": True}, ApprovalAnswer(True)),
        ({"approved": True, "plan": None}, ApprovalAnswer(True)),
        ({"approved": True, "plan": EDITED}, ApprovalAnswer(True, EDITED)),
        # A clear rejection: the edit sent with it is not run.
        ({"approved": False, "plan": EDITED}, ApprovalAnswer(False)),
    ],
)
def test_the_natural_answers_read_as_before(answer: object, read: ApprovalAnswer) -> None:
    assert read_answer(answer) == read


def test_a_refusal_quotes_a_long_answer_in_short() -> None:
    with pytest.raises(AnswerError) as refused:
        read_answer("x" * 100_000)
    assert len(str(refused.value)) < 200
    with pytest.raises(AnswerError) as refused:
        read_answer({f"field{n}": True for n in range(10_000)})
    assert "and 9,990 more" in str(refused.value) and len(str(refused.value)) < 400


@pytest.mark.parametrize("kind", [k for k in UNREADABLE_ANSWERS if k not in NOT_RESUMABLE])
def test_the_api_keeps_the_run_at_approval_after_an_unreadable_answer(
    kind: str, small_catalog_file: Path
) -> None:
    graph, model, config = _graph_at_approval()
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    graph.invoke({"request": "a strap gift under $200"}, config, context=context)
    answer, reason = UNREADABLE_ANSWERS[kind]
    graph.invoke(Command(resume=answer), config, context=context)
    state = graph.get_state(config)
    assert state.next == ("approval",)  # paused again: neither run nor rejected
    error = state.values["edit_error"]
    assert error.startswith("the answer was refused: ") and reason in error
    [paused] = state.interrupts
    assert paused.value["error"] == error and paused.value["question"] == "Run this plan?"
    assert state.values.get("approval") is None and not state.values.get("step_results")

    # The next, clear answer is taken (here an edit), and the refusal is cleared.
    graph.invoke(Command(resume={"approved": True, "plan": EDITED}), config, context=context)
    values = graph.get_state(config).values
    assert values["approval"] == "approved" and values["edit_error"] is None
    assert values["plan_edit"].plan == checked_plan(EDITED)
    assert [r.step for r in values["step_results"]] == [1, 2, 3]
    assert len(model.prompts) == 2  # the planner and the pick step: no call was lost


def _search_calls(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The search_products calls the run made, without the limit the context adds."""
    calls = [call for m in values["messages"] for call in getattr(m, "tool_calls", None) or []]
    assert all(call["name"] == "search_products" for call in calls)
    return [{k: v for k, v in call["args"].items() if k != "limit"} for call in calls]


# ---------------------------------------------------------------- the CLI


class Terminal(io.StringIO):
    """Typed answers, on a stdin that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def editor(tmp_path: Path, *edits: str) -> str:
    """An $EDITOR command: a Python script that applies `edits` in turn, one per time
    the editor is opened (the last one again after that), to `text`, the file's content."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import pathlib, sys\n"
        f"EDITS = {list(edits)!r}\n"
        f"count = pathlib.Path({str(tmp_path / 'opened')!r})\n"
        "opened = int(count.read_text()) if count.exists() else 0\n"
        "count.write_text(str(opened + 1))\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "namespace = {'text': path.read_text()}\n"
        "exec(EDITS[min(opened, len(EDITS) - 1)], namespace)\n"
        "path.write_text(namespace['text'])\n"
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def fake_script() -> FakeScript:
    return FakeScript(replies={"Plan": [GIFT_PLAN], "ReasoningAnswer": [dict(GIFT_ANSWERS[1])]})


def run_cli(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    db: Path,
    answers: str | None,
    *args: str,
) -> tuple[int, str]:
    """main() with `answers` typed at a terminal (None: no terminal)."""
    monkeypatch.setattr(sys, "stdin", Terminal(answers) if answers is not None else io.StringIO())
    return graph_run_main(capsys, url, db, *args)


def saved_values(db: Path, thread_id: str) -> dict[str, Any]:
    saver = open_sqlite_checkpointer(db)
    try:
        return build_graph(checkpointer=saver).get_state(thread_config(thread_id)).values
    finally:
        saver.conn.close()


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # history rows on one line each
    return monkeypatch


def test_cli_edit_runs_the_edited_steps_exactly_and_history_shows_the_edit(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    cli_env.setenv("EDITOR", editor(tmp_path, EDIT_SCRIPT))
    db = tmp_path / "runs.sqlite"
    fake = fake_script()
    args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", "ed")
    with fake_openai_server(fake) as url:
        code, out = run_cli(capsys, cli_env, url, db, "e\na\n", *args)
        history_code, history = run_cli(capsys, cli_env, url, db, None, "--history", "ed")
    assert code == 0, out
    assert "Run this plan? [a]pprove, [r]eject, [e]dit, [c]hange:" in out
    assert "Plan (your edit): A photography gift" in out
    for line in EDITED_CHANGES:
        assert line in out
    # The estimate shown after the edit is the edited plan's: one reasoning call, not two.
    estimates = [line for line in out.splitlines() if line.startswith("Estimate:")]
    assert [e.split(" more LLM calls")[0] for e in estimates] == [
        "Estimate: 2",
        "Estimate: 1",
    ]
    assert out.index("Plan (your edit)") < out.index("step 1 (search)")

    values = saved_values(db, "ed")
    assert _search_calls(values) == [
        {"query": "leather strap", "max_price": 200},
        {"query": "lens cleaning kit", "max_price": 20},
    ]
    assert [(r.step, r.kind, r.action) for r in values["step_results"]] == [
        (1, "search", "Find camera straps"),
        (2, "search", "Find cleaning kits"),
        (3, "reasoning", "Pick the gift"),
    ]
    assert values["plan"] == MODEL_PLAN
    # No LLM call for the edit: the planner, then the one reasoning step of the edit.
    assert len(fake.calls_for("Plan")) == 1 and len(fake.calls_for("ReasoningAnswer")) == 1

    assert history_code == 0, history
    assert "plan approved, as edited by a person (3 changes)" in history
    assert "the model's plan: A photography gift under $200." in history
    assert "2. Shortlist the straps" in history  # the model's own plan stays visible
    for line in EDITED_CHANGES:
        assert line in history


def test_cli_json_reports_both_plans_and_the_changes(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    cli_env.setenv("EDITOR", editor(tmp_path, EDIT_SCRIPT))
    with fake_openai_server(fake_script()) as url:
        code, out = run_cli(
            capsys,
            cli_env,
            url,
            tmp_path / "runs.sqlite",
            "edit\nyes\n",
            "gift under $200",
            "--catalog",
            str(small_catalog_file),
            "--json",
        )
    assert code == 0, out
    # stdout (the report) comes first in `out`, then stderr (the prompts).
    report, _ = json.JSONDecoder().raw_decode(out)
    assert report["plan_edited"] is True
    assert [s["action"] for s in report["plan"]["steps"]] == [
        "Find camera straps",
        "Find cleaning kits",
        "Pick the gift",
    ]
    assert len(report["model_plan"]["steps"]) == 4
    assert [c["description"] for c in report["plan_changes"]] == EDITED_CHANGES
    assert report["plan_changes"][1] == {
        "kind": "removed",
        "step": 2,
        "new_step": None,
        "field": None,
        "before": "Shortlist the straps",
        "after": None,
        "description": "step 2 removed: Shortlist the straps",
    }
    assert report["estimate"]["llm_calls"] == 1
    assert report["usage"]["llm_calls"] == 2
    assert [r["step"] for r in report["step_results"]] == [1, 2, 3]


INVALID_EDITS = {
    "a step without an action": (
        "text = text.replace('action = \"Shortlist the straps\"\\n', '')",
        "step 2: action is missing",
    ),
    "a negative price": (
        "text = text.replace('max_price = 200', 'max_price = -20')",
        "step 1: max_price: must be >= 0, got -20.0",
    ),
    "eleven steps": (
        "text += ''.join(f'[[step]]\\naction = \"More {i}\"\\n' for i in range(7))",
        "a plan has at most 10 steps, this one has 11",
    ),
}


@pytest.mark.parametrize("kind", list(INVALID_EDITS))
def test_cli_refuses_an_invalid_edit_and_nothing_runs(
    kind: str,
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    edit, problem = INVALID_EDITS[kind]
    cli_env.setenv("EDITOR", editor(tmp_path, edit))
    db = tmp_path / "runs.sqlite"
    fake = fake_script()
    args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", "bad")
    with fake_openai_server(fake) as url:
        code, out = run_cli(capsys, cli_env, url, db, "e\nr\n", *args)
    assert code == 0, out
    assert "The edited plan cannot run:" in out and f"  - {problem}" in out
    assert "Edit it again or reject the plan? [e]dit, [r]eject:" in out
    assert "Plan rejected; nothing was run." in out
    assert "Traceback" not in out and "pydantic" not in out
    values = saved_values(db, "bad")
    assert values["approval"] == "rejected" and values.get("plan_edit") is None
    assert not values.get("step_results") and not values.get("messages")
    assert fake.calls_for("ReasoningAnswer") == []


def test_cli_edit_again_after_an_invalid_edit_starts_from_what_was_written(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    # First save: a negative cap. Second: the editor finds that text again and fixes it.
    first = "text = text.replace('max_price = 200', 'max_price = -1')"
    fix = "assert 'max_price = -1' in text\ntext = text.replace('max_price = -1', 'max_price = 30')"
    cli_env.setenv("EDITOR", editor(tmp_path, first, fix))
    db = tmp_path / "runs.sqlite"
    fake = FakeScript(
        replies={"Plan": [GIFT_PLAN], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )
    args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", "again")
    with fake_openai_server(fake) as url:
        code, out = run_cli(capsys, cli_env, url, db, "e\ne\na\n", *args)
    assert code == 0, out
    assert "step 1: max_price: must be >= 0, got -1.0" in out
    assert "step 1: max_price 200 -> 30" in out
    assert _search_calls(saved_values(db, "again"))[0] == {"query": "camera strap", "max_price": 30}


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ("pass", "unchanged"),
        ("text = ''", "empty"),
        ("text = text.replace('budget = 200', 'budget = 200.0')", "same"),
    ],
)
def test_cli_unchanged_or_empty_file_is_no_edit(
    edit: str,
    why: str,
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    cli_env.setenv("EDITOR", editor(tmp_path, edit))
    db = tmp_path / "runs.sqlite"
    fake = FakeScript(
        replies={"Plan": [GIFT_PLAN], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )
    args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", "same")
    with fake_openai_server(fake) as url:
        code, out = run_cli(capsys, cli_env, url, db, "e\na\n", *args)
    assert code == 0, out
    assert "No edit: the plan is unchanged." in out, why
    values = saved_values(db, "same")
    assert values.get("plan_edit") is None
    assert [r.step for r in values["step_results"]] == [1, 2, 3, 4]


def test_cli_without_a_usable_editor_says_so_in_one_line_and_asks_again(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    cli_env.setenv("EDITOR", str(tmp_path / "no-such-editor"))
    db = tmp_path / "runs.sqlite"
    args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", "noed")
    with fake_openai_server(fake_script()) as url:
        code, out = run_cli(capsys, cli_env, url, db, "e\nmaybe\nr\n", *args)
    assert code == 0, out
    [line] = [line for line in out.splitlines() if "cannot start the editor" in line]
    assert "[c]hange: error: cannot start the editor" in line and "$EDITOR" in line
    assert "Answer approve or reject or edit or change." in out  # "maybe" is no answer
    assert out.count("Run this plan?") == 3
    assert "Traceback" not in out
    assert saved_values(db, "noed")["approval"] == "rejected"


def test_resume_at_approval_offers_the_same_three_choices(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    cli_env.setenv("EDITOR", editor(tmp_path, EDIT_SCRIPT))
    db = tmp_path / "runs.sqlite"
    fake = fake_script()
    args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", "later")
    with fake_openai_server(fake) as url:
        paused, out = run_cli(capsys, cli_env, url, db, None, *args)
        assert paused == 3 and "no terminal to ask" in out
        code, out = run_cli(capsys, cli_env, url, db, "e\na\n", "--resume", "later")
    assert code == 0, out
    assert "Run this plan? [a]pprove, [r]eject, [e]dit, [c]hange:" in out
    assert EDITED_CHANGES[1] in out
    values = saved_values(db, "later")
    assert [r.action for r in values["step_results"]] == [s["action"] for s in EDITED["steps"]]
    assert len(fake.calls_for("Plan")) == 1


def test_person_text_in_an_edit_is_shown_as_text_not_markup(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: pytest.MonkeyPatch,
) -> None:
    # An added step whose action holds rich markup and an escape sequence.
    add = "text += '[[step]]\\naction = \"[bold red]Wrap it[/] \\\\u001b[2J\"\\n'"
    cli_env.setenv("EDITOR", editor(tmp_path, add))
    with fake_openai_server(fake_script()) as url:
        code, out = run_cli(
            capsys,
            cli_env,
            url,
            tmp_path / "runs.sqlite",
            "e\nr\n",
            "a strap gift under $200",
            "--catalog",
            str(small_catalog_file),
        )
    assert code == 0, out
    assert "step 5 added: [bold red]Wrap it[/] \\x1b[2J" in out
    assert "\x1b" not in out


def test_cli_process_on_a_real_terminal_edits_and_runs_the_edit(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    # The whole path in a real process: the prompt reads a pseudo-terminal, and the
    # editor is started on that terminal (as nano or vi would be).
    fake = fake_script()
    with fake_openai_server(fake) as url:
        code, output = run_on_terminal(
            url, tmp_path / "data", b"e\na\n", "a strap gift under $200", "--thread", "tty",
            "--catalog", str(small_catalog_file), timeout=60,
            EDITOR=editor(tmp_path, EDIT_SCRIPT), COLUMNS="200",
        )  # fmt: skip
    assert code == 0, output
    assert "Run this plan? [a]pprove, [r]eject, [e]dit, [c]hange:" in output
    for line in EDITED_CHANGES:
        assert line in output
    assert "step 3 (reason) Pick the gift" in output and "step 4" not in output
    assert (tmp_path / "opened").read_text() == "1"
    assert len(fake.calls_for("ReasoningAnswer")) == 1


def test_progress_counts_the_steps_of_the_edit_once_approval_records_it() -> None:
    from rich.console import Console

    from graph.cli.render import RunView
    from graph.shaping.edits import edit_of

    view = RunView(Console(file=io.StringIO()), "t", quiet=True)
    view.stream_started({"plan": MODEL_PLAN})
    assert str(view.status_text()) == "Step 1/4: Find camera straps…"
    edit = edit_of(read_limits("a gift"), MODEL_PLAN, checked_plan(EDITED))
    view.node_finished("approval", {"approval": "approved", "plan_edit": edit})
    assert str(view.status_text()) == "Step 1/3: Find camera straps…"
