"""The persistent checkpointer: every run is a thread whose step history can be listed,
inspected and resumed."""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import hashlib
import math
import os
import re
import shutil
import socket
import sqlite3
import struct
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from catalog.exits import EXIT_BAD_INPUT
from catalog.paths import data_dir, env, is_postgres_url, redact_url
from graph.errors import ShoppingError
from graph.state import STATE_TYPES


class CheckpointStoreError(ShoppingError, RuntimeError):
    """The checkpoint database cannot be opened or written; the message says which and why."""


class CheckpointConfigError(CheckpointStoreError):
    """The checkpoint store as configured cannot be used (a setting out of range, a path
    the system refuses, the postgres extra missing): bad input, not a failure."""

    exit_code = EXIT_BAD_INPUT


def default_checkpoint_path() -> Path:
    configured = env("SHOPPING_CHECKPOINT_DB")
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


def is_store_failure(error: BaseException) -> bool:
    """The checkpoint database failing (locked, full, gone, a table dropped), SQLite's or
    PostgreSQL's, not one thread's bytes or a bug: a runtime failure, said as such. Read
    from the error's module, so psycopg is never imported to ask."""
    return type(error).__module__.split(".")[0] in ("sqlite3", "psycopg", "psycopg_pool")


def store_wait_s() -> float:
    """$SHOPPING_CHECKPOINT_BUSY_TIMEOUT: how long a checkpoint write waits for the database
    (SQLite locked by another process, PostgreSQL without a free connection), default 30 s."""
    configured = env("SHOPPING_CHECKPOINT_BUSY_TIMEOUT")
    try:
        wait = float(configured) if configured else 30.0
        # At most a day, like the LLM time settings: beyond it a value is a typo.
        if not (math.isfinite(wait) and 0 <= wait <= 86_400):
            raise ValueError(configured)
    except ValueError:
        raise CheckpointConfigError(
            "SHOPPING_CHECKPOINT_BUSY_TIMEOUT must be a number of seconds from 0 to 86,400 "
            f"(a day), got {configured!r}"
        ) from None
    return wait


def open_sqlite_checkpointer(path: Path | None = None) -> SqliteSaver:
    """Open (creating if needed) the SQLite checkpoint database in WAL mode, so several
    runs in parallel threads or processes can share it.

    A writer that finds the database locked waits up to store_wait_s(), then fails with
    "database is locked"."""
    path = path or default_checkpoint_path()
    busy_timeout = store_wait_s()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _private_database_files(path)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=busy_timeout)
        conn.execute("PRAGMA synchronous=NORMAL")
        saver = SqliteSaver(conn, serde=serializer())
        saver.setup()  # which turns WAL on
    except (sqlite3.Error, OSError) as error:
        hint = sqlite_error_hint(error, path)
        # A path the system refuses (an OSError naming it) or that names a folder is the
        # path's fault; SQLite's own error (locked, full, corrupt) is the store's.
        refused = (isinstance(error, OSError) and error.filename is not None) or os.path.isdir(path)
        raise (CheckpointConfigError if refused else CheckpointStoreError)(
            f"cannot use checkpoint database {path}: {error}" + (f" ({hint})" if hint else "")
        ) from error
    return saver


def _private_database_files(path: Path) -> None:
    """Create the database file 0600 before SQLite does (its -wal and -shm take the main
    file's mode), and close one an older version left readable by others."""
    # Only a new file: an existing one may be read-only, and reading it is fine.
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        member = path.with_name(name)
        try:
            info = member.stat()
            if info.st_uid == os.getuid() and info.st_mode & 0o077:
                member.chmod(0o600)
        except OSError:
            continue


# --- PostgreSQL (scale-out): several processes/replicas share one checkpoint database ---

CHECKPOINT_URL_ENV = "CHECKPOINT_URL"
_POSTGRES_SETUP_LOCK = 0x5EA7C4EC  # pg_advisory_lock key: one replica migrates at a time


@contextmanager
def postgres_setup_lock(conn: Any, timeout_s: float = 120.0) -> Iterator[None]:
    """Hold the database's setup lock on `conn` (an autocommit psycopg connection with
    dict rows, as PostgresSaver expects): one process at a time creates or migrates
    tables, here and in scripts/serve_replica.py.

    Taken by polling, not by waiting inside a statement: a session blocked in
    pg_advisory_lock holds a snapshot, and the holder's CREATE INDEX CONCURRENTLY waits
    for every snapshot to end, so several processes opening a fresh database at once
    would wait on each other for good."""
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
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_POSTGRES_SETUP_LOCK,))


