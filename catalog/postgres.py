"""PostgreSQL catalog backend: the same interface and results contract as the tantivy ``Catalog``.

Selected with ``CATALOG_URL=postgresql://user:pass@host/db``, which the entry points read once
and pass to ``catalog.store.open_catalog(..., url=...)``; the embedded tantivy index stays the
default. It satisfies ``catalog.backend.CatalogBackend``. Needs the ``postgres`` extra
(``pip install -e '.[postgres]'``: psycopg 3 and psycopg-pool).

Layout in the database (all in the connection's current schema)::

    catalog_meta(table_name PK, count, categories[], source, schema_version, loaded_at)
    catalog_products            the served table (one per catalog; files get their own table)
      seq, id, title, description, tags, category, price, rating, kinds (Product.kinds's
      terms), product (JSON text, its kinds too),
      tsv tsvector GENERATED ALWAYS AS (title weight A || tags B || description C) STORED
      indexes: GIN(tsv), GIN(kinds), btree(category), btree(price), btree(rating), unique(id)
    catalog_en                  text search configuration: english + unaccent ("café" ~ "cafe")

A load streams the products with ``COPY`` into a NEW table, indexes and analyzes it,
then - in the same transaction - renames the served table away, renames the new one
into place, updates ``catalog_meta`` and drops the old table. Readers see either the
old catalog or the new one, and a failed load rolls back with the old table still serving.

Query text is only ever treated as words: it is split into letters/digits in Python
and the words are handed to ``websearch_to_tsquery`` joined by ``or`` (no quotes,
``-`` or other operators can reach it), so no tsquery syntax is ever user-controlled.
Results are ranked with ``ts_rank_cd`` (cover density, title > tags > description).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.errors import CatalogError, CatalogUnavailable
from catalog.exits import exit_code_of
from catalog.kinds import KindStock
from catalog.loaders import FORMATS, load_products
from catalog.models import Product, ProductHit
from catalog.paths import CATALOG_URL_ENV, catalog_url_from_env, is_postgres_url, redact_url
from catalog.sources import DEFAULT_CATALOG_FILE, DEFAULT_MARKER_PREFIX, SCHEMA_VERSION, file_marker
from catalog.validation import SearchArgs, bounded_terms, check_ids, distinct_products
from catalog.version import add_version_option

try:
    import psycopg
    from psycopg import sql
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - exercised only without the extra
    # mypy has no type for a module that may be missing: None here, _require_driver says so.
    psycopg = None  # type: ignore[assignment]
    sql = None  # type: ignore[assignment]
    ConnectionPool = None  # type: ignore[assignment,misc]

log = logging.getLogger(__name__)

DEFAULT_TABLE = "catalog_products"
META_TABLE = "catalog_meta"
TS_CONFIG = "catalog_en"
# Words longer than this are dropped from queries (tantivy drops them from the index too).
MAX_WORD_CHARS = 40
# Unicode letters and digits; everything else (quotes, "-", ":", NUL, ...) separates words.
_WORDS = re.compile(r"[^\W_]+")
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")
# ts_rank_cd weights for {D, C, B, A}: title (A) > tags (B) > description (C).
RANK_WEIGHTS = [0.1, 0.2, 0.4, 1.0]
# Normalisation 1: divide by 1 + log(document length), so long descriptions do not win.
RANK_NORMALIZATION = 1
# Serialises loads (and the one-time setup) across processes and replicas.
_LOAD_LOCK_KEY = 0x5EA7C4A7
# Each search filter: its SearchArgs field, and the condition it sets on a product.
_FILTERS = {
    "category_slug": "p.category = %(category_slug)s",
    "kind_term": "p.kinds @> ARRAY[%(kind_term)s]",
    "min_price": "p.price >= %(min_price)s",
    "max_price": "p.price <= %(max_price)s",
    "min_rating": "p.rating >= %(min_rating)s",
}


def _filtered(args: SearchArgs) -> tuple[str, dict[str, Any]]:
    """The conditions (each " AND ...") the filters of `args` set, and their parameters."""
    params = {name: value for name in _FILTERS if (value := getattr(args, name)) is not None}
    return "".join(f" AND {_FILTERS[name]}" for name in params), params


# How long __len__/categories() trust their cached metadata before re-reading it.
META_TTL_SECONDS = 30.0


def _require_driver() -> None:
    if psycopg is None:
        raise CatalogError("the PostgreSQL catalog needs psycopg: pip install -e '.[postgres]'")


# Seconds a connection may take to be made (libpq's connect_timeout), unless the URL sets
# its own: an unreachable server fails in seconds, not after a pool's 15 s of retries.
CONNECT_TIMEOUT_S = 3


def connect_settings(url: str) -> dict[str, Any]:
    """Connection settings every PostgreSQL connection of this project adds to its URL:
    libpq's ``connect_timeout`` (CONNECT_TIMEOUT_S), unless the URL sets one."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        given = conninfo_to_dict(url)
    except psycopg.Error:
        given = {}  # a malformed URL: the connection says what is wrong with it
    return {} if "connect_timeout" in given else {"connect_timeout": CONNECT_TIMEOUT_S}


