"""The CLI's rendering prints model, catalog and user text literally, never as markup."""

from __future__ import annotations

import io

from rich.console import Console

from graph.cli.render import RunView
from graph.cli.report import print_threads
from graph.runs.session import UsageTotals
from graph.runs.threads import ThreadSummary
from graph.schemas import Outcome, Plan, ProductSummary, StepResult

# "[/]" with nothing open makes rich raise MarkupError if it reads the text as markup.
HOSTILE = "[/] [bold red]not markup[/bold red] [link=http://x]"


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=300, color_system=None), out


def test_plan_steps_and_outcome_print_untrusted_text_literally() -> None:
    terminal, out = console()
    view = RunView(terminal, HOSTILE, quiet=False)
    plan = Plan.model_validate(
        {
            "goal": HOSTILE,
            "budget": 10,
            "steps": [{"step": 1, "action": HOSTILE, "query": HOSTILE}],
        }
    )
    product = ProductSummary(id="p[1]", title=HOSTILE, price=5.0)
    view.stream_started({})
    view.stream_stopped()
    view.plan(plan)
    view.step(
        StepResult(
            step=1,
            kind="reasoning",
            action=HOSTILE,
            answer=HOSTILE,
            warnings=[HOSTILE],
            products=[product],
        )
    )
    outcome = Outcome(picks=[product], total_price=5.0, warnings=[HOSTILE])
    view.outcome(outcome, UsageTotals(llm_calls=2, input_tokens=10, output_tokens=3))
    text = out.getvalue()
    # goal, action (plan table and step line), answer, warning (step and outcome), title
    # (step and outcome) and the thread id all show up as written.
    assert text.count("[bold red]not markup[/bold red]") >= 8
    assert "p[1]" in text and "Usage (planner included): 2 LLM calls" in text


def test_thread_list_prints_requests_and_ids_literally() -> None:
    terminal, out = console()
    item = ThreadSummary(HOSTILE, HOSTILE, "done", 1, 1, "2026-01-01T00:00:00")
    print_threads(terminal, [item])
    assert out.getvalue().count("[bold red]not markup") == 2
