"""A run is tied to the catalog it started with: the catalog's absolute path, its database
and its content marker are kept in the run's checkpoint metadata, and a resume that would
see another catalog (another directory's file, a changed file, another table) is named.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog.paths import is_postgres_url, redact_url
from graph.context import Context

# The metadata key of the catalog a run is tied to (catalog_identity, as JSON text: the
# checkpointers keep only scalar metadata); a resume that would see another catalog stops
# unless told otherwise.
CATALOG_IDENTITY = "catalog_identity"


def absolute_catalog(catalog: str | None) -> str | None:
    """A catalog path made absolute against the working directory (a URL as given).
    Symlinks are kept, not resolved: a loop is the catalog loader's to report, and the
    content hash ties the run to what the link pointed at."""
    if not catalog or is_postgres_url(catalog):
        return catalog
    return os.path.abspath(Path(catalog).expanduser())


def catalog_identity(context: Context) -> dict[str, str | None]:
    """What ties a run to its catalog: the path (None: the shipped default), the database
    (redacted), and the content marker of the opened catalog (its file's sha256, or the
    PostgreSQL table's; None while the default is not opened)."""
    backend = context.catalog_backend
    return {
        "catalog": context.catalog,
        "database": redact_url(context.catalog_url) if context.catalog_url else None,
        "source": getattr(backend, "source", None) if backend is not None else None,
    }


def identity_metadata(context: Context) -> str:
    """The catalog identity as a checkpoint's metadata keeps it (scalar JSON text)."""
    return json.dumps(catalog_identity(context), sort_keys=True)


def catalog_change(thread_id: str, saved: Any, context: Context) -> str | None:
    """The line naming both catalogs when a resume in `context` would see another catalog
    than the run started on, else None. A run saved before identities were kept is not
    checked."""
    now = catalog_identity(context)
    try:
        saved = json.loads(saved) if isinstance(saved, str) else None
    except ValueError:
        saved = None
    if not isinstance(saved, dict):
        return None
    same_place = all(saved.get(k) == now[k] for k in ("catalog", "database"))
    same_content = None in (saved.get("source"), now["source"]) or saved["source"] == now["source"]
    if same_place and same_content:
        return None
    then, later = _describe_catalog(saved), _describe_catalog(now)
    if same_place:
        then, later = f"{then} as it was then", f"its content now ({_short(now['source'])})"
    return (
        f"thread {thread_id!r} started on catalog {then}; this resume would use {later}. "
        "Pass --other-catalog to resume on it anyway"
    )


def _describe_catalog(identity: Mapping[str, Any]) -> str:
    where = identity.get("catalog") or "the shipped default"
    database = identity.get("database")
    text = f"{where} (PostgreSQL {database})" if database else str(where)
    source = identity.get("source")
    return f"{text} [{_short(source)}]" if source else text


def _short(source: str | None) -> str:
    """The content hash of a catalog marker, shortened for a message."""
    if not source:
        return "unknown content"
    digest = next((part for part in source.split(":") if len(part) == 64), source)
    return f"sha256 {digest[:12]}"