def reason_line(error: BaseException) -> str:
    """psycopg's reason for a failed connection or statement as one line (libpq writes its
    "Is the server running...?" hint on lines of their own)."""
    return " ".join(str(error).split()) or type(error).__name__


def check_server(url: str) -> None:
    """Make one connection to `url` before a pool opens, and close it: a bad host, a
    refused port or a wrong password raises psycopg's error at once (within the connect
    timeout). A pool would instead retry in the background, log each failure through
    psycopg_pool's logger and time out after 15 s with no reason given; that logger is
    kept off stderr (its records still reach any handler the application configures)."""
    # psycopg's own logger, above the pool's: a connection lost mid-statement logs there too.
    pool_log = logging.getLogger("psycopg")
    if not pool_log.handlers:
        # With a handler of its own, Python's last-resort stderr handler is never used.
        pool_log.addHandler(logging.NullHandler())
    psycopg.connect(url, autocommit=True, **connect_settings(url)).close()


# `object`: a caller without a type checker may pass anything, and this is where it is refused.
def _check_table(table: object) -> str:
    if not isinstance(table, str) or not _TABLE_NAME.fullmatch(table):
        raise CatalogError(
            f"invalid catalog table name {table!r}: lowercase letters, digits and _ "
            "(at most 40 characters, not starting with a digit)"
        )
    return table


def query_words(text: str) -> list[str]:
    """The plain words of a query (at most ``MAX_QUERY_TOKENS``), de-duplicated, in order."""
    words = (match.group().casefold() for match in _WORDS.finditer(text))
    # "or" would be an operator for websearch_to_tsquery (and is a stop word anyway).
    return bounded_terms(w for w in words if len(w) <= MAX_WORD_CHARS and w != "or")


def _scalar(conn: Any, query: Any, params: Any = None) -> Any:
    """The value of a query that always returns exactly one row (to_regclass, ...)."""
    row = conn.execute(query, params).fetchone()
    if row is None:  # pragma: no cover - such queries always return a row
        raise CatalogUnavailable(f"no row from {query!r}")
    return row[0]


def _on_tables(template: str, *tables: str) -> Any:
    """A statement whose ``{}`` are table names, each quoted as an identifier."""
    return sql.SQL(template).format(*(sql.Identifier(table) for table in tables))


def _clean(text: str) -> str:
    # PostgreSQL text cannot hold NUL; it only separates words anyway.
    return text.replace("\x00", " ")


_SETUP_STATEMENTS = (
    f"""
    DO $$
    BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM pg_ts_config
        WHERE cfgname = '{TS_CONFIG}' AND cfgnamespace = current_schema()::regnamespace
      ) THEN
        CREATE TEXT SEARCH CONFIGURATION {TS_CONFIG} (COPY = pg_catalog.english);
        IF EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = 'unaccent') THEN
          ALTER TEXT SEARCH CONFIGURATION {TS_CONFIG}
            ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
        ELSE
          RAISE WARNING 'unaccent is not installed: accents will not be folded';
        END IF;
      END IF;
    END
    $$
    """,
    f"""
    CREATE TABLE IF NOT EXISTS {META_TABLE} (
      table_name text PRIMARY KEY,
      count integer NOT NULL,
      categories text[] NOT NULL,
      source text,
      schema_version integer NOT NULL,
      loaded_at timestamptz NOT NULL DEFAULT now()
    )
    """,
)


