"""The published `--json` contract holds (#42): every kind of document the real CLI prints
(done, awaiting approval, resumed, rejected, edited, changed in words, a follow-up, and
every error kind)
is valid against docs/run-document.schema.json, the file users download, read by a JSON
Schema validator, not by the models it was generated from."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli_runs import (
    REPO_ROOT,
    cli_environment,
    graph_run_process,
    interruptible_by_ctrl_c,
    terminal_process,
)
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN
from jsonschema import Draft202012Validator
from test_plan_revision import KIT_ADDED

SCHEMA = json.loads((REPO_ROOT / "docs" / "run-document.schema.json").read_text())
VALIDATOR = Draft202012Validator(SCHEMA)
GIFT = "a strap gift under $200"
CHEAPER_PLAN: dict[str, Any] = {
    "follow_up": {"kind": "cheaper", "item": "camera strap", "wants": None},
    "goal": "A cheaper camera strap.",
    "steps": [{"query": "camera strap"}, {"query": None, "action": "Pick the strap"}],
}


def script(runs: int = 6) -> FakeScript:
    return FakeScript(
        replies={
            "Plan": [dict(STRAP_PLAN) for _ in range(runs)],
            "FollowUpPlan": [CHEAPER_PLAN],
            "ReasoningAnswer": [dict(STRAP_PICK) for _ in range(runs)],
        }
    )


def published(run: subprocess.CompletedProcess[str], status: str, code: int) -> dict[str, Any]:
    """The one document on the run's stdout, valid against the published schema, with
    the status and exit code the process ended with."""
    assert run.returncode == code, run.stdout + run.stderr
    document = json.loads(run.stdout)
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(document)]
    assert not problems, problems
    assert document["status"] == status and document["exit_code"] == code, document
    assert "Traceback" not in run.stderr or code == 70, run.stderr
    return document


def on_terminal(
    url: str, data: Path, typed: bytes, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """The CLI with `typed` waiting on a pseudo-terminal for its approval question; stdout
    (the document) and stderr apart."""
    return terminal_process(url, data, typed, *args, COLUMNS="200", **env)


def test_the_published_schema_is_a_draft_2020_12_schema_with_an_id() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"].startswith("urn:shopping-planner:run-document:")
    assert "graph/checks" not in json.dumps(SCHEMA)


def test_every_run_document_the_cli_prints_is_valid_against_the_published_schema(
    small_catalog_file: Path, isolated_data_dir: Path, tmp_path: Path
) -> None:
    catalog = ("--catalog", str(small_catalog_file))
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "path.write_text(path.read_text().replace('\"camera strap\"', '\"leather strap\"'))\n"
    )
    data = isolated_data_dir
    with fake_openai_server(script()) as url:
        paused = graph_run_process(url, data, GIFT, *catalog, "--thread", "w", "--json")
        resumed = graph_run_process(url, data, "--resume", "w", "--yes", "--json")
        done = graph_run_process(url, data, GIFT, *catalog, "--yes", "--json")
        follow_up = graph_run_process(
            url, data, "a cheaper one", "--follow-up", "w", "--yes", "--json"
        )
        rejected = on_terminal(url, data, b"r\n", GIFT, *catalog, "--json")
        editor_command = f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}"
        edited = on_terminal(url, data, b"e\na\n", GIFT, *catalog, "--json", EDITOR=editor_command)
    waiting = published(paused, "awaiting approval", 3)
    assert waiting["resume"] == "--resume w --yes" and waiting["outcome"] is None
    # What the model-facing plan schema refused (#42): the fields code writes.
    assert waiting["plan"]["budget"] == 200 and waiting["plan"]["pick"] in ("each", "one")
    assert "filled_from_request" in waiting["plan"]["steps"][0]
    assert published(resumed, "done", 0)["outcome"]["picks"]
    assert published(done, "done", 0)["approval"] == "approved"
    followed = published(follow_up, "done", 0)
    assert followed["follow_up_of"] == "w" and followed["follow_up"]["kind"] == "cheaper"
    assert published(rejected, "rejected", 0)["approval"] == "rejected"
    revised = published(edited, "done", 0)
    assert revised["plan_edited"] and revised["plan_changes"][0]["field"] == "query"
    # The schema is no rubber stamp: a document missing a field, or of another status, fails.
    document = json.loads(done.stdout)
    assert not VALIDATOR.is_valid({k: v for k, v in document.items() if k != "outcome"})
    assert not VALIDATOR.is_valid({**document, "status": "finished"})
    assert not VALIDATOR.is_valid({**document, "plan": {**document["plan"], "budget": "200"}})


def test_a_plan_changed_in_words_lists_each_version_as_the_approval_shows_it(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    words = "add a lens cleaning kit"
    fake = FakeScript(
        replies={"Plan": [STRAP_PLAN], "FollowUpPlan": [KIT_ADDED], "ReasoningAnswer": [STRAP_PICK]}
    )
    args = (GIFT, "--catalog", str(small_catalog_file), "--revise", words, "--yes", "--json")
    with fake_openai_server(fake) as url:
        run = graph_run_process(url, isolated_data_dir, *args)
    document = published(run, "done", 0)
    [revision] = document["revisions"]
    assert revision["version"] == 2 and revision["words"] == words
    # Plan 1 as it was shown, then what the words changed in it, as the approval said.
    assert [s["query"] for s in revision["before"]["steps"]] == ["camera strap", None]
    changes = {change["description"]: change["kind"] for change in revision["changes"]}
    assert changes["step 2 added: Search lens cleaning kit"] == "added"
    # Plan 2 is the model's plan that ran; no person edited it.
    assert [s["query"] for s in document["model_plan"]["steps"]][:2] == [
        "camera strap",
        "lens cleaning kit",
    ]
    assert not document["plan_edited"] and document["plan_changes"] == []


def with_a_bug(url: str, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process, with a bug put into its one command call."""
    program = (
        "import sys, graph.cli.commands as commands\n"
        "def broken(*_): raise ZeroDivisionError('a bug')\n"
        "commands.dispatch = broken\n"
        "from graph.cli.main import main\n"
        "sys.exit(main())\n"
    )
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def interrupted(url: str, data: Path, fake: FakeScript, *args: str) -> Any:
    """The real CLI stopped by Ctrl-C while the planner's call is in flight."""
    run = subprocess.Popen(
        [sys.executable, "-m", "graph.run", *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data, SHOPPING_LLM_TIMEOUT="300"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible_by_ctrl_c,
    )
    deadline = time.monotonic() + 60
    while not fake.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the call is in flight
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


def test_every_error_document_the_cli_prints_is_valid_against_the_published_schema(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    catalog = ("--catalog", str(small_catalog_file))
    data = isolated_data_dir
    no_server = "http://127.0.0.1:9/v1"  # nothing listens there
    stalled = FakeScript(replies={}, faults=["timeout"], timeout_sleep=60)
    with fake_openai_server(stalled) as url:
        stopped = interrupted(url, data, stalled, GIFT, *catalog, "--thread", "i", "--json")
    cases = {
        # a runtime failure (1): the model server cannot be reached
        "ProviderFailed": (graph_run_process(no_server, data, GIFT, *catalog, "--json"), 1),
        # bad input (2): a setting out of range, an unknown thread, no request at all and
        # arguments that cannot be combined (#43: their stdout was empty)
        "RunRefused": (graph_run_process(no_server, data, GIFT, "--limit", "0", "--json"), 2),
        "history": (graph_run_process(no_server, data, "--history", "nope", "--json"), 2),
        "no request": (graph_run_process(no_server, data, "--json"), 2),
        "conflict": (graph_run_process(no_server, data, GIFT, "--list", "--json"), 2),
        # a bug (70)
        "ZeroDivisionError": (with_a_bug(no_server, data, GIFT, "--yes", "--json"), 70),
    }
    for name, (run, code) in cases.items():
        document = published(run, "failed", code)
        assert document["error"]["message"], name
        assert name[0].islower() or document["error"]["type"] == name, document
    assert published(stopped, "interrupted", 130)["thread_id"] == "i"
