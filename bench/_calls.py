"""A warm two-item request, call by call, in this tree and in a baseline commit, side by
side in one run (issue 25): llama.cpp's own prompt and generation token counts and times
for each LLM call, read from the warm server's log, and the request's whole time as the
shopper waits it (`python -m graph.run --yes`, from its start to its exit).

Each version runs in its own copy of the code (`git archive` of the commit) with the same
catalog and model files, against its own warm server: the servers are stopped before each
version, an untimed request of another kind warms the new one (its prompt cache then
holds the planner's prefix, never this request), and then the timed request runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import REPO_ROOT

TWO_ITEM_REQUEST = "running shoes and a water bottle, $150 total"
# Two warm two-item requests timed by default: one planned with no pick step (code
# chooses alone), one whose pick step is a budget the items share.
TWO_ITEM_REQUESTS = (TWO_ITEM_REQUEST, "a tent and a sleeping bag for camping, under $300 total")
WARMING_REQUEST = "a coffee grinder and a kettle under $150"
# The rates measured on a 2-core AVX2-only VM (issue 25): prompt evaluation and
# generation, tokens per second, for the estimate of that host's wait.
AVX2_PROMPT_TPS = 22.0
AVX2_GENERATION_TPS = 9.5
_PERF = re.compile(
    r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?\n"
    r".*?\beval time =\s*([\d.]+) ms /\s*(\d+) runs"
)
CPU_FLAGS_SHOWN = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8")


@dataclass(frozen=True)
class Call:
    """One LLM call as llama.cpp timed it."""

    prompt_tokens: int  # evaluated: the prompt cache's prefix is not counted
    prompt_s: float
    generated_tokens: int
    generation_s: float


def calls_in(log_text: str) -> list[Call]:
    return [
        Call(int(tokens), float(ms) / 1000, int(runs), float(gen_ms) / 1000)
        for ms, tokens, gen_ms, runs in _PERF.findall(log_text)
    ]


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    try:
        line = next(x for x in cpuinfo.read_text().splitlines() if x.startswith("flags"))
    except (OSError, StopIteration):
        return "unknown"
    flags = set(line.split(":", 1)[1].split())
    return " ".join(f for f in CPU_FLAGS_SHOWN if f in flags) or "none of " + ", ".join(
        CPU_FLAGS_SHOWN
    )


def avx2_estimate_s(calls: list[Call]) -> float:
    """The calls' wait on the AVX2 host, from their token counts and its rates."""
    prompt = sum(c.prompt_tokens for c in calls)
    generated = sum(c.generated_tokens for c in calls)
    return prompt / AVX2_PROMPT_TPS + generated / AVX2_GENERATION_TPS


def code_of(revision: str, into: Path) -> Path:
    """The tree of `revision` under `into`, or this checkout as it is for "working tree"."""
    if revision == "working tree":
        return REPO_ROOT
    archive = into / "code.tar"
    subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", "-o", str(archive), revision],
        check=True,
    )
    tree = into / revision
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def _cli(tree: Path, model: str, db: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "graph.run", "--provider", "local", "--model", model]
    argv += ["--db", str(db), *args]
    child_env = {**os.environ, **env, "PYTHONPATH": str(tree)}
    return subprocess.run(argv, cwd=tree, env=child_env, capture_output=True, text=True)


def stop_servers(tree: Path) -> None:
    """Stop every warm model server, with `tree`'s code (--stop-server takes no model)."""
    argv = [sys.executable, "-m", "graph.run", "--stop-server"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=True)


def log_sizes(data_dir: Path) -> dict[Path, int]:
    return {p: p.stat().st_size for p in (data_dir / "logs").glob("llama-server-*.log")}


def calls_since(data_dir: Path, before: dict[Path, int]) -> list[Call]:
    """The LLM calls the servers' logs gained since `before` (their sizes, from log_sizes)."""
    calls: list[Call] = []
    for path in log_sizes(data_dir):
        with path.open(errors="replace") as log:
            log.seek(before.get(path, 0))
            calls += calls_in(log.read())
    return calls


def rates(calls: list[Call]) -> tuple[float, float]:
    """Prompt tokens evaluated and tokens generated per second, over `calls`."""
    prompt_s = sum(c.prompt_s for c in calls)
    generation_s = sum(c.generation_s for c in calls)
    return (
        sum(c.prompt_tokens for c in calls) / prompt_s if prompt_s else float("nan"),
        sum(c.generated_tokens for c in calls) / generation_s if generation_s else float("nan"),
    )


def warm_request(
    tree: Path, model: str, data_dir: Path, scratch: Path, request: str = TWO_ITEM_REQUEST
) -> dict[str, Any]:
    """`request` on a warm server of `tree`'s code, call by call."""
    db = scratch / f"runs-{abs(hash(tree))}.sqlite"
    stop_servers(tree)
    warmed = _cli(tree, model, db, "--yes", WARMING_REQUEST, LOCAL_MODEL_KEEP_ALIVE="300")
    if warmed.returncode != 0:
        raise RuntimeError(f"warming run failed in {tree}:\n{warmed.stderr[-2000:]}")
    before = log_sizes(data_dir)
    started = time.perf_counter()
    run = _cli(tree, model, db, "--yes", "--json", request, LOCAL_MODEL_KEEP_ALIVE="300")
    wall_s = time.perf_counter() - started
    if run.returncode != 0:
        raise RuntimeError(f"the timed run failed in {tree}:\n{run.stderr[-2000:]}")
    calls = calls_since(data_dir, before)
    stop_servers(tree)
    outcome = _outcome_line(run.stdout)
    return {"wall_s": wall_s, "calls": [asdict(c) for c in calls], "outcome": outcome}


def _outcome_line(stdout: str) -> str:
    try:
        data = json.loads(stdout)
    except ValueError:
        return "(no JSON outcome)"
    outcome = data.get("outcome") or {}
    picks = ", ".join(f"{p['id']} ${p['price']:.2f}" for p in outcome.get("picks", []))
    return f"{picks or 'no picks'}; total ${outcome.get('total_price', 0):.2f}"


def compare(
    model: str, baseline: str, data_dir: Path, request: str = TWO_ITEM_REQUEST
) -> dict[str, dict[str, Any]]:
    """Both versions' figures: the baseline commit first, then the working tree."""
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        return {
            name: warm_request(code_of(name, scratch), model, data_dir, scratch, request)
            for name in (baseline, "working tree")
        }
