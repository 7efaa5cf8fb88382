"""Parallel runs sharing one SQLite checkpoint database (threads in one process, and CLI
processes), and catalog searches while the catalog is reloaded underneath them."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cli_runs import start_graph_run
from fake_openai_server import FakeScript, fake_openai_server
from fakes import FakeShoppingChatModel
from langchain_core.messages import BaseMessage

from catalog import Catalog, Product, SearchArgs, load_catalog
from graph.builder import build_graph
from graph.context import Context
from graph.runs.checkpoint import open_sqlite_checkpointer
from graph.tools import search_catalog

RUNS = 8


def plan_for(number: int) -> dict[str, Any]:
    return {
        "goal": f"Gift number {number}.",
        "budget": 200,
        "steps": [
            {"step": 1, "action": f"Find straps for run {number}", "query": "camera strap"},
            {"step": 2, "action": f"Shortlist for run {number}", "query": None},
            {"step": 3, "action": f"Find kits for run {number}", "query": "lens cleaning kit"},
            {"step": 4, "action": f"Pick for run {number}", "query": None},
        ],
    }


def model_for(number: int, together: threading.Barrier | None = None) -> FakeShoppingChatModel:
    """A fake model for run `number`; with `together`, its first reasoning call waits
    there, so every run sharing the barrier is provably mid-run at the same time (a run
    that waits in vain breaks the barrier and fails)."""

    def answer(messages: list[BaseMessage]) -> dict[str, Any]:
        time.sleep(0.005)  # let the runs interleave
        prompt = str(messages[-1].content)
        assert f"for run {number}" in prompt, "a run saw another run's step"
        return {"answer": f"answer of run {number}", "product_ids": ["strap-1"]}

    def first_answer(messages: list[BaseMessage]) -> dict[str, Any]:
        if together is not None:
            together.wait(timeout=30)
        return answer(messages)

    return FakeShoppingChatModel(
        replies={"Plan": [plan_for(number)], "ReasoningAnswer": [first_answer, answer]}
    )


def run_one(
    saver: Any, catalog: Path, number: int, together: threading.Barrier | None = None
) -> dict[str, Any]:
    model = model_for(number, together)
    ctx = Context(chat_model=model, catalog=str(catalog), auto_approve=True)
    return build_graph(checkpointer=saver).invoke(
        {"request": f"camera gift under $200, request of run {number}"},
        {"configurable": {"thread_id": f"run-{number}"}},
        context=ctx,
    )


def rows_per_thread(db: Path) -> dict[str, tuple[int, int]]:
    conn = sqlite3.connect(str(db))
    try:
        checkpoints = dict(
            conn.execute("SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id")
        )
        writes = dict(conn.execute("SELECT thread_id, COUNT(*) FROM writes GROUP BY thread_id"))
    finally:
        conn.close()
    return {t: (checkpoints[t], writes.get(t, 0)) for t in checkpoints}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, small_catalog_file: Path) -> tuple[int, int]:
    """Checkpoint and write rows of one run alone."""
    db = tmp_path_factory.mktemp("baseline") / "c.sqlite"
    saver = open_sqlite_checkpointer(db)
    try:
        run_one(saver, small_catalog_file, 0)
    finally:
        saver.conn.close()
    return rows_per_thread(db)["run-0"]


@pytest.mark.parametrize("sharing", ["one saver for all", "one saver per run"])
def test_parallel_runs_share_one_wal_database_without_losing_or_mixing_anything(
    sharing: str, baseline: tuple[int, int], small_catalog_file: Path, tmp_path: Path
) -> None:
    db = tmp_path / "shared.sqlite"
    shared = open_sqlite_checkpointer(db)
    assert shared.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    savers = [
        shared if sharing == "one saver for all" else open_sqlite_checkpointer(db)
        for _ in range(RUNS)
    ]
    start = threading.Barrier(RUNS)
    # All runs meet mid-run (after step 1 is checkpointed): they overlapped, or it breaks.
    midway = threading.Barrier(RUNS)
    states: dict[int, dict[str, Any]] = {}
    errors: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            start.wait(timeout=30)
            states[number] = run_one(savers[number], small_catalog_file, number, midway)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(RUNS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, repr(errors[0])
    assert sorted(states) == list(range(RUNS))
    assert not midway.broken and midway.n_waiting == 0

    reader = build_graph(checkpointer=shared)
    for number in range(RUNS):
        values = reader.get_state({"configurable": {"thread_id": f"run-{number}"}}).values
        assert values["request"] == f"camera gift under $200, request of run {number}"
        assert values["plan"].goal == f"Gift number {number}."
        results = values["step_results"]
        assert [r.step for r in results] == [1, 2, 3, 4]
        assert [r.answer for r in results if r.kind == "reasoning"] == [
            f"answer of run {number}"
        ] * 2
        assert [p.id for p in values["outcome"].picks] == ["strap-1"]
    for saver in {id(s): s for s in savers}.values():
        saver.conn.close()
    # Nothing lost: every thread holds exactly the rows one run alone writes.
    assert rows_per_thread(db) == {f"run-{n}": baseline for n in range(RUNS)}


# ---------------------------------------------------------------- CLI processes

PROCESSES = 4


def cli_reply(tool: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The fake server's answer for one request of a CLI run: the run's number is in its
    request and in its plan's actions, so each run's answers name that run. A prompt that
    names two runs gets no answer (a 400), which fails that run."""
    numbers = set(re.findall(r"\brun (\d+)\b", json.dumps(body.get("messages", []))))
    if len(numbers) != 1:
        return None
    number = int(numbers.pop())
    if tool == "Plan":
        return plan_for(number)
    if tool == "ReasoningAnswer":
        return {"answer": f"answer of run {number}", "product_ids": ["strap-1"]}
    return None


