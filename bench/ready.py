"""How soon the embedded model answers (issue 38), this tree against a baseline commit in
one run: the first plan step of a cold server from Enter, a warm one-call request alone
and beside one busy process, and llama.cpp's own tokens per second in and out.

    python bench/ready.py                    # against e13ba1b, main before issue 38
    python bench/ready.py --install          # also a fresh `pip install -e '.[local]'`, timed
    python bench/ready.py --soak 100         # also 100 warm requests: time and memory

Run by hand, not in CI, on otherwise idle cores. Each version runs in its own copy of the
code (`git archive`) with the same venv, catalog and model file, against its own server:

- cold: an untimed request leaves whatever the version's prompt cache keeps, its server is
  stopped, and `python -m graph.run --yes` is started on a pseudo-terminal; the time is from
  its start until the first plan step is on screen (the model file already assembled);
- warm: further requests on the server that run started, each a new request (a price
  the earlier ones did not name), so the prompt cache holds the planner's prefix and never
  the request; alone, then beside `python -c 'while True: pass'` in a session of its own.

`--soak N` sends N different one-call requests to one warm server of this tree, with the
RAM prompt cache (the default before issue 38) and with the disk one (the default now),
and compares the first ten with the last ten, and the server's memory after each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _calls
from _common import REPO_ROOT, Report, load_average, median
from local_model import busy_process, cli_from_enter, run_request

BASELINE = "e13ba1b"
# One LLM call: the plan; code decides the pick. Each timed run names another price.
REQUEST = "a rechargeable headlamp under ${}"
COLD_FIRST_STEP_TARGET_S = 15.0
WARM_REQUEST_TARGET_S = 12.0
BESIDE_RATIO_TARGET = 1.5
INSTALL_TARGET_S = 180.0
# Soak requests: one call each, none a prefix of another.
SOAK_ITEMS = (
    "a rechargeable headlamp",
    "a camera bag for hiking",
    "a gooseneck electric kettle",
    "a tent for two people",
    "a yoga mat",
)


def version_figures(tree: Path, model: str, data_dir: Path, runs: int) -> dict[str, Any]:
    """Cold first step, warm alone and beside a busy process, for the code in `tree`."""
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "runs.sqlite"
        keep = {"LOCAL_MODEL_KEEP_ALIVE": "300"}
        prices = iter(range(41, 100))

        def cli(*args: str) -> subprocess.CompletedProcess:
            run = _calls._cli(tree, model, db, *args, **keep)
            if run.returncode != 0:
                raise RuntimeError(f"{args} failed in {tree}:\n{run.stderr[-2000:]}")
            return run

        def warm_request() -> tuple[float, list[_calls.Call]]:
            before = _calls.log_sizes(data_dir)
            started = time.perf_counter()
            cli("--yes", REQUEST.format(next(prices)))
            wall_s = time.perf_counter() - started
            return wall_s, _calls.calls_since(data_dir, before)

        _calls.stop_servers(tree)
        cli("--yes", _calls.WARMING_REQUEST)  # what its prompt cache keeps, it keeps
        _calls.stop_servers(tree)
        cold = cli_from_enter(model, REQUEST.format(40), tree=tree, db=db, **keep)
        alone = [warm_request() for _ in range(runs)]
        with busy_process():
            beside = [warm_request() for _ in range(runs)]
        _calls.stop_servers(tree)
    prompt_tps, generation_tps = _calls.rates([call for _, calls in alone for call in calls])
    return {
        "cold_first_step_s": cold["first_step_s"],
        "cold_request_s": cold["request_s"],
        "alone_s": [wall for wall, _ in alone],
        "beside_s": [wall for wall, _ in beside],
        "prompt_tps": prompt_tps,
        "generation_tps": generation_tps,
        "llm_calls": [len(calls) for _, calls in alone],
    }


def install_seconds() -> tuple[float, str]:
    """A fresh venv and `pip install --no-cache-dir -e '.[local]'` of this tree, timed."""
    with tempfile.TemporaryDirectory() as scratch:
        venv = Path(scratch) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        started = time.perf_counter()
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir"]
        done = subprocess.run([*pip, "-e", ".[local]"], cwd=REPO_ROOT, capture_output=True)
        took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the install failed:\n{done.stderr.decode()[-2000:]}")
    compilers = ", ".join(c for c in ("cc", "gcc", "c++", "g++") if shutil.which(c)) or "none"
    return took, compilers


def soak(model: str, requests: int) -> dict[str, dict[str, Any]]:
    """`requests` different one-call requests on one warm server per prompt cache."""
    from catalog.paths import data_dir
    from graph.providers.registry import make_chat_model
    from localmodel.server import start_local_server

    figures: dict[str, dict[str, Any]] = {}
    for cache in ("ram", "disk"):
        server = start_local_server(model, data_dir=data_dir(), progress=False, prompt_cache=cache)
        if cache == "disk":  # states from earlier runs could hold these very prompts
            shutil.rmtree(server.prompt_cache_dir(), ignore_errors=True)
        with server:
            chat_model = make_chat_model(
                "local", server.model_alias, max_output_tokens=512, base_url=server.base_url
            )
            seconds, memory = [], []
            for number in range(requests):
                item = SOAK_ITEMS[number % len(SOAK_ITEMS)]
                request = f"{item} under ${40 + number}"
                took, _ = run_request(
                    chat_model, server.model_alias, auto_approve=True, request=request
                )
                seconds.append(took)
                memory.append(server.rss_mb() or float("nan"))
        figures[cache] = {"seconds": seconds, "rss_mb": memory}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/ready.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--model", default=None, help="local model name (default: 1.5B)")
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=2, help="warm requests alone and beside")
    parser.add_argument("--install", action="store_true", help="also time a fresh install")
    parser.add_argument("--soak", type=int, default=0, metavar="N", help="also N warm requests")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    from catalog.paths import data_dir
    from localmodel.weights import DEFAULT_LOCAL_MODEL, resolve_model_file

    model = args.model or DEFAULT_LOCAL_MODEL
    load_before = load_average()
    resolve_model_file(model, cache_dir=data_dir() / "models", progress=False)
    report = Report(f"Local model {model}: ready and answering, {args.baseline} vs this tree")
    with tempfile.TemporaryDirectory() as scratch:
        figures = {
            name: version_figures(_calls.code_of(name, Path(scratch)), model, data_dir(), args.runs)
            for name in (args.baseline, "working tree")
        }
    rows = []
    for name, f in figures.items():
        alone, beside = median(f["alone_s"]), median(f["beside_s"])
        rows.append(
            [
                name,
                f"{f['cold_first_step_s']:.1f}",
                f"{alone:.1f}",
                f"{beside:.1f}",
                f"{beside / alone:.2f}x",
                f"{f['prompt_tps']:.0f}",
                f"{f['generation_tps']:.1f}",
                max(f["llm_calls"]),
            ]
        )
    report.table(
        f"From Enter, s (warm: median of {args.runs}); llama.cpp's tokens/s on the warm runs",
        [
            "version",
            "cold first step",
            "warm",
            "warm beside busy",
            "beside / alone",
            "prompt tok/s",
            "generated tok/s",
            "LLM calls",
        ],
        rows,
    )
    ours = figures["working tree"]
    cold, warm = ours["cold_first_step_s"], median(ours["alone_s"])
    ratio = median(ours["beside_s"]) / warm
    report.target(
        "cold first plan step, from Enter",
        f"{cold:.1f} s",
        f"<= {COLD_FIRST_STEP_TARGET_S:.0f} s",
        cold <= COLD_FIRST_STEP_TARGET_S,
    )
    report.target(
        "warm one-call request, from Enter",
        f"{warm:.1f} s",
        f"<= {WARM_REQUEST_TARGET_S:.0f} s",
        warm <= WARM_REQUEST_TARGET_S,
    )
    report.target(
        "warm request beside one busy process",
        f"{ratio:.2f}x alone",
        f"<= {BESIDE_RATIO_TARGET}x",
        ratio <= BESIDE_RATIO_TARGET,
    )
    if args.install:
        took, compilers = install_seconds()
        report.target(
            "fresh install of the local extra (pip, no cache)",
            f"{took:.0f} s",
            f"<= {INSTALL_TARGET_S:.0f} s",
            took <= INSTALL_TARGET_S,
        )
        report.note(
            f"compilers on the PATH during the install: {compilers} (llama-cpp-python "
            "builds llama.cpp from source: docs/embedded-model.md says why)"
        )
        report.data["install_s"] = took
    if args.soak:
        soaked = soak(model, args.soak)
        ten = min(10, args.soak)
        report.table(
            f"{args.soak} warm one-call requests on one server (s, median; server RSS MB)",
            [
                "prompt cache",
                f"first {ten}",
                f"last {ten}",
                "last / first",
                f"RSS after {ten}",
                f"RSS after {args.soak}",
            ],
            [
                [
                    cache,
                    f"{median(s['seconds'][:ten]):.1f}",
                    f"{median(s['seconds'][-ten:]):.1f}",
                    f"{median(s['seconds'][-ten:]) / median(s['seconds'][:ten]):.2f}x",
                    f"{s['rss_mb'][ten - 1]:.0f}",
                    f"{s['rss_mb'][-1]:.0f}",
                ]
                for cache, s in soaked.items()
            ],
        )
        report.data["soak"] = soaked
    report.note(f"request: {REQUEST.format('4x')!r}; warmed with {_calls.WARMING_REQUEST!r}")
    report.note(
        f"CPU flags: {_calls.cpu_flags()}; cores: {os.cpu_count()}; kernel {os.uname().release}"
    )
    report.note(f"load average before: {load_before}; after: {load_average()}")
    report.data["versions"] = figures
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
