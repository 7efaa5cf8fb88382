"""Where indexes live and how catalog files become (cached) indexes.

``open_catalog`` is the one entry point that picks a backend: the embedded tantivy index,
or PostgreSQL when given a ``postgresql://`` URL. The URL is always passed in; callers
read ``CATALOG_URL`` once, with ``catalog.paths.catalog_url_from_env``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from catalog.backend import CatalogBackend
from catalog.errors import CatalogError
from catalog.index import Catalog, build_index, read_manifest
from catalog.loaders import FORMATS, iter_products
from catalog.paths import (
    DATA_DIR_ENV,
    data_dir,
    default_index_dir,
    is_postgres_url,
    redact_url,
)
from catalog.sources import DEFAULT_CATALOG_FILE, DEFAULT_MARKER_PREFIX, file_marker
from catalog.terminal import load_progress

try:  # POSIX only; elsewhere concurrent first builds just race harmlessly.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # a module that may be missing: None, checked below


@contextlib.contextmanager
def _build_lock(index_dir: Path) -> Iterator[None]:
    """Serialise builds of one index across processes (so a first use builds once)."""
    if fcntl is None:
        yield
        return
    lock_path = index_dir.parent / f".{index_dir.name}.lock"
    try:
        index_dir.parent.mkdir(parents=True, exist_ok=True)
        lock = lock_path.open("a")
    except OSError as exc:
        # Said now, in words, before any search: a read-only data directory used to
        # surface later as a "corrupt or unreadable index".
        raise CatalogError(
            f"cannot build the catalog index here ({exc.strerror}); the folder must be "
            f"writable: set {DATA_DIR_ENV} to a writable folder",
            path=index_dir.parent,
        ) from None
    with lock as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def load_catalog(path: Path, index_dir: Path, format: str = "auto") -> int:
    """Load ``path`` and atomically replace the index at ``index_dir``; returns the product count.

    If the file is invalid nothing is built and the existing index keeps serving.
    """
    path, index_dir = Path(path), Path(index_dir)
    marker = file_marker(path, format)
    with _build_lock(index_dir):
        return _build_from_file(path, index_dir, format, marker)


def _build_from_file(path: Path, index_dir: Path, format: str, marker: str) -> int:
    """Index the file's products as they are read (a list of a million products took
    2.5 GB), with progress on stderr for a long load; returns the product count. A bad
    record stops the build, and the index served before stays."""
    with load_progress(f"indexing {path.name}") as progress:
        build_index(iter_products(path, format, progress=progress), index_dir, source=marker)
    manifest = read_manifest(index_dir)
    return manifest.count if manifest is not None else 0


def _open_built(
    path: Path, index_dir: Path, format: str = "auto", *, default: bool = False
) -> Catalog:
    """Open ``index_dir``, (re)building it first from ``path`` when it is stale: missing, or
    built from other content. A ``default`` index is stale only over the shipped file's
    older content: a catalog loaded there on purpose stays."""
    marker = (DEFAULT_MARKER_PREFIX if default else "") + file_marker(path, format)

    def stale() -> bool:
        manifest = read_manifest(index_dir)
        if manifest is None:
            return True
        source = manifest.source or ""
        return source != marker and (not default or source.startswith(DEFAULT_MARKER_PREFIX))

    if stale():
        with _build_lock(index_dir):
            if stale():  # another process may have built it while we waited
                _build_from_file(path, index_dir, format, marker)
    return Catalog.open(index_dir)


def open_default_catalog(index_dir: Path | None = None) -> Catalog:
    """The active catalog at ``index_dir`` (default: ``default_index_dir()``).

    On first use it is built from the shipped ``DEFAULT_CATALOG_FILE``, and rebuilt
    when the shipped file changes. A catalog the user loaded there on purpose
    (``python -m catalog load FILE``) is kept: only indexes built from the shipped
    file carry the ``default:`` marker that makes them replaceable.
    """
    index_dir = Path(index_dir) if index_dir is not None else default_index_dir()
    return _open_built(DEFAULT_CATALOG_FILE, index_dir, default=True)


def open_catalog(
    path: Path | str | None = None,
    index_dir: Path | None = None,
    format: str = "auto",
    *,
    url: str | None = None,
) -> CatalogBackend:
    """Open a catalog from the default data, a catalog file, an index directory, or a
    ``postgresql://`` URL (that database's default catalog table).

    - ``path=None``: the shipped default catalog.
    - a directory holding an index: opened as is.
    - a catalog file: indexed once into ``index_dir`` (default: a directory named
      after the file's hash under the data dir) and reused while the file is unchanged.

    With ``url="postgresql://..."`` (what ``CATALOG_URL`` holds), the default catalog and
    catalog files are served from PostgreSQL instead (``catalog.postgres.PostgresCatalog``);
    an explicit index directory still opens that index. ``url=None`` means embedded tantivy.
    """
    if url is not None and not is_postgres_url(url):
        raise CatalogError(f"unsupported catalog URL {redact_url(url)!r}: expected postgresql://")
    if is_postgres_url(path):
        # A postgresql:// "path" names a database: its default catalog table.
        url, path = path, None
    if url is not None and not (path is not None and Path(path).is_dir()):
        # Scale-out backend (an explicit index directory still wins). Imported here, not at
        # the top: the driver is an optional extra and costs start-up time the embedded
        # default never needs. No cycle: catalog.postgres never imports this module, and
        # the import-linter contracts in pyproject.toml keep it so.
        from catalog.postgres import open_postgres_catalog

        return open_postgres_catalog(url.strip(), None if path is None else Path(path), format)
    if path is None:
        return open_default_catalog(index_dir)
    path = Path(path)
    if path.is_dir():
        if not (path / "meta.json").exists():  # tantivy's own file, in every index
            raise CatalogError(
                "directory is not a catalog index; pass a catalog file or an index directory",
                path=path,
            )
        return Catalog.open(path)
    if format not in FORMATS:
        raise CatalogError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if index_dir is None:
        digest = file_marker(path, format).split(":")[1][:16]
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem)[:40] or "catalog"
        index_dir = data_dir() / "catalogs" / f"{stem}-{digest}"
    return _open_built(path, Path(index_dir), format)
