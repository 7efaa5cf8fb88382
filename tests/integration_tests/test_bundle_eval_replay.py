"""The bundle evaluation (#22) on the dev sets, replayed from real recordings of the
embedded 1.5B model: the shipped catalog, and DummyJSON's products from ../shared.
Recording also writes the report the live run produced; the replay must reproduce it, and
every request a fitting bundle exists for must get one, every item present (bundles whose
items' searches find some of the same products included). The set in new wording (#40:
budgets written with verbs, items sharing a head word) is held to what the embedded model
reaches: no limit phrase named as a missing item, every bundle within budget, every item
picked or named missing in 9 of the 12.

Record: RECORD=1 python -m pytest -m replay tests/integration_tests/test_bundle_eval_replay.py -n 0
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import shared_file
from recording import recorded_context, reproduced_report

from catalog.sources import DEFAULT_CATALOG_FILE
from graph.builder import build_graph
from graph.evals.bundle_sets import BundleFile, load_bundles
from graph.evals.bundles import BundleReport, markdown_table, run_bundles_eval
from graph.runs.checkpoint import open_sqlite_checkpointer
from graph.runs.threads import ShoppingGraph, read_state

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def dev_sets() -> dict[str, tuple[Path, Path]]:
    """cassette name -> (bundle file, catalog file)."""
    return {
        "eval-bundles-shipped": (FIXTURES / "bundles_dev.json", DEFAULT_CATALOG_FILE),
        # Bundles whose items' searches find some of the same products (#34).
        "eval-bundles-shared": (FIXTURES / "bundles_shared_dev.json", DEFAULT_CATALOG_FILE),
        "eval-bundles-dummyjson": (
            FIXTURES / "bundles_dev_dummyjson.json",
            shared_file("dummyjson", "products.json"),
        ),
    }


# The new wording's set (#40), not recorded until the lead records it with RECORD=1.
NEW_WORDING = {"eval-bundles-new": FIXTURES / "bundles_new.json"}
# Where each of its requests states its budget: no word only it uses is ever an item.
BUDGET_WORDS = {
    "nb01": "trying to spend no more than $140",
    "nb02": "keep it under $50",
    "nb03": "don't want to go over $60",
    "nb04": "I can't spend more than $55 on both",
    "nb05": "spend no more than $230 altogether",
    "nb06": "keep the total under $200",
    "nb07": "I'd like to keep it under 250 dollars",
    "nb08": "can't go above $35",
    "nb09": "try not to spend over $50",
    "nb10": "sin gastar más de 90 dólares",
    "nb11": "je ne veux pas dépasser 80 dollars",
    "nb12": "ich möchte nicht mehr als 110 Dollar ausgeben",
}


def words(text: str) -> set[str]:
    return set(re.findall(r"[^\W\d_]+", text.lower()))


def names_the_budget(query: str, request: str, budget_words: str) -> bool:
    """An item named missing is the budget's words: it uses a word only the budget uses
    ("spend", "gastar"; not the "de" of "cuchillo de chef ... más de 90 dólares") and
    no word of the items' part of the request."""
    rest = words(request.replace(budget_words, " "))
    budget_only = words(budget_words) - rest
    return bool(words(query) & budget_only) and not words(query) & rest


def replayed(
    cassette: str, bundles: BundleFile, catalog_path: Path, graph: ShoppingGraph
) -> BundleReport:
    """The bundle eval run from the cassette; it must reproduce the recorded report request
    by request, with no request failing to run."""
    with recorded_context(cassette, catalog=str(catalog_path)) as context:
        report = run_bundles_eval(
            bundles.requests,
            catalog_path,
            context,
            graph,
            label="replay-1.5b",
            bundles_file=str(bundles.path),
            progress=False,
        )
    data = report.to_json()
    recorded = reproduced_report(cassette, data, ("catalog", "bundles_file"))
    assert all(result.error is None for result in report.results)
    assert "every item, within budget" in markdown_table([data, recorded])
    return report


@pytest.mark.replay
@pytest.mark.parametrize("cassette", list(dev_sets()))
def test_bundle_report_is_reproduced_and_every_fitting_bundle_is_met(
    cassette: str, tmp_path: Path
) -> None:
    bundles_path, catalog_path = dev_sets()[cassette]
    bundles = load_bundles(bundles_path, catalog_path)
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    report = replayed(cassette, bundles, catalog_path, graph)
    summary = report.to_json()["summary"]
    assert summary["fitting_exists"] == len(bundles.requests)
    # What the issue asks: a bundle within budget, every item present, whenever one exists.
    for result in report.results:
        if result.fitting_exists:
            assert result.items_present and result.within_budget, result
    assert summary["all_items_and_within_budget"] == summary["fitting_exists"]


@pytest.mark.replay
@pytest.mark.parametrize("cassette", list(NEW_WORDING))
def test_the_new_wording_bundles_are_reproduced_and_no_budget_words_are_an_item(
    cassette: str, tmp_path: Path
) -> None:
    bundles = load_bundles(NEW_WORDING[cassette])
    assert set(BUDGET_WORDS) == {r.id for r in bundles.requests}
    assert all(BUDGET_WORDS[r.id] in r.request for r in bundles.requests)
    graph = build_graph(checkpointer=open_sqlite_checkpointer(tmp_path / "eval.sqlite"))
    report = replayed(cassette, bundles, bundles.catalog, graph)
    named_missing = {
        result.id: [m.query for m in outcome.missing]
        for result in report.results
        if (outcome := read_state(graph, result.thread_id).values.get("outcome"))
    }
    # The words of a budget ("spend no more than $140") are never an item named missing.
    requests = {r.id: r.request for r in bundles.requests}
    budget_named = {
        request_id: [
            query
            for query in queries
            if names_the_budget(query, requests[request_id], BUDGET_WORDS[request_id])
        ]
        for request_id, queries in named_missing.items()
    }
    # A clause that states the budget lists an item only of a kind the shop carries (#40:
    # its verb, "trying", "keep", "can't go", was named missing in 8 of the 12).
    assert not any(budget_named.values()), budget_named
    # Every budget is now read as stated (a negation in its clause: "can't go above $35"
    # had been a floor, and a $1,969 laptop the pick): every bundle within it.
    summary = report.to_json()["summary"]
    assert summary["within_budget"] == len(bundles.requests)
    # #40's target, every item picked or named missing, is 9 of 12 on the embedded model
    # (3 at the last recording): held so that a change doing fewer fails.
    assert summary["items_accounted"] >= 9
    print(json.dumps({"summary": summary, "named_missing": named_missing}))
