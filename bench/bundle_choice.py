"""How fast the bundle choice in code is (graph/choosing/choice.py), side by side with
trying every combination, on pools as deep as a search keeps (tools.POOL_DEPTH).

    python bench/bundle_choice.py [--items 2 3 4] [--runs 5] [--json out.json] [--smoke]

Pools are random (prices, ratings, features; a few products in two pools), and the
budget is set so only some combinations fit. Both ways must find a choice of the same
score; the table prints each one's median time and their ratio. Target: the choice
for 4 items of 50 candidates each takes under 50 ms (it runs once per request, in verify).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time

from _common import Report, median

from graph.choosing.choice import best_combination
from graph.choosing.picks import Candidate
from graph.schemas import ProductSummary
from graph.tools import POOL_DEPTH

TARGET_MS = 50.0
BRUTE_FORCE_LIMIT = 2_000_000  # combinations; above it, brute force is not timed


def pools_of(items: int, depth: int, rng: random.Random) -> list[tuple[Candidate, ...]]:
    pools = []
    for item in range(items):
        pool = []
        for rank in range(1, depth + 1):
            shared = rng.random() < 0.05  # a product two searches found
            pid = f"shared-{rng.randint(0, 9)}" if shared else f"i{item}-{rank}"
            pool.append(
                Candidate(
                    summary=ProductSummary(
                        id=pid,
                        title=pid,
                        price=round(rng.uniform(5, 200), 2),
                        rating=round(rng.uniform(2.5, 5), 1),
                    ),
                    source_step=item + 1,
                    rank=rank,
                    within_limits=True,
                    features_matched=["f"] * rng.randint(0, 2),
                    type_words=["kind"],
                    query_length=1,
                    of_searched_kind=True,
                )
            )
        pools.append(tuple({c.summary.id: c for c in pool}.values()))
    return pools


def score(candidate: Candidate) -> tuple[float, ...]:
    kind, features = candidate.coverage
    return (kind, features, candidate.summary.rating or 0.0, -candidate.rank)


def brute_force(pools: list[tuple[Candidate, ...]], budget: float) -> tuple[float, ...] | None:
    best = None
    for combo in itertools.product(*pools):
        if len({c.summary.id for c in combo}) < len(combo):
            continue
        if sum(c.summary.price for c in combo) > budget + 0.005:
            continue
        total = tuple(sum(x) for x in zip(*(score(c) for c in combo), strict=True))
        best = total if best is None or total > best else best
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to check it runs")
    args = parser.parse_args()
    depth = 8 if args.smoke else POOL_DEPTH
    runs = 1 if args.smoke else args.runs
    rng = random.Random(22)
    report = Report(f"Bundle choice over pools of {depth}")
    rows = []
    for items in args.items:
        ours, brute, agree = [], [], True
        for _ in range(runs):
            pools = pools_of(items, depth, rng)
            budget = 60.0 * items
            started = time.perf_counter()
            chosen = best_combination(pools, score, budget)
            ours.append((time.perf_counter() - started) * 1000)
            if depth**items > BRUTE_FORCE_LIMIT:
                continue
            started = time.perf_counter()
            expected = brute_force(pools, budget)
            brute.append((time.perf_counter() - started) * 1000)
            got = None
            if chosen is not None:
                got = tuple(sum(x) for x in zip(*(score(c) for c in chosen), strict=True))
            agree = agree and got == expected
        brute_ms = median(brute) if brute else None
        ratio = brute_ms / median(ours) if brute_ms else None
        rows.append([items, depth**items, median(ours), brute_ms, ratio, agree if brute else "n/a"])
        if items == 4:
            ok = median(ours) < TARGET_MS
            report.target(
                f"4 items x {depth}, median", f"{median(ours):.1f} ms", f"< {TARGET_MS} ms", ok
            )
    report.table(
        "median ms per choice",
        ["items", "combinations", "ours ms", "every combination ms", "ratio", "same score"],
        rows,
    )
    report.note(f"brute force is timed up to {BRUTE_FORCE_LIMIT:,} combinations")
    report.data = {"rows": rows}
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