def _setup(conn: Any) -> None:
    """Create the extension, text search configuration and metadata table if missing.

    Runs inside the caller's transaction (which holds the load lock).
    """
    try:
        with conn.transaction():  # a savepoint: a missing privilege must not abort the load
            conn.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
    except psycopg.Error as exc:
        log.warning("cannot create the unaccent extension (%s); accents will not be folded", exc)
    for statement in _SETUP_STATEMENTS:
        conn.execute(statement)


def _table_ddl(name: str) -> Any:
    return sql.SQL(
        """
        CREATE TABLE {name} (
          seq integer NOT NULL,
          id text NOT NULL,
          title text NOT NULL,
          description text NOT NULL,
          tags text NOT NULL,
          category text NOT NULL,
          price double precision NOT NULL,
          rating double precision,
          kinds text[] NOT NULL,
          product text NOT NULL,
          tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector({cfg}::regconfig, title), 'A')
            || setweight(to_tsvector({cfg}::regconfig, tags), 'B')
            || setweight(to_tsvector({cfg}::regconfig, description), 'C')
          ) STORED
        )
        """
    ).format(name=sql.Identifier(name), cfg=sql.Literal(TS_CONFIG))


def _index_ddl(table: str, token: str) -> list[Any]:
    def index(suffix: str, body: str, unique: bool = False) -> Any:
        return sql.SQL("CREATE {unique}INDEX {index} ON {table} " + body).format(
            unique=sql.SQL("UNIQUE " if unique else ""),
            index=sql.Identifier(f"{table}_{token}_{suffix}"),
            table=sql.Identifier(f"{table}__new_{token}"),
        )

    return [
        index("id", "(id)", unique=True),
        index("tsv", "USING gin (tsv)"),
        index("kinds", "USING gin (kinds)"),
        index("category", "(category, rating DESC NULLS LAST, seq)"),
        index("price", "(price)"),
        index("rating", "(rating DESC NULLS LAST, seq)"),
    ]


def _row(seq: int, product: Product) -> tuple[Any, ...]:
    return (
        seq,
        _clean(product.id),
        _clean(product.title),
        _clean(product.description),
        _clean("\n".join(product.tags)),
        _clean(product.category),
        product.price,
        product.rating,
        [_clean(term) for term in product.kinds.terms],
        product.stored_json(),  # JSON escapes NUL, so the stored text never holds one
    )


@dataclass(frozen=True)
class _Meta:
    count: int
    categories: list[str]
    source: str | None
    read_at: float


def _read_meta(conn: Any, table: str, *, any_version: bool = False) -> _Meta | None:
    try:
        row = conn.execute(
            sql.SQL(
                "SELECT count, categories, source, schema_version FROM {meta} WHERE table_name = %s"
            ).format(meta=sql.Identifier(META_TABLE)),
            (table,),
        ).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    if row is None:
        return None
    count, categories, source, version = row
    if version != SCHEMA_VERSION and not any_version:
        raise CatalogError(
            f"catalog table {table!r} has schema version {version!r}, "
            f"not the supported version {SCHEMA_VERSION}; load it again"
        )
    return _Meta(int(count), list(categories), source, time.monotonic())


