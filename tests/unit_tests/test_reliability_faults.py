"""Provider faults over real HTTP (fake OpenAI-compatible server on loopback, no mocks in
the SDK), structured-output failures, failing tools, and crash + resume.

The in-process runs call the CLI's own `main()` with a fast copy of the production
RetryPolicy (same attempts and predicate, millisecond backoff); one subprocess test in
test_secrets.py runs the unpatched policy end to end.
"""

from __future__ import annotations

import json
import socket
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_main as run_cli
from fake_openai_server import FakeScript, fake_openai_server
from fakes import GIFT_ANSWERS, GIFT_PLAN, FakeShoppingChatModel, run_graph
from langgraph.checkpoint.memory import MemorySaver

import graph.builder
from graph.builder import build_graph
from graph.context import Context
from graph.providers.registry import make_chat_model
from graph.providers.retry import is_transient_provider_error, retry_provider_error
from graph.schemas import MAX_PLAN_STEPS, PlanningError

PLAN = GIFT_PLAN
ANSWERS = GIFT_ANSWERS
SERVER_FAULTS = ["timeout", "429", "500", "drop", "truncated", "non_json"]
ALL_FAULTS = [*SERVER_FAULTS, "refused"]
# What the one-line error must name for each fault.
FAULT_WORDS = {
    "timeout": "did not answer in time",
    "429": "HTTP 429",
    "500": "HTTP 500",
    "drop": "cannot reach the LLM server",
    "truncated": "cannot reach the LLM server",
    "non_json": "not valid JSON",
    "refused": "Connection refused",
}


def script(**kwargs: Any) -> FakeScript:
    replies = {"Plan": [dict(PLAN)], "ReasoningAnswer": [dict(a) for a in ANSWERS]}
    return FakeScript(replies=replies, timeout_sleep=3.0, **kwargs)


class CountingRetry:
    """The production retry predicate, counting the failed attempts it is asked about."""

    def __init__(self, on_failure: Any = None) -> None:
        self.failures: list[BaseException] = []
        self.on_failure = on_failure

    def __call__(self, error: BaseException) -> bool:
        self.failures.append(error)
        if self.on_failure is not None:
            self.on_failure(len(self.failures))
        return is_transient_provider_error(error)


@pytest.fixture
def provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    monkeypatch.setenv("SHOPPING_LLM_TIMEOUT", "0.5")


