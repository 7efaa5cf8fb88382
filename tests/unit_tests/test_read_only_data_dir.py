"""Classes 9 and 11 of the second red-team round (#24): a read-only data directory.

A run whose catalog must be indexed (a new --catalog, the shipped default on first use)
or opened (tantivy writes a lock file even to read) in a read-only data directory stops
with one line saying the folder is read-only, before the planner call is paid for and
before anything is saved; it is never called a "corrupt or unreadable index". --list
still lists, and --stop-server names the file it cannot remove and leaves it. Through the
real CLI, on a tmpfs remounted read-only (it skips where mounting is not permitted).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from cli_runs import graph_run_output
from conftest import SMALL_CATALOG, FakeServer, skip_or_fail_in_ci

from graph.builder import build_graph
from graph.runs.checkpoint import open_checkpointer
from graph.runs.threads import thread_config


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        skip_or_fail_in_ci(f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")


@contextmanager
def tmpfs(where: Path) -> Iterator[Path]:
    where.mkdir()
    _mount("-t", "tmpfs", "-o", "size=32m", "tmpfs", str(where))
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def write_catalog(path: Path, id_prefix: str) -> Path:
    rows = [{**row, "id": f"{id_prefix}{row['id']}"} for row in SMALL_CATALOG]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


cli = partial(graph_run_output, timeout=90, COLUMNS="400")  # cli(url, data_dir, ARGS)


def one_error_line(output: str, *words: str) -> None:
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for word in words:
        assert word in errors[0], output


STALE_RECORD = {
    "base_url": "http://127.0.0.1:9/v1",
    "model_alias": "m",
    "pid": 2**31 - 1,  # no such process
    "port": 9,
    "fingerprint": "f" * 64,
    "keep_alive_s": 300,
    "log_file": "/dev/null",
}


def test_a_read_only_data_dir_stops_a_run_before_the_planner_call(
    tmp_path: Path, photo_gift_server: FakeServer
) -> None:
    db = tmp_path / "runs.sqlite"  # a writable store: only the data directory is read-only
    built, new = write_catalog(tmp_path / "a.jsonl", ""), write_catalog(tmp_path / "b.jsonl", "b-")
    url, fake = photo_gift_server.url, photo_gift_server.script
    with tmpfs(tmp_path / "data") as data:
        first = ("a strap gift", "--yes", "--db", str(db), "--catalog", str(built))
        code, out = cli(url, data, *first)
        assert code == 0, out
        (data / "servers").mkdir(mode=0o700)
        stale = data / "servers" / "0123456789abcdef01234567.json"
        stale.write_text(json.dumps(STALE_RECORD))
        _mount("-o", "remount,ro", str(data))
        calls = len(fake.requests)

        runs = {
            "new catalog": ("--catalog", str(new)),
            "built catalog": ("--catalog", str(built)),
            "shipped catalog": (),
        }
        for thread, catalog in runs.items():
            args = ("a strap gift", "--yes", "--db", str(db), "--thread", thread, *catalog)
            code, out = cli(url, data, *args)
            assert code == 2, out
            one_error_line(out, "read-only" if thread == "built catalog" else "Read-only")
            assert "corrupt" not in out, out
            assert len(fake.requests) == calls, f"{thread}: the planner was called"

        code, out = cli(url, data, "--list", "--db", str(db))
        assert code == 0 and "done" in out and "Traceback" not in out, out
        assert "not running (a stale record" in out, out

        code, out = cli(url, data, "--stop-server")
        assert code == 1 and "Stopped" not in out, out
        one_error_line(out, "Read-only file system", str(data / "servers"))
        assert stale.exists()  # nothing removed, nothing half-removed

    graph = build_graph(checkpointer=open_checkpointer(str(db)))
    for thread in runs:
        assert not graph.get_state(thread_config(thread)).values, f"{thread} was saved"