def load_postgres_catalog(
    url: str,
    products: Iterable[Product],
    *,
    table: str = DEFAULT_TABLE,
    source: str | None = None,
    unless_source: str | None = None,
) -> int | None:
    """Bulk-load ``products`` into a new table and atomically make it the served ``table``.

    With ``unless_source``, nothing is loaded (returns None) if the served table already
    records that source marker: concurrent first uses then load only once. Returns the
    product count. On any failure everything rolls back and the old table keeps serving.
    """
    _require_driver()
    table = _check_table(table)
    token = uuid.uuid4().hex[:12]
    new, old = f"{table}__new_{token}", f"{table}__old_{token}"
    try:
        conn = psycopg.connect(url, autocommit=False)
    except psycopg.Error as exc:
        raise CatalogUnavailable(f"cannot connect to {redact_url(url)}: {exc}") from exc
    try:
        with conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOAD_LOCK_KEY,))
            _setup(conn)
            if unless_source is not None:
                meta = _read_meta(conn, table, any_version=True)  # its marker says the version
                if meta is not None and meta.source == unless_source:
                    return None
            conn.execute(_table_ddl(new))
            count, categories = 0, set[str]()
            columns = "seq, id, title, description, tags, category, price, rating, kinds, product"
            copy_sql = _on_tables("COPY {} (" + columns + ") FROM STDIN", new)
            with conn.cursor() as cur, cur.copy(copy_sql) as copy:
                for count, product in enumerate(distinct_products(products, categories), 1):
                    copy.write_row(_row(count, product))
            for statement in _index_ddl(table, token):
                conn.execute(statement)
            conn.execute(_on_tables("ANALYZE {}", new))
            # The swap: wait (boundedly) for running searches, then rename both tables.
            conn.execute("SET LOCAL lock_timeout = '30s'")
            # Only the table in this schema (where the new one was made) is replaced, never
            # a same-named table further along the search_path.
            exists = _scalar(
                conn, "SELECT to_regclass(format('%%I.%%I', current_schema(), %s::text))", (table,)
            )
            if exists is not None:
                conn.execute(_on_tables("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE", table))
                conn.execute(_on_tables("ALTER TABLE {} RENAME TO {}", table, old))
            conn.execute(_on_tables("ALTER TABLE {} RENAME TO {}", new, table))
            conn.execute(
                sql.SQL(
                    "INSERT INTO {meta} (table_name, count, categories, source, schema_version) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (table_name) DO UPDATE SET "
                    "count = excluded.count, categories = excluded.categories, "
                    "source = excluded.source, schema_version = excluded.schema_version, "
                    "loaded_at = now()"
                ).format(meta=sql.Identifier(META_TABLE)),
                (table, count, sorted(categories), source, SCHEMA_VERSION),
            )
            if exists is not None:
                conn.execute(_on_tables("DROP TABLE {}", old))
        return count
    except psycopg.Error as exc:
        raise CatalogUnavailable(f"loading catalog table {table!r} failed: {exc}") from exc
    finally:
        conn.close()


def drop_postgres_catalog(url: str, table: str = DEFAULT_TABLE) -> None:
    """Remove a catalog table and its metadata (tests and clean-ups)."""
    _require_driver()
    table = _check_table(table)
    with psycopg.connect(url, autocommit=False) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOAD_LOCK_KEY,))
        conn.execute(_on_tables("DROP TABLE IF EXISTS {}", table))
        if _scalar(conn, "SELECT to_regclass(%s)", (META_TABLE,)) is not None:
            conn.execute(_on_tables("DELETE FROM {} WHERE table_name = %s", META_TABLE), (table,))


