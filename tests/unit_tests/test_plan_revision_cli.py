"""Changing the plan in words from the CLI (issue 41): "[c]hange" typed at the approval
prompt on a pseudo-terminal, as a person types, and `--revise` for scripts; with the fake
OpenAI-compatible server over tests/conftest.py SMALL_CATALOG. `--history` shows each
version: plan 1, the words, plan 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_output, run_on_terminal
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN
from test_plan_revision import CHEAPER, KIT_ADDED, OFF_TOPIC, REQUEST, UNDER_50

KIT_WORDS = "add a lens cleaning kit"
CHEAPER_WORDS = "a cheaper strap, under $50"
PROMPT = "Run this plan? [a]pprove, [r]eject, [e]dit, [c]hange:"


def script(*revisions: Any) -> FakeScript:
    return FakeScript(
        replies={
            "Plan": [dict(STRAP_PLAN)],
            "FollowUpPlan": list(revisions),
            "ReasoningAnswer": [dict(STRAP_PICK)],
        }
    )


def on_terminal(fake: FakeScript, data: Path, typed: bytes, catalog: Path) -> tuple[int, str]:
    with fake_openai_server(fake) as url:
        return run_on_terminal(
            url, data, typed, REQUEST, "--thread", "tty", "--catalog", str(catalog), timeout=60
        )


def history(fake: FakeScript, data: Path) -> str:
    with fake_openai_server(fake) as url:
        code, out = graph_run_output(url, data, "--history", "tty", COLUMNS="300")
    assert code == 0, out
    return out


def test_a_person_changes_the_plan_then_approves_it(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    fake = script(KIT_ADDED)
    typed = f"c\n{KIT_WORDS}\na\n".encode()
    code, out = on_terminal(fake, tmp_path / "data", typed, small_catalog_file)
    assert code == 0, out
    assert PROMPT in out and "What should change?" in out
    assert f"Plan 2, changed as asked: '{KIT_WORDS}'" in out
    assert "step 2 added: Search lens cleaning kit" in out
    assert "step 2 (search) Search lens cleaning kit" in out  # the revision ran
    assert len(fake.calls_for("FollowUpPlan")) == 1
    shown = history(fake, tmp_path / "data")
    assert "plan 1 changed in words" in shown and KIT_WORDS in shown
    assert "plan 2: 3 steps" in shown


def test_a_person_changes_it_twice_then_rejects_it(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    fake = script(KIT_ADDED, UNDER_50)
    typed = f"c\n{KIT_WORDS}\nc\n{CHEAPER_WORDS}\nr\n".encode()
    code, out = on_terminal(fake, tmp_path / "data", typed, small_catalog_file)
    assert code == 0, out
    assert "Plan 2, changed as asked" in out and "Plan 3, changed as asked" in out
    assert "max $50" in out
    assert "(search)" not in out  # nothing ran
    assert fake.calls_for("ReasoningAnswer") == []
    shown = history(fake, tmp_path / "data")
    assert "plan 2 changed in words" in shown and CHEAPER_WORDS in shown


def test_a_refused_change_keeps_the_plan_and_asks_again(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    fake = script(OFF_TOPIC)
    typed = b"c\n\nc\nwhat's the weather?\na\n"
    code, out = on_terminal(fake, tmp_path / "data", typed, small_catalog_file)
    assert code == 0, out
    assert "no change said" in out  # empty words: refused before any call
    assert "the change was refused: the words ask for no change of a shopping plan" in out
    assert "Plan 2" not in out
    assert "step 1 (search) Find camera straps" in out  # the plan shown ran


@pytest.mark.parametrize("then", ["--yes", None])
def test_revise_in_a_script_then_approve_or_stay_paused(
    small_catalog_file: Path, tmp_path: Path, then: str | None
) -> None:
    fake = script(KIT_ADDED, UNDER_50)
    args = [REQUEST, "--thread", "tty", "--catalog", str(small_catalog_file)]
    args += ["--revise", KIT_WORDS, "--revise", CHEAPER_WORDS, *([then] if then else [])]
    with fake_openai_server(fake) as url:
        code, out = graph_run_output(url, tmp_path / "data", *args)
    assert "Plan 2, changed as asked" in out and "Plan 3, changed as asked" in out
    if then:
        assert code == 0, out
        assert "step 3 (reason)" in out
    else:
        # No terminal to ask and no --yes: the third version waits, saved, for an answer.
        assert code != 0 and "the plan needs approval" in out, out
        assert fake.calls_for("ReasoningAnswer") == []
    assert len(fake.calls_for("FollowUpPlan")) == 2


def test_cheaper_with_no_amount_is_refused_with_what_to_write_instead(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    fake = script(CHEAPER)
    args = [REQUEST, "--catalog", str(small_catalog_file), "--revise", "make it cheaper", "--yes"]
    with fake_openai_server(fake) as url:
        code, out = graph_run_output(url, tmp_path / "data", *args, COLUMNS="200")
    assert code == 0, out
    assert "read as 'cheaper', which needs an amount here: the plan has no prices yet" in out
    assert "Plan 2" not in out  # no version is shown as made
    assert "step 1 (search) Find camera straps" in out  # --yes ran the plan shown


def test_revise_goes_with_a_run_only(tmp_path: Path) -> None:
    with fake_openai_server(script()) as url:
        code, out = graph_run_output(url, tmp_path / "data", "--list", "--revise", "cheaper")
    assert code != 0 and "--revise would be ignored by --list" in out


def test_the_words_are_shown_as_text_not_markup(small_catalog_file: Path, tmp_path: Path) -> None:
    fake = script(KIT_ADDED)
    words = "[bold red]add a lens kit[/] \x1b[2J"
    args = [REQUEST, "--catalog", str(small_catalog_file), "--revise", words, "--yes"]
    with fake_openai_server(fake) as url:
        code, out = graph_run_output(url, tmp_path / "data", *args)
    assert code == 0, out
    assert "changed as asked: '[bold red]add a lens kit[/] \\x1b[2J'" in out
    assert "\x1b" not in out