def test_cli_processes_share_one_checkpoint_database_and_really_overlap(
    small_catalog_file: Path, isolated_data_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "shared.sqlite"
    # Each kind of call is held until every process has made it: the processes are all
    # mid-run at once twice (planning, then after step 1 is checkpointed), or the hold
    # times out and max_in_flight below says they never overlapped.
    script = FakeScript(
        replies={},
        reply_for=cli_reply,
        gather={"Plan": PROCESSES, "ReasoningAnswer": PROCESSES},
        gather_timeout=30,
    )
    started = time.monotonic()
    with fake_openai_server(script) as url:
        processes = [
            start_graph_run(
                url,
                isolated_data_dir,
                f"camera gift under $200, request of run {n}",
                *("--catalog", str(small_catalog_file), "--thread", f"run-{n}"),
                *("--db", str(db), "--yes", "--json"),
            )
            for n in range(PROCESSES)
        ]
        try:
            outputs = [process.communicate(timeout=50) for process in processes]
        finally:
            for process in processes:
                process.kill()
                process.wait()
    assert time.monotonic() - started < 60
    for number, (process, (out, err)) in enumerate(zip(processes, outputs, strict=True)):
        assert process.returncode == 0, f"run {number}: {err[-2000:]}"
        report = json.loads(out)
        assert report["thread_id"] == f"run-{number}"
        assert report["request"] == f"camera gift under $200, request of run {number}"
        assert report["plan"]["goal"] == f"Gift number {number}."
        assert [r["step"] for r in report["step_results"]] == [1, 2, 3, 4]
        answers = [r["answer"] for r in report["step_results"] if r["kind"] == "reasoning"]
        assert answers == [f"answer of run {number}"] * 2
    assert script.max_in_flight >= PROCESSES, "the CLI runs never overlapped"
    assert len(script.calls_for("Plan")) == PROCESSES
    assert len(script.calls_for("ReasoningAnswer")) == 2 * PROCESSES

    # The shared database holds each run whole, under its own thread, and no run lost
    # a row: every thread has as many checkpoints and writes as every other.
    saver = open_sqlite_checkpointer(db)
    try:
        reader = build_graph(checkpointer=saver)
        for number in range(PROCESSES):
            state = reader.get_state({"configurable": {"thread_id": f"run-{number}"}})
            assert state.next == ()
            assert state.values["request"] == f"camera gift under $200, request of run {number}"
            assert state.values["plan"].goal == f"Gift number {number}."
            assert [r.answer for r in state.values["step_results"] if r.kind == "reasoning"] == [
                f"answer of run {number}"
            ] * 2
    finally:
        saver.conn.close()
    rows = rows_per_thread(db)
    assert set(rows) == {f"run-{n}" for n in range(PROCESSES)}
    assert len(set(rows.values())) == 1, rows


# ---------------------------------------------------------------- catalog reloads


def version_products(version: int) -> list[Product]:
    """Version k: 10 + k products at $1-$20 and 30 at $100+, ids prefixed v<k>-."""
    cheap = [
        Product(
            id=f"v{version}-c{i}",
            title=f"camera strap {i}",
            category="cameras-photography",
            price=1.0 + i,
            rating=4.0,
        )
        for i in range(10 + version)
    ]
    dear = [
        Product(
            id=f"v{version}-d{i}",
            title=f"camera body {i}",
            category="cameras-photography",
            price=100.0 + i,
            rating=4.5,
        )
        for i in range(30)
    ]
    return cheap + dear


def write_version(tmp_path: Path, version: int) -> Path:
    path = tmp_path / f"v{version}.jsonl"
    path.write_text("".join(p.model_dump_json() + "\n" for p in version_products(version)))
    return path


def test_searches_during_catalog_reloads_never_error_and_never_mix_versions(
    tmp_path: Path,
) -> None:
    versions = 6
    files = [write_version(tmp_path, v) for v in range(versions)]
    index_dir = tmp_path / "index"
    load_catalog(files[0], index_dir)
    catalog = Catalog.open(index_dir)
    stop = threading.Event()
    errors: list[BaseException] = []
    seen_versions: set[int] = set()
    searches = [0]

    def one_version(ids: list[str]) -> int:
        prefixes = {i.split("-")[0] for i in ids}
        assert len(prefixes) == 1, f"one search mixed versions: {sorted(prefixes)}"
        return int(prefixes.pop()[1:])

    def searcher() -> None:
        while not stop.is_set():
            try:
                hits = catalog.search(SearchArgs("camera strap", max_price=50, limit=50))
                version = one_version([h.product.id for h in hits])
                assert len(hits) == 10 + version  # exactly that version's cheap straps
                _, artifact = search_catalog(catalog, SearchArgs("camera", min_price=100, limit=50))
                dear_ids = [p["id"] for p in artifact["products"]]
                assert len(dear_ids) == 30
                one_version(dear_ids)
                seen_versions.add(version)
                searches[0] += 1
            except BaseException as error:
                errors.append(error)
                return

    threads = [threading.Thread(target=searcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for version in range(1, versions):
            assert load_catalog(files[version], index_dir) == 40 + version
            catalog.reload()
            time.sleep(0.02)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors, repr(errors[0])
    assert searches[0] > 0 and len(seen_versions) >= 2
    assert len(catalog) == 40 + versions - 1


def test_failed_reload_source_keeps_serving_the_loaded_version(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    load_catalog(write_version(tmp_path, 0), index_dir)
    catalog = Catalog.open(index_dir)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "title": "camera", "category": "c", "price": -1}\n')
    from catalog import CatalogError

    with pytest.raises(CatalogError, match=r"bad.jsonl line 1"):
        load_catalog(bad, index_dir)
    catalog.reload()
    assert len(catalog) == 40
    assert len(catalog.search(SearchArgs("camera strap", max_price=50, limit=50))) == 10