def open_postgres_checkpointer(url: str, *, max_size: int = 8):  # -> PostgresSaver
    """A ``PostgresSaver`` over a connection pool, with the same serializer allowlist as
    SQLite; creates/migrates its tables on first use (serialised across replicas)."""
    # Imported here: the postgres extra is optional, and without it the message below says
    # how to install it.
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import DictRow, dict_row
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError as error:
        raise CheckpointConfigError(
            f"{CHECKPOINT_URL_ENV}=postgresql://... needs the postgres extra: "
            "pip install -e '.[postgres]'"
        ) from error

    from catalog.postgres import check_server, connect_settings, reason_line

    # Typed here: the row factory below is set through kwargs, which the pool cannot see.
    pool: ConnectionPool[psycopg.Connection[DictRow]] = ConnectionPool(
        url,
        min_size=1,
        max_size=max(2, max_size),
        # A connection the server closed (a restart) is replaced before it is used, and a
        # write waits this long for one, so a run goes on across a restart.
        check=ConnectionPool.check_connection,
        timeout=store_wait_s(),
        # What PostgresSaver expects of its connections, and a connect timeout.
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            **connect_settings(url),
        },
        open=False,
        name="checkpoints",
    )
    try:
        # One connection first: an unreachable server is named at once (catalog.postgres).
        check_server(url)
        pool.open(wait=True, timeout=15)
        saver = PostgresSaver(pool, serde=serializer())
        with pool.connection() as conn, postgres_setup_lock(conn):
            saver.setup()
    except (psycopg.Error, PoolTimeout) as error:
        pool.close()
        raise CheckpointStoreError(
            f"cannot use checkpoint database {redact_url(url)}: {reason_line(error)}"
        ) from error
    atexit.register(pool.close)
    return saver


def postgres_failure(error: BaseException, url: str) -> str:
    """One line for PostgreSQL failing a run: psycopg's reason, or for a pool that found no
    connection in time, why a new one fails now (stopped, too many clients)."""
    import psycopg
    from psycopg_pool import PoolTimeout

    from catalog.postgres import check_server, reason_line

    if isinstance(error, PoolTimeout):
        try:
            check_server(url)
        except psycopg.Error as now:
            return f"no connection within {store_wait_s():g} s: {reason_line(now)}"
    return reason_line(error)


def open_checkpointer(url_or_path: str | Path | None = None):  # -> BaseCheckpointSaver
    """The run checkpointer: PostgreSQL for a postgresql:// URL, else SQLite.

    ``url_or_path`` (e.g. the CLIs' --db) wins; without it ``$CHECKPOINT_URL`` selects
    PostgreSQL, and otherwise the SQLite file (``$SHOPPING_CHECKPOINT_DB`` or the data dir).
    """
    target = url_or_path
    if target is None or (isinstance(target, str) and not target.strip()):
        target = env(CHECKPOINT_URL_ENV)
    if is_postgres_url(target):
        return open_postgres_checkpointer(target.strip())
    # A mistyped URL (postgresq://, postgres:/) or a libpq 'key=value' string would be
    # taken as a file name, password and all: refused.
    written = str(target or env("SHOPPING_CHECKPOINT_DB") or "")
    if re.match(r"\s*(\w[\w+.-]*:/|\w+\s*=)", written):
        raise CheckpointConfigError(
            f"checkpoint database {redact_url(written.strip())!r} is neither a file path nor "
            "a postgresql:// URL (for a file of that name, write ./NAME)"
        )
    return open_sqlite_checkpointer(Path(target).expanduser() if target else None)


# --- Thread leases: one process runs a thread at a time (a start, a resume, an answer) ---

