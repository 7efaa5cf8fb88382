"""The checkpoint store under stress: corrupted, locked, read-only and full. Every case
must end in one clear error line (exit code 2), never a traceback, and must never damage
the runs already saved.

Read-only and full-disk cases mount a small tmpfs (we run as root in CI); they skip with
the reason when mounting is not permitted."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli_runs import graph_run_main
from conftest import skip_or_fail_in_ci
from fake_openai_server import FakeScript, fake_openai_server
from fakes import STRAP_PICK, STRAP_PLAN, FakeShoppingChatModel

from graph.builder import build_graph
from graph.context import Context
from graph.runs.checkpoint import CheckpointStoreError, open_sqlite_checkpointer

REPO_ROOT = Path(__file__).resolve().parents[2]


def replies() -> dict[str, list[Any]]:
    return {"Plan": [dict(STRAP_PLAN)], "ReasoningAnswer": [dict(STRAP_PICK)]}


@pytest.fixture(autouse=True)
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOPPING_CHECKPOINT_BUSY_TIMEOUT", "0.2")
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def save_a_run(db: Path, catalog: Path, thread_id: str = "saved") -> None:
    """A finished two-step run in `db`, written with the real SQLite saver."""
    saver = open_sqlite_checkpointer(db)
    try:
        model = FakeShoppingChatModel(replies=replies())
        ctx = Context(chat_model=model, catalog=str(catalog), auto_approve=True)
        build_graph(checkpointer=saver).invoke(
            {"request": "a strap gift under $200"},
            {"configurable": {"thread_id": thread_id}},
            context=ctx,
        )
    finally:
        saver.conn.close()


def saved_run_is_intact(db: Path, thread_id: str = "saved") -> bool:
    saver = open_sqlite_checkpointer(db)
    try:
        assert saver.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        values = (
            build_graph(checkpointer=saver)
            .get_state({"configurable": {"thread_id": thread_id}})
            .values
        )
    finally:
        saver.conn.close()
    return [r.step for r in values["step_results"]] == [1, 2] and values["outcome"] is not None


def cli(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> tuple[int, str]:
    """The CLI's main() in-process against a fresh fake server; (exit code, output)."""
    fake = FakeScript(replies=replies())
    with fake_openai_server(fake) as url:
        code, out = graph_run_main(capsys, url, db, *args)
    if args and not args[0].startswith("--"):  # a new run: count what reached the model
        out += f"\n[requests: {len(fake.requests)}]"
    return code, out


def one_error_line(out: str, *words: str) -> str:
    assert "Traceback" not in out, out
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def run_args(catalog: Path, thread_id: str = "new") -> tuple[str, ...]:
    return ("a strap gift under $200", "--catalog", str(catalog), "-y", "--thread", thread_id)


# ---------------------------------------------------------------- corrupted


