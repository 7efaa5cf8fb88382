"""The persistent checkpointer: every run is a thread whose step history can be listed,
inspected and resumed."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver


class CheckpointStoreError(RuntimeError):
    """The checkpoint database cannot be opened or written; the message says which and why."""


# Our own state types, allowed explicitly for msgpack deserialisation.
STATE_TYPES = [
    ("graph.state", name)
    for name in (
        "Plan",
        "PlanStep",
        "StepResult",
        "ProductSummary",
        "Usage",
        "Outcome",
        "ReasoningAnswer",
    )
]


def data_dir() -> Path:
    """Per-user data directory ($SHOPPING_PLANNER_DATA_DIR, else the XDG data home)."""
    configured = os.environ.get("SHOPPING_PLANNER_DATA_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "shopping-planner"


def default_checkpoint_path() -> Path:
    configured = os.environ.get("SHOPPING_CHECKPOINT_DB", "").strip()
    return Path(configured).expanduser() if configured else data_dir() / "checkpoints.sqlite"


def serializer() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def open_sqlite_checkpointer(path: Path | None = None) -> SqliteSaver:
    """Open (creating if needed) the SQLite checkpoint database in WAL mode, so several
    runs in parallel threads or processes can share it."""
    path = path or default_checkpoint_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        saver = SqliteSaver(conn, serde=serializer())
        saver.setup()
    except (sqlite3.Error, OSError) as error:
        raise CheckpointStoreError(f"cannot use checkpoint database {path}: {error}") from error
    return saver
