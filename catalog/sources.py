"""What catalogs are built from: the shipped file, and the markers that say which
input (and which schema version) a built index or table came from.

Backend-neutral: the tantivy store and the PostgreSQL backend both use these markers to
decide when to rebuild, without importing each other.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from catalog.errors import CatalogError
from catalog.paths import check_catalog_file

# Version of the stored layout (tantivy schema, PostgreSQL table) and of what is worked out
# at load (Product.kinds: a change to catalog/kinds.py or catalog/text.py bumps it); a
# mismatch means rebuild.
SCHEMA_VERSION = 4
DEFAULT_CATALOG_FILE: Path = Path(__file__).resolve().parent / "data" / "products.jsonl"
# Only catalogs built from the shipped file carry this prefix, so only they are replaced
# when the shipped file changes; a catalog the user loaded on purpose is kept.
DEFAULT_MARKER_PREFIX = "default:"


def file_marker(path: Path, format: str = "auto") -> str:
    """Identifies a built index's input: content hash, format and index schema version."""
    check_catalog_file(Path(path))
    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except FileNotFoundError:
        raise CatalogError("file not found", path=path) from None
    except OSError as exc:
        raise CatalogError(f"cannot read file: {exc.strerror}", path=path) from None
    return f"sha256:{digest.hexdigest()}:format={format}:schema={SCHEMA_VERSION}"
