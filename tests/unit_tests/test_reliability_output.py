"""What the CLI prints is true and complete (#24, class 11): thread ids are never cut,
--json always prints JSON, a reader that closes stdout ends the process quietly without
harm, a stdout closed from the start or full is one line and exit 1 (#43), and
arguments that cannot go together are refused before any work. Real CLI processes
against the fake OpenAI-compatible server."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runs import REPO_ROOT, cli_environment, graph_run_process
from conftest import skip_or_fail_in_ci
from fake_openai_server import fake_openai_server
from fakes import photo_gift_script

# The scripted reasoning replies are part of what is checked (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("pick_steps_ask_the_model")


# Long ids sharing a 60-character prefix, as runs named after one project would.
PREFIX = "shopping-for-the-summer-camping-trip-with-the-whole-family-"
LONG_IDS = (PREFIX + "tent", PREFIX + "stove")


def paused_runs(url: str, data: Path, catalog: Path, *thread_ids: str) -> None:
    """One run per thread id, left awaiting approval (no terminal, no --yes)."""
    for thread_id in thread_ids:
        run = graph_run_process(
            url, data, "a watch strap", "--catalog", str(catalog), "--thread", thread_id
        )
        assert run.returncode == 3 and "--yes" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("columns", ["80", "40"])
def test_list_never_cuts_a_thread_id(
    columns: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(photo_gift_script(2)) as url:
        paused_runs(url, isolated_data_dir, small_catalog_file, *LONG_IDS)
        listing = graph_run_process(url, isolated_data_dir, "--list", COLUMNS=columns)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    for thread_id in LONG_IDS:
        # Whole, on one line, so it can be copied into --resume.
        assert any(thread_id in line for line in lines), listing.stdout
    assert "…" not in "".join(line for line in lines if PREFIX[:20] in line), listing.stdout
    assert "awaiting approval" in listing.stdout


def test_list_keeps_the_table_when_the_ids_fit(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(photo_gift_script()) as url:
        paused_runs(url, isolated_data_dir, small_catalog_file, "short-1")
        listing = graph_run_process(url, isolated_data_dir, "--list", COLUMNS="80")
    assert "┃ thread" in listing.stdout and "short-1" in listing.stdout, listing.stdout


def test_list_and_history_json_print_strict_json(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    with fake_openai_server(photo_gift_script()) as url:
        done = graph_run_process(
            url, isolated_data_dir, "a watch strap", "--catalog", str(small_catalog_file),
            "--thread", LONG_IDS[0], "--yes",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
        history = graph_run_process(url, isolated_data_dir, "--history", LONG_IDS[0], "--json")
        missing = graph_run_process(url, isolated_data_dir, "--history", "nope", "--json")

    def strict(text: str) -> Any:
        def refuse(constant: str) -> None:
            raise AssertionError(f"not strict JSON: {constant}")

        return json.loads(text, parse_constant=refuse)

    threads = strict(listing.stdout)
    assert [t["thread_id"] for t in threads] == [LONG_IDS[0]]
    assert threads[0]["status"] == "done" and threads[0]["request"] == "a watch strap"
    assert {"steps_done", "steps_total", "updated_at", "error"} <= set(threads[0])
    document = strict(history.stdout)
    assert document["thread_id"] == LONG_IDS[0]
    nodes = [entry["node"] for entry in document["history"]]
    assert "planner" in nodes and "verify" in nodes
    assert {"checkpoint_id", "superstep", "summary", "created_at"} <= set(document["history"][0])
    # An error is still one line on stderr, and stdout holds one whole error document.
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "no run with thread id 'nope'" in missing.stderr
    error = strict(missing.stdout)
    assert error["status"] == "failed" and error["exit_code"] == 2
    assert "no run with thread id 'nope'" in error["error"]["message"]


def test_a_reader_that_closes_early_ends_the_run_quietly_and_it_resumes(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        args = ["a watch strap", "--catalog", str(small_catalog_file), "--thread", "piped", "-y"]
        # `python -m graph.run ... -y | head -1`: the reader takes one line and leaves.
        run = subprocess.Popen(
            [sys.executable, "-m", "graph.run", *args],
            cwd=REPO_ROOT,
            env=cli_environment(url, isolated_data_dir, COLUMNS="120"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert run.stdout is not None and run.stderr is not None
        first_line = run.stdout.readline()
        run.stdout.close()
        stderr = run.stderr.read().decode()
        code = run.wait(timeout=60)
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
        history = graph_run_process(url, isolated_data_dir, "--history", "piped")
        resumed = graph_run_process(url, isolated_data_dir, "--resume", "piped", "--yes")
    assert b"piped" in first_line
    assert code == 141, stderr  # 128 + SIGPIPE, as `yes | head -1` exits
    assert stderr == ""  # no traceback, no "Exception ignored" at exit
    # What was saved reads back whole, and the run finishes from there.
    (thread,) = json.loads(listing.stdout)
    assert thread["thread_id"] == "piped" and thread["status"] != "unreadable", thread
    assert history.returncode == 0, history.stdout + history.stderr
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Recommendation" in resumed.stdout or "already" in resumed.stdout
    assert len(fake.calls_for("Plan")) == 1  # nothing was planned twice


def test_json_with_stdout_closed_is_one_line_and_exit_1_before_any_work(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#43: `... --json >&-` exited 0 having printed nothing anywhere."""
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        run = subprocess.run(
            [sys.executable, "-m", "graph.run", "a watch strap", "--catalog",
             str(small_catalog_file), "--yes", "--json"],
            cwd=REPO_ROOT, env=cli_environment(url, isolated_data_dir), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=60,
            preexec_fn=lambda: os.close(1),  # the child starts with no stdout, as `>&-`
        )  # fmt: skip
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
    assert run.returncode == 1, run.stderr  # an environment fault
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: stdout is closed"), line
    assert fake.requests == [] and json.loads(listing.stdout) == []  # nothing ran


