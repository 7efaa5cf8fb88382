"""Where the catalog keeps its indexes (light: no index engine is imported here)."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "SHOPPING_PLANNER_DATA_DIR"


def data_dir() -> Path:
    """Per-user data directory: ``$SHOPPING_PLANNER_DATA_DIR``, else XDG data home."""
    explicit = os.environ.get(DATA_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "shopping-planner"


def default_index_dir() -> Path:
    return data_dir() / "catalog"
