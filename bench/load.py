"""Load: N concurrent runs through two API server replicas and through CLI workers (#37).

    python bench/load.py                     # 50 runs a path, 4 CLI workers, 200 ms a call
    python bench/load.py --runs 4            # smoke
    python bench/load.py --paths cli         # one path only

One embedded PostgreSQL server (the tests' PrivatePostgres) holds everything: the shipped
catalog (CATALOG_URL, loaded on first use), the API server's runtime database, and the
CLI's checkpoints (CHECKPOINT_URL, a second database on the same server). A fake
OpenAI-compatible server in this process answers every model call after a fixed delay
(`--delay-ms`), with the three-step plan of tests/integration_tests/test_server_replicas.py
(two searches and a pick; tool mode llm and no decisions in code, so each step is one
model call).

* **server**: two replicas of the stock LangGraph API server on the PostgreSQL + Redis
  runtime (shopping-planner-replica, started as the replica test starts them: two jobs
  each) and a private Valkey. All N runs are sent at once with langgraph_sdk; each stops
  at the approval interrupt and is approved with a Command, through the other replica
  for half of them, then waited to the end.
* **cli**: `--workers` worker threads, each running `python -m graph.run --json
  --tool-mode llm` processes one after another, N runs in all. Half run with `--yes`; the
  other half plan, stop awaiting approval (exit 3), and are approved by the next free
  worker with `--resume THREAD --yes`: another process, often another worker's.

Per path it counts:

* **finished**: the run ended done, with a result for each of the plan's steps, none
  failed, and an outcome;
* **lost**: every other run (failed, stuck past `--timeout`, or a step never asked);
* **run twice**: runs for which the fake saw a model call more than once: the planner
  call, or the call of one step (each is told apart by the run's tag and the step line
  "Step N: ACTION" in its prompt), or any call of the run no step accounts for. A step
  that executes again, on any replica or process, asks the model again, so it shows here.
* **graph overhead per step** (p50 and p95 over runs): the time between the run's first
  and last checkpoint (the checkpoints' own timestamps, written by the process that ran
  each step), leaving out the wait from the approval interrupt to the checkpoint after
  it, minus the time the fake spent answering that run's calls (its delay included),
  divided by the plan's steps. It keeps what the graph does between model calls (nodes,
  the ToolNode, catalog searches on PostgreSQL, checkpoint writes, the model client) and
  leaves out what is not the graph's: process start-up, the server's queue, the
  approval wait.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import queue
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from _common import TESTS_DIR, Report, median, percentile

# The replica test's plumbing (Valkey, the schema job, starting and stopping a replica)
# and its fake model's answers serve the bench as they are: one copy of each.
sys.path.insert(0, str(TESTS_DIR / "integration_tests"))


import test_server_replicas as replicas
from cli_runs import start_graph_run
from conftest import PrivatePostgres
from fake_openai_server import FakeScript, fake_openai_server

TARGET_OVERHEAD_MS = 20.0
FLOOR_SCRIPT = Path(__file__).resolve().parent / "floor_graph.py"
FLOOR_GRAPH = f"{FLOOR_SCRIPT}:graph"
REQUEST = "A camera strap and a lens cleaning kit, $80 in total"


@dataclass
class Call:
    """One model call as the fake answered it: wall-clock times (time.time(), the clock
    of the checkpoints' timestamps)."""

    tool: str
    model: str  # the replica or CLI worker that called (its OPENAI_MODEL)
    prompt: str
    started: float
    ended: float


@dataclass
class TimedAnswers:
    """The replica test's answers, each after `delay` seconds, every call recorded."""

    delay: float
    answers: replicas.Answers = field(default_factory=replicas.Answers)
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, tool: str, body: dict[str, Any]) -> dict[str, Any] | None:
        started = time.time()
        reply = self.answers(tool, body)
        time.sleep(self.delay)
        prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
        call = Call(tool, str(body.get("model")), prompt, started, time.time())
        with self.lock:
            self.calls.append(call)
        return reply


