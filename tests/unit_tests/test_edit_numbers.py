"""Class 6 of the second red-team round (#24): numbers round-trip exactly through the plan
editor's file, and a change list never shows two equal-looking values. The real CLI on a
pseudo-terminal, with an $EDITOR that changes only the query."""

from __future__ import annotations

import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import REPO_ROOT, cli_environment
from fake_openai_server import FakeScript, fake_openai_server

from graph.builder import build_graph
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config
from graph.schemas import Plan, PlanChange
from graph.shaping.edits import describe_change, plan_changes, plan_text, read_plan_text

AWKWARD = [1_999_999.0, 1_999_999.99, 0.1, 123456789.125, 9_007_199_254_740_993.0, 1e-7, 3e300]


@pytest.mark.parametrize("budget", AWKWARD)
def test_numbers_read_back_exactly_from_the_edit_file(budget: float) -> None:
    plan = Plan.model_validate(
        {"goal": "A camera.", "budget": budget, "steps": [
            {"step": 1, "action": "Find cameras", "query": "camera", "max_price": budget},
            {"step": 2, "action": "Pick", "query": None},
        ]}
    )  # fmt: skip
    again = read_plan_text(plan_text(plan), plan)
    assert again is None or again == plan  # None: unchanged, no edit


@pytest.mark.parametrize("before", AWKWARD)
def test_a_change_never_shows_two_equal_looking_values(before: float) -> None:
    after = float.fromhex(before.hex()) * (1 + 2**-52)  # the next float up, or near it
    line = describe_change(PlanChange(kind="plan", field="budget", before=before, after=after))
    shown_before, shown_after = line.removeprefix("budget: ").split(" -> ")
    assert shown_before != shown_after, line


PLAN = {
    "goal": "A camera body under $1,999,999.",
    "budget": 1_999_999,
    "steps": [
        {"step": 1, "action": "Find camera bodies", "query": "camera", "max_price": 1_999_999},
        {"step": 2, "action": "Pick one", "query": None},
    ],
}


def test_editing_only_the_query_changes_nothing_else(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    script = tmp_path / "editor.py"
    script.write_text(
        "import pathlib, sys\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "text = path.read_text()\n"
        "path.write_text(text.replace('query = \"camera\"', 'query = \"mirrorless\"'))\n"
    )
    fake = FakeScript(
        replies={"Plan": [PLAN], "ReasoningAnswer": [{"answer": "This.", "product_ids": ["cam-1"]}]}
    )
    data = tmp_path / "data"
    master, slave = pty.openpty()
    try:
        with fake_openai_server(fake) as url:
            os.write(master, b"e\na\n")
            env = cli_environment(
                url,
                data,
                EDITOR=f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                COLUMNS="200",
            )
            env.pop("VISUAL", None)
            run = subprocess.run(
                [sys.executable, "-m", "graph.run", "a camera body under $1,999,999.00",
                 "--thread", "n", "--catalog", str(small_catalog_file)],
                cwd=REPO_ROOT, env=env, stdin=slave, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
    finally:
        os.close(master)
        os.close(slave)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "step 1: query 'camera' -> 'mirrorless'" in output, output
    assert "budget:" not in output and "max_price" not in output.split("Plan (your edit)")[-1]
    values = (
        build_graph(open_checkpointer(str(data / "checkpoints.sqlite")))
        .get_state(thread_config("n"))
        .values
    )
    edited = values["plan_edit"].plan
    assert edited.budget == 1_999_999.0 and edited.steps[0].max_price == 1_999_999.0
    assert [c.field for c in plan_changes(values["plan"], edited)] == ["query"]
