"""Catalog search at scale: build time, index size and query latency of several backends.

    python bench/catalog_search.py                       # 10k, 100k and 1M products
    python bench/catalog_search.py --sizes 10000         # quick
    python bench/catalog_search.py --sizes 1000 --queries 40 --smoke   # seconds

Products come from a seeded generator that recombines the shipped catalog's vocabulary
(titles, descriptions, tags, brands), with prices and ratings spread out. Each query
text runs twice, without and with filters (price cap, rating floor or category).
Backends, compared in the same run on the same products and queries:

* linear-scan: the seed's approach, a keyword match over lowercased text of every product
  in memory, with the filters checked in Python (a subset of the queries at large sizes).
* sqlite-fts5: an FTS5 table (porter tokenizer), `ORDER BY bm25()` with the same field
  weights, filters as SQL conditions on the matched rows.
* tantivy-raw: the floor. The same index our Catalog built, queried with a hand-built
  tantivy query (term queries on the analysed words, boosts, const-score filters) and a
  stored-field read of each hit's id: no validation, no Product objects.
* ours: the `search_products` path, `graph.tools.search_catalog` on a `catalog.Catalog`.

* postgres (with --postgres-url postgresql://...): catalog.postgres.PostgresCatalog through
  the same search_catalog path; COPY + GIN build. With it, `ours` and `postgres` also get an
  8-client concurrent throughput figure (--clients).

Add a backend by writing its `build` and `search` functions and one entry in BACKENDS.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, SHARED_DATA, Report, dir_size, human_bytes, median, percentile

from catalog import SearchArgs

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
DEFAULT_QUERIES = 200
LIMIT = 5
SEED = 20240611
HUMAN_QUERIES_FILE = SHARED_DATA / "webshop" / "goal_query_map.json"
_STOP_TEXT = """a an and are as at be but by for if in into is it no not of on or such that
the their then there these they this to was will with i am looking want need my me some"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")


# ---------------------------------------------------------------- data


@dataclass
class Vocabulary:
    by_category: dict[str, list[dict[str, Any]]]
    brands: list[str]
    title_words: dict[str, list[str]]
    sentences: dict[str, list[str]]
    tags: dict[str, list[str]]


def load_vocabulary() -> Vocabulary:
    from catalog import DEFAULT_CATALOG_FILE

    by_category: dict[str, list[dict[str, Any]]] = {}
    brands: set[str] = set()
    title_words: dict[str, set[str]] = {}
    sentences: dict[str, set[str]] = {}
    tags: dict[str, set[str]] = {}
    for line in DEFAULT_CATALOG_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        product = json.loads(line)
        category = product["category"]
        by_category.setdefault(category, []).append(product)
        if product.get("brand"):
            brands.add(product["brand"])
        words = product["title"].split()
        title_words.setdefault(category, set()).update(w for w in words[1:] if len(w) > 2)
        parts = re.split(r"(?<=[.!?])\s+", product.get("description", ""))
        sentences.setdefault(category, set()).update(s for s in parts if s)
        tags.setdefault(category, set()).update(product.get("tags", []))
    return Vocabulary(
        by_category=by_category,
        brands=sorted(brands),
        title_words={c: sorted(w) for c, w in title_words.items()},
        sentences={c: sorted(s) for c, s in sentences.items()},
        tags={c: sorted(t) for c, t in tags.items()},
    )


