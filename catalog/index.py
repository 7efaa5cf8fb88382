"""The tantivy index: schema, atomic builds and the thread-safe ``Catalog`` searcher.

On-disk layout for an ``index_dir`` such as ``.../catalog``::

    .../catalog                          symlink -> .catalog.v-<time>-<uuid>
    .../.catalog.v-<time>-<uuid>/        a complete, never-modified tantivy index
    .../.catalog.building-<pid>-<uuid>/  a build in progress by process <pid> (removed on
                                         failure, Ctrl-C or SIGTERM; a later build removes
                                         it once <pid> is gone, e.g. after SIGKILL)

A build writes a fresh sibling directory, renames it to a version name and then
``os.replace``-s the symlink, which is atomic on POSIX: a reader resolves the
link once and only ever sees a finished index, and a failed build leaves the
link (and so the serving index) untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import tantivy

from catalog.errors import CatalogError, CatalogUnavailable
from catalog.kinds import KindStock
from catalog.models import Product, ProductHit
from catalog.sources import SCHEMA_VERSION
from catalog.text import ANALYZER as _ANALYZER
from catalog.validation import SearchArgs, bounded_terms, check_ids, distinct_products

MANIFEST_NAME = "catalog-manifest.json"
# Missing ratings are indexed below the valid 0..5 range so any min_rating filter
# (lower bound >= 0) excludes them and rating-ordered listings put them last.
MISSING_RATING = -1.0
# Title matches should dominate; tags (attributes) are more specific than prose.
FIELD_BOOSTS = (("title", 3.0), ("description", 1.0), ("tags", 1.5))
# Keep the previous version around so a reader that resolved the link just before
# a swap can still open it; older ones are removed.
KEEP_OLD_VERSIONS = 1
STALE_BUILD_SECONDS = 3600.0
ANALYZER_NAME = "catalog_en"


def query_tokens(text: str) -> list[str]:
    """Analyzed, de-duplicated query terms (at most ``MAX_QUERY_TOKENS``)."""
    return bounded_terms(_ANALYZER.analyze(text))


def _build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("title", tokenizer_name=ANALYZER_NAME)
    builder.add_text_field("description", tokenizer_name=ANALYZER_NAME)
    builder.add_text_field("tags", tokenizer_name=ANALYZER_NAME)
    builder.add_text_field("category", tokenizer_name="raw", index_option="basic", fast=True)
    builder.add_text_field("kind", tokenizer_name="raw", index_option="basic")  # SearchArgs.kind
    builder.add_float_field("price", indexed=True, fast=True)
    builder.add_float_field("rating", indexed=True, fast=True)
    # The whole product as JSON, its kinds too: one stored-field read rebuilds a hit.
    builder.add_bytes_field("product", stored=True, indexed=False)
    return builder.build()


_SCHEMA = _build_schema()


@dataclass(frozen=True)
class Manifest:
    """Facts about one built index version, written before the version goes live."""

    count: int
    categories: list[str]
    source: str | None = None  # marker of the input (e.g. a file hash) for cache checks

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST_NAME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CatalogError(
                f"not a catalog index (no {MANIFEST_NAME}); build one with "
                "`python -m catalog load FILE`",
                path=directory,
            ) from None
        except (OSError, ValueError) as exc:
            raise CatalogUnavailable(f"unreadable {MANIFEST_NAME}: {exc}", path=directory) from None
        found = data.get("schema_version") if isinstance(data, dict) else None
        if found != SCHEMA_VERSION:
            raise CatalogError(
                f"index schema version {found!r} "
                f"is not the supported version {SCHEMA_VERSION}; rebuild it",
                path=directory,
            )
        try:
            return cls(
                count=int(data["count"]),
                categories=[str(c) for c in data["categories"]],
                source=data.get("source"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogUnavailable(
                f"malformed {MANIFEST_NAME}: {exc!r}", path=directory
            ) from None

    def write(self, directory: Path) -> None:
        payload = {"schema_version": SCHEMA_VERSION, **asdict(self)}
        (directory / MANIFEST_NAME).write_text(json.dumps(payload, indent=1), encoding="utf-8")


def read_manifest(index_dir: Path) -> Manifest | None:
    """The manifest of the index currently served at ``index_dir``, or None if there is none."""
    try:
        return Manifest.read(Path(index_dir).resolve())
    except CatalogError:
        return None


def _document(product: Product) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_text("id", product.id)
    doc.add_text("title", product.title)
    doc.add_text("description", product.description)
    for tag in product.tags:
        doc.add_text("tags", tag)
    doc.add_text("category", product.category)
    for term in product.kinds.terms:
        doc.add_text("kind", term)
    doc.add_float("price", product.price)
    doc.add_float("rating", product.rating if product.rating is not None else MISSING_RATING)
    doc.add_bytes("product", product.stored_json().encode("utf-8"))
    return doc


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_symlink() or path.is_file():
            path.unlink()
        else:
            shutil.rmtree(path)


def _cleanup_old_versions(index_dir: Path) -> None:
    """Best-effort removal of superseded versions and abandoned builds."""
    parent, name = index_dir.parent, index_dir.name
    try:
        current = index_dir.resolve().name
        entries = list(parent.iterdir())
    except OSError:
        return
    versions = sorted(
        (e for e in entries if e.name.startswith(f".{name}.v-") and e.name != current),
        key=lambda e: e.name,  # names start with a sortable timestamp
    )
    for old in versions[: max(0, len(versions) - KEEP_OLD_VERSIONS)]:
        _remove_quietly(old)
    now = time.time()
    for entry in entries:
        if entry.name.startswith((f".{name}.building-", f".{name}.link-")):
            with contextlib.suppress(OSError):
                owner = _build_owner(entry.name)
                # Its build was killed (SIGKILL, a crash), or it is past STALE_BUILD_SECONDS old.
                killed = owner is not None and not _process_alive(owner)
                if killed or now - entry.lstat().st_mtime > STALE_BUILD_SECONDS:
                    _remove_quietly(entry)


def _build_owner(name: str) -> int | None:
    """The process id in a ``.NAME.building-<pid>-<uuid>`` name (None for older names)."""
    _, _, rest = name.rpartition(".building-")
    pid, _, token = rest.partition("-")
    return int(pid) if pid.isdigit() and token else None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Make SIGTERM raise KeyboardInterrupt while a build runs, so the build removes its
    folder on the way out as it does on Ctrl-C (the default action would kill the process
    at once and leave it). Only where the default is in place, in the main thread."""
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or previous is not signal.SIG_DFL:
        yield
        return

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt("terminated (SIGTERM)")

    signal.signal(signal.SIGTERM, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _swap_in(version_dir: Path, index_dir: Path) -> None:
    """Point ``index_dir`` at ``version_dir`` atomically."""
    if index_dir.exists() and not index_dir.is_symlink():
        # A plain directory (e.g. an index built by hand) cannot be replaced atomically
        # by a symlink; move it aside if it is an index, refuse to touch anything else.
        if any(index_dir.iterdir()) and not (index_dir / "meta.json").exists():
            raise CatalogError(
                "exists and is not a catalog index; refusing to replace it", path=index_dir
            )
        if any(index_dir.iterdir()):
            index_dir.rename(index_dir.parent / f".{index_dir.name}.v-0-legacy-{uuid.uuid4().hex}")
        else:
            index_dir.rmdir()
    link_tmp = index_dir.parent / f".{index_dir.name}.link-{uuid.uuid4().hex}"
    # Relative target so the whole data directory can be moved or copied.
    os.symlink(version_dir.name, link_tmp, target_is_directory=True)
    try:
        os.replace(link_tmp, index_dir)
    except OSError:
        _remove_quietly(link_tmp)
        raise


def _write_index(
    products: Iterable[Product], directory: Path, index_dir: Path
) -> tuple[int, list[str]]:
    """Fill a fresh tantivy index in ``directory``; returns (count, sorted categories)."""
    index = tantivy.Index(_SCHEMA, path=str(directory))
    index.register_tokenizer(ANALYZER_NAME, _ANALYZER)
    # One indexing thread keeps the segment count (and so search cost) low.
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    count, categories = 0, set[str]()
    try:
        for product in distinct_products(products, categories, index_dir):
            writer.add_document(_document(product))
            count += 1
        writer.commit()
        writer.wait_merging_threads()
    except BaseException:
        with contextlib.suppress(Exception):
            writer.rollback()
        raise
    finally:
        # Drop the writer now: the traceback would otherwise keep it (and its lock
        # and background threads) alive while the caller deletes the directory.
        del writer, index
    return count, sorted(categories)


def build_index(products: Iterable[Product], index_dir: Path, *, source: str | None = None) -> Path:
    """Index ``products`` into a new version and atomically make it the one at ``index_dir``.

    ``source`` is an optional marker stored in the manifest (``open_catalog`` keeps
    a file hash there to know when to rebuild). Returns ``index_dir``. On any
    failure the previous index, if any, keeps serving.
    """
    index_dir = Path(index_dir).absolute()
    parent, name = index_dir.parent, index_dir.name
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatalogError(f"cannot create index parent directory: {exc}", path=parent) from None
    token = uuid.uuid4().hex
    building = parent / f".{name}.building-{os.getpid()}-{token}"
    _cleanup_old_versions(index_dir)  # what a killed build left behind goes first
    try:
        with _sigterm_interrupts():
            building.mkdir()
            count, categories = _write_index(products, building, index_dir)
            Manifest(count=count, categories=categories, source=source).write(building)
            version = parent / f".{name}.v-{time.time_ns():020d}-{token}"
            building.rename(version)
    except BaseException as exc:
        _remove_quietly(building)
        # The engine's and the file system's errors are a failed build; a bad record's pass.
        if isinstance(exc, OSError | ValueError):
            raise CatalogUnavailable(f"building the index failed: {exc}", path=index_dir) from exc
        raise
    try:
        _swap_in(version, index_dir)
    except CatalogError:
        _remove_quietly(version)
        raise
    except OSError as exc:
        _remove_quietly(version)
        raise CatalogUnavailable(f"cannot publish the new index: {exc}", path=index_dir) from exc
    _cleanup_old_versions(index_dir)
    return index_dir


def _boosted(query: tantivy.Query, boost: float) -> tantivy.Query:
    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def _filters(args: SearchArgs) -> list[tantivy.Query]:
    """The queries a product must match for the filters of `args`, those set only."""
    terms = {"category": args.category_slug, "kind": args.kind_term}
    ranges = {"price": (args.min_price, args.max_price), "rating": (args.min_rating, None)}
    filters = [tantivy.Query.term_query(_SCHEMA, f, v) for f, v in terms.items() if v is not None]
    filters += [
        tantivy.Query.range_query(_SCHEMA, field, tantivy.FieldType.Float, low, high)
        for field, (low, high) in ranges.items()
        if low is not None or high is not None
    ]
    return filters


@dataclass(frozen=True)
class _Snapshot:
    """Everything one search needs; replaced as a whole on reload so searches never mix versions."""

    directory: Path
    index: tantivy.Index
    searcher: tantivy.Searcher
    manifest: Manifest


def _open_snapshot(index_dir: Path) -> _Snapshot:
    index_dir = Path(index_dir)
    if not index_dir.exists():
        raise CatalogError(
            "no catalog index here; build one with `python -m catalog load FILE`", path=index_dir
        )
    directory = index_dir.resolve()
    manifest = Manifest.read(directory)
    try:
        index = tantivy.Index.open(str(directory))
        index.register_tokenizer(ANALYZER_NAME, _ANALYZER)
        searcher = index.searcher()
    except ValueError as exc:
        if not os.access(directory, os.W_OK):
            # tantivy writes a lock file even to read: a read-only folder is not corruption.
            raise CatalogError(
                "cannot open the index: its folder is read-only, and the index engine writes "
                "a lock file there to read it; make the folder writable",
                path=index_dir,
            ) from None
        raise CatalogUnavailable(f"corrupt or unreadable index: {exc}", path=index_dir) from exc
    if searcher.num_docs != manifest.count:
        raise CatalogUnavailable(
            f"index holds {searcher.num_docs} products but its manifest says {manifest.count}",
            path=index_dir,
        )
    return _Snapshot(directory, index, searcher, manifest)


class Catalog:
    """A read-only, thread-safe view of one catalog index.

    All searches go through one tantivy ``Searcher`` (itself thread-safe); ``reload``
    swaps in a new snapshot with a single attribute assignment, so concurrent
    searches finish on whichever snapshot they started with.
    """

    def __init__(self, index_dir: Path, snapshot: _Snapshot) -> None:
        self.index_dir = Path(index_dir)
        self._snapshot = snapshot
        self._reload_lock = threading.Lock()

    @classmethod
    def open(cls, index_dir: Path) -> Catalog:
        """Open the index served at ``index_dir``; ``CatalogError`` if it is missing or corrupt."""
        index_dir = Path(index_dir)
        try:
            return cls(index_dir, _open_snapshot(index_dir))
        except CatalogError:
            # A concurrent swap may have removed the version we resolved; retry once.
            return cls(index_dir, _open_snapshot(index_dir))

    def reload(self) -> None:
        """Re-resolve ``index_dir`` and serve the newest version from now on."""
        with self._reload_lock:
            self._snapshot = _open_snapshot(self.index_dir)

    @property
    def directory(self) -> Path:
        """The version directory currently being served."""
        return self._snapshot.directory

    @property
    def source(self) -> str | None:
        """The source marker recorded when the served version was built."""
        return self._snapshot.manifest.source

    def __len__(self) -> int:
        return self._snapshot.manifest.count

    def __repr__(self) -> str:
        return f"Catalog({str(self.index_dir)!r}, products={len(self)})"

    def categories(self) -> list[str]:
        return list(self._snapshot.manifest.categories)

    def get(self, ids: Iterable[str]) -> dict[str, Product]:
        """The products among ``ids`` that exist, keyed by id."""
        wanted = check_ids(ids)
        if not wanted:
            return {}
        snap = self._snapshot
        query = tantivy.Query.term_set_query(_SCHEMA, "id", wanted)
        result = snap.searcher.search(query, len(wanted), count=False)
        found = (self._product(snap, address) for _, address in result.hits)
        by_id = {p.id: p for p in found}
        return {i: by_id[i] for i in wanted if i in by_id}

    def products(self) -> Iterator[Product]:
        """Every product of the served version."""
        snap = self._snapshot
        result = snap.searcher.search(tantivy.Query.all_query(), max(len(self), 1), count=False)
        for _, address in result.hits:
            yield self._product(snap, address)

    def search(self, args: SearchArgs) -> list[ProductHit]:
        """Top ``limit`` products for ``query`` (BM25 over title, description, tags), filtered.

        Query text is only ever treated as words: operators and punctuation are
        separators. A query without words lists the filtered products by rating.
        """
        filters = _filters(args)
        snap = self._snapshot
        tokens = query_tokens(args.query)
        if not tokens:
            # No words: list what the filters allow, best rated first.
            base = (
                tantivy.Query.boolean_query([(tantivy.Occur.Must, f) for f in filters])
                if filters
                else tantivy.Query.all_query()
            )
            result = snap.searcher.search(
                base, args.limit, count=False, order_by_field="rating", order=tantivy.Order.Desc
            )
            return [ProductHit(self._product(snap, address), 0.0) for _, address in result.hits]

        should = [
            (
                tantivy.Occur.Should,
                _boosted(tantivy.Query.term_query(_SCHEMA, field, token), boost),
            )
            for token in tokens
            for field, boost in FIELD_BOOSTS
        ]
        text_query = tantivy.Query.boolean_query(should)
        if filters:
            # Filters must match but must not add to the score: wrap them at score 0.
            clauses = [(tantivy.Occur.Must, text_query)]
            clauses += [
                (tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters
            ]
            text_query = tantivy.Query.boolean_query(clauses)
        result = snap.searcher.search(text_query, args.limit, count=False)
        return [
            ProductHit(self._product(snap, address), float(score)) for score, address in result.hits
        ]

    def kind_stock(self, kind: str, max_price: float | None = None) -> KindStock:
        """Whether and where the shop carries `kind` within `max_price` (KindStock)."""
        filters = _filters(SearchArgs("", kind=kind, max_price=max_price))
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, f) for f in filters])
        by_department = {"terms": {"field": "category", "size": 10_000}}
        found = self._snapshot.searcher.aggregate(
            query, {"in": {**by_department, "aggs": {"cheapest": {"min": {"field": "price"}}}}}
        )
        buckets = found["in"]["buckets"]
        return KindStock.of(
            kind, [(b["key"], b["doc_count"], b["cheapest"]["value"]) for b in buckets]
        )

    @staticmethod
    def _product(snap: _Snapshot, address: tantivy.DocAddress) -> Product:
        raw = snap.searcher.doc(address).get_first("product")
        if not isinstance(raw, bytes):
            raise CatalogUnavailable(
                "corrupt index: a document has no stored product", path=snap.directory
            )
        # Validating again is cheap (pydantic-core parses in Rust) and guards against a
        # hand-edited or foreign index producing malformed Products downstream.
        return Product.model_validate_json(raw)