class PostgresCatalog:
    """A thread-safe, read-only view of one catalog table, over a psycopg connection pool.

    Same contract as ``catalog.Catalog``: ``search`` returns ``ProductHit``s best first
    and raises ``CatalogQueryError`` for invalid arguments; ``get``; ``categories``;
    ``len``; ``reload``. Searches always run against the table currently served (a
    load swaps it atomically); ``len``/``categories`` come from the load's metadata,
    cached for ``META_TTL_SECONDS`` and re-read at once by ``reload()``.
    """

    def __init__(self, url: str, table: str, pool: Any) -> None:
        """Serve `table` over an open `pool`; ``CatalogError`` if it was never loaded."""
        self.url = url
        self.table = table
        self._pool = pool
        self._meta_lock = threading.Lock()
        self._get_sql = _on_tables("SELECT product FROM {} WHERE id = ANY(%s)", table)
        self._ident = sql.Identifier(table)
        self._meta = self._fetch_meta()

    @classmethod
    def open(cls, url: str, table: str = DEFAULT_TABLE, *, max_size: int = 8) -> PostgresCatalog:
        """Connect and read the table's metadata; ``CatalogError`` if it was never loaded."""
        _require_driver()
        table = _check_table(table)
        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            # No server-side prepared statements: works behind pgbouncer, and every
            # search is planned with its actual values (stop-word-only queries fold away).
            kwargs={"autocommit": True, "prepare_threshold": None, **connect_settings(url)},
            open=False,
            name=f"catalog:{table}",
        )
        try:
            check_server(url)
            pool.open(wait=True, timeout=15)
            return cls(url, table, pool)
        except BaseException as exc:
            pool.close()
            # psycopg_pool's PoolTimeout (the server not answering) is a psycopg.Error.
            if isinstance(exc, psycopg.Error | TimeoutError):
                raise CatalogUnavailable(
                    f"cannot use {redact_url(url)}: {reason_line(exc)}"
                ) from exc
            raise

    def _fetch_meta(self) -> _Meta:
        with self._pool.connection() as conn:
            meta = _read_meta(conn, self.table)
        if meta is None:
            raise CatalogError(
                f"no catalog table {self.table!r} in {redact_url(self.url)}; load one with "
                "`CATALOG_URL=... python -m catalog.postgres load FILE`"
            )
        return meta

    def close(self) -> None:
        self._pool.close()

    def reload(self) -> None:
        """Re-read the metadata of the table now being served."""
        with self._meta_lock:
            self._meta = self._fetch_meta()

    def _current_meta(self) -> _Meta:
        meta = self._meta
        if time.monotonic() - meta.read_at > META_TTL_SECONDS:
            with contextlib.suppress(CatalogError):
                self.reload()
            meta = self._meta
        return meta

    @property
    def source(self) -> str | None:
        return self._current_meta().source

    def __len__(self) -> int:
        return self._current_meta().count

    def __repr__(self) -> str:
        return f"PostgresCatalog({redact_url(self.url)!r}, table={self.table!r})"

    def categories(self) -> list[str]:
        return list(self._current_meta().categories)

    def get(self, ids: Iterable[str]) -> dict[str, Product]:
        """The products among ``ids`` that exist, keyed by id."""
        wanted = check_ids(ids)
        if not wanted:
            return {}
        with self._pool.connection() as conn:
            rows = conn.execute(self._get_sql, ([_clean(i) for i in wanted],)).fetchall()
        by_id = {p.id: p for p in (Product.model_validate_json(row[0]) for row in rows)}
        return {i: by_id[i] for i in wanted if i in by_id}

    def products(self) -> Iterator[Product]:
        """Every product, in load order."""
        statement = sql.SQL("SELECT product FROM {} ORDER BY seq").format(self._ident)
        with self._pool.connection() as conn:
            for (raw,) in conn.execute(statement):
                yield Product.model_validate_json(raw)

    def search(self, args: SearchArgs) -> list[ProductHit]:
        """Top ``limit`` products for ``query`` (ts_rank_cd over title, tags, description).

        Query text is only ever treated as words. A query without words lists the
        filtered products by rating (unrated last).
        """
        where, params = _filtered(args)
        params["limit"] = args.limit
        listing = (
            "SELECT p.product, 0.0::float8 AS score FROM {table} p WHERE {cond}" + where + " "
            "ORDER BY p.rating DESC NULLS LAST, p.seq LIMIT %(limit)s"
        )
        words = query_words(args.query)
        if not words:
            statement = sql.SQL(listing).format(table=self._ident, cond=sql.SQL("true"))
        else:
            params["q"] = " or ".join(words)
            params["weights"] = RANK_WEIGHTS
            # A literal config keeps the call immutable, so it is evaluated once per query.
            tsquery = sql.SQL("websearch_to_tsquery({cfg}::regconfig, %(q)s)").format(
                cfg=sql.Literal(TS_CONFIG)
            )
            ranked = sql.SQL(
                "SELECT p.product, ts_rank_cd(%(weights)s::float4[], p.tsv, {tsq}, {norm})::float8"
                " AS score FROM {table} p WHERE p.tsv @@ {tsq}" + where + " "
                "ORDER BY score DESC, p.seq LIMIT %(limit)s"
            ).format(tsq=tsquery, norm=sql.Literal(RANK_NORMALIZATION), table=self._ident)
            # Only stop words left after analysis: the tsquery is empty, so list by rating
            # instead (a constant condition: the planner runs one branch only).
            fallback = sql.SQL(listing).format(
                table=self._ident, cond=sql.SQL("numnode({tsq}) = 0").format(tsq=tsquery)
            )
            statement = sql.SQL("({}) UNION ALL ({})").format(ranked, fallback)
        with self._pool.connection() as conn:
            rows = conn.execute(statement, params).fetchall()
        return [ProductHit(Product.model_validate_json(raw), float(score)) for raw, score in rows]

    def kind_stock(self, kind: str, max_price: float | None = None) -> KindStock:
        """Whether and where the shop carries `kind` within `max_price` (KindStock)."""
        where, params = _filtered(SearchArgs("", kind=kind, max_price=max_price))
        statement = sql.SQL(
            "SELECT category, count(*), min(price) FROM {table} p WHERE true"
            + where
            + " GROUP BY category"
        ).format(table=self._ident)
        with self._pool.connection() as conn:
            rows = conn.execute(statement, params).fetchall()
        return KindStock.of(kind, [(str(c), int(n), float(low)) for c, n, low in rows])