@dataclass
class Run:
    """One run of a path, as the bench saw it end."""

    tag: str
    thread_id: str = ""
    finished: bool = False
    error: str | None = None
    # (checkpoint timestamp, whether the run paused for approval at that checkpoint)
    checkpoints: list[tuple[float, bool]] = field(default_factory=list)


def tag_of(path: str, index: int) -> str:
    # The fake's answers read a run's plan from "[test TAG]" in its request.
    return f"[test {path}-{index:03d}-{uuid.uuid4().hex[:6]}]"


def expected_calls(tag: str) -> dict[str, tuple[str, str]]:
    """What each model call of a run is told by: (tool, text in its prompt), one call
    each: the planner, then one call per step of the plan the fake gives that run."""
    expected = {"plan": ("Plan", tag)}
    for step in replicas._plan(tag)["steps"]:
        tool = "search_products" if step["query"] else "ReasoningAnswer"
        expected[f"step {step['step']}"] = (tool, f"Step {step['step']}: {step['action']}")
    return expected


def call_counts(calls: list[Call], tag: str) -> dict[str, int]:
    """How many calls of the run `tag` the fake answered for each expected call, and
    under "other" those no expected call accounts for."""
    counts = dict.fromkeys(expected_calls(tag), 0)
    counts["other"] = 0
    for call in calls:
        if tag not in call.prompt:
            continue
        matched = [
            name
            for name, (tool, text) in expected_calls(tag).items()
            if call.tool == tool and text in call.prompt
        ]
        for name in matched or ["other"]:
            counts[name] += 1
    return counts


def ran_twice(counts: dict[str, int]) -> bool:
    return counts["other"] > 0 or any(n > 1 for name, n in counts.items() if name != "other")


def all_asked(counts: dict[str, int]) -> bool:
    return all(n >= 1 for name, n in counts.items() if name != "other")


def graph_seconds(checkpoints: list[tuple[float, bool]]) -> float:
    """The run's time between its first and last checkpoint, less each wait that starts
    at a checkpoint where it paused for approval."""
    ordered = sorted(checkpoints)
    return sum(
        later - earlier
        for (earlier, paused), (later, _) in itertools.pairwise(ordered)
        if not paused
    )


def model_seconds(calls: list[Call], tag: str) -> float:
    return sum(call.ended - call.started for call in calls if tag in call.prompt)


