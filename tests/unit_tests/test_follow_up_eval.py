"""The follow-up eval mode (`python -m graph.eval FILE --follow-ups`) over the dev set
on the shipped catalog, with a fake planner (FakeShoppingChatModel) that writes the
plan a careful model would: one search per product the request names, else the
previous run's search. It measures the code's part of each follow-up (what carries over,
the caps, the kept picks in the total); the embedded model's figure needs the model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeScript, fake_openai_server
from fakes import FakeShoppingChatModel
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import MemorySaver

from catalog.text import product_words
from graph.builder import build_graph
from graph.context import Context
from graph.evals.follow_ups import (
    CHECKS,
    CaseResult,
    FollowUpFileError,
    kind_overrides,
    load_cases,
    markdown_table,
    run_follow_ups_eval,
)
from graph.evals.main import main
from graph.reading.stated import without_limit_phrases
from graph.schemas import FOLLOW_UP_KINDS

DEV_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "follow_ups_dev.json"
_NOT_WANTED = re.compile(r"\b(?:instead of|rather than)\b[^,]*(?:,|$)|\bswap\b.*?\bfor\b", re.I)


READINGS = {
    (case["first"], case["follow_up"]): case["reading"]
    for case in json.loads(DEV_FILE.read_text(encoding="utf-8"))["follow_ups"]
}


def fake_plan(messages: list[BaseMessage]) -> dict[str, Any]:
    """The plan for the request in the planner's user message: one search per item; a
    follow-up's reading is the dev set's own (what a careful reader states)."""
    text = str(messages[-1].content)
    request = text.removeprefix("Shopping request:\n").split("\n\nIt follows up")[0]
    searched = re.search(r"searched: '([^']+)'", text)
    parts = re.split(r",|\band\b", _NOT_WANTED.sub(" ", without_limit_phrases(request)))
    # The product, not its purpose: "a camera bag for hiking" searches "camera bag".
    queries = [" ".join(product_words(p.split(" for ")[0])[:3]) for p in parts]
    queries = [q for q in queries if q and q not in ("cheaper", "instead")]
    if not queries and searched:
        queries = [searched.group(1)]
    steps: list[dict[str, Any]] = [{"query": q} for q in dict.fromkeys(queries)]
    plan = {"goal": request, "steps": [*steps, {"query": None, "action": "Pick the best"}]}
    first = re.search(r"^request: (.*)$", text, re.M)
    return {**plan, "follow_up": READINGS[first.group(1), request]} if first else plan


def fake_model() -> FakeShoppingChatModel:
    answer = {"answer": "The best ranked.", "product_ids": []}
    return FakeShoppingChatModel(
        replies={
            "Plan": [fake_plan] * 40,
            "FollowUpPlan": [fake_plan] * 40,
            "ReasoningAnswer": [answer] * 80,
        }
    )


def test_the_dev_set_has_thirty_follow_ups_of_every_kind() -> None:
    cases = load_cases(DEV_FILE)
    assert len(cases) >= 30
    kinds = {kind for case in cases for kind in [case.expect["kind"]] if isinstance(kind, str)}
    assert kinds == set(FOLLOW_UP_KINDS)
    assert all(set(case.expect) <= set(CHECKS) and case.expect for case in cases)


def test_the_dev_follow_ups_pass_with_a_careful_fake_planner() -> None:
    cases = load_cases(DEV_FILE)
    graph = build_graph(checkpointer=MemorySaver())
    context = Context(chat_model=fake_model(), auto_approve=True)
    report = run_follow_ups_eval(cases, context, graph, label="fake", progress=False)
    data = report.to_json()
    failed = {r.id: (r.checks, r.error) for r in report.results if not r.passed}
    summary = data["summary"]
    assert not failed, failed
    passed = len(cases)
    assert (summary["passed"], summary["total"]) == (passed, len(cases))
    assert f"{passed}/{len(cases)} follow-ups pass" in markdown_table(data)
    # The careful planner states each case's kind, and code overrules none of them.
    kind = summary["overrides"]["follow-up kind"]
    assert kind == {"overruled": 0, "code_right": 0, "planner_right": 0}


def test_the_eval_counts_how_often_overruling_the_planners_kind_was_right() -> None:
    def case(planner: str | None, ran: str, expected: list[str]) -> CaseResult:
        return CaseResult("c", "a", "b", planner_kind=planner, kind=ran, expected_kinds=expected)

    results = [
        case("cheaper", "cheaper", ["cheaper"]),  # not overruled
        case("cheaper", "add", ["add"]),  # code right
        case("refine", "add", ["refine"]),  # the planner right
        case(None, "refine", ["refine", "cheaper"]),  # no reading: code right
        case("add", "refine", []),  # no kind stated by the case: not counted
    ]
    assert kind_overrides(results) == {"overruled": 3, "code_right": 2, "planner_right": 1}
    table = markdown_table(
        {
            "results": [],
            "label": "x",
            "summary": {
                "passed": 0,
                "total": 0,
                "overrides": {"follow-up kind": kind_overrides(results)},
            },
        }
    )
    assert "code overruled the planner 3 times; code right 2, the planner alone right 1" in table


def test_a_bad_follow_up_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "follow_ups": [
                    {"id": "x", "first": "a", "follow_up": "b", "expect": {"colour": "red"}}
                ]
            }
        )
    )
    assert main([str(bad), "--follow-ups"]) == 2
    assert "unknown checks ['colour']" in capsys.readouterr().err
    with pytest.raises(FollowUpFileError):
        load_cases(tmp_path / "missing.json")


def test_the_eval_command_runs_a_case_and_scores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m graph.eval FILE --follow-ups`, in-process, against the fake server."""
    plans = [
        {
            "goal": "A hiking camera bag.",
            "steps": [{"query": "camera bag"}, {"query": None, "action": "Pick"}],
        },
        {
            "follow_up": {"kind": "cheaper", "item": "camera bag", "wants": None},
            "goal": "A cheaper bag.",
            "steps": [{"query": "camera bag"}, {"query": None, "action": "Pick"}],
        },
    ]
    answer = {"answer": "The best ranked.", "product_ids": []}
    fake = FakeScript(
        replies={"Plan": plans[:1], "FollowUpPlan": plans[1:], "ReasoningAnswer": [answer] * 4}
    )
    out = tmp_path / "report.json"
    with fake_openai_server(fake) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        args = [str(DEV_FILE), "--follow-ups", "--limit", "1", "--provider", "compatible"]
        code = main([*args, "--db", str(tmp_path / "runs.sqlite"), "--out", str(out)])
    assert code == 0, capsys.readouterr()
    report = json.loads(out.read_text())
    summary = report["summary"]
    assert (summary["passed"], summary["total"]) == (1, 1), report["results"]
    assert report["results"][0]["id"] == "bag-cheaper"


