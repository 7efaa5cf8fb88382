"""Untrusted text reaches the terminal as data: no markup, no control or bidi characters,
bounded length, linear time. Checked by Hypothesis over every rendered field, and through
the real CLI processes (`graph.run` against the fake server, `catalog search`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

from cli_runs import REPO_ROOT, graph_run_process
from fake_openai_server import FakeScript, fake_openai_server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Product, ProductHit
from catalog.__main__ import print_hits
from catalog.terminal import DISPLAY_CHARS, clean_text, terminal_console
from graph.cli.errors import error_text
from graph.cli.render import RunView
from graph.cli.report import json_report, print_history, print_threads
from graph.cost import CostEstimate
from graph.runs.session import RunFailed, RunResult, UsageTotals
from graph.runs.threads import HistoryEntry, ThreadSummary
from graph.schemas import Outcome, Plan, PlanStep, ProductSummary, StepResult

# Pieces the red team used: markup that crashes or hides links, screen-clearing and
# title-setting escapes, bidi overrides and isolates, a lone surrogate, line separators.
HOSTILE_PIECES = [
    "[/]",
    "[link=http://evil.example]click[/link]",
    "[bold red]x[/]",
    "\x1b[2J\x1b[H",
    "\x1b]0;owned\x07",
    "\r\x08\x7f\x00",
    "\u202e\u2066\u2069\u200f\u061c",
    "\ud800",
    "\u2028\u2029\x85",
    "\\[not markup]",
]
hostile_text = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(HOSTILE_PIECES) | st.text(max_size=8), max_size=6).map("".join),
)


def shown_safely(output: str) -> bool:
    """No character a terminal would act on or reorder: line breaks are the only control."""
    hidden = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    return all(ch == "\n" or unicodedata.category(ch) not in hidden for ch in output)


def render_all(texts: list[str]) -> str:
    out = io.StringIO()
    console = terminal_console(file=out, width=100, color_system=None)
    a, b, c, d, e, f = (texts * 6)[:6]
    plan = Plan.model_construct(
        goal=a,
        budget=20.0,
        features=[b],
        steps=[
            PlanStep.model_construct(
                step=1,
                action=b,
                query=c,
                category=d,
                max_price=9.0,
                min_price=None,
                min_rating=None,
            ),
            PlanStep.model_construct(
                step=2,
                action=e,
                query=None,
                category=None,
                max_price=None,
                min_price=None,
                min_rating=None,
            ),
        ],
    )
    product = ProductSummary.model_construct(id=f, title=a, price=5.0, rating=None, category=b)
    view = RunView(console, c, quiet=False)
    view.stream_started({})
    view.stream_stopped()
    view.plan(plan)
    console.print(view.status_text())
    view.show_estimate(
        CostEstimate.model_construct(
            llm_calls=1,
            input_tokens=1,
            output_tokens=1,
            usd=0.0,
            price_known=False,
            model=d,
            tokenizer=e,
        )
    )
    view.step(
        StepResult.model_construct(
            step=1,
            kind="reasoning",
            action=b,
            products=[product],
            answer=c,
            warnings=[d],
            error=e,
            llm_calls=1,
            latency_s=0.1,
        )
    )
    view.outcome(
        Outcome.model_construct(
            picks=[product],
            total_price=5.0,
            budget=20.0,
            within_budget=True,
            unknown_ids=[],
            warnings=[f],
        ),
        UsageTotals(1, 1, 1, 0.1),
    )
    print_threads(console, [ThreadSummary(a, b, "done", 1, 2, "2026-01-01T00:00:00")])
    print_history(console, c, [HistoryEntry("id", 1, d, 1, e, "2026-01-01T00:00:00")])
    message = error_text(RunFailed(a + "\nsecond " + b))
    console.print(f"[bold red]error:[/] {message}")
    hit = ProductHit(
        product=Product.model_construct(
            id=a, title=b, category=c, price=1.0, rating=None, description=d, brand=e, tags=[f]
        ),
        score=1.0,
    )
    print_hits(console, d, [hit])
    # --json is JSON, so already safe as text; it must not crash on any of it either.
    values = {"request": a, "plan": plan, "plan_warnings": [b], "step_results": []}
    report = json.dumps(json_report(RunResult(c, "done", values)), indent=2)
    assert shown_safely(report) and json.loads(report)["plan"]["goal"] == a
    return out.getvalue()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile_text, min_size=1, max_size=6))
def test_any_text_in_any_field_renders_without_crash_or_control_characters(
    texts: list[str],
) -> None:
    output = render_all(texts)
    assert shown_safely(output), ascii(output)
    assert "Plan: " in output and "Recent runs" in output and "result(s) for" in output


def test_hidden_characters_become_visible_escapes_and_text_is_cut() -> None:
    assert clean_text("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"
    assert clean_text("x" * 10_000) == "x" * DISPLAY_CHARS + "…"
    assert clean_text("one\ntwo", keep_newlines=True) == "one\ntwo"
    assert clean_text("one\ntwo") == "one two"


def test_a_100_kb_word_prints_in_linear_time() -> None:
    word = "w" * 100_000
    out = io.StringIO()
    console = terminal_console(file=out, width=100, color_system=None)
    view = RunView(console, word, quiet=False)
    started = time.perf_counter()
    view.step(StepResult(step=1, kind="reasoning", action=word, answer=word, warnings=[word]))
    console.print(f"[bold red]error:[/] {error_text(RunFailed(word))}", soft_wrap=True)
    assert time.perf_counter() - started < 1.0  # was 58 s: rich's highlighter on one word
    assert len(out.getvalue()) < 10_000


# ------------------------------------------------------------ through the real processes

GOAL = "[link=http://evil.example]click[/link] gift \u202eredro\u202c"
ACTION = "[/] find \x1b[2J straps"
ANSWER = "\x1b[2J\x1b[Hcleared [bold]the[/] screen \x1b]0;title\x07"
REQUEST = "a [/] photo gift [red]now[/]"
# Thread ids are refused with control characters (test_bad_settings.py), not with markup.
THREAD = "t[/][link=http://evil.example]x"


def hostile_catalog(tmp_path: Path) -> Path:
    records = [
        {
            "id": "strap-1",
            "title": "Strap [/] \x1b[31mred\x1b[0m " + "W" * 100_000,
            "category": "cameras",
            "price": 39.0,
            "rating": 4.5,
            "description": "camera strap",
        },
        {
            "id": "strap-2",
            "title": "Strap [link=http://x]two[/link] \u202eowt",
            "category": "cameras",
            "price": 19.0,
            "description": "camera strap",
        },
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_hostile_text_through_the_cli_list_and_history(
    tmp_path: Path, isolated_data_dir: Path
) -> None:
    catalog = hostile_catalog(tmp_path)
    plan = {
        "goal": GOAL,
        "budget": None,
        "steps": [
            {
                "step": 1,
                "action": ACTION,
                "query": "camera strap",
                "max_price": None,
                "min_rating": None,
            },
            {"step": 2, "action": "pick [/]", "query": None, "max_price": None, "min_rating": None},
        ],
    }
    fake = FakeScript(
        replies={
            "Plan": [plan],
            "ReasoningAnswer": [{"answer": ANSWER, "product_ids": ["strap-1"]}],
        }
    )
    with fake_openai_server(fake) as url:
        started = time.monotonic()
        run = graph_run_process(
            url,
            isolated_data_dir,
            REQUEST,
            "--yes",
            "--thread",
            THREAD,
            "--catalog",
            str(catalog),
            COLUMNS="400",
            SHOPPING_CODE_DECISIONS="off",  # the model's hostile answer is shown too
        )
        elapsed = time.monotonic() - started
        listing = graph_run_process(url, isolated_data_dir, "--list", COLUMNS="400")
        history = graph_run_process(url, isolated_data_dir, "--history", THREAD, COLUMNS="400")
    for done in (run, listing, history):
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        assert "Traceback" not in output and "MarkupError" not in output
        assert shown_safely(output), ascii(output)
    assert "[link=http://evil.example]click[/link]" in run.stdout  # shown, not a link
    assert "\\x1b[2J\\x1b[Hcleared [bold]the[/] screen" in run.stdout
    assert "\\u202eredro" in run.stdout
    assert "W" * 1000 not in run.stdout  # the 100 KB title is cut for display
    assert elapsed < 30, elapsed
    assert THREAD in listing.stdout and "a [/] photo gift" in listing.stdout
    assert f"History of {THREAD}" in history.stdout


WIDE = {**os.environ, "COLUMNS": "400"}


def test_catalog_search_cli_prints_hostile_records_and_queries(tmp_path: Path) -> None:
    catalog = hostile_catalog(tmp_path)
    for query in ("[/]", "strap", "\x1b[2J [link=x]"):
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "catalog",
                "search",
                query,
                "--catalog",
                str(catalog),
                "--index-dir",
                str(tmp_path / "index"),
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env=WIDE,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        assert shown_safely(output), ascii(output)
        assert time.monotonic() - started < 20
    assert "Strap [link=http://x]two[/link] \\u202eowt" in done.stdout or "0 result" in done.stdout
    strap = subprocess.run(
        [
            sys.executable,
            "-m",
            "catalog",
            "search",
            "strap",
            "--catalog",
            str(catalog),
            "--index-dir",
            str(tmp_path / "index"),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=WIDE,
    )
    assert "Strap [/] \\x1b[31mred\\x1b[0m" in strap.stdout
    assert "\\u202eowt" in strap.stdout