def timestamp(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def steps_of(tag: str) -> int:
    return len(replicas._plan(tag)["steps"])


def outcome_problem(values: dict[str, Any], tag: str) -> str | None:
    """Why a run's final values are not a finished run (None if they are)."""
    results = values.get("step_results") or []
    if [r.get("step") for r in results] != list(range(1, steps_of(tag) + 1)):
        return f"steps {[r.get('step') for r in results]}"
    failed = [r["step"] for r in results if r.get("error")]
    if failed:
        return f"steps {failed} failed"
    if not values.get("outcome"):
        return "no outcome"
    return None


# --- path A: two API server replicas -------------------------------------------------


async def server_run(index: int, urls: list[str], timeout: float) -> Run:
    from langgraph_sdk import get_client

    run = Run(tag_of("server", index))
    # Started on one replica; approved on the same one or the other, half each.
    starter = get_client(url=urls[index % 2], api_key=None, timeout=timeout)
    approver = get_client(url=urls[(index // 2) % 2], api_key=None, timeout=timeout)
    context = replicas.CONTEXT
    try:
        async with asyncio.timeout(timeout):
            run.thread_id = (await starter.threads.create())["thread_id"]
            request = {"request": f"{REQUEST} {run.tag}"}
            first = await starter.runs.create(
                run.thread_id, replicas.GRAPH_ID, input=request, context=context
            )
            await starter.runs.join(run.thread_id, first["run_id"])
            paused = await approver.threads.get_state(run.thread_id)
            if paused["next"] != ["approval"]:
                raise RuntimeError(f"not paused for approval: next {paused['next']}")
            second = await approver.runs.create(
                run.thread_id,
                replicas.GRAPH_ID,
                command={"resume": {"approved": True}},
                context=context,
            )
            await approver.runs.join(run.thread_id, second["run_id"])
            statuses = [r["status"] for r in await approver.runs.list(run.thread_id)]
            values = (await approver.threads.get_state(run.thread_id))["values"]
            history = await approver.threads.get_history(run.thread_id, limit=100)
        run.checkpoints = [
            (timestamp(h["created_at"]), any(t.get("interrupts") for t in h["tasks"]))
            for h in history
        ]
        problem = outcome_problem(values, run.tag)
        if statuses != ["success", "success"]:
            problem = f"runs {statuses}"
        run.finished, run.error = problem is None, problem
    except Exception as error:  # any failure is this run lost, named in the report
        run.error = f"{type(error).__name__}: {error}"
    finally:
        for client in (starter, approver):
            await client.aclose()
    return run


@contextmanager
def server_replicas(
    database: str,
    fake_url: str,
    fake: FakeScript,
    answers: replicas.Answers,
    root: Path,
    *serve_args: str,
) -> Iterator[list[replicas.Replica]]:
    """The replica test's two replicas (its Backends and Valkey) on the bench's database,
    started together as the test starts them (shopping-planner-replica sets the schema up
    one replica at a time)."""
    sock_dir = Path(tempfile.mkdtemp(prefix="sp-valkey-"))  # a socket path stays short
    started: list[replicas.Replica] = []
    try:
        with replicas._redis_server(sock_dir) as redis_url:
            backends = replicas.Backends(redis_url, fake_url, fake, answers, root)
            for name in ("replica-a", "replica-b"):
                started.append(replicas._start_replica(backends, database, name, *serve_args))
            for replica in started:
                replicas._wait_ready(replica)
            yield started
    finally:
        for replica in started:
            replicas._stop(replica.proc)
        shutil.rmtree(sock_dir, ignore_errors=True)


def run_server_path(
    runs: int, warmup: int, servers: list[replicas.Replica], timeout: float
) -> tuple[list[Run], float, float]:
    """The measured runs, the seconds from sending them to the last one's end, and the
    CPU seconds the replicas spent meanwhile."""
    urls = [replica.url for replica in servers]
    groups = {replica.proc.pid for replica in servers}  # each replica leads its group

    async def all_runs() -> tuple[list[Run], float, float]:
        for index in range(warmup):  # the first run loads the catalog: not measured
            await server_run(runs + index, urls, timeout)
        started, cpu = time.perf_counter(), group_cpu_seconds(groups)
        ended = await asyncio.gather(*(server_run(index, urls, timeout) for index in range(runs)))
        cpu = group_cpu_seconds(groups) - cpu
        return list(ended), time.perf_counter() - started, cpu

    return asyncio.run(all_runs())


# --- path B: CLI workers ---------------------------------------------------------------


@dataclass
class CliJob:
    run: Run
    args: list[str]
    approve_next: bool  # the run stops awaiting approval; a --resume --yes follows


def cli_job(index: int) -> CliJob:
    run = Run(tag_of("cli", index))
    run.thread_id = f"load-{index:03d}-{uuid.uuid4().hex[:6]}"
    args = [f"{REQUEST} {run.tag}", "--json", "--tool-mode", "llm", "--thread", run.thread_id]
    paused = index % 2 == 1
    return CliJob(run, args if paused else [*args, "--yes"], approve_next=paused)


def cli_process(
    job: CliJob,
    worker: int,
    fake_url: str,
    root: Path,
    env: dict[str, str],
    timeout: float,
    program: list[str],
) -> Any:
    """One CLI process of a job (`program` is `-m graph.run`, or the floor's script);
    returns its JSON document."""
    proc = start_graph_run(
        fake_url,
        root / f"worker-{worker}",
        *job.args,
        program=program,
        OPENAI_MODEL=f"cli-worker-{worker}",
        **env,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()  # its run is lost; the process must not outlive the bench
        proc.communicate()
        raise
    try:
        return json.loads(out)
    except json.JSONDecodeError as error:
        raise RuntimeError(f"exit {proc.returncode}, no JSON: {err[-300:]}") from error


def cli_worker(
    worker: int, jobs: queue.Queue[CliJob], left: list[int], lock: threading.Lock, **kw: Any
) -> None:
    while True:
        with lock:
            if left[0] == 0:
                return
        try:
            job = jobs.get(timeout=0.1)
        except queue.Empty:
            continue
        ended = True
        try:
            document = cli_process(job, worker, **kw)
            if job.approve_next:
                if document.get("status") != "awaiting approval":
                    raise RuntimeError(f"not awaiting approval: {document.get('status')}")
                # Approved by whichever worker is free next: another process.
                jobs.put(CliJob(job.run, ["--resume", job.run.thread_id, "--yes", "--json"], False))
                ended = False
            elif document.get("status") != "done":
                job.run.error = f"{document.get('status')}: {document.get('error')}"
            else:
                job.run.error = outcome_problem(document, job.run.tag)
                job.run.finished = job.run.error is None
        except Exception as error:  # any failure is this run lost, named in the report
            job.run.error = f"{type(error).__name__}: {error}"
        if ended:
            with lock:
                left[0] -= 1


def cli_checkpoints(url: str, cli_runs: list[Run]) -> None:
    """Each run's checkpoint timestamps, read back through the CLI's own checkpointer."""
    from graph.runs.checkpoint import open_checkpointer
    from graph.runs.threads import thread_config

    saver = open_checkpointer(url)
    for run in cli_runs:
        run.checkpoints = [
            (
                timestamp(saved.checkpoint["ts"]),
                any(channel == "__interrupt__" for _, channel, _ in saved.pending_writes or []),
            )
            for saved in saver.list(thread_config(run.thread_id))
        ]


def run_cli_path(
    runs: int, warmup: int, workers: int, checkpoint_url: str, **kw: Any
) -> tuple[list[Run], float, float]:
    """The measured runs, the seconds from the first process to the last one's end, and
    the CPU seconds of those processes (their start-up included)."""

    def batch(jobs_list: list[CliJob], threads: int) -> None:
        jobs: queue.Queue[CliJob] = queue.Queue()
        for job in jobs_list:
            jobs.put(job)
        left, lock = [len(jobs_list)], threading.Lock()
        pool = [
            threading.Thread(target=cli_worker, args=(n, jobs, left, lock), kwargs=kw)
            for n in range(threads)
        ]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()

    batch([cli_job(runs + index) for index in range(warmup)], 1)  # tables, catalog: unmeasured
    measured = [cli_job(index) for index in range(runs)]
    started, cpu = time.perf_counter(), children_cpu_seconds()
    batch(measured, workers)
    seconds, cpu = time.perf_counter() - started, children_cpu_seconds() - cpu
    cli_checkpoints(checkpoint_url, [job.run for job in measured])
    return [job.run for job in measured], seconds, cpu


# --- CPU time: what the machine's load does not inflate ------------------------------


def group_cpu_seconds(groups: set[int]) -> float:
    """User + system CPU of the live processes in these process groups (Linux /proc),
    their reaped children's included."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) in groups:  # pgrp; then utime, stime, cutime, cstime
            ticks += sum(int(f) for f in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- the report ------------------------------------------------------------------------


def cpu_summary() -> str:
    """The CPU model and the vector extensions that matter to a Python + PostgreSQL load."""
    model, flags = "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    wanted = ("sse4_2", "avx2", "avx512f", "amx_tile")
    present = [flag for flag in wanted if flag in flags] or ["none of " + " ".join(wanted)]
    return f"{model}, {os.cpu_count()} CPUs; flags: {' '.join(present)}"


@dataclass
class PathFigures:
    name: str
    runs: list[Run]
    seconds: float
    cpu_seconds: float  # of the replicas, or of the CLI processes
    calls: list[Call]

    @property
    def steps(self) -> int:
        return sum(steps_of(r.tag) for r in self.runs)

    def counts(self, run: Run) -> dict[str, int]:
        return call_counts(self.calls, run.tag)

    @property
    def lost(self) -> list[Run]:
        return [r for r in self.runs if not (r.finished and all_asked(self.counts(r)))]

    @property
    def doubled(self) -> list[Run]:
        return [r for r in self.runs if ran_twice(self.counts(r))]

    @property
    def overheads_ms(self) -> list[float]:
        return [
            (graph_seconds(r.checkpoints) - model_seconds(self.calls, r.tag))
            / steps_of(r.tag)
            * 1000
            for r in self.runs
            if r.finished and r.checkpoints
        ]

    def timeline(self, run: Run) -> dict[str, Any]:
        start = min((t for t, _ in run.checkpoints), default=0.0)
        return {
            "tag": run.tag,
            "checkpoints": [(round(t - start, 4), paused) for t, paused in sorted(run.checkpoints)],
            "calls": [
                (c.tool, c.model, round(c.started - start, 4), round(c.ended - start, 4))
                for c in self.calls
                if run.tag in c.prompt
            ],
        }

    def callers(self) -> str:
        tags = {r.tag for r in self.runs}
        made: dict[str, int] = {}
        for call in self.calls:
            if any(tag in call.prompt for tag in tags):
                made[call.model] = made.get(call.model, 0) + 1
        return ", ".join(f"{model} {n}" for model, n in sorted(made.items()))


def build_report(paths: list[PathFigures], args: argparse.Namespace) -> Report:
    report = Report(
        f"Load: {args.runs} concurrent runs a path, {args.delay_ms} ms a model call, one PostgreSQL"
        + (" (floor: the stand-in graph)" if args.graph == "floor" else "")
    )
    rows: list[list[Any]] = []
    for label, value in (
        ("runs sent", lambda p: len(p.runs)),
        ("finished", lambda p: len(p.runs) - len(p.lost)),
        ("lost", lambda p: len(p.lost)),
        ("run twice", lambda p: len(p.doubled)),
        ("model calls", lambda p: sum(sum(p.counts(r).values()) for r in p.runs)),
        ("wall time s", lambda p: p.seconds),
        ("runs/s", lambda p: len(p.runs) / p.seconds if p.seconds else float("nan")),
        ("overhead ms/step p50", lambda p: median(p.overheads_ms)),
        ("overhead ms/step p95", lambda p: percentile(p.overheads_ms, 95)),
        ("overhead ms/step max", lambda p: max(p.overheads_ms, default=float("nan"))),
        ("CPU ms/step, all of it", lambda p: p.cpu_seconds * 1000 / p.steps if p.steps else 0),
    ):
        rows.append([label, *(value(p) for p in paths)])
    report.table("Per path", ["figure", *(p.name for p in paths)], rows)
    for p in paths:
        p95 = percentile(p.overheads_ms, 95)
        report.target(f"{p.name}: lost", str(len(p.lost)), "0", not p.lost)
        report.target(f"{p.name}: run twice", str(len(p.doubled)), "0", not p.doubled)
        report.target(
            f"{p.name}: overhead per step p95",
            f"{p95:.1f} ms",
            f"< {TARGET_OVERHEAD_MS:.0f} ms",
            bool(p95 < TARGET_OVERHEAD_MS),  # NaN (nothing finished) misses
        )
        report.note(f"{p.name}: model calls by caller: {p.callers()}")
        for run in (p.lost + p.doubled)[:5]:
            report.note(f"{p.name}: {run.tag} {run.thread_id}: {run.error} {p.counts(run)}")
    report.note(f"machine: {cpu_summary()}")
    report.note(
        "server: 2 replicas x 2 jobs (the replica test's setting), every run sent at once "
        f"and queued on PostgreSQL; cli: {args.workers} workers, one process a run (a "
        "second one approves half of them); both paths: 3-step plans, tool mode llm, "
        "no decisions in code, so 4 model calls a run"
    )
    report.note(
        "CPU ms/step, all of it: the CPU time of the replica processes (the API server's "
        "own work too: HTTP, its queue, Redis) or of the CLI processes (their start-up "
        "too: imports, connections) over the measured runs, / their plan steps; unlike "
        "the wall-clock overhead, the machine's other load does not inflate it"
    )
    report.note(
        "overhead per step = (first to last checkpoint, less the approval wait) - the "
        "fake's time on the run's calls, / plan steps; process start-up and queueing are "
        "not in it (bench/load.py)"
    )
    report.data = {
        path.name: {
            "runs": len(path.runs),
            "finished": len(path.runs) - len(path.lost),
            "lost": len(path.lost),
            "run_twice": len(path.doubled),
            "seconds": path.seconds,
            "cpu_ms_per_step": path.cpu_seconds * 1000 / path.steps if path.steps else None,
            "overhead_ms_per_step": path.overheads_ms,
            "errors": [r.error for r in path.lost],
            # Each run's timeline from its first checkpoint (s): checkpoints (paused or not)
            # and the fake's calls, to see where the overhead goes.
            "timelines": [path.timeline(r) for r in path.runs],
        }
        for path in paths
    }
    report.data["cpu"] = cpu_summary()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/load.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=50, help="runs a path (default 50)")
    parser.add_argument("--workers", type=int, default=4, help="CLI workers (default 4)")
    parser.add_argument("--delay-ms", type=int, default=200, help="per model call (200)")
    parser.add_argument("--paths", nargs="+", choices=("server", "cli"), default=["server", "cli"])
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured runs a path (1)")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds a run, or a CLI process, may take"
    )
    parser.add_argument(
        "--graph",
        choices=("shopping", "floor"),
        default="shopping",
        help="floor: bench/floor_graph.py, the graph's shape and model calls with none of "
        "its work, served by the replicas and run by the CLI workers",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    figures: list[PathFigures] = []
    answers = TimedAnswers(args.delay_ms / 1000)
    fake = FakeScript(replies={}, reply_for=answers)
    postgres = PrivatePostgres()
    with ExitStack() as stack:
        stack.callback(postgres.stop)
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-load-")))
        fake_url = stack.enter_context(fake_openai_server(fake))
        server_db = postgres.new_database("load_server")  # the runtime's and the catalog
        if "server" in args.paths:
            serve_args = []
            if args.graph == "floor":
                config = root / "floor-langgraph.json"
                config.write_text(json.dumps({"graphs": {replicas.GRAPH_ID: str(FLOOR_GRAPH)}}))
                serve_args = ["--config", str(config)]
            with server_replicas(
                server_db, fake_url, fake, answers.answers, root, *serve_args
            ) as servers:
                server, seconds, cpu = run_server_path(
                    args.runs, args.warmup, servers, args.timeout
                )
                figures.append(PathFigures("server", server, seconds, cpu, answers.calls))
        if "cli" in args.paths:
            checkpoint_url = postgres.new_database("load_cli")
            env = {
                "SHOPPING_PROVIDER": "compatible",
                "SHOPPING_LLM_TIMEOUT": "30",
                "SHOPPING_CODE_DECISIONS": "off",  # every pick asks the model, as the server's
                "CATALOG_URL": server_db,  # the one shared catalog
                "CHECKPOINT_URL": checkpoint_url,
            }
            cli, seconds, cpu = run_cli_path(
                args.runs,
                args.warmup,
                args.workers,
                checkpoint_url,
                fake_url=fake_url,
                root=root,
                env=env,
                timeout=args.timeout,
                program=[str(FLOOR_SCRIPT)] if args.graph == "floor" else ["-m", "graph.run"],
            )
            figures.append(PathFigures("cli", cli, seconds, cpu, answers.calls))
    report = build_report(figures, args)
    report.finish(args.json)
    return 0 if report.all_passed else 1


if __name__ == "__main__":
    sys.exit(main())