def generate_products(count: int, vocab: Vocabulary, seed: int = SEED) -> Iterator[dict[str, Any]]:
    """`count` product dicts, the same for the same seed."""
    rng = random.Random(seed)
    categories = sorted(vocab.by_category)
    weights = [len(vocab.by_category[c]) for c in categories]
    letters = "ABCDEFGHJKLMNPRSTVXZ"
    for number in range(count):
        category = rng.choices(categories, weights)[0]
        base = rng.choice(vocab.by_category[category])
        words = base["title"].split()[1:]
        if words and rng.random() < 0.6:
            words[rng.randrange(len(words))] = rng.choice(vocab.title_words[category])
        model = f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randrange(10, 1000)}"
        brand = rng.choice(vocab.brands)
        pool = vocab.sentences[category]
        description = " ".join(rng.sample(pool, min(len(pool), rng.randint(1, 3))))
        tag_pool = vocab.tags[category]
        tags = list(base.get("tags", []))[:3] + rng.sample(tag_pool, min(len(tag_pool), 1))
        price = max(1.0, base["price"] * rng.lognormvariate(0.0, 0.45))
        yield {
            "id": f"g{number:07d}",
            "title": f"{brand} {model} {' '.join(words)}",
            "description": description,
            "category": category,
            "price": round(int(price) + 0.99, 2),
            "rating": None if rng.random() < 0.05 else round(rng.uniform(1.0, 5.0), 1),
            "brand": brand,
            "tags": tags,
        }


@dataclass(frozen=True)
class Query:
    text: str
    kind: str  # common, selective, multi-word, human
    category: str | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_rating: float | None = None

    @property
    def filtered(self) -> bool:
        return any(
            v is not None for v in (self.category, self.min_price, self.max_price, self.min_rating)
        )

    def filters(self) -> dict[str, Any]:
        names = ("category", "min_price", "max_price", "min_rating")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


def human_queries() -> list[str]:
    """Real shopper queries (WebShop goal -> search queries), if the shared data is there."""
    try:
        data = json.loads(HUMAN_QUERIES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found: list[str] = []
    for value in data.values() if isinstance(data, dict) else []:
        for query in value if isinstance(value, list) else [value]:
            if isinstance(query, str) and query.strip():
                found.append(query.strip())
    return sorted(set(found))


def make_queries(count: int, vocab: Vocabulary, sample: list[dict[str, Any]]) -> list[Query]:
    """`count` query texts (a quarter each: common words, selective words, multi-word
    titles, real human queries), each both without and with filters."""
    rng = random.Random(SEED + 1)
    frequency = Counter(
        w for p in sample for w in _WORD.findall(p["title"].lower()) if w not in STOP_WORDS
    )
    common = [w for w, _ in frequency.most_common(40) if not w.isdigit()]
    humans = human_queries()
    texts: list[tuple[str, str]] = []
    for index in range(count):
        slot = index % 4
        product = rng.choice(sample)
        title = product["title"].split()
        if slot == 0:
            texts.append((rng.choice(common), "common"))
        elif slot == 1:  # brand + model code: matches a handful of products
            texts.append((f"{title[0]} {title[1]}", "selective"))
        elif slot == 2:
            start = rng.randrange(2, max(3, len(title) - 1))
            texts.append((" ".join(title[start : start + rng.randint(2, 3)]), "multi-word"))
        elif humans:
            texts.append((rng.choice(humans), "human"))
        else:  # no shared data: a longer made-up query instead
            texts.append((" ".join(rng.sample(common, 3)), "human (fallback)"))
    categories = sorted(vocab.by_category)
    queries: list[Query] = []
    for index, (text, kind) in enumerate(texts):
        queries.append(Query(text, kind))
        choice = index % 4
        if choice == 0:
            queries.append(Query(text, kind, max_price=rng.choice([25.0, 50.0, 100.0, 200.0])))
        elif choice == 1:
            queries.append(Query(text, kind, max_price=300.0, min_rating=4.0))
        elif choice == 2:
            queries.append(Query(text, kind, category=rng.choice(categories), max_price=500.0))
        else:
            queries.append(Query(text, kind, min_price=20.0, max_price=150.0))
    return queries


def plain_words(text: str) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
    return list(dict.fromkeys(words))[:32]


# ---------------------------------------------------------------- backends


@dataclass
class Workspace:
    """What the backends share in one size's run."""

    directory: Path
    products: list[dict[str, Any]]
    handles: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Backend:
    name: str
    description: str
    build: Callable[[Workspace], tuple[Any, int | None]]  # -> (handle, bytes on disk)
    search: Callable[[Any, Query], list[str]]  # -> ids, best first
    close: Callable[[Any], None] = lambda handle: None
    sampled: bool = False  # too slow for every query at large sizes: run a subset


def build_linear(ws: Workspace) -> tuple[Any, int | None]:
    items = [
        (
            p["id"],
            " ".join([p["title"], p["description"], *p["tags"]]).lower(),
            p["price"],
            -1.0 if p["rating"] is None else p["rating"],
            p["category"],
        )
        for p in ws.products
    ]
    return items, None


def search_linear(items: list[tuple[str, str, float, float, str]], query: Query) -> list[str]:
    words = plain_words(query.text)
    low, high, rating, category = query.min_price, query.max_price, query.min_rating, query.category
    scored = []
    for pid, text, price, stars, cat in items:
        if high is not None and price > high:
            continue
        if low is not None and price < low:
            continue
        if rating is not None and stars < rating:
            continue
        if category is not None and cat != category:
            continue
        score = sum(1 for w in words if w in text)
        if score:
            scored.append((score, stars, pid))
    return [pid for _, _, pid in heapq.nlargest(LIMIT, scored)]


def build_sqlite(ws: Workspace) -> tuple[Any, int | None]:
    path = ws.directory / "fts5.sqlite"
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute(
        "CREATE VIRTUAL TABLE products USING fts5(pid UNINDEXED, title, description, tags, "
        "category UNINDEXED, price UNINDEXED, rating UNINDEXED, tokenize='porter unicode61')"
    )
    conn.executemany(
        "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            (
                p["id"],
                p["title"],
                p["description"],
                " ".join(p["tags"]),
                p["category"],
                p["price"],
                -1.0 if p["rating"] is None else p["rating"],
            )
            for p in ws.products
        ),
    )
    conn.commit()
    conn.execute("INSERT INTO products(products) VALUES ('optimize')")
    conn.commit()
    return conn, path.stat().st_size


