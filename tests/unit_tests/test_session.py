"""The session layer: the CLI and the eval harness start, resume and total a run the same way."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fake_openai_server import FakeScript, fake_openai_server
from fakes import GIFT_ANSWERS, GIFT_PLAN, FakeShoppingChatModel
from langchain_core.tracers.context import collect_runs
from langgraph.checkpoint.memory import MemorySaver

from graph.builder import build_graph
from graph.cli.main import main
from graph.context import Context
from graph.evals.webshop import run_eval
from graph.runs import session
from graph.runs.approval import ApprovalRequest
from graph.runs.checkpoint import open_sqlite_checkpointer


def gift_model() -> FakeShoppingChatModel:
    return FakeShoppingChatModel(
        replies={"Plan": [dict(GIFT_PLAN)], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )


def test_cli_json_and_eval_report_the_same_usage_totals_for_one_thread(
    small_catalog_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "runs.sqlite"
    # The eval names a goal's thread eval-LABEL-INDEX-ASIN; the CLI runs that thread first.
    thread = "eval-same-001-strap-1"
    script = FakeScript(
        replies={"Plan": [GIFT_PLAN], "ReasoningAnswer": [dict(a) for a in GIFT_ANSWERS]}
    )
    with fake_openai_server(script) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        args = ["a strap gift under $200", "--catalog", str(small_catalog_file), "--thread", thread]
        code = main([*args, "-y", "--json", "--db", str(db)])
    assert code == 0
    cli = json.loads(capsys.readouterr().out)["usage"]
    llm_requests = len(script.requests)

    goals = [{"instruction_text": "a strap gift under $200", "asin": "strap-1", "attributes": []}]
    graph = build_graph(checkpointer=open_sqlite_checkpointer(db))
    context = Context(catalog=str(small_catalog_file), auto_approve=True)
    report = run_eval(goals, small_catalog_file, context, graph, label="same", progress=False)
    (result,) = report.results
    assert result.thread_id == thread and result.error is None  # read back, not re-run
    assert cli["llm_calls"] == llm_requests == 3  # the planner and two reasoning steps
    assert (result.llm_calls, result.input_tokens, result.output_tokens) == (
        cli["llm_calls"],
        cli["input_tokens"],
        cli["output_tokens"],
    )
    assert cli["input_tokens"] > 0 and result.latency_s == cli["latency_s"]


def test_resume_reuses_the_settings_saved_with_the_run(small_catalog_file: Path) -> None:
    graph = build_graph(checkpointer=MemorySaver())
    model = gift_model()
    context = Context(chat_model=model, catalog=str(small_catalog_file), search_limit=2)
    asked: list[ApprovalRequest] = []

    def leave_paused(request: ApprovalRequest) -> None:
        asked.append(request)

    paused = session.start(graph, "a strap gift under $200", context, leave_paused, thread_id="t")
    assert paused.status == "paused" and paused.estimate is not None
    assert [s.step for s in asked[0].plan.steps] == [1, 2, 3, 4]
    saved = session.saved_settings(graph, "t")
    assert saved["search_limit"] == 2 and saved["catalog"] == str(small_catalog_file)
    assert session.resumable_status(graph, "t") == "awaiting approval"
    # The saved settings come back on resume; an explicit setting wins over a saved one.
    resumed_context = session.run_context({"tool_mode": "direct"}, saved)
    assert resumed_context.search_limit == 2 and resumed_context.tool_mode == "direct"

    resumed = session.drive(graph, "t", None, context, session.approve_all)
    assert resumed.status == "done"
    assert all(len(r.products) <= 2 for r in resumed.values["step_results"])
    with pytest.raises(session.RunFailed, match="already done"):
        session.resumable_status(graph, "t")
    with pytest.raises(session.RunFailed, match="already holds a run"):
        session.start(graph, "again", context, session.approve_all, thread_id="t")


def test_a_rejected_plan_runs_no_step_and_counts_only_the_planner(
    small_catalog_file: Path,
) -> None:
    graph = build_graph(checkpointer=MemorySaver())
    context = Context(chat_model=gift_model(), catalog=str(small_catalog_file))
    result = session.start(graph, "a gift", context, lambda request: False, thread_id="r")
    assert result.status == "rejected"
    assert result.values.get("step_results", []) == []
    totals = result.totals
    planner = result.values["planner_usage"]
    assert totals.llm_calls == 1
    assert (totals.input_tokens, totals.output_tokens) == (
        planner.input_tokens,
        planner.output_tokens,
    )


def test_each_front_end_names_itself_in_a_runs_trace(small_catalog_file: Path) -> None:
    """#42: runs carried metadata but no tags or name, so a LangSmith trace could not say
    whether the CLI, the eval harness or the API server ran it."""
    from graph.builder import graph as api_graph  # what langgraph.json serves

    graph = build_graph(checkpointer=MemorySaver())
    context = Context(catalog=str(small_catalog_file), auto_approve=True)
    request = "a strap gift under $200"
    with collect_runs() as cli:
        ran = replace(context, chat_model=gift_model())
        session.start(graph, request, ran, session.approve_all, thread_id="cli")
    with collect_runs() as evals:
        ran = replace(context, chat_model=gift_model())
        session.run_thread(graph, "eval", request, ran, session.approve_all)
    with collect_runs() as api:
        api_graph.invoke({"request": request}, context=replace(context, chat_model=gift_model()))
    for collected, front_end in ((cli, "cli"), (evals, "eval"), (api, "api")):
        # The graph's own runs (one per stream of it), and every call traced in it, tagged.
        graphs = [r for r in collected.traced_runs if r.name.startswith("shopping-planner")]
        assert graphs and {r.name for r in graphs} == {f"shopping-planner ({front_end})"}
        for run in collected.traced_runs:
            assert run.tags is not None and {"shopping-planner", front_end} <= set(run.tags)