def test_garbage_db_file_is_a_clear_error_for_list_and_run(
    tmp_path: Path, small_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "garbage.sqlite"
    db.write_bytes(random.Random(7).randbytes(16384))
    code, out = cli(capsys, db, "--list")
    assert code == 1
    one_error_line(out, str(db), "not a database", "corrupted")
    code, out = cli(capsys, db, *run_args(small_catalog_file))
    assert code == 1 and "[requests: 0]" in out  # no LLM call is spent on a dead store
    one_error_line(out, "not a database")
    with pytest.raises(CheckpointStoreError, match="not a database"):
        open_sqlite_checkpointer(db)


def test_garbage_db_file_in_a_real_cli_process(tmp_path: Path) -> None:
    db = tmp_path / "garbage.sqlite"
    db.write_bytes(b"\x00garbage\xff" * 1000)
    run = subprocess.run(
        [sys.executable, "-m", "graph.run", "--list", "--db", str(db)],
        cwd=REPO_ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    assert run.stdout.strip().startswith("error: cannot use checkpoint database")
    assert len(run.stdout.strip().splitlines()) == 1, run.stdout


def test_db_with_damaged_pages_is_a_clear_error(
    tmp_path: Path, small_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "damaged.sqlite"
    save_a_run(db, small_catalog_file)
    data = bytearray(db.read_bytes())
    assert len(data) > 3 * 4096
    # Keep the header page, scribble over every other page.
    data[4096:] = random.Random(3).randbytes(len(data) - 4096)
    db.write_bytes(bytes(data))
    code, out = cli(capsys, db, "--list")
    assert code == 1
    one_error_line(out, str(db), "malformed")


# ---------------------------------------------------------------- locked


@contextmanager
def locked(db: Path, *, exclusive_mode: bool) -> Iterator[None]:
    """Another connection holding an EXCLUSIVE lock on `db` (isolation off: we issue BEGIN)."""
    other = sqlite3.connect(str(db), timeout=0, isolation_level=None)
    try:
        if exclusive_mode:
            # Locks readers out too (WAL readers otherwise never wait for a writer).
            other.execute("PRAGMA locking_mode=EXCLUSIVE")
        other.execute("BEGIN EXCLUSIVE")
        other.execute("CREATE TABLE IF NOT EXISTS lock_holder (x)")
        other.execute("INSERT INTO lock_holder VALUES (1)")
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_db_locked_by_another_writer(
    tmp_path: Path, small_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.sqlite"
    save_a_run(db, small_catalog_file)
    with locked(db, exclusive_mode=False):
        # WAL: reading is never blocked by a writer, so listing still works.
        code, out = cli(capsys, db, "--list")
        assert code == 0 and "saved" in out and "done" in out, out
        code, out = cli(capsys, db, *run_args(small_catalog_file))
        assert code == 1
        one_error_line(out, str(db), "database is locked", "another process")
        assert "[requests: 0]" in out
    assert saved_run_is_intact(db)
    code, out = cli(capsys, db, *run_args(small_catalog_file, "after"))
    assert code == 0, out


def test_db_locked_exclusively_also_for_readers(
    tmp_path: Path, small_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.sqlite"
    save_a_run(db, small_catalog_file)
    with locked(db, exclusive_mode=True):
        for args in (("--list",), run_args(small_catalog_file)):
            code, out = cli(capsys, db, *args)
            assert code == 1
            one_error_line(out, str(db), "locked", "another process")
    assert saved_run_is_intact(db)


def test_busy_timeout_setting_is_validated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHOPPING_CHECKPOINT_BUSY_TIMEOUT", "soon")
    with pytest.raises(CheckpointStoreError, match="SHOPPING_CHECKPOINT_BUSY_TIMEOUT"):
        open_sqlite_checkpointer(tmp_path / "c.sqlite")


# ---------------------------------------------------------------- read-only and full


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        skip_or_fail_in_ci(f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    try:
        yield where
    finally:
        # Lazy: connections the in-process CLI left open must not block the unmount.
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_read_only_directory(
    tmp_path: Path, small_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with tmpfs(tmp_path / "mnt", "4m") as mount:
        db = mount / "c.sqlite"
        save_a_run(db, small_catalog_file)
        _mount("-o", "remount,ro", str(mount))
        for args in (("--list",), run_args(small_catalog_file)):
            code, out = cli(capsys, db, *args)
            assert code == 1
            one_error_line(out, str(db), "read-only")
        _mount("-o", "remount,rw", str(mount))
        assert saved_run_is_intact(db)


def test_read_only_file_in_a_writable_directory(
    tmp_path: Path, small_catalog_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with tmpfs(tmp_path / "mnt", "4m") as mount:
        db = mount / "c.sqlite"
        save_a_run(db, small_catalog_file)
        _mount("--bind", str(db), str(db))
        try:
            _mount("-o", "remount,bind,ro", str(db))
            code, out = cli(capsys, db, "--list")  # reading a read-only file is fine
            assert code == 0 and "saved" in out, out
            code, out = cli(capsys, db, *run_args(small_catalog_file))
            assert code == 1 and "[requests: 0]" in out
            one_error_line(out, str(db), "readonly", "read-only")
        finally:
            subprocess.run(["umount", "-l", str(db)], capture_output=True)
        assert saved_run_is_intact(db)


def fill(mount: Path, leave_bytes: int, name: str) -> Path:
    filler = mount / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            stats = os.statvfs(mount)
            if stats.f_bavail * stats.f_frsize <= leave_bytes:
                break
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def test_full_disk_mid_run_is_clear_and_keeps_earlier_runs(
    tmp_path: Path,
    small_catalog_file: Path,
    isolated_data_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with tmpfs(tmp_path / "mnt", "1m") as mount:
        db = mount / "c.sqlite"
        save_a_run(db, small_catalog_file)
        # Room to open the database (its shared-memory index), not to save a run.
        filler = fill(mount, 64 * 1024, "filler-1")
        fake = FakeScript(replies=replies())
        with fake_openai_server(fake) as url:
            run = subprocess.run(
                [sys.executable, "-m", "graph.run", *run_args(small_catalog_file), "--db", str(db)],
                cwd=REPO_ROOT,
                env=dict(os.environ, OPENAI_BASE_URL=url),
                capture_output=True,
                text=True,
                timeout=60,
            )
        assert run.returncode == 1, run.stdout + run.stderr
        assert "Traceback" not in run.stdout + run.stderr
        one_error_line(run.stdout, str(db), "disk is full")
        # Completely full: reading the runs back either works, or fails and says why
        # (whether opening needs a free page depends on what the failed run left in the
        # write-ahead log).
        filler_2 = fill(mount, 0, "filler-2")
        code, out = cli(capsys, db, "--list")
        assert "Traceback" not in out
        if code == 1:
            one_error_line(out, str(db), "disk is full")
        else:
            assert code == 0 and "saved" in out, out
        filler.unlink()
        filler_2.unlink()
        assert saved_run_is_intact(db)
        code, out = cli(capsys, db, "--list")
        assert code == 0 and "saved" in out and "done" in out, out
