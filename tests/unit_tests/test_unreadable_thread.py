"""Class 4 of the second red-team round (#24): one undecodable checkpoint makes that one
thread "unreadable" in every reader of stored runs (--list, --history, --resume, the eval's
run_thread), and the rest stay readable. Through the real CLI."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_runs import graph_run_process
from fake_openai_server import fake_openai_server
from fakes import photo_gift_script

from graph.builder import build_graph
from graph.context import Context
from graph.runs.checkpoint import open_checkpointer
from graph.runs.session import approve_all, run_thread
from graph.runs.threads import UnreadableThread

# 0xc1 is the one byte msgpack never uses: "invalid type Reserved" when decoded.
UNDECODABLE = b"\xc1\xc1\xc1"


def test_one_undecodable_checkpoint_hides_only_its_thread(
    small_catalog_file: Path, isolated_data_dir: Path
) -> None:
    fake = photo_gift_script(2)
    catalog = ("--catalog", str(small_catalog_file))
    with fake_openai_server(fake) as url:
        for thread in ("good", "bad"):
            run = graph_run_process(
                url, isolated_data_dir, "a strap gift", "--yes", "--thread", thread, *catalog
            )
            assert run.returncode == 0, run.stdout + run.stderr
        db = isolated_data_dir / "checkpoints.sqlite"
        with sqlite3.connect(db) as conn:
            conn.execute(
                "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'bad'", (UNDECODABLE,)
            )

        listed = graph_run_process(url, isolated_data_dir, "--list", COLUMNS="300")
        history_bad = graph_run_process(url, isolated_data_dir, "--history", "bad")
        resume_bad = graph_run_process(url, isolated_data_dir, "--resume", "bad", "--yes")
        history_good = graph_run_process(url, isolated_data_dir, "--history", "good")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "good" in listed.stdout and "unreadable" in listed.stdout, listed.stdout
    for broken in (history_bad, resume_bad):
        output = broken.stdout + broken.stderr
        assert broken.returncode == 1 and "Traceback" not in output, output
        assert "thread 'bad' cannot be read" in output, output
    assert history_good.returncode == 0, history_good.stdout + history_good.stderr

    graph = build_graph(open_checkpointer(str(db)))
    context = Context(catalog=str(small_catalog_file))
    assert run_thread(graph, "good", "a strap gift", context, approve_all).status == "done"
    with pytest.raises(UnreadableThread):
        run_thread(graph, "bad", "a strap gift", context, approve_all)
