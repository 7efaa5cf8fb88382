"""Loading a large catalog file: index build time and peak memory at 200k and 1M products.

    python bench/catalog_load.py                      # 200,000 and 1,000,000 products
    python bench/catalog_load.py --sizes 200000
    python bench/catalog_load.py --smoke              # 2,000 products, seconds

For each size, a child process writes N synthetic products (the seeded generator of
bench/catalog_search.py) to a temporary JSONL file, and a second, fresh child loads it
the way `python -m catalog load FILE` and `--catalog FILE` do
(`catalog.store.load_catalog`: read, validate, index, publish). The build child reports
its wall time and its peak RSS from `resource.getrusage`; the parent only waits, so the
high-water mark a child inherits across exec is the parent's small one.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, Report, dir_size, human_bytes

DEFAULT_SIZES = (200_000, 1_000_000)
SMOKE_SIZE = 2_000
# Peak RSS above this at 1M products counts as unbounded (the limit, ~1.5 GB).
PEAK_TARGET_MB = 1536


def peak_rss_mb() -> float:
    """This process's peak RSS in MB (`ru_maxrss` is in KB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def write_child(count: int, path: str) -> int:
    """Write `count` generated products to `path` as JSONL, one at a time."""
    from catalog_search import generate_products, load_vocabulary

    with open(path, "w", encoding="utf-8") as handle:
        for product in generate_products(count, load_vocabulary()):
            handle.write(json.dumps(product) + "\n")
    return 0


def build_child(path: str, index_dir: str) -> int:
    """Load `path` into `index_dir` as the CLIs do; print the figures as JSON."""
    from catalog.store import load_catalog

    imports_mb = peak_rss_mb()
    started = time.perf_counter()
    count = load_catalog(Path(path), Path(index_dir))
    seconds = time.perf_counter() - started
    result = {"count": count, "seconds": seconds, "peak_mb": peak_rss_mb()}
    print(json.dumps({**result, "imports_mb": imports_mb}))
    return 0


def child(*args: str) -> str:
    command = [sys.executable, str(BENCH_DIR / "catalog_load.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def measure(count: int, workdir: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        source = Path(scratch) / f"products-{count}.jsonl"
        child("--write-child", str(count), str(source))
        index_dir = Path(scratch) / "catalog"
        figures = json.loads(child("--build-child", str(source), str(index_dir)).splitlines()[-1])
        figures["file_bytes"] = source.stat().st_size
        figures["index_bytes"] = dir_size(index_dir)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/catalog_load.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--workdir", type=Path, default=None, help="where files are written (tmp)")
    parser.add_argument("--smoke", action="store_true", help="tiny run for the test suite")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--write-child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--build-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write_child:
        return write_child(int(args.write_child[0]), args.write_child[1])
    if args.build_child:
        return build_child(*args.build_child)
    sizes = [SMOKE_SIZE] if args.smoke else args.sizes
    runs = []
    for size in sizes:
        print(f"[catalog_load] {size:,} products ...", file=sys.stderr, flush=True)
        runs.append({"size": size, **measure(size, args.workdir)})
    report = Report("Catalog load: index build time and peak memory")
    report.table(
        "Loading a JSONL catalog (read, validate, index, publish), one fresh process per size",
        ["products", "file", "index", "build s", "products/s", "peak RSS", "RSS after imports"],
        [
            [
                run["size"],
                human_bytes(run["file_bytes"]),
                human_bytes(run["index_bytes"]),
                run["seconds"],
                run["size"] / run["seconds"],
                f"{run['peak_mb']:.0f} MB",
                f"{run['imports_mb']:.0f} MB",
            ]
            for run in runs
        ],
    )
    biggest = max(runs, key=lambda run: run["size"])
    report.target(
        f"{biggest['size']:,}: peak RSS while loading",
        f"{biggest['peak_mb']:.0f} MB",
        f"< {PEAK_TARGET_MB} MB",
        biggest["peak_mb"] < PEAK_TARGET_MB if biggest["size"] >= 1_000_000 else None,
    )
    report.note("peak RSS: resource.getrusage(RUSAGE_SELF).ru_maxrss of the build child")
    report.data["runs"] = runs
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
