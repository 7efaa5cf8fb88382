"""Every argument of `python -m graph.eval` is checked before the first goal runs (#24,
classes 8 and 9): a missing, unreadable, non-JSON or misshapen input file, a --limit of 0
or below, and an --out that cannot be written each give one `error:` line naming the
problem, exit 2, no traceback, no LLM call, no run saved and the old report untouched.
Real eval processes against the fake server."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runs import graph_eval_process
from conftest import FakeServer

from graph.evals.inputs import write_atomically

GOAL = {"instruction_text": "a strap gift under $200", "asin": "strap-1", "attributes": []}
OLD_REPORT = '{"label": "old", "summary": {}}\n'
LABELS = {"labels": {"r1": {"max_price": 200, "min_price": None, "min_rating": None}}}
WORD_LABELS = {"labels": {"r1": {"max_price": "cheap", "min_price": None, "min_rating": None}}}
BUNDLES = {
    "requests": [
        {
            "id": "s01",
            "request": "a camera strap under $200",
            "budget": 200,
            "items": [{"kind": "camera strap", "title_has": ["camera strap"]}],
        }
    ]
}


def write(path: Path, content: str | bytes | object) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


# Each case builds the eval's arguments in a folder ($F) holding a good goals file
# (goals.json), requests file (requests.jsonl), labels (labels.json), bundle file
# (bundles.json) and an old report (report.json), beside the catalog ($CATALOG); then the
# words the one error line must hold.
Case = Callable[[Path], list[str]]
GOALS_RUN = ["$F/goals.json", "--catalog", "$CATALOG"]
LIMITS_RUN = ["$F/requests.jsonl", "--limits", "$F/labels.json"]
BUNDLES_RUN = ["$F/bundles.json", "--bundles", "--catalog", "$CATALOG"]


def goals_file(content: str | bytes | object) -> Case:
    return lambda folder: [str(write(folder / "bad-goals.json", content)), *GOALS_RUN[1:]]


def fifo(folder: Path) -> list[str]:
    os.mkfifo(folder / "pipe.json")
    return [str(folder / "pipe.json"), "--catalog", "$CATALOG"]


def directory(folder: Path) -> list[str]:
    (folder / "goals-dir").mkdir()
    return ["$F/goals-dir", "--catalog", "$CATALOG"]


def md_beside_is_a_directory(folder: Path) -> list[str]:
    (folder / "new.md").mkdir()
    return [*GOALS_RUN, "--out", "$F/new.json"]


CASES: list[tuple[str, Case, str]] = [
    ("goals missing", lambda f: ["$F/nope.json", "--catalog", "$CATALOG"], "No such file"),
    ("goals a directory", directory, "not a regular file"),
    ("goals a fifo", fifo, "not a regular file"),
    ("goals not json", goals_file("[{"), "not JSON (Expecting"),
    ("goals not utf-8", goals_file(b"\xff\xfe[]"), "not UTF-8"),
    ("goals an object", goals_file({"goals": []}), "expected a non-empty list of goals"),
    ("goals empty", goals_file([]), "expected a non-empty list"),
    ("goal a string", goals_file(["buy shoes"]), "goal 1: expected an object, got str"),
    ("goal without asin", goals_file([{"instruction_text": "x", "attributes": []}]), "asin"),
    ("goal asin a number", goals_file([{**GOAL, "asin": 7}]), "asin must be a non-empty"),
    ("goal attributes", goals_file([{**GOAL, "attributes": "red"}]), "attributes must be"),
    ("goal cap a word", goals_file([{**GOAL, "price_upper": "cheap"}]), "price_upper must"),
    (
        "goals nested deep",
        goals_file("[" * 100_000 + "]" * 100_000),
        "goals file",
    ),
    ("catalog missing", lambda f: [*GOALS_RUN[:2], "$F/nope.jsonl"], "not found"),
    (
        "catalog not json",
        lambda f: [*GOALS_RUN[:2], str(write(f / "bad.jsonl", "{oops\n"))],
        "line 1",
    ),
    (
        "limit 0",
        lambda f: [*GOALS_RUN, "--limit", "0"],
        "--limit must be 1 or more (the number of goals to run), got 0",
    ),
    ("limit -2", lambda f: [*GOALS_RUN, "--limit", "-2"], "got -2"),
    ("limits limit 0", lambda f: [*LIMITS_RUN, "--limit", "0"], "got 0"),
    ("bundles limit 0", lambda f: [*BUNDLES_RUN, "--limit", "0"], "got 0"),
    ("out folder missing", lambda f: [*GOALS_RUN, "--out", "$F/no/such/r.json"], "does not exist"),
    ("out a directory", lambda f: [*GOALS_RUN, "--out", "$F"], "is a directory"),
    ("out table a directory", md_beside_is_a_directory, "new.md is a directory"),
    ("out a .md path", lambda f: [*GOALS_RUN, "--out", "$F/r.md"], "give a .json path"),
    ("out the goals file", lambda f: [*GOALS_RUN, "--out", "$F/goals.json"], "an input of"),
    ("out unwritable", lambda f: [*GOALS_RUN, "--out", "/sys/r.json"], "cannot write in"),
    ("limits out missing", lambda f: [*LIMITS_RUN, "--out", "$F/no/r.json"], "does not exist"),
    ("db a directory", lambda f: [*GOALS_RUN, "--db", "$F"], "cannot use checkpoint database"),
    ("limits db a directory", lambda f: [*LIMITS_RUN, "--db", "$F"], "cannot use checkpoint"),
    ("requests missing", lambda f: ["$F/nope.jsonl", *LIMITS_RUN[1:]], "No such file"),
    (
        "requests line not json",
        lambda f: [str(write(f / "r.jsonl", '{"id": "r1", "ques": "x"}\n{no\n')), *LIMITS_RUN[1:]],
        "line 2: not JSON",
    ),
    (
        "requests empty",
        lambda f: [str(write(f / "r.jsonl", "\n\n")), *LIMITS_RUN[1:]],
        "no records",
    ),
    (
        "request ques a list",
        lambda f: [str(write(f / "r.jsonl", '{"id": "r1", "ques": []}')), *LIMITS_RUN[1:]],
        "ques must be",
    ),
    (
        "labels not json",
        lambda f: [*LIMITS_RUN[:2], str(write(f / "l.json", "labels"))],
        "not JSON",
    ),
    (
        "label a word",
        lambda f: [*LIMITS_RUN[:2], str(write(f / "l.json", WORD_LABELS))],
        "must be a number or null",
    ),
    ("bundles missing", lambda f: ["$F/nope.json", "--bundles"], "cannot read a bundle file"),
    ("compare missing", lambda f: ["--compare", "$F/report.json", "$F/nope.json"], "No such file"),
    (
        "compare not json",
        lambda f: ["--compare", "$F/report.json", str(write(f / "x.json", "{"))],
        "not JSON",
    ),
    (
        "compare not a report",
        lambda f: ["--compare", "$F/report.json", "$F/labels.json"],
        "no 'summary'",
    ),
]


@pytest.mark.parametrize(("case", "build", "words"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_is_one_line_before_any_goal_runs(
    case: str,
    build: Case,
    words: str,
    small_catalog_file: Path,
    tmp_path: Path,
    photo_gift_server: FakeServer,
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    write(folder / "goals.json", [GOAL])
    write(folder / "requests.jsonl", '{"id": "r1", "ques": "a strap gift under $200"}\n')
    write(folder / "labels.json", LABELS)
    write(folder / "bundles.json", BUNDLES)
    write(folder / "report.json", OLD_REPORT)
    args = [
        a.replace("$CATALOG", str(small_catalog_file)).replace("$F", str(folder))
        for a in build(folder)
    ]
    db = tmp_path / "runs.sqlite"
    # The case's own --db, if any, comes last and wins.
    run = graph_eval_process(photo_gift_server.url, tmp_path / "data", "--db", str(db), *args)
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "Traceback" not in output and run.stdout == "", output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert words in lines[0], output
    assert photo_gift_server.script.requests == []  # checked before the first goal
    assert not db.exists() or saved_threads(db) == 0  # no run saved
    assert (folder / "report.json").read_text() == OLD_REPORT


def saved_threads(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        if "checkpoints" not in tables:
            return 0
        return connection.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]


def test_a_report_that_cannot_be_written_leaves_the_old_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = write(tmp_path / "report.json", OLD_REPORT)

    def fail(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(report, '{"label": "new"}\n')
    assert report.read_text() == OLD_REPORT
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left