def test_none_cheaper_is_the_answer_only_where_the_shop_has_nothing_cheaper() -> None:
    from types import SimpleNamespace

    from graph.evals.follow_ups import _none_cheaper
    from graph.schemas import ProductSummary
    from graph.tools import catalog_for

    shop = catalog_for(Context())

    def bottle(id_: str, price: float) -> ProductSummary:
        return ProductSummary(id=id_, title="Insulated Water Bottle 32 oz", price=price)

    capped = [SimpleNamespace(max_price=27.98)]
    reported = SimpleNamespace(missing=[SimpleNamespace(query="water bottles")])
    # out-024 ($27.99) is the shop's cheapest bottle (the running belts that hold
    # bottles are belts): nothing cheaper, so naming it missing is right.
    assert _none_cheaper([bottle("out-024", 27.99)], capped, [], reported, shop)
    # A $35 bottle has cheaper ones in the shop: "missing" there is a miss.
    above = [SimpleNamespace(max_price=34.99)]
    assert not _none_cheaper([bottle("out-026", 35.0)], above, [], reported, shop)
    # Not named missing, or a search left uncapped, is no answer either.
    silent = SimpleNamespace(missing=[])
    assert not _none_cheaper([bottle("out-024", 27.99)], capped, [], silent, shop)
    uncapped = [SimpleNamespace(max_price=None)]
    assert not _none_cheaper([bottle("out-024", 27.99)], uncapped, [], reported, shop)


def test_two_follow_up_reports_compare_case_by_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --compare of two follow-up (or revision) reports lists each case's pass in each;
    # it failed on them, reading them as WebShop reports.
    recorded = Path(__file__).resolve().parents[2] / "cassettes" / "eval-follow-ups-new.report.json"
    before = json.loads(recorded.read_text())
    after = json.loads(recorded.read_text())
    first = after["results"][0]
    first["passed"] = not first["passed"]
    after["label"], after["summary"]["passed"] = "after", sum(r["passed"] for r in after["results"])
    paths = [tmp_path / "before.json", tmp_path / "after.json"]
    for path, report in zip(paths, (before, after), strict=True):
        path.write_text(json.dumps(report))
    assert main(["--compare", *map(str, paths)]) == 0
    table = capsys.readouterr().out
    was, now = ("no", "yes") if first["passed"] else ("yes", "no")
    assert f"| {first['id']} | {was} | {now} |" in table
    assert (
        f"| passed | {before['summary']['passed']}/30 | {after['summary']['passed']}/30 |" in table
    )
