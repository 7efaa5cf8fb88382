"""Indexing a catalog with the semantic index (meaning/): time, memory, query time.

    python bench/semantic_index.py                    # the shipped catalog and 100,000 products
    python bench/semantic_index.py --sample 5000      # 100,000 projected from 5,000 embedded
    python bench/semantic_index.py --smoke            # 200 generated products, seconds

Each size runs in a fresh child process. It builds what the shopping graph builds: the
catalog's index (each product's kinds stored with it) and the shop's shelves, embedded
once (graph/reading/shelves.py, no cache to read back). Then it embeds the products
(title and tags), which the graph does not (their cost is why), and times queries: the requests of
tests/fixtures/meaning_probe.json, one at a time, against the product index. Large
catalogs are the seeded generator of bench/catalog_search.py. With --sample N, only the
first N products of a size are embedded and the whole size's time is projected from
their throughput (embedding is linear in the number of texts; marked "projected").
Times are wall and CPU seconds: CPU seconds hold on a busy machine, wall seconds do not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, TESTS_DIR, Report, median

from catalog.paths import DATA_DIR_ENV

DEFAULT_SIZES = ("shipped", "100000")
SMOKE_SIZE = "200"
PROBE_FILE = TESTS_DIR / "fixtures" / "meaning_probe.json"


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def products_of(size: str) -> list[dict[str, Any]]:
    if size == "shipped":
        from catalog.loaders import load_products
        from catalog.sources import DEFAULT_CATALOG_FILE

        return [p.model_dump() for p in load_products(DEFAULT_CATALOG_FILE)]
    from catalog_search import generate_products, load_vocabulary

    return list(generate_products(int(size), load_vocabulary()))


def timed(work: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def run_child(size: str, sample: int | None) -> int:
    from meaning import Embedder, SemanticIndex

    products = products_of(size)
    before_mb = rss_mb()
    embedder = Embedder()
    _, load_s, _ = timed(lambda: embedder.embed(["warm up"]))
    # What the shopping graph builds: the catalog's index (kinds stored per product), then
    # its shelves, embedded once (graph/reading/shelves.py), with no cache to read back.
    with tempfile.TemporaryDirectory() as scratch:
        os.environ[DATA_DIR_ENV] = scratch
        from catalog import Catalog, Product, build_index
        from graph.reading.shelves import shop_shelves

        models = [Product.model_validate(p) for p in products]
        _, index_s, index_cpu_s = timed(lambda: build_index(models, Path(scratch) / "index"))
        catalog = Catalog.open(Path(scratch) / "index")
        shop, shelves_s, shelves_cpu_s = timed(lambda: shop_shelves(catalog))
    embedded = products[:sample] if sample else products
    items = [(p["id"], f"{p['title']}. {', '.join(p['tags'])}") for p in embedded]
    index, products_s, products_cpu_s = timed(lambda: SemanticIndex.build(items, embedder))
    requests = [r["text"] for r in json.loads(PROBE_FILE.read_text(encoding="utf-8"))["requests"]]
    query_s, query_cpu_s = [], []
    for text in requests:
        _, wall, cpu = timed(lambda text=text: index.nearest(text, k=5))
        query_s.append(wall)
        query_cpu_s.append(cpu)
    scale = len(products) / len(embedded)
    figures = {
        "size": size,
        "products": len(products),
        "embedded": len(embedded),
        "projected": scale != 1,
        "load_s": load_s,
        "index_s": index_s,
        "index_cpu_s": index_cpu_s,
        "kinds": len(shop.kinds),
        "shelves_s": shelves_s,
        "shelves_cpu_s": shelves_cpu_s,
        "products_s": products_s * scale,
        "products_cpu_s": products_cpu_s * scale,
        "per_second": len(embedded) / products_s,
        "query_ms": 1000 * median(query_s),
        "query_cpu_ms": 1000 * median(query_cpu_s),
        "rss_mb": rss_mb(),
        "before_model_mb": before_mb,
    }
    print(json.dumps(figures))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/semantic_index.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--sample", type=int, help="embed only this many products per size")
    parser.add_argument("--smoke", action="store_true", help="tiny run for the test suite")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child(args.child, args.sample)
    runs = []
    for size in [SMOKE_SIZE] if args.smoke else args.sizes:
        print(f"[semantic_index] {size} ...", file=sys.stderr, flush=True)
        command = [sys.executable, str(BENCH_DIR / "semantic_index.py"), "--child", size]
        if args.sample:
            command += ["--sample", str(args.sample)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    report = Report("Semantic index: indexing time, query time and memory")
    report.table(
        "One fresh process per size; products = title and tags; 'projected' = from --sample",
        [
            "catalog",
            "products",
            "model load s",
            "index s (CPU)",
            "shelves s (CPU)",
            "products s",
            "products CPU s",
            "products/s",
            "query ms",
            "query CPU ms",
            "peak RSS",
        ],
        [
            [
                f"{run['size']} (projected from {run['embedded']:,})"
                if run["projected"]
                else run["size"],
                run["products"],
                run["load_s"],
                f"{run['index_s']:.1f} ({run['index_cpu_s']:.1f})",
                f"{run['shelves_s']:.1f} ({run['shelves_cpu_s']:.1f}), {run['kinds']:,} kinds",
                run["products_s"],
                run["products_cpu_s"],
                run["per_second"],
                run["query_ms"],
                run["query_cpu_ms"],
                f"{run['rss_mb']:.0f} MB",
            ]
            for run in runs
        ],
    )
    report.note("query: one request embedded and its 5 nearest products found, median of 17")
    report.note("peak RSS: ru_maxrss of the child, with the products in memory")
    report.data["runs"] = runs
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
