"""Messages say what is true: the --resume command names the real thread and is offered
only when something was saved; a step error names its cause; catalog errors name the line
an editor shows. Real CLI processes against the fake server where a run is involved."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PLAN, photo_gift_script

from catalog import CatalogError
from catalog.loaders import load_products

# The scripted reasoning replies are part of what is checked (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("pick_steps_ask_the_model")


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("fault", ["500", "429", "drop"])
def test_provider_error_names_the_real_thread_and_the_resume_works(
    fault: str, small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    catalog = ("--catalog", str(small_catalog_file))
    fake = photo_gift_script(faults=[fault] * 3)
    with fake_openai_server(fake) as url:
        failed = graph_run_process(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            "--thread",
            "t-9",
            *catalog,
            COLUMNS="400",
        )
        (line,) = error_lines(failed.stdout)
        assert "THREAD" not in line and "--resume t-9" in line, line
        assert "finished steps are saved" in line
        resumed = graph_run_process(url, isolated_data_dir, "--resume", "t-9", "--yes")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_no_terminal_to_approve_names_the_real_thread(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]})
    with fake_openai_server(fake) as url:
        paused = graph_run_process(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--thread",
            "p-1",
            "--catalog",
            str(small_catalog_file),
            COLUMNS="400",
        )
    assert paused.returncode == 3
    assert "--resume p-1 --yes continues it" in paused.stdout and "THREAD" not in paused.stdout


def test_locked_database_promises_no_resume_for_a_thread_never_saved(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    db = tmp_path / "c.sqlite"
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]})
    with fake_openai_server(fake) as url:
        graph_run_process(url, tmp_path, "--list", "--db", str(db))  # creates the database
        other = sqlite3.connect(str(db), timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")
            run = graph_run_process(
                url,
                tmp_path,
                "a strap gift under $200",
                "--yes",
                "--thread",
                "never",
                "--db",
                str(db),
                "--catalog",
                str(small_catalog_file),
                SHOPPING_CHECKPOINT_BUSY_TIMEOUT="0.2",
                COLUMNS="400",
            )
        finally:
            other.execute("ROLLBACK")
            other.close()
        listing = graph_run_process(url, tmp_path, "--list", "--db", str(db))
    (line,) = error_lines(run.stdout)
    assert "database is locked" in line and "--resume" not in line, line
    assert "never" not in listing.stdout  # indeed nothing was saved
    assert fake.requests == []


def test_a_reasoning_step_without_a_structured_reply_says_so(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    # The planner call is answered; the reasoning call gets prose, no tool call.
    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]}, faults=["ok", "text"])
    with fake_openai_server(fake) as url:
        run = graph_run_process(
            url,
            isolated_data_dir,
            "a strap gift under $200",
            "--yes",
            "--catalog",
            str(small_catalog_file),
            COLUMNS="400",
        )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no usable answer: it answered without the structured reply" in run.stdout
    assert "None" not in run.stdout


HEADER = "id,title,category,price\n"
# (file name, content, the line an editor shows for the bad record)
LINE_CASES = [
    ("quoted.csv", HEADER + 'a,"two\nlines",c,1\nb,t,c,-3\n', 4),
    ("blank.csv", HEADER + "a,t,c,1\n\n\nb,t,c,abc\n", 5),
    ("sep.csv", HEADER + "a,x\u2028y\x0cz\x1dw,c,1\nb,t,c,-3\n", 3),
    ("crlf.csv", HEADER.replace("\n", "\r\n") + "a,t,c,1\r\nb,t,c,-3\r\n", 3),
    ("multi.csv", HEADER + 'a,"one\ntwo\nthree",c,-1\n', 2),
    ("open.csv", HEADER + 'a,t,c,1\nb,"unterminated,c,1\nc,t,c,1\n', 3),
    (
        "sep.jsonl",
        '{"id":"a","title":"x\u2028y","category":"c","price":1}\n'
        '{"id":"b","title":"t","category":"c","price":-1}\n',
        2,
    ),
]


@pytest.mark.parametrize(("name", "content", "line"), LINE_CASES, ids=[c[0] for c in LINE_CASES])
def test_catalog_errors_name_the_line_an_editor_shows(
    name: str, content: str, line: int, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(content.encode())
    with pytest.raises(CatalogError) as caught:
        load_products(path)
    assert caught.value.location == f"line {line}", str(caught.value)
