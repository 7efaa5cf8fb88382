"""A rerun of an eval with the same --label reports a saved run again only when it was
made with the same request, catalog content, provider, model and tool mode (#24, class
8); otherwise the goal runs afresh on a thread of its own. Real `python -m graph.eval`
processes against the fake server, then each mode in-process with a fake model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_runs import graph_eval_process
from conftest import SMALL_CATALOG
from fake_openai_server import fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel, photo_gift_script
from langgraph.checkpoint.memory import MemorySaver

from graph.builder import build_graph
from graph.context import Context
from graph.evals.bundle_sets import BundleRequest, ItemKind
from graph.evals.bundles import run_bundles_eval
from graph.evals.limits import run_limits_eval
from graph.evals.webshop import run_eval

GOAL = {"instruction_text": "a strap gift under $200", "asin": "strap-1", "attributes": []}
BASE_THREAD = "eval-same-001-strap-1"


def write_catalog(path: Path, strap_price: float = 39.0) -> Path:
    products = [dict(p, price=strap_price) if p["id"] == "strap-1" else p for p in SMALL_CATALOG]
    path.write_text("\n".join(json.dumps(p) for p in products) + "\n")
    return path


class Eval:
    """`python -m graph.eval GOALS --catalog C --label same --out R` with one database."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.url, self.tmp_path = url, tmp_path
        self.goals = tmp_path / "goals.json"
        self.goals.write_text(json.dumps([GOAL]))
        self.runs = 0

    def __call__(self, catalog: Path, *args: str) -> dict[str, Any]:
        self.runs += 1
        out = self.tmp_path / f"report-{self.runs}.json"
        run = graph_eval_process(
            self.url,
            self.tmp_path / "data",
            str(self.goals),
            *("--catalog", str(catalog), "--label", "same", "--out", str(out)),
            *("--db", str(self.tmp_path / "runs.sqlite"), *args),
            SHOPPING_CODE_DECISIONS="off",  # a run is two calls, counted below
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Traceback" not in run.stdout + run.stderr
        report = json.loads(out.read_text())
        report["stdout"] = " ".join(run.stdout.split())  # as one line: rich wraps it
        return report


def only_result(report: dict[str, Any]) -> dict[str, Any]:
    (result,) = report["results"]
    assert result["error"] is None, result["error"]
    return result


def test_a_rerun_under_another_model_runs_the_goal_again(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "catalog.jsonl")
    script = photo_gift_script(2)
    with fake_openai_server(script) as url:
        run = Eval(url, tmp_path)
        first = only_result(run(catalog))
        assert first["thread_id"] == BASE_THREAD and len(script.requests) == 2
        # The bug: this re-reported the fake-model run as other-model's, with no call.
        other = run(catalog, "--model", "other-model")
        assert len(script.requests) == 4, "the goal must run again under the other model"
        assert {r["model"] for r in script.requests[2:]} == {"other-model"}
        moved = only_result(other)
        assert moved["thread_id"].startswith(BASE_THREAD + "-")
        assert "model 'fake-model' (now 'other-model')" in other["stdout"]
        assert other["model"] == "other-model"
        # Each setting finds its own run again: no call, the same figures.
        again = only_result(run(catalog))
        assert again["thread_id"] == BASE_THREAD and again["llm_calls"] == first["llm_calls"]
        other_again = only_result(run(catalog, "--model", "other-model"))
        assert other_again["thread_id"] == moved["thread_id"]
        assert len(script.requests) == 4


def test_a_rerun_on_a_changed_catalog_runs_the_goal_again(tmp_path: Path) -> None:
    """The catalog is known by its content: the same file changed is another catalog, a
    copy of it elsewhere is the same one."""
    catalog = write_catalog(tmp_path / "catalog.jsonl")
    script = photo_gift_script(2)
    with fake_openai_server(script) as url:
        run = Eval(url, tmp_path)
        first = only_result(run(catalog))
        assert first["picked_price"] == 39.0 and len(script.requests) == 2
        copy = write_catalog(tmp_path / "copy.jsonl")
        assert only_result(run(copy))["thread_id"] == BASE_THREAD
        assert len(script.requests) == 2  # same content: re-reported, no call
        write_catalog(catalog, strap_price=35.0)  # the same path, other prices
        changed = run(catalog)
        assert len(script.requests) == 4, "the goal must run again on the changed catalog"
        assert only_result(changed)["picked_price"] == 35.0
        assert "another catalog" in changed["stdout"]


def fake_context(model: str, replies: dict[str, list[dict[str, Any]]], **settings: Any) -> Context:
    chat_model = FakeShoppingChatModel(
        replies={k: [dict(r) for r in v] for k, v in replies.items()}
    )
    # A rerun is told from a fresh run by the calls it makes, the pick step's among them,
    # so the pick step asks the model even where code could answer it.
    settings = {"code_decisions": False, **settings}
    return Context(model=model, chat_model=chat_model, auto_approve=True, **settings)


def test_a_changed_goal_at_the_same_place_runs_afresh(small_catalog_file: Path) -> None:
    """A goals file edited between runs: goal 1 is another request for the same ASIN."""
    graph = build_graph(checkpointer=MemorySaver())
    replies = {"Plan": [STRAP_PLAN], "ReasoningAnswer": [STRAP_PICK]}

    def run(goal: dict[str, Any]) -> Any:
        context = fake_context("m", replies, catalog=str(small_catalog_file))
        report = run_eval([goal], small_catalog_file, context, graph, label="g", progress=False)
        return report.results[0], context.chat_model

    first, _ = run(GOAL)
    assert first.error is None and first.thread_id == "eval-g-001-strap-1"
    edited, model = run({**GOAL, "instruction_text": "a camera strap under $100"})
    assert edited.error is None and edited.thread_id != first.thread_id
    assert len(model.prompts) == 2  # planned and picked again, not re-reported


def test_the_limits_mode_reruns_under_another_model(small_catalog_file: Path) -> None:
    graph = build_graph(checkpointer=MemorySaver())
    requests = [{"id": "r1", "ques": "a strap gift under $200"}]
    labels = {"r1": {"max_price": 200.0, "min_price": None, "min_rating": None}}
    threads, calls = [], []
    for model in ("m1", "m2", "m1", "m2"):
        context = fake_context(model, {"Plan": [STRAP_PLAN]})
        report = run_limits_eval(requests, labels, context, graph, label="x", progress=False)
        (result,) = report.results
        assert result.error is None and result.reached["max_price"] is True
        threads.append(result.thread_id)
        calls.append(len(context.chat_model.prompts))
    assert calls == [1, 1, 0, 0]  # each model planned once, then read back
    assert threads[0] == threads[2] == "limits-x-001-r1"
    assert threads[1] == threads[3] != threads[0]


def test_the_bundle_mode_reruns_under_another_model(small_catalog_file: Path) -> None:
    graph = build_graph(checkpointer=MemorySaver())
    strap = BundleRequest(
        "s01", "a camera strap under $200", 200.0, (ItemKind("camera strap", ("camera strap",)),)
    )
    replies = {"Plan": [STRAP_PLAN], "ReasoningAnswer": [STRAP_PICK]}
    threads, calls = [], []
    for model in ("m1", "m2", "m1"):
        context = fake_context(model, replies, catalog=str(small_catalog_file))
        report = run_bundles_eval(
            [strap], small_catalog_file, context, graph, label="x", progress=False
        )
        (result,) = report.results
        assert result.error is None and result.picked == ["strap-1"]
        threads.append(result.thread_id)
        calls.append(len(context.chat_model.prompts))
    assert calls == [2, 2, 0]
    assert threads[0] == threads[2] == "bundle-x-s01" != threads[1]