# A lease is a lock the operating system or the database drops when its holder ends: a
# byte-range lock on the SQLite database file itself, a session advisory lock on
# PostgreSQL. A crashed or killed process therefore never leaves a thread blocked, and no
# table of claims can go stale. Held on the database's own file, a lease cannot be lost
# from under its run: there is no lock file or folder beside it to delete (#39).
_LEASE_KEY_BYTES = 8  # pg_try_advisory_lock takes one bigint
# SQLite: one byte per thread, an open-file-description (OFD) write lock on a descriptor
# of our own. Unlike classic POSIX record locks, an OFD lock belongs to that descriptor,
# not to the process: SQLite closing its own descriptors of the file does not drop it, and
# two descriptors of one process conflict like two processes. The bytes lie in
# [2**62, 2**62 + 2**61), far above SQLite's own lock bytes (0x40000000 .. +512; in WAL
# mode the rest are in -shm), so leases and SQLite's locking never touch; no data is
# there (locks may lie beyond a file's end).
_LEASE_BYTES_START = 2**62
_LEASE_BYTES_SPAN = 2**61  # 61 bits of the thread id's digest pick the byte
_OFD_LOCKS = hasattr(fcntl, "F_OFD_SETLK")  # Linux 3.15+; not macOS or the BSDs
# struct flock on 64-bit Linux: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks).
_FLOCK = struct.Struct("@hhqqi4x")
# Savers without a database (MemorySaver in tests and Studio): leases held in the process.
_memory_claims: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_memory_claims_lock = threading.Lock()
# The leases this process holds: (id of the saver, thread id) -> open descriptor or connection.
_held: dict[tuple[int, str], Any] = {}
_held_lock = threading.Lock()


def _lease_digest(thread_id: str) -> bytes:
    return hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).digest()


def _sqlite_file(saver: Any) -> Path | None:
    """The file of a SqliteSaver's main database; None for an in-memory one."""
    with saver.lock:
        rows = saver.conn.execute("PRAGMA database_list").fetchall()
    return next((Path(file) for _seq, name, file in rows if name == "main" and file), None)


def _lease_byte(thread_id: str) -> int:
    digest = int.from_bytes(_lease_digest(thread_id)[:8], "big")
    return _LEASE_BYTES_START + digest % _LEASE_BYTES_SPAN


def _claim_sqlite(database: Path, thread_id: str) -> int | None:
    """An OFD lock on the lease's byte of `database`: its descriptor, or None if held."""
    if not _OFD_LOCKS:
        return _claim_lock_file(database, thread_id)
    try:
        fd, kind = os.open(database, os.O_RDWR), fcntl.F_WRLCK
    except OSError as error:
        if not isinstance(error, PermissionError) and error.errno != errno.EROFS:
            raise
        # A database this process can only read: a read lock, which still excludes every
        # writer's lease. Two readers can share it, but neither can save a step (SQLite
        # refuses the write, as it did before leases were kept here).
        fd, kind = os.open(database, os.O_RDONLY), fcntl.F_RDLCK
    try:
        fcntl.fcntl(
            fd, fcntl.F_OFD_SETLK, _FLOCK.pack(kind, os.SEEK_SET, _lease_byte(thread_id), 1, 0)
        )
    except BaseException as error:
        os.close(fd)
        if isinstance(error, OSError) and error.errno in (errno.EAGAIN, errno.EACCES):
            return None  # another descriptor holds it
        raise
    return fd


def lease_dir(database: Path) -> Path:
    """Where the lock files of thread leases live where OFD locks do not exist (hidden,
    and not matched by a glob of the database's own files)."""
    return database.with_name(f".{database.name}.leases")


def _lock_file(database: Path, thread_id: str) -> Path:
    return lease_dir(database) / (_lease_digest(thread_id).hex()[:40] + ".lock")


def _advisory_key(thread_id: str) -> int:
    """The lease's key for pg_try_advisory_lock (one signed bigint)."""
    return int.from_bytes(_lease_digest(thread_id)[:_LEASE_KEY_BYTES], "big", signed=True)


def _claim_lock_file(database: Path, thread_id: str) -> int | None:
    """The fallback without OFD locks (macOS, the BSDs): an flock on a file of its own in
    lease_dir. Weaker: deleting that folder while a thread is held lets another process
    take the thread. Classic POSIX locks on the database would be weaker still: SQLite
    closing any of its descriptors of the file drops them all."""
    path = _lock_file(database, thread_id)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException as error:
        os.close(fd)
        if isinstance(error, BlockingIOError):
            return None
        raise
    os.ftruncate(fd, 0)  # who holds it, for a person looking (the lock is what counts)
    os.write(fd, f"{os.getpid()} {socket.gethostname()} {thread_id!r}\n".encode())
    return fd