def search_sqlite(conn: sqlite3.Connection, query: Query) -> list[str]:
    words = plain_words(query.text)
    if not words:
        return []
    conditions, params = ["products MATCH ?"], [" OR ".join(f'"{w}"' for w in words)]
    for sql, value in (
        ("price >= ?", query.min_price),
        ("price <= ?", query.max_price),
        ("rating >= ?", query.min_rating),
        ("category = ?", query.category),
    ):
        if value is not None:
            conditions.append(sql)
            params.append(value)
    # Same field weights as the tantivy index: title 3, description 1, tags 1.5.
    sql = (
        f"SELECT pid FROM products WHERE {' AND '.join(conditions)} "
        "ORDER BY bm25(products, 0, 3.0, 1.0, 1.5, 0, 0, 0) LIMIT ?"
    )
    return [row[0] for row in conn.execute(sql, [*params, LIMIT])]


def build_ours(ws: Workspace) -> tuple[Any, int | None]:
    from catalog import Catalog, Product, build_index

    index_dir = ws.directory / "catalog"
    build_index((Product(**p) for p in ws.products), index_dir)
    catalog = Catalog.open(index_dir)
    ws.handles["index_dir"] = catalog.directory
    return catalog, dir_size(catalog.directory)


def search_ours(catalog: Any, query: Query) -> list[str]:
    from graph.tools import search_catalog

    _, artifact = search_catalog(catalog, SearchArgs(query.text, limit=LIMIT, **query.filters()))
    return [p["id"] for p in artifact["products"]]


def build_raw(ws: Workspace) -> tuple[Any, int | None]:
    """Open the index `ours` built (no build of its own)."""
    import tantivy

    from catalog.index import _SCHEMA

    index = tantivy.Index.open(str(ws.handles["index_dir"]))
    return (index.searcher(), _SCHEMA), None


