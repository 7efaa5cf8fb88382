"""Class 9 of the second red-team round (#24): hostile values become one clear line, never
a traceback, and nothing stored is corrupted. Hostile numbers and structure in a catalog;
no figure shown or stored is inf or NaN, and --json is strict JSON; a server's usage
block that is not token counts is unknown usage, said once; time settings past a day and
an ASCII locale; a thread that a newer version wrote in a shape this one cannot use. Real
CLI processes against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runs import REPO_ROOT, cli_environment, graph_run_process
from conftest import SMALL_CATALOG, FakeServer
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel, photo_gift_script
from langgraph.checkpoint.base import copy_checkpoint
from langgraph.checkpoint.base.id import uuid6

from catalog import CatalogError, load_products
from graph.builder import build_graph
from graph.context import Context
from graph.runs import session
from graph.runs.checkpoint import open_checkpointer
from graph.runs.session import stay_paused
from graph.runs.threads import WRITER_VERSION, read_state, this_version, thread_config

# The scripted reasoning replies are part of what is checked (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("pick_steps_ask_the_model")


MAX_PRICE = 1_000_000_000.0  # catalog.models.MAX_PRICE, the highest price a catalog holds
HUGE = int("9" * 400)  # a 400-digit number: float() of it overflows


def _jsonl(*rows: dict[str, Any]) -> str:
    return "\n".join(json.dumps(row) for row in rows) + "\n"


def _with(**fields: Any) -> dict[str, Any]:
    return {**SMALL_CATALOG[0], **fields}


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


# (case, file name, file text, words the one error line must hold)
HOSTILE_CATALOGS: list[tuple[str, str, str, str]] = [
    ("400-digit price", "c.jsonl", _jsonl(_with(price=HUGE)), "line 1: price must be at most"),
    ("price 1e308", "c.jsonl", _jsonl(_with(price=1.7e308)), "price must be at most"),
    ("price 1e400 text", "c.jsonl", _jsonl(_with(price="1e400")), "price must be at most"),
    ("400-digit rating", "c.jsonl", _jsonl(_with(rating=HUGE)), "rating must be a number"),
    (
        "400-digit price csv",
        "c.csv",
        "id,title,category,price\nx,Strap,cameras,39\ny,Bag,cameras," + "9" * 400 + "\n",
        "line 3: price must be at most",
    ),
    (
        "400-digit webshop pricing",
        "c.jsonl",
        _jsonl({"id": "w1", "product": {"name": "Strap", "pricing": [HUGE], "category": "c"}}),
        "price must be at most",
    ),
    ("5000-digit number", "c.jsonl", '{"id": "x", "price": ' + "9" * 5000 + "}\n", "too many"),
    (
        "nested 200,000 deep",
        "c.jsonl",
        _jsonl(SMALL_CATALOG[1])[:-1] + '\n{"id": "x", "tags": ' + _deep(200_000) + "}\n",
        "line 2: JSON nested too deeply",
    ),
    ("nested document", "c.json", '{"products": ' + _deep(200_000) + "}", "nested too deeply"),
]


@pytest.mark.parametrize(
    ("case", "name", "text", "words"), HOSTILE_CATALOGS, ids=[c[0] for c in HOSTILE_CATALOGS]
)
def test_hostile_numbers_and_structure_in_a_catalog_are_one_line(
    case: str, name: str, text: str, words: str, tmp_path: Path
) -> None:
    catalog = tmp_path / name
    catalog.write_text(text)
    with pytest.raises(CatalogError) as refused:
        load_products(catalog)
    assert words in str(refused.value) and len(str(refused.value)) < 300, refused.value

    fake = FakeScript(replies={"Plan": [dict(STRAP_PLAN)]})
    data = tmp_path / "data"
    with fake_openai_server(fake) as url:
        run = graph_run_process(url, data, "a strap gift", "--yes", "--catalog", str(catalog))
        listing = graph_run_process(url, data, "--list")
    output = run.stdout + run.stderr
    assert run.returncode == 2 and "Traceback" not in output, output
    assert [line for line in output.splitlines() if line.strip()] == [
        line for line in output.splitlines() if line.startswith("error:")
    ], output
    assert words in output and len(output) < 400, output
    assert fake.requests == [] and "No runs yet." in listing.stdout, listing.stdout


def _no_constants(name: str) -> None:
    raise AssertionError(f"--json printed {name}, which is not JSON")


def test_the_largest_prices_total_a_finite_figure_and_json_stays_strict(
    tmp_path: Path,
) -> None:
    """Two products at the price cap: the total is exact and finite on the terminal, in
    --json (parsed strictly: no Infinity or NaN) and in the stored outcome."""
    rows = [
        _with(id="strap-1", price=MAX_PRICE),
        {**SMALL_CATALOG[2], "id": "kit-1", "price": MAX_PRICE},
    ]
    catalog = tmp_path / "c.jsonl"
    catalog.write_text(_jsonl(*rows))
    plan = {
        "goal": "A strap and a cleaning kit.",
        "budget": None,
        "steps": [
            {"step": 1, "action": "Find a camera strap", "query": "camera strap"},
            {"step": 2, "action": "Find a lens cleaning kit", "query": "lens cleaning kit"},
            {"step": 3, "action": "Pick one of each", "query": None},
        ],
    }
    pick = {"answer": "Both.", "product_ids": ["strap-1", "kit-1"]}
    fake = FakeScript(replies={"Plan": [plan, plan], "ReasoningAnswer": [pick, pick]})
    data = tmp_path / "data"
    with fake_openai_server(fake) as url:
        shown = graph_run_process(
            url,
            data,
            "a camera strap and a cleaning kit",
            "--yes",
            "--catalog",
            str(catalog),
            "--thread",
            "shown",
            COLUMNS="200",
        )
        as_json = graph_run_process(
            url,
            data,
            "a camera strap and a cleaning kit",
            "--yes",
            "--json",
            "--catalog",
            str(catalog),
            "--thread",
            "json",
        )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "Total $2,000,000,000.00" in shown.stdout, shown.stdout
    assert "inf" not in shown.stdout.lower() and "nan" not in shown.stdout.lower()
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout, parse_constant=_no_constants)
    assert report["outcome"]["total_price"] == 2 * MAX_PRICE


# Usage blocks a broken or hostile server sends: LangChain raised on the first three, the
# 400-digit count broke the checkpoint write, and negative counts were shown as they came.
HOSTILE_USAGE: list[tuple[str, Any]] = [
    ("floats", {"prompt_tokens": 1.5, "completion_tokens": 2.7, "total_tokens": 4.2}),
    ("strings", {"prompt_tokens": "ten", "completion_tokens": "5", "total_tokens": "x"}),
    ("1e30", {"prompt_tokens": 1e30, "completion_tokens": 1e30, "total_tokens": 2e30}),
    ("negative", {"prompt_tokens": -500, "completion_tokens": -20, "total_tokens": -520}),
    ("400 digits", {"prompt_tokens": HUGE, "completion_tokens": 1, "total_tokens": 1}),
    ("not an object", "garbage"),
    (
        "bad details",
        {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": "all"},
        },
    ),
]


def test_a_usage_block_that_is_not_token_counts_is_unknown_usage_said_once(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    cases = len(HOSTILE_USAGE)
    fake = photo_gift_script(
        cases,
        # Each run makes two calls (the plan and the pick), both with the case's block.
        usage_blocks=[block for _, block in HOSTILE_USAGE for _ in range(2)],
    )
    data = tmp_path / "data"
    catalog = ("--catalog", str(small_catalog_file))
    with fake_openai_server(fake) as url:
        runs = [
            graph_run_process(url, data, "a strap gift", "--yes", "--thread", case, *catalog)
            for case, _ in HOSTILE_USAGE
        ]
        fake.usage_blocks = [HOSTILE_USAGE[3][1]] * 2  # negative counts again, for --json
        fake.replies = {"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]}
        as_json = graph_run_process(
            url, data, "a strap gift", "--yes", "--json", "--thread", "json", *catalog
        )
        listing = graph_run_process(url, data, "--list", COLUMNS="200")
    for (case, _), run in zip(HOSTILE_USAGE, runs, strict=True):
        output = run.stdout + run.stderr
        assert run.returncode == 0 and "Traceback" not in output, (case, output)
        said = [line for line in output.splitlines() if "tokens unknown" in line]
        assert len(said) == 1 and "for 2 of them" in output, (case, output)
        assert "-500" not in output and "-1,000" not in output, (case, output)
        assert "Leather camera strap" in run.stdout, (case, output)
    assert as_json.returncode == 0, as_json.stderr
    usage = json.loads(as_json.stdout, parse_constant=_no_constants)["usage"]
    assert usage["unknown_usage_calls"] == 2 and usage["input_tokens"] == 0, usage
    assert listing.returncode == 0 and listing.stdout.count("done") == cases + 1, listing.stdout


# Time settings past a day: 1e12 overflowed the HTTP client's clock arithmetic mid-call.
HUGE_TIME_SETTINGS = [
    ("SHOPPING_LLM_TIMEOUT", "1e12"),
    ("SHOPPING_LLM_TIMEOUT", "1e300"),
    ("SHOPPING_LLM_TIMEOUT", "86401"),
    ("SHOPPING_LLM_DEADLINE", "1e12"),
    ("SHOPPING_CHECKPOINT_BUSY_TIMEOUT", "1e12"),
]


@pytest.mark.parametrize(("name", "value"), HUGE_TIME_SETTINGS)
def test_a_time_setting_past_a_day_is_one_line_naming_it_and_the_range(
    name: str, value: str, small_catalog_file: Path, tmp_path: Path, photo_gift_server: FakeServer
) -> None:
    data = tmp_path / "data"
    catalog = ("--catalog", str(small_catalog_file))
    run = graph_run_process(
        photo_gift_server.url, data, "a strap gift", "--yes", *catalog, **{name: value}
    )
    output = run.stdout + run.stderr
    assert run.returncode == 2 and "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and name in errors[0] and "86,400" in errors[0], output
    assert photo_gift_server.script.requests == []


C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}


def test_an_ascii_locale_runs_a_non_ascii_request_and_catalog(
    tmp_path: Path, photo_gift_server: FakeServer
) -> None:
    """LC_ALL=C with locale coercion and UTF-8 mode off: output that the terminal cannot
    encode is shown as escapes (it raised UnicodeEncodeError at the first check mark), and
    the request is read as UTF-8 (its "€" limit was lost to surrogate escapes)."""
    catalog = tmp_path / "c.jsonl"
    rows = [_with(title="Café Kameragurt 写真"), *SMALL_CATALOG[1:]]
    catalog.write_text(
        "\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8"
    )
    run = graph_run_process(
        photo_gift_server.url,
        tmp_path / "data",
        "un cadeau photo à moins de 200 €",
        "--yes",
        "--catalog",
        str(catalog),
        **C_LOCALE,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in output, output
    assert "moins de 200 \\u20ac" in output, output  # read as stated, shown as an escape
    assert "Caf\\xe9 Kameragurt" in run.stdout, run.stdout  # the catalog's title, escaped
    search = subprocess.run(
        [sys.executable, "-m", "catalog", "search", "café 写真", "--catalog", str(catalog)],
        cwd=REPO_ROOT,
        env=cli_environment(photo_gift_server.url, tmp_path / "data", **C_LOCALE),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )
    assert search.returncode == 0 and "Traceback" not in search.stderr, search.stderr
    assert "strap-1" in search.stdout, search.stdout


def _as_if_written_by(db: Path, thread_id: str, writer: str, **new_channels: Any) -> None:
    """Add a checkpoint to the thread as a newer shopping-planner would write it: its
    version in the metadata, and state channels that this version does not know."""
    saver = open_checkpointer(str(db))
    latest = saver.get_tuple(thread_config(thread_id))
    assert latest is not None
    checkpoint = copy_checkpoint(latest.checkpoint)
    checkpoint["id"] = str(uuid6())
    checkpoint["channel_values"].update(new_channels)
    metadata = {**latest.metadata, WRITER_VERSION: writer}
    saver.put(latest.config, checkpoint, metadata, {})


def test_a_thread_a_newer_version_wrote_is_one_line_naming_both_versions(
    small_catalog_file: Path, tmp_path: Path
) -> None:
    db = tmp_path / "data" / "checkpoints.sqlite"
    db.parent.mkdir()
    graph = build_graph(open_checkpointer(str(db)))
    model = FakeShoppingChatModel(replies={"Plan": [dict(STRAP_PLAN)] * 2})
    context = Context(chat_model=model, catalog=str(small_catalog_file))
    for thread_id in ("newer", "fits"):
        paused = session.start(graph, "a strap gift", context, stay_paused, thread_id=thread_id)
        assert paused.status == "paused"
    # This version writes its own version into every checkpoint it saves.
    assert read_state(graph, "fits").metadata[WRITER_VERSION] == this_version()
    _as_if_written_by(db, "newer", "99.0.0", confidence=0.9)
    _as_if_written_by(db, "fits", "99.0.0")  # newer, but nothing this version lacks
    checkpoints = sqlite3.connect(db).execute("SELECT COUNT(*) FROM checkpoints").fetchone()

    fake = FakeScript(replies={})
    data = tmp_path / "data"
    with fake_openai_server(fake) as url:
        resumed = graph_run_process(url, data, "--resume", "newer", "--yes")
        history = graph_run_process(url, data, "--history", "newer")
        listing = graph_run_process(url, data, "--list", COLUMNS="300")
    said = f"thread 'newer' was written by shopping-planner 99.0.0; this is {this_version()}"
    for refused in (resumed, history):
        output = refused.stdout + refused.stderr
        assert refused.returncode == 1 and "Traceback" not in output, output
        assert [line for line in output.splitlines() if line.strip()] == [
            f"error: {said}: upgrade to resume it"
        ], output
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert "newer version" in listing.stdout and said in listing.stdout, listing.stdout
    assert fake.requests == []
    # Nothing was written over the newer run, and a newer run this version can use reads.
    after = sqlite3.connect(db).execute("SELECT COUNT(*) FROM checkpoints").fetchone()
    assert after == checkpoints
    assert read_state(build_graph(open_checkpointer(str(db))), "fits").values["plan"]