def _claim_postgres(saver: Any, thread_id: str) -> Any | None:
    import psycopg  # the postgres extra, present since a PostgresSaver exists

    # A connection of its own, not the pool's: a session lock is re-entrant within its
    # session, and the pool would hand the session (and the lock) to another caller.
    conn = psycopg.connect(saver.conn.conninfo, autocommit=True)
    key = _advisory_key(thread_id)
    try:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        taken = row is not None and row[0]  # a SELECT of one call returns one row
    except BaseException:
        conn.close()
        raise
    if not taken:
        conn.close()
        return None
    return conn


def claim_thread(saver: Any, thread_id: str) -> bool:
    """Take the lease of `thread_id` for this process: True for the one caller that wins
    it, False while another holder (this process or another, on any host sharing the
    database) has it. Given back by release_thread, or by the holder's end, crash included."""
    backend = type(saver).__name__
    handle: Any
    if backend == "SqliteSaver" and (database := _sqlite_file(saver)) is not None:
        try:
            handle = _claim_sqlite(database, thread_id)
        except OSError as error:
            raise CheckpointStoreError(
                f"cannot take the lease of thread {thread_id!r} on {database}: {error}"
            ) from error
    elif backend == "PostgresSaver":
        handle = _claim_postgres(saver, thread_id)
    else:
        with _memory_claims_lock:
            claimed = _memory_claims.setdefault(saver, set())
            if thread_id in claimed:
                return False
            claimed.add(thread_id)
            return True
    if handle is None:
        return False
    with _held_lock:
        _held[(id(saver), thread_id)] = handle
    return True


def release_thread(saver: Any, thread_id: str) -> None:
    """Give a lease back (a no-op for one this process does not hold)."""
    with _held_lock:
        handle = _held.pop((id(saver), thread_id), None)
    if handle is None:
        with _memory_claims_lock:
            _memory_claims.get(saver, set()).discard(thread_id)
    elif isinstance(handle, int):
        os.close(handle)  # closing our only descriptor drops its lock
    else:
        # Unlocked before the close: a closed session's backend drops its locks only as it
        # exits, a moment later, so another claim (or a look) at once could still see it.
        with contextlib.suppress(Exception):
            handle.execute("SELECT pg_advisory_unlock_all()")
        handle.close()


def thread_is_held(saver: Any, thread_id: str) -> bool:
    """Whether a live process holds the lease of `thread_id` now. Only looks: it never
    takes the lease, so a resume starting at the same moment is not turned away."""
    backend = type(saver).__name__
    if backend == "SqliteSaver" and (database := _sqlite_file(saver)) is not None:
        return _sqlite_lease_held(database, thread_id)
    if backend == "PostgresSaver":
        return _postgres_lease_held(saver, thread_id)
    with _memory_claims_lock:
        return thread_id in _memory_claims.get(saver, set())


def _sqlite_lease_held(database: Path, thread_id: str) -> bool:
    if not _OFD_LOCKS:
        try:
            fd = os.open(_lock_file(database, thread_id), os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # also drops the shared lock just taken
        return False
    fd = os.open(database, os.O_RDONLY)
    try:
        asked = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, _lease_byte(thread_id), 1, 0)
        kind = _FLOCK.unpack(fcntl.fcntl(fd, fcntl.F_OFD_GETLK, asked))[0]
    finally:
        os.close(fd)
    return kind != fcntl.F_UNLCK


def _postgres_lease_held(saver: Any, thread_id: str) -> bool:
    # pg_locks shows a bigint advisory key as two 32-bit halves (classid, objid), objsubid 1.
    key = _advisory_key(thread_id) & 0xFFFF_FFFF_FFFF_FFFF  # as its two unsigned halves
    # A connection of the saver's pool (its public `conn`, opened by open_postgres_checkpointer);
    # the saver's own `_cursor()` is private.
    with saver.conn.connection() as conn:
        row = conn.execute(
            "SELECT count(*) AS held FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND classid = %s::bigint::oid AND objid = %s::bigint::oid AND objsubid = 1",
            (key >> 32, key & 0xFFFFFFFF),
        ).fetchone()
    return (row["held"] if isinstance(row, dict) else row[0]) > 0


@contextmanager
def thread_lease(saver: Any, thread_id: str, busy: Callable[[], BaseException]) -> Iterator[None]:
    """Hold the lease of `thread_id` for the block; raise `busy()` if another holds it.
    Without a saver (a graph compiled without a checkpointer) there is nothing to guard."""
    if saver is None:
        yield
        return
    if not claim_thread(saver, thread_id):
        raise busy()
    try:
        yield
    finally:
        release_thread(saver, thread_id)