def search_raw(handle: Any, query: Query) -> list[str]:
    import tantivy

    from catalog.index import FIELD_BOOSTS, query_tokens

    searcher, schema = handle
    q, Occur = tantivy.Query, tantivy.Occur
    clauses = [
        (Occur.Should, q.boost_query(q.term_query(schema, name, token), boost))
        for token in query_tokens(query.text)
        for name, boost in FIELD_BOOSTS
    ]
    if not clauses:
        return []
    filters = []
    if query.category is not None:
        filters.append(q.term_query(schema, "category", query.category))
    if query.min_price is not None or query.max_price is not None:
        filters.append(
            q.range_query(
                schema, "price", tantivy.FieldType.Float, query.min_price, query.max_price
            )
        )
    if query.min_rating is not None:
        filters.append(
            q.range_query(schema, "rating", tantivy.FieldType.Float, query.min_rating, None)
        )
    text = q.boolean_query(clauses)
    if filters:
        text = q.boolean_query(
            [(Occur.Must, text)] + [(Occur.Must, q.const_score_query(f, 0.0)) for f in filters]
        )
    hits = searcher.search(text, LIMIT, count=False).hits
    return [searcher.doc(address).get_first("id") for _, address in hits]


BACKENDS: dict[str, Backend] = {
    "linear-scan": Backend(
        "linear-scan",
        "keyword match over all products in memory (seed)",
        build_linear,
        search_linear,
        sampled=True,
    ),
    "sqlite-fts5": Backend(
        "sqlite-fts5",
        "FTS5 MATCH, ORDER BY bm25(), SQL filters",
        build_sqlite,
        search_sqlite,
        close=lambda conn: conn.close(),
    ),
    # `ours` before `tantivy-raw`: the raw backend queries the index `ours` built.
    "ours": Backend("ours", "graph.tools.search_catalog on Catalog", build_ours, search_ours),
    "tantivy-raw": Backend(
        "tantivy-raw", "hand-built tantivy query (floor)", build_raw, search_raw
    ),
}


# PostgreSQL (catalog.postgres): registered in BACKENDS only when --postgres-url is given.
POSTGRES_URL: str | None = None
CLIENTS = 8  # concurrent clients for the throughput figure (--clients; 0 skips it)
THROUGHPUT: dict[tuple[int, str], dict[str, float]] = {}  # (size, backend) -> figures


def build_postgres(ws: Workspace) -> tuple[Any, int | None]:
    """COPY into a new table + GIN/btree indexes + swap, as `load_postgres_catalog` does."""
    from catalog import Product
    from catalog.postgres import PostgresCatalog, load_postgres_catalog

    table = f"bench_catalog_{len(ws.products)}"
    load_postgres_catalog(POSTGRES_URL, (Product(**p) for p in ws.products), table=table)
    catalog = PostgresCatalog.open(POSTGRES_URL, table, max_size=max(CLIENTS, 1))
    with catalog._pool.connection() as conn:
        size = conn.execute("SELECT pg_total_relation_size(%s)", (table,)).fetchone()[0]
    return catalog, int(size)


def close_postgres(catalog: Any) -> None:
    from catalog.postgres import drop_postgres_catalog

    catalog.close()
    drop_postgres_catalog(POSTGRES_URL, catalog.table)


def concurrent_throughput(
    backend: Backend, handle: Any, queries: list[Query], clients: int, seconds: float = 10.0
) -> dict[str, float]:
    """`clients` threads in this process, each cycling through the queries for `seconds`."""
    import threading

    done = [0] * clients
    errors: list[BaseException] = []
    deadline = time.perf_counter() + seconds

    def client(number: int) -> None:
        index = number * 7
        try:
            while time.perf_counter() < deadline:
                backend.search(handle, queries[index % len(queries)])
                done[number] += 1
                index += 1
        except BaseException as exc:  # pragma: no cover - reported
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return {"clients": clients, "searches": sum(done), "qps": sum(done) / elapsed}


def register_postgres(url: str) -> None:
    global POSTGRES_URL
    POSTGRES_URL = url
    BACKENDS["postgres"] = Backend(
        "postgres",
        "PostgreSQL tsvector/GIN, ts_rank_cd (catalog.postgres via search_catalog)",
        build_postgres,
        search_ours,  # the same search_products path, on a PostgresCatalog
        close=close_postgres,
    )