def test_json_to_a_full_device_is_one_line_and_exit_1_and_the_run_is_saved(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#43: `... --json > /dev/full` ended in two chained tracebacks (exit 70)."""
    if not Path("/dev/full").exists():
        skip_or_fail_in_ci("no /dev/full on this system (Linux has it)")
    fake = photo_gift_script()
    with fake_openai_server(fake) as url, open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", "graph.run", "a watch strap", "--catalog",
             str(small_catalog_file), "--thread", "full", "--yes", "--json"],
            cwd=REPO_ROOT, env=cli_environment(url, isolated_data_dir), stdin=subprocess.DEVNULL,
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
    assert run.returncode == 1, run.stderr  # an environment fault, not a bug (70)
    (line,) = run.stderr.splitlines()  # no traceback, no "Exception ignored" at exit
    assert line == "error: cannot write to stdout: No space left on device"
    (thread,) = json.loads(listing.stdout)
    assert thread["thread_id"] == "full" and thread["status"] == "done", thread


@pytest.mark.parametrize(
    "command",
    [["a watch strap", "--yes"], ["--list"], ["--history", "full"]],
    ids=["run", "list", "history"],
)
def test_plain_output_to_a_full_device_is_one_line_and_exit_1(
    command: list[str], small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    """#43: without --json, `... > /dev/full` ended in a traceback (exit 70, or 1 with
    two chained tracebacks): the first line shown fails, before any work."""
    if not Path("/dev/full").exists():
        skip_or_fail_in_ci("no /dev/full on this system (Linux has it)")
    if not command[0].startswith("-"):  # a run
        command = [*command, "--catalog", str(small_catalog_file)]
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        graph_run_process(url, isolated_data_dir, "a watch strap", "--catalog",
                          str(small_catalog_file), "--thread", "full", "--yes")  # fmt: skip
        requests = len(fake.requests)
        with open("/dev/full", "w") as full:
            run = subprocess.run(
                [sys.executable, "-m", "graph.run", *command],
                cwd=REPO_ROOT, env=cli_environment(url, isolated_data_dir),
                stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE, text=True,
                timeout=60,
            )  # fmt: skip
    assert run.returncode == 1, run.stderr  # an environment fault, not a bug (70)
    assert run.stderr.splitlines() == ["error: cannot write to stdout: No space left on device"]
    assert len(fake.requests) == requests  # nothing was asked of the model


# (case, arguments, words of the one error line)
CONFLICTS: list[tuple[str, list[str], str]] = [
    ("resume with a request and a thread", ["--resume", "T", "new request", "--thread", "X"],
     "a request and --resume cannot be combined"),
    ("resume with a thread", ["--resume", "T", "--thread", "X"], "--thread names a new run"),
    ("resume with a request", ["--resume", "T", "a tent"], "cannot be combined"),
    ("list with a request", ["--list", "a tent"], "a request and --list cannot be combined"),
    ("list and history", ["--list", "--history", "T"], "--list and --history cannot"),
    ("history and resume", ["--history", "T", "--resume", "T"], "--history and --resume"),
    ("stop server with a request", ["--stop-server", "a tent"], "cannot be combined"),
    ("list with a thread", ["--list", "--thread", "X"], "--thread names a new run"),
    ("other catalog without resume", ["a tent", "--other-catalog"], "--other-catalog goes"),
    ("list with run settings", ["--list", "--provider", "openai", "--limit", "3"],
     "--provider, --limit would be ignored by --list"),
    ("history with --yes", ["--history", "T", "--yes"], "--yes would be ignored"),
    ("stop server with --json", ["--stop-server", "--json"], "--json would be ignored"),
    ("nothing asked", ["--thread", "X"], "give a request"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "args", "words"), CONFLICTS, ids=[c[0] for c in CONFLICTS])
def test_conflicting_arguments_are_refused_before_any_work(
    case: str, args: list[str], words: str, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        run = graph_run_process(url, isolated_data_dir, *args)
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
    assert run.returncode == 2, run.stdout + run.stderr
    # With --json, stdout holds the error document (test_json_contract.py), else nothing.
    assert "--json" in args or run.stdout == ""
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: ") and words in line, line
    assert fake.requests == []  # nothing was sent to the model
    assert json.loads(listing.stdout) == []  # and no thread was saved


def test_resume_with_a_new_request_leaves_the_paused_run_untouched(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        paused_runs(url, isolated_data_dir, small_catalog_file, "T")
        before = graph_run_process(url, isolated_data_dir, "--history", "T", "--json").stdout
        run = graph_run_process(
            url, isolated_data_dir, "--resume", "T", "new request", "--thread", "X", "--yes"
        )
        after = graph_run_process(url, isolated_data_dir, "--history", "T", "--json").stdout
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
    assert run.returncode == 2 and "cannot be combined" in run.stderr, run.stderr
    assert len(fake.requests) == 1  # the paused run's plan only
    assert before == after  # not resumed, not changed
    assert [t["thread_id"] for t in json.loads(listing.stdout)] == ["T"]  # no thread X


# A self-hosted server reads the variable; OpenAI ignores it, but a typo is a typo.
@pytest.mark.parametrize(
    ("provider", "value"),
    [("compatible", "json-schema"), ("compatible", "JSON_SCHEMA"), ("openai", "tools")],
)
def test_a_typo_in_the_structured_output_method_is_refused(
    value: str, provider: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url, isolated_data_dir, "a watch strap", "--catalog", str(small_catalog_file),
            "--yes", "--provider", provider,
            OPENAI_STRUCTURED_OUTPUT_METHOD=value, OPENAI_API_KEY="sk-test",
        )  # fmt: skip
        listing = graph_run_process(url, isolated_data_dir, "--list", "--json")
    output = run.stdout + run.stderr
    assert run.returncode == 2 and "Traceback" not in output, output
    (line,) = [line for line in output.splitlines() if line.startswith("error:")]
    assert "OPENAI_STRUCTURED_OUTPUT_METHOD" in line and repr(value) in line, line
    assert "json_schema, function_calling" in line, line
    assert fake.requests == [] and json.loads(listing.stdout) == []


def test_a_catalog_with_a_repeated_column_is_refused_in_one_line(
    tmp_path: Path, isolated_data_dir: Path
) -> None:
    catalog = tmp_path / "repeated.csv"
    catalog.write_text("id,title,category,price,price\nw1,Watch strap,watches,5,500\n")
    tab_separated = tmp_path / "strap.tsv"
    tab_separated.write_text("id\ttitle\tcategory\tprice\nw1\tWatch strap, leather\twatches\t5\n")
    fake = photo_gift_script()
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url, isolated_data_dir, "a watch strap", "--catalog", str(catalog), "--yes"
        )
        loaded = subprocess.run(
            [sys.executable, "-m", "catalog", "load", str(tab_separated),
             "--index-dir", str(tmp_path / "index")],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 2 and "Traceback" not in output, output
    (line,) = [line for line in output.splitlines() if line.startswith("error:")]
    assert "repeats column 'price' (columns 4 and 5)" in line, line
    assert fake.requests == []
    assert loaded.returncode == 0 and "Indexed 1 products" in loaded.stdout, loaded.stderr


def run_on_a_terminal(url: str, data: Path, *args: str) -> tuple[int, str]:
    """The CLI with stdout and stderr on a pseudo-terminal (so rich sees a terminal);
    returns the exit code and everything it showed."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "graph.run", *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data, COLUMNS="120"),
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the process has closed its end
        while chunk := os.read(master, 65536):
            shown += chunk
    os.close(master)
    return process.wait(timeout=60), shown.decode(errors="replace")


def test_the_plan_streams_only_on_a_terminal(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script(2)
    with fake_openai_server(fake) as url:
        args = ("a watch strap", "--catalog", str(small_catalog_file), "--yes")
        piped = graph_run_process(url, isolated_data_dir, *args)
        streamed_when_piped = [bool(body.get("stream")) for body in fake.requests]
        code, shown = run_on_a_terminal(url, isolated_data_dir, *args)
    assert piped.returncode == 0 and "Recommendation" in piped.stdout, piped.stderr
    assert streamed_when_piped == [False, False]  # the plan and the pick, both plain
    assert code == 0 and "Recommendation" in shown, shown
    terminal = fake.requests[2:]
    # On a terminal the plan streams (shown as it is written); the pick never needs to.
    assert [bool(body.get("stream")) for body in terminal] == [True, False]


@pytest.mark.parametrize("refusal", ["400", "plain"])
def test_a_server_that_cannot_stream_is_asked_plainly(
    refusal: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script(2)  # a plain body to a streamed request spends a reply
    fake.refuse_streaming = refusal
    with fake_openai_server(fake) as url:
        code, shown = run_on_a_terminal(
            url, isolated_data_dir, "a watch strap", "--catalog", str(small_catalog_file), "--yes"
        )
    assert code == 0 and "Recommendation" in shown and "Traceback" not in shown, shown
    assert "error" not in shown.lower(), shown
    # One streamed try for the plan, then the same request plainly; the pick is plain.
    assert [bool(body.get("stream")) for body in fake.requests] == [True, False, False]


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["plain", "json"])
def test_the_catalog_clis_output_to_a_full_device_is_one_line_and_exit_1(
    json_flag: list[str], small_catalog_file: Path, tmp_path: Path
) -> None:
    """#43: `python -m catalog search ... > /dev/full` ended in a traceback, exit 70."""
    if not Path("/dev/full").exists():
        skip_or_fail_in_ci("no /dev/full on this system (Linux has it)")
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", "catalog", "search", "strap", *json_flag,
             "--catalog", str(small_catalog_file), "--index-dir", str(tmp_path / "index")],
            cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE,
            text=True, timeout=60,
        )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr.splitlines() == ["error: cannot write to stdout: No space left on device"]


@pytest.mark.parametrize(
    "command",
    [
        ["graph.eval", str(REPO_ROOT / "tests" / "fixtures" / "bundles_dev.json"), "--bundles",
         "--check"],
        ["graph.cli.documents"],  # the published schema, written out by a maintainer
    ],
    ids=["eval", "schema"],
)  # fmt: skip
def test_the_evals_and_schemas_output_to_a_full_device_is_one_line_and_exit_1(
    command: list[str], tmp_path: Path
) -> None:
    """#43: `python -m graph.eval ... > /dev/full` ended in a traceback, exit 70 (its
    tables were printed past the mechanism the other CLIs end through); the schema's
    writer in one too."""
    if not Path("/dev/full").exists():
        skip_or_fail_in_ci("no /dev/full on this system (Linux has it)")
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", *command],
            cwd=REPO_ROOT, env={**os.environ, "SHOPPING_PLANNER_DATA_DIR": str(tmp_path)},
            stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE, text=True,
            timeout=120,
        )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr.splitlines() == ["error: cannot write to stdout: No space left on device"]
