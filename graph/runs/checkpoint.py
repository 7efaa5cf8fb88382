"""The persistent checkpointer: every run is a thread whose step history can be listed,
inspected and resumed."""

from __future__ import annotations

import atexit
import math
import os
import shutil
import sqlite3
import threading
import time
import weakref
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from catalog.paths import data_dir, is_postgres_url, redact_url
from graph.state import STATE_TYPES


class CheckpointStoreError(RuntimeError):
    """The checkpoint database cannot be opened or written; the message says which and why."""


def default_checkpoint_path() -> Path:
    configured = os.environ.get("SHOPPING_CHECKPOINT_DB", "").strip()
    return Path(configured).expanduser() if configured else data_dir() / "checkpoints.sqlite"


def serializer() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def sqlite_error_hint(error: BaseException, path: Path) -> str:
    """What to do about a checkpoint database error (at open or mid-run); "" if unknown."""
    text = str(error).lower()
    try:  # a full disk often surfaces as a vague "disk I/O error"
        disk_full = shutil.disk_usage(path.parent).free < 64 * 1024
    except OSError:
        disk_full = False
    if "full" in text or disk_full:
        return "the disk is full: free some space"
    if "locked" in text or "busy" in text:
        return "another process holds it; retry when that run ends"
    if "not a database" in text or "malformed" in text:
        return "the file is corrupted or not a checkpoint database; move it aside"
    if "readonly" in text or not os.access(path if path.exists() else path.parent, os.W_OK):
        return "read-only; choose a writable path with --db or SHOPPING_CHECKPOINT_DB"
    return ""


def open_sqlite_checkpointer(path: Path | None = None) -> SqliteSaver:
    """Open (creating if needed) the SQLite checkpoint database in WAL mode, so several
    runs in parallel threads or processes can share it.

    A writer that finds the database locked waits up to $SHOPPING_CHECKPOINT_BUSY_TIMEOUT
    seconds (default 30), then fails with "database is locked"."""
    path = path or default_checkpoint_path()
    configured = os.environ.get("SHOPPING_CHECKPOINT_BUSY_TIMEOUT", "").strip()
    try:
        busy_timeout = float(configured) if configured else 30.0
        if not (math.isfinite(busy_timeout) and busy_timeout >= 0):
            raise ValueError(configured)
    except ValueError:
        raise CheckpointStoreError(
            f"SHOPPING_CHECKPOINT_BUSY_TIMEOUT must be a number of seconds, got {configured!r}"
        ) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=busy_timeout)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        saver = SqliteSaver(conn, serde=serializer())
        saver.setup()
    except (sqlite3.Error, OSError) as error:
        hint = sqlite_error_hint(error, path)
        raise CheckpointStoreError(
            f"cannot use checkpoint database {path}: {error}" + (f" ({hint})" if hint else "")
        ) from error
    return saver


# --- PostgreSQL (scale-out): several processes/replicas share one checkpoint database ---

CHECKPOINT_URL_ENV = "CHECKPOINT_URL"
_POSTGRES_SETUP_LOCK = 0x5EA7C4EC  # pg_advisory_lock key: one replica migrates at a time


def _take_setup_lock(conn: Any, timeout_s: float = 120.0) -> None:
    """Take the migration lock by polling, not by waiting inside a statement: a session
    blocked in pg_advisory_lock holds a snapshot, and the holder's CREATE INDEX
    CONCURRENTLY waits for every snapshot to end, so several processes opening a fresh
    database at once would wait on each other for good."""
    deadline = time.monotonic() + timeout_s
    while not conn.execute(
        "SELECT pg_try_advisory_lock(%s) AS taken", (_POSTGRES_SETUP_LOCK,)
    ).fetchone()["taken"]:
        if time.monotonic() > deadline:
            raise CheckpointStoreError(
                f"another process has been setting up the checkpoint database for over "
                f"{timeout_s:.0f} s"
            )
        time.sleep(0.1)