def fast_retry(monkeypatch: pytest.MonkeyPatch, counter: CountingRetry) -> None:
    production = graph.builder.LLM_RETRY
    monkeypatch.setattr(
        graph.builder,
        "LLM_RETRY",
        production._replace(initial_interval=0.01, jitter=False, retry_on=counter),
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_production_retry_policy_is_bounded_with_backoff_and_not_stacked() -> None:
    policy = graph.builder.LLM_RETRY
    assert policy.max_attempts == 3
    assert policy.initial_interval > 0 and policy.backoff_factor > 1
    assert policy.retry_on is retry_provider_error  # transient faults, honouring Retry-After
    compiled = build_graph()
    for node in ("planner", "executor"):
        assert compiled.builder.nodes[node].retry_policy == policy
    model = make_chat_model(
        "compatible", "m", max_output_tokens=10, base_url="http://127.0.0.1:9/v1"
    )
    assert model.max_retries == 0  # the SDK does not retry underneath the graph


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_planner_fault_once_is_retried_and_the_run_succeeds(
    fault: str,
    provider_env: None,
    small_catalog_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake = script(faults=[] if fault == "refused" else [fault])
    with ExitStack() as stack:
        if fault == "refused":
            # Nothing listens on the port until the first attempt has been refused.
            port = free_port()
            url = f"http://127.0.0.1:{port}/v1"

            def start_server(failures: int) -> None:
                if failures == 1:
                    stack.enter_context(fake_openai_server(fake, port=port))

            counter = CountingRetry(on_failure=start_server)
        else:
            url = stack.enter_context(fake_openai_server(fake))
            counter = CountingRetry()
        fast_retry(monkeypatch, counter)
        args = ("a strap gift under $200", "--catalog", str(small_catalog_file), "-y", "--json")
        code, out = run_cli(capsys, url, tmp_path / "c.sqlite", *args)
    assert code == 0, out
    report = json.loads(out[out.index("{") :])
    assert [r["step"] for r in report["step_results"]] == [1, 2, 3, 4]
    assert len(counter.failures) == 1 and is_transient_provider_error(counter.failures[0])
    plan_requests = len(fake.calls_for("Plan"))
    # Every attempt that got through reached the server exactly once: no SDK retries.
    assert plan_requests == (1 if fault == "refused" else 2)
    assert plan_requests + (fault == "refused") == 2


@pytest.mark.parametrize("fault", ALL_FAULTS)
def test_planner_fault_every_time_fails_after_three_attempts_with_one_clear_line(
    fault: str,
    provider_env: None,
    small_catalog_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake = script(faults=[fault] * 3)
    counter = CountingRetry()
    fast_retry(monkeypatch, counter)
    with ExitStack() as stack:
        url = (
            f"http://127.0.0.1:{free_port()}/v1"
            if fault == "refused"
            else stack.enter_context(fake_openai_server(fake))
        )
        args = (
            "a strap gift under $200",
            "--catalog",
            str(small_catalog_file),
            "-y",
            "--thread",
            "f",
        )
        code, out = run_cli(capsys, url, tmp_path / "c.sqlite", *args)
    assert code == 1, out
    assert "Traceback" not in out
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out
    assert FAULT_WORDS[fault] in errors[0] and "after 3 attempts" in errors[0], errors[0]
    assert len(counter.failures) == 3
    assert len(fake.requests) == (0 if fault == "refused" else 3)
    assert fake.calls_for("ReasoningAnswer") == []


def test_checkpoint_survives_a_failed_step_and_resume_runs_every_step_once(
    provider_env: None,
    small_catalog_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The plan comes through; the first reasoning step (plan step 2) fails 3 times. The
    # last step asks the model too (not answered in code), so each step's calls count.
    monkeypatch.setenv("SHOPPING_CODE_DECISIONS", "off")
    fake = script(faults=["ok", "500", "500", "500"])
    counter = CountingRetry()
    fast_retry(monkeypatch, counter)
    db = tmp_path / "c.sqlite"
    with fake_openai_server(fake) as url:
        args = (
            "a strap gift under $200",
            "--catalog",
            str(small_catalog_file),
            "-y",
            "--thread",
            "mid",
        )
        code, out = run_cli(capsys, url, db, *args)
        assert code == 1 and "HTTP 500" in out and "Traceback" not in out, out
        code, out = run_cli(capsys, url, db, "--list")
        assert code == 0 and "failed" in out and "1/4" in out, out
        # The provider has recovered.
        code, out = run_cli(capsys, url, db, "--resume", "mid", "--json")
    assert code == 0, out
    report = json.loads(out[out.index("{") :])
    assert [r["step"] for r in report["step_results"]] == [1, 2, 3, 4]
    assert not any(r["error"] for r in report["step_results"])
    assert report["outcome"]["picks"][0]["id"] == "strap-1"
    assert len(fake.calls_for("Plan")) == 1
    prompts = [json.dumps(r["messages"]) for r in fake.calls_for("ReasoningAnswer")]
    assert sum("Step 2:" in p for p in prompts) == 4  # 3 failed attempts + 1 after resume
    assert sum("Step 4:" in p for p in prompts) == 1


# ---------------------------------------------------------------- structured output


def plan_with(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"goal": "A gift.", "budget": None, "steps": steps}


def search_step(n: int) -> dict[str, Any]:
    return {"step": n, "action": f"Search {n}", "query": "camera strap"}


BAD_PLANS = {
    "no steps": (plan_with([]), "at least one step"),
    "eleven steps": (
        plan_with([search_step(n) for n in range(1, MAX_PLAN_STEPS + 2)]),
        f"at most {MAX_PLAN_STEPS} steps",
    ),
    "numbered wrong": (plan_with([search_step(1), search_step(3)]), "numbered"),
    "unknown field": ({**plan_with([search_step(1)]), "ignore_rules": True}, "ignore_rules"),
    "not json": ("Sure! Here is the plan: {steps: [oops", "returned no plan"),
}


@pytest.mark.parametrize("case", [c for c in BAD_PLANS if c != "eleven steps"])
def test_bad_plan_twice_gives_a_fallback_plan_that_names_why(
    case: str, small_catalog_file: Path
) -> None:
    bad, reason = BAD_PLANS[case]
    pick = {"answer": "The leather one.", "product_ids": ["strap-1"]}
    model = FakeShoppingChatModel(replies={"Plan": [bad, bad], "ReasoningAnswer": [pick]})
    state = run_graph(model, small_catalog_file, "a camera strap gift")
    assert model.tools_seen[:2] == [["Plan"], ["Plan"]]  # one automatic retry, then code
    assert "was rejected" in str(model.prompts[1][-1].content)
    plan = state["plan"]
    assert plan.built_in_code is not None and reason in plan.built_in_code
    assert "errors.pydantic.dev" not in plan.built_in_code
    # The search ends at the last word the shop carries as a kind: "gift" is none.
    assert [s.query for s in plan.steps] == ["camera strap", None]
    assert [p.id for p in state["outcome"].picks] == ["strap-1"]


def test_too_many_steps_twice_is_refused_naming_the_limit(small_catalog_file: Path) -> None:
    bad, _ = BAD_PLANS["eleven steps"]
    model = FakeShoppingChatModel(replies={"Plan": [bad, bad]})
    with pytest.raises(PlanningError) as caught:
        run_graph(model, small_catalog_file, "a camera gift")
    assert f"more than {MAX_PLAN_STEPS} plan steps (the limit)" in str(caught.value)
    assert caught.value.raw.strip() == json.dumps(bad).strip()
    assert not model.replies.get("ReasoningAnswer")


@pytest.mark.parametrize("case", list(BAD_PLANS))
def test_bad_plan_fixed_on_the_retry_runs(case: str, small_catalog_file: Path) -> None:
    bad, reason = BAD_PLANS[case]
    model = FakeShoppingChatModel(
        replies={"Plan": [bad, dict(PLAN)], "ReasoningAnswer": [dict(a) for a in ANSWERS]}
    )
    state = run_graph(model, small_catalog_file, "a camera gift")
    assert [r.step for r in state["step_results"]] == [1, 2, 3, 4]
    if case != "not json":  # the retry prompt shows the validation error
        assert reason in str(model.prompts[1][-1].content)


# ---------------------------------------------------------------- tools


def test_search_exception_becomes_a_step_error_and_the_run_continues(
    small_catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catalog import Catalog, SearchArgs

    real_search = Catalog.search

    def flaky_search(self: Catalog, args: SearchArgs) -> Any:
        if "strap" in args.query:
            raise RuntimeError("index on fire")
        return real_search(self, args)

    monkeypatch.setattr(Catalog, "search", flaky_search)
    model = FakeShoppingChatModel(
        replies={"Plan": [dict(PLAN)], "ReasoningAnswer": [dict(a) for a in ANSWERS]}
    )
    state = run_graph(model, small_catalog_file, "a camera gift")
    results = state["step_results"]
    assert [r.step for r in results] == [1, 2, 3, 4]
    assert results[0].error == "search_products failed: RuntimeError: index on fire"
    assert results[0].products == []
    assert results[2].error is None and results[2].products[0].id == "clean-1"
    assert model.tools_seen.count(["Plan"]) == 1  # no replan
    assert any("step 1 failed" in w for w in state["outcome"].warnings)


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"min_price": 100, "max_price": 10}, "min_price: must not exceed max_price"),
        ({"max_price": -5}, "max_price: must be >= 0"),
        ({"min_price": -1}, "min_price: must be >= 0"),
        ({"min_rating": 9}, "min_rating: must be between 0 and 5"),
    ],
)
def test_invalid_filters_in_a_plan_are_a_tool_error_and_the_next_step_runs(
    filters: dict[str, float], message: str, small_catalog_file: Path, monkeypatch: Any
) -> None:
    # Code removes limits the request does not state (graph/shaping/limits.py); a plan that
    # skips that (a person's edit, an API caller) still meets the tool's own checks.
    from graph import shaping
    from graph.shaping.limits import Reconciled

    monkeypatch.setattr(shaping, "reconcile_limits", lambda request, stated, plan: Reconciled(plan))
    plan = {
        "goal": "A gift.",
        "budget": None,
        "steps": [
            {"step": 1, "action": "Bad filters", "query": "camera strap", **filters},
            {"step": 2, "action": "Find cleaning kits", "query": "lens cleaning kit"},
            {"step": 3, "action": "Pick", "query": None},
        ],
    }
    model = FakeShoppingChatModel(
        replies={
            "Plan": [plan],
            "ReasoningAnswer": [{"answer": "The kit.", "product_ids": ["clean-1"]}],
        }
    )
    # Named kinds: an open-ended plan's search that finds nothing would get a shelf.
    state = run_graph(model, small_catalog_file, "a camera strap and a lens cleaning kit")
    results = state["step_results"]
    assert [r.step for r in results] == [1, 2, 3]
    assert results[0].error is not None and results[0].error.startswith("invalid search: ")
    assert message in results[0].error
    assert results[1].error is None and results[1].products
    assert [p.id for p in state["outcome"].picks] == ["clean-1"]


def test_invalid_tool_arguments_from_the_executor_model_are_a_step_error(
    small_catalog_file: Path,
) -> None:
    model = FakeShoppingChatModel(
        replies={
            "Plan": [dict(PLAN)],
            "search_products": [
                {"query": "camera strap", "limit": 500},
                {"query": "lens cleaning kit", "min_price": 50, "max_price": 1},
            ],
            "ReasoningAnswer": [dict(a) for a in ANSWERS],
        }
    )
    ctx = Context(
        chat_model=model, catalog=str(small_catalog_file), auto_approve=True, tool_mode="llm"
    )
    state = build_graph(checkpointer=MemorySaver()).invoke(
        {"request": "gift"}, {"configurable": {"thread_id": "t"}}, context=ctx
    )
    results = state["step_results"]
    assert [r.step for r in results] == [1, 2, 3, 4]
    assert "limit: must be between 1 and 50" in (results[0].error or "")
    assert "min_price: must not exceed max_price" in (results[2].error or "")
