"""Class 9 of the second red-team round (#24): an editor that does not leave a plan file.

An $EDITOR that deletes the plan file, or leaves a folder or a FIFO in its place, is no
edit: one line says what happened, the process never hangs, and the plan stays pending
and approvable (approved, it runs the model's plan; left unanswered, --resume continues
it). Through the real CLI on a pseudo-terminal, as a person's editor runs.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from cli_runs import graph_run_output, run_on_terminal
from conftest import FakeServer

from graph.builder import build_graph
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config

# What each editor does to the file it is given, as a line of Python.
EDITORS = {
    "removed": ("os.remove(path)", "the editor removed the plan file"),
    "a folder": ("os.remove(path); os.mkdir(path)", "something other than a file"),
    "a FIFO": ("os.remove(path); os.mkfifo(path)", "something other than a file"),
}


def editor(tmp_path: Path, action: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"import os, sys\npath = sys.argv[1]\n{action}\n")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def saved(data: Path, thread: str) -> dict[str, object]:
    graph = build_graph(checkpointer=open_checkpointer(str(data / "checkpoints.sqlite")))
    return graph.get_state(thread_config(thread)).values


@pytest.mark.parametrize("case", list(EDITORS))
def test_an_editor_that_leaves_no_plan_file_is_no_edit_and_the_plan_runs(
    case: str, tmp_path: Path, small_catalog_file: Path, photo_gift_server: FakeServer
) -> None:
    action, said = EDITORS[case]
    data = tmp_path / "data"
    code, out = run_on_terminal(
        photo_gift_server.url,
        data,
        b"e\na\n",
        "a strap gift",
        "--thread",
        "t",
        "--catalog",
        str(small_catalog_file),
        EDITOR=editor(tmp_path, action),
    )
    assert code == 0 and "Traceback" not in out, out
    [line] = [line for line in out.splitlines() if said in line]
    assert "no edit made" in line, out
    values = saved(data, "t")
    assert values["approval"] == "approved" and values.get("plan_edit") is None
    assert [r.step for r in values["step_results"]] == [1, 2]


def test_after_a_removed_plan_file_the_run_stays_paused_and_resumes(
    tmp_path: Path, small_catalog_file: Path, photo_gift_server: FakeServer
) -> None:
    data = tmp_path / "data"
    code, out = run_on_terminal(
        photo_gift_server.url,
        data,
        b"e\n\x04",  # edit, then Ctrl-D at the next question
        "a strap gift",
        "--thread",
        "t",
        "--catalog",
        str(small_catalog_file),
        EDITOR=editor(tmp_path, EDITORS["removed"][0]),
    )
    assert code == 3 and "the editor removed the plan file" in out, out
    assert "--resume t --yes continues it" in out, out
    assert saved(data, "t").get("approval") is None  # still pending
    code, out = graph_run_output(
        photo_gift_server.url, data, "--resume", "t", "--yes", timeout=90, COLUMNS="300"
    )
    assert code == 0, out
    assert [r.step for r in saved(data, "t")["step_results"]] == [1, 2]


def test_without_visual_or_editor_the_first_installed_of_nano_and_vi_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graph.cli import editor as cli_editor

    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    installed: dict[str, str] = {}
    monkeypatch.setattr(cli_editor.shutil, "which", installed.get)
    assert cli_editor.editor_command() is None
    installed["vi"] = "/bin/vi"
    assert cli_editor.editor_command() == ["/bin/vi"]
    installed["nano"] = "/bin/nano"
    assert cli_editor.editor_command() == ["/bin/nano"]