def open_postgres_checkpointer(url: str, *, max_size: int = 8):  # -> PostgresSaver
    """A ``PostgresSaver`` over a connection pool, with the same serializer allowlist as
    SQLite; creates/migrates its tables on first use (serialised across replicas)."""
    # Imported here: the postgres extra is optional, and without it the message below says
    # how to install it.
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError as error:
        raise CheckpointStoreError(
            f"{CHECKPOINT_URL_ENV}=postgresql://... needs the postgres extra: "
            "pip install -e '.[postgres]'"
        ) from error

    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max(2, max_size),
        # What PostgresSaver expects of its connections.
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
        name="checkpoints",
    )
    try:
        pool.open(wait=True, timeout=15)
        saver = PostgresSaver(pool, serde=serializer())
        with pool.connection() as conn:
            _take_setup_lock(conn)
            try:
                saver.setup()
                # Created here, under the migration lock: concurrent CREATE TABLE IF NOT
                # EXISTS can collide in PostgreSQL's catalog.
                conn.execute(_CLAIMS_DDL)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_POSTGRES_SETUP_LOCK,))
    except (psycopg.Error, PoolTimeout) as error:
        pool.close()
        raise CheckpointStoreError(
            f"cannot use checkpoint database {redact_url(url)}: {error}"
        ) from error
    atexit.register(pool.close)
    return saver


def open_checkpointer(url_or_path: str | Path | None = None):  # -> BaseCheckpointSaver
    """The run checkpointer: PostgreSQL for a postgresql:// URL, else SQLite.

    ``url_or_path`` (e.g. the CLIs' --db) wins; without it ``$CHECKPOINT_URL`` selects
    PostgreSQL, and otherwise the SQLite file (``$SHOPPING_CHECKPOINT_DB`` or the data dir).
    """
    target = url_or_path
    if target is None or (isinstance(target, str) and not target.strip()):
        target = os.environ.get(CHECKPOINT_URL_ENV, "").strip() or None
    if is_postgres_url(target):
        return open_postgres_checkpointer(target.strip())
    return open_sqlite_checkpointer(Path(target).expanduser() if target else None)


# --- Thread claims: one run per thread id, even when two processes start it at once ---

# A thread id is claimed by inserting it into this table before the run starts; the
# primary key makes the insert the atomic test-and-set that a "does it exist?" read is not.
CLAIMS_TABLE = "shopping_thread_claims"
_CLAIMS_DDL = (
    f"CREATE TABLE IF NOT EXISTS {CLAIMS_TABLE} (thread_id TEXT PRIMARY KEY, claimed_at TEXT)"
)
# Savers without a database (MemorySaver in tests and Studio): claims held in the process.
_memory_claims: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_memory_claims_lock = threading.Lock()


def claim_thread(saver: Any, thread_id: str) -> bool:
    """Claim `thread_id` for a new run: True for the one caller that wins it, False for
    every other (another process or thread started it first, or it was claimed before)."""
    now = datetime.now(UTC).isoformat()
    backend = type(saver).__name__
    if backend == "SqliteSaver":
        with saver.lock:
            try:
                with saver.conn:  # one transaction: commits, or rolls back on error
                    saver.conn.execute(_CLAIMS_DDL)
                    saver.conn.execute(
                        f"INSERT INTO {CLAIMS_TABLE} VALUES (?, ?)", (thread_id, now)
                    )
            except sqlite3.IntegrityError:
                return False
        return True
    if backend == "PostgresSaver":
        with saver._cursor() as cur:
            row = cur.execute(
                f"INSERT INTO {CLAIMS_TABLE} VALUES (%s, %s) "
                "ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id",
                (thread_id, now),
            ).fetchone()
        return row is not None
    with _memory_claims_lock:
        claimed = _memory_claims.setdefault(saver, set())
        if thread_id in claimed:
            return False
        claimed.add(thread_id)
        return True


def release_thread(saver: Any, thread_id: str) -> None:
    """Give a claim back: the run stopped before it saved anything (a bad setting), so
    the id may be used again."""
    backend = type(saver).__name__
    if backend == "SqliteSaver":
        with saver.lock, saver.conn:
            saver.conn.execute(f"DELETE FROM {CLAIMS_TABLE} WHERE thread_id = ?", (thread_id,))
    elif backend == "PostgresSaver":
        with saver._cursor() as cur:
            cur.execute(f"DELETE FROM {CLAIMS_TABLE} WHERE thread_id = %s", (thread_id,))
    else:
        with _memory_claims_lock:
            _memory_claims.get(saver, set()).discard(thread_id)