# ---------------------------------------------------------------- measuring


@dataclass
class Timings:
    build_s: float
    size: int | None
    latencies: dict[int, float]  # query index -> seconds
    hits: dict[int, int]


def run_backend(backend: Backend, ws: Workspace, queries: list[Query], subset: set[int]) -> Timings:
    gc.collect()
    started = time.perf_counter()
    handle, size = backend.build(ws)
    build_s = time.perf_counter() - started
    chosen = (
        [i for i in range(len(queries)) if i in subset] if backend.sampled else range(len(queries))
    )
    for i in list(chosen)[:10]:  # warm-up (caches, first-use imports), not counted
        backend.search(handle, queries[i])
    latencies, hits = {}, {}
    for i in chosen:
        started = time.perf_counter()
        found = backend.search(handle, queries[i])
        latencies[i] = time.perf_counter() - started
        hits[i] = len(found)
    if CLIENTS > 0 and backend.name in ("ours", "postgres") and POSTGRES_URL:
        key = (len(ws.products), backend.name)
        THROUGHPUT[key] = concurrent_throughput(backend, handle, queries, CLIENTS)
    backend.close(handle)
    return Timings(build_s, size, latencies, hits)


def peak_rss(index_dir: Path, queries: list[Query]) -> dict[str, Any]:
    """Peak RSS of a fresh process that only opens the index and runs every query."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([q.__dict__ for q in queries], handle)
    try:
        out = subprocess.run(
            [
                sys.executable,
                str(BENCH_DIR / "catalog_search.py"),
                "--rss-child",
                str(index_dir),
                handle.name,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        ).stdout
    finally:
        Path(handle.name).unlink(missing_ok=True)
    return json.loads(out.strip().splitlines()[-1])


def peak_rss_kb() -> int:
    """This process's peak RSS in KB.

    Linux's getrusage maxrss survives execve (it starts at the parent's high-water mark,
    the whole benchmark's heap), so VmHWM of this process's own address space is read
    from /proc when it exists; getrusage is the fallback elsewhere.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_child(index_dir: str, queries_file: str) -> int:
    from catalog import Catalog

    before = peak_rss_kb()
    catalog = Catalog.open(Path(index_dir))
    for raw in json.loads(Path(queries_file).read_text()):
        query = Query(**raw)
        catalog.search(SearchArgs(query.text, limit=LIMIT, **query.filters()))
    print(json.dumps({"imports_kb": before, "peak_kb": peak_rss_kb()}))
    return 0


def stats(t: Timings, indices: list[int]) -> tuple[float, float]:
    values = [t.latencies[i] * 1000 for i in indices if i in t.latencies]
    return median(values), percentile(values, 99)