def table_for_file(path: Path) -> str:
    """The table a catalog file is loaded into: named after its stem and content hash."""
    digest = file_marker(Path(path)).split(":")[1][:12]
    stem = re.sub(r"[^a-z0-9]+", "_", Path(path).stem.lower()).strip("_")[:18] or "file"
    return f"catalog_{stem}_{digest}"


def _read_only(url: str) -> bool:
    with contextlib.suppress(psycopg.Error), psycopg.connect(url, autocommit=True) as conn:
        return bool(_scalar(conn, "SELECT pg_is_in_recovery()"))
    return False


def open_postgres_catalog(
    url: str, path: Path | None = None, format: str = "auto"
) -> PostgresCatalog:
    """The catalog at ``url``: the shipped default (``path=None``) or a catalog file.

    Like the tantivy store, a file is loaded once into its own table and reloaded
    when its content changes; the default table is (re)loaded from the shipped file
    unless a catalog was loaded there on purpose. On a read-only server (a hot
    standby used as read replica) nothing is loaded: the table must already exist.
    """
    _require_driver()
    default = path is None
    source_file, fmt = (DEFAULT_CATALOG_FILE, "auto") if path is None else (Path(path), format)
    marker = (DEFAULT_MARKER_PREFIX if default else "") + file_marker(source_file, fmt)
    table = DEFAULT_TABLE if default else table_for_file(source_file)
    try:
        catalog: PostgresCatalog | None = PostgresCatalog.open(url, table)
    except CatalogError as exc:
        # A table an older release loaded (another schema version) is loaded again.
        if "no catalog table" not in str(exc) and "schema version" not in str(exc):
            raise
        catalog = None
    found = catalog.source if catalog is not None else None
    # The default table is reloaded only over the shipped file's older content (or none):
    # a catalog loaded there on purpose stays.
    stale = found != marker and (
        not default or found is None or found.startswith(DEFAULT_MARKER_PREFIX)
    )
    if catalog is None or stale:
        if _read_only(url):
            if catalog is None:
                raise CatalogError(
                    f"no catalog table {table!r} on the read-only server {redact_url(url)}; "
                    "load it on the primary"
                )
            return catalog
        products = list(load_products(source_file, fmt))  # validate before locking
        load_postgres_catalog(
            url,
            products,
            table=table,
            source=marker,
            unless_source=marker,
        )
        if catalog is None:
            catalog = PostgresCatalog.open(url, table)
        else:
            catalog.reload()
    return catalog


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m catalog.postgres", description="Load a catalog file into PostgreSQL."
    )
    add_version_option(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    load = commands.add_parser("load", help="load a catalog file, replacing the served table")
    load.add_argument("file", type=Path, help="catalog file (JSONL, JSON or CSV)")
    load.add_argument(
        "--format", choices=FORMATS, default="auto", help="the file's format (default: auto)"
    )
    load.add_argument(
        "--table", default=DEFAULT_TABLE, help=f"table to replace (default: {DEFAULT_TABLE})"
    )
    load.add_argument("--url", help=f"postgresql:// URL (default: ${CATALOG_URL_ENV})")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m catalog.postgres load FILE [--table T]`` (uses ``$CATALOG_URL``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    url = args.url or catalog_url_from_env()
    if not is_postgres_url(url):
        parser.error(f"give --url postgresql://... or set {CATALOG_URL_ENV}")
    try:
        started = time.perf_counter()
        count = load_postgres_catalog(
            url,
            load_products(args.file, args.format),
            table=args.table,
            source=file_marker(args.file, args.format),
        )
    except CatalogError as exc:
        print(f"error: {exc}")
        return exit_code_of(exc)  # bad input, or the database failed
    print(f"Loaded {count} products into {args.table} in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