def measure_size(
    size: int, vocab: Vocabulary, n_queries: int, backends: list[str], workdir: Path, rss: bool
) -> dict[str, Any]:
    started = time.perf_counter()
    products = list(generate_products(size, vocab))
    generate_s = time.perf_counter() - started
    rng = random.Random(SEED + 2)
    queries = make_queries(n_queries, vocab, rng.sample(products, min(len(products), 5000)))
    # The linear scan gets a subset at large sizes (about 2M product visits per query ~ 1 s).
    per_kind = max(6, min(len(queries) // 2, 2_000_000 // size))
    unfiltered = [i for i, q in enumerate(queries) if not q.filtered]
    filtered = [i for i, q in enumerate(queries) if q.filtered]
    subset = set(unfiltered[:per_kind] + filtered[:per_kind])
    directory = Path(tempfile.mkdtemp(prefix=f"bench-catalog-{size}-", dir=workdir))
    ws = Workspace(directory, products)
    timings: dict[str, Timings] = {}
    try:
        for name in BACKENDS:
            if name in backends or (name == "ours" and "tantivy-raw" in backends):
                timings[name] = run_backend(BACKENDS[name], ws, queries, subset)
        rss_figures = (
            peak_rss(ws.handles["index_dir"], queries) if rss and "ours" in timings else {}
        )
    finally:
        ws.products = []
        shutil.rmtree(directory, ignore_errors=True)
    return {
        "size": size,
        "generate_s": generate_s,
        "queries": queries,
        "subset": subset,
        "unfiltered": unfiltered,
        "filtered": filtered,
        "timings": timings,
        "rss": rss_figures,
    }


# ---------------------------------------------------------------- report


def build_report(runs: list[dict[str, Any]], human_count: int) -> Report:
    report = Report("Catalog search at scale (limit 5, one thread)")
    rows = []
    for run in runs:
        for name, t in run["timings"].items():
            n = len(t.latencies)
            p50_u, p99_u = stats(t, run["unfiltered"])
            p50_f, p99_f = stats(t, run["filtered"])
            hits = sum(t.hits.values()) / max(1, len(t.hits))
            rows.append(
                [
                    f"{run['size']:,}",
                    name,
                    f"{t.build_s:.1f}" if name not in ("tantivy-raw",) else "(shared)",
                    human_bytes(t.size) if t.size else "-",
                    n,
                    p50_u,
                    p99_u,
                    p50_f,
                    p99_f,
                    f"{hits:.1f}",
                ]
            )
    report.table(
        "Build and latency (ms); each query text runs unfiltered and filtered",
        [
            "products",
            "backend",
            "build s",
            "on disk",
            "searches",
            "p50",
            "p99",
            "p50 filt.",
            "p99 filt.",
            "avg hits",
        ],
        rows,
    )
    ratio_rows = []
    for run in runs:
        t = run["timings"]
        if "ours" not in t:
            continue
        row: list[Any] = [f"{run['size']:,}"]
        ours_sub = [i for i in run["filtered"] if i in run["subset"]]
        for other, indices in (
            ("linear-scan", ours_sub),
            ("sqlite-fts5", run["filtered"]),
            ("tantivy-raw", run["filtered"]),
        ):
            if other in t:
                mine, theirs = stats(t["ours"], indices)[0], stats(t[other], indices)[0]
                row.append(
                    f"{theirs / mine:.1f}x" if other != "tantivy-raw" else f"{mine / theirs:.2f}x"
                )
            else:
                row.append("-")
        rss = run["rss"]
        row.append(f"{rss['peak_kb'] / 1024:.0f} MB" if rss else "-")
        row.append(f"{rss['imports_kb'] / 1024:.0f} MB" if rss else "-")
        ratio_rows.append(row)
    report.table(
        "Filtered queries, p50 ratios (linear on its subset) and the search process's peak RSS",
        [
            "products",
            "linear / ours",
            "sqlite / ours",
            "ours / raw",
            "peak RSS",
            "RSS after imports",
        ],
        ratio_rows,
    )
    if THROUGHPUT:
        report.table(
            f"Concurrent throughput: {CLIENTS} client threads, 10 s, all queries (searches/s)",
            ["products", "backend", "searches", "searches/s"],
            [
                [f"{size:,}", name, f["searches"], f"{f['qps']:.0f}"]
                for (size, name), f in sorted(THROUGHPUT.items())
            ],
        )
        report.data["throughput"] = [
            {"size": size, "backend": name, **f} for (size, name), f in sorted(THROUGHPUT.items())
        ]
    gen_rows = [
        [
            f"{r['size']:,}",
            f"{r['generate_s']:.1f}",
            len(r["queries"]),
            len([i for i in r["subset"]]),
        ]
        for r in runs
    ]
    report.table(
        "Data", ["products", "generate s", "searches per backend", "linear-scan subset"], gen_rows
    )

    by_size = {r["size"]: r for r in runs}
    small = by_size.get(10_000)
    if small and "ours" in small["timings"]:
        p99 = percentile([v * 1000 for v in small["timings"]["ours"].latencies.values()], 99)
        report.target("10k: p99, all searches (ours)", f"{p99:.2f} ms", "<= 2 ms", p99 <= 2.0)
    big = by_size.get(1_000_000)
    if big and "ours" in big["timings"]:
        t = big["timings"]
        p99 = stats(t["ours"], big["filtered"])[1]
        report.target("1M: p99 filtered (ours)", f"{p99:.1f} ms", "<= 20 ms", p99 <= 20.0)
        if "linear-scan" in t:
            indices = [i for i in big["filtered"] if i in big["subset"]]
            speedup = stats(t["linear-scan"], indices)[0] / stats(t["ours"], indices)[0]
            report.target(
                "1M: linear scan / ours (p50 filt.)", f"{speedup:.0f}x", ">= 50x", speedup >= 50
            )
        if "tantivy-raw" in t:
            ratio = (
                stats(t["ours"], big["filtered"])[0] / stats(t["tantivy-raw"], big["filtered"])[0]
            )
            report.target(
                "1M: ours / raw tantivy (p50 filt.)", f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5
            )
        if big["rss"]:
            peak = big["rss"]["peak_kb"] / 1024
            report.target("1M: peak RSS while searching", f"{peak:.0f} MB", "< 500 MB", peak < 500)
    if not big:
        report.note("1M targets not measured: run with the default sizes (or --sizes 1000000)")
    report.note(
        f"queries: a quarter each common / selective / multi-word / human ({human_count} "
        f"WebShop queries available from {HUMAN_QUERIES_FILE}); each runs without and with a "
        "filter (price cap, rating floor, category or price range)"
    )
    report.note(
        "p50/p99: nearest-rank over the searches of that column; latency per search, "
        "ids of the top 5 read back"
    )
    report.note(
        "peak RSS: high-water RSS (VmHWM; getrusage maxrss is inherited across exec on "
        "Linux) of a subprocess that imports catalog, opens the index and runs every "
        "query through Catalog.search (mmapped index pages count)"
    )
    return report


def main(argv: list[str] | None = None) -> int:
    global CLIENTS
    parser = argparse.ArgumentParser(
        prog="python bench/catalog_search.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument(
        "--queries",
        type=int,
        default=DEFAULT_QUERIES,
        help="query texts per size (each runs unfiltered and filtered)",
    )
    parser.add_argument(
        "--postgres-url",
        metavar="URL",
        help="also benchmark the PostgreSQL backend there (postgresql://...; a scratch "
        "table per size is created and dropped) and measure concurrent throughput",
    )
    parser.add_argument("--clients", type=int, default=CLIENTS, help="throughput clients (0: skip)")
    pre, _ = parser.parse_known_args(argv)
    if pre.postgres_url:
        register_postgres(pre.postgres_url)
    parser.add_argument("--backends", nargs="+", choices=list(BACKENDS), default=list(BACKENDS))
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocess")
    parser.add_argument("--workdir", type=Path, default=None, help="where indexes are built (tmp)")
    parser.add_argument("--smoke", action="store_true", help="tiny run for the test suite")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument(
        "--rss-child", nargs=2, metavar=("INDEX_DIR", "QUERIES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    CLIENTS = args.clients
    if args.rss_child:
        return rss_child(*args.rss_child)
    if args.smoke:
        args.sizes, args.queries = [min(args.sizes[0], 2000)], min(args.queries, 40)
    vocab = load_vocabulary()
    runs = []
    for size in args.sizes:
        print(f"[catalog_search] {size:,} products ...", file=sys.stderr, flush=True)
        runs.append(
            measure_size(
                size, vocab, args.queries, args.backends, args.workdir, rss=not args.no_rss
            )
        )
    report = build_report(runs, len(human_queries()))
    for run in runs:
        run["timings"] = {
            name: {
                "build_s": t.build_s,
                "bytes": t.size,
                "latencies_ms": {str(k): v * 1000 for k, v in t.latencies.items()},
            }
            for name, t in run["timings"].items()
        }
        run["queries"] = [q.__dict__ for q in run["queries"]]
        run["subset"] = sorted(run["subset"])
    report.data["runs"] = runs
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
