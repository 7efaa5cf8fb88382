"""localmodel.warm without a model: settings, private files, identity checks, keep-alive.

The live tests (tests/integration_tests/test_local_server.py) start the real server and
reuse it from another process."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from catalog.paths import data_dir
from localmodel import warm as warm_server
from localmodel.errors import LocalModelError
from localmodel.launcher import KeepAlive, nobody_holds


@pytest.mark.parametrize(
    "text, seconds",
    [("", 300.0), ("0", 0.0), ("90", 90.0), ("90s", 90.0), ("5m", 300.0), (" 1.5h ", 5400.0)],
)
def test_keep_alive_accepts_seconds_and_durations(text: str, seconds: float) -> None:
    assert warm_server.keep_alive_seconds(text) == seconds


@pytest.mark.parametrize("text", ["abc", "-1", "nan", "inf", "5 minutes", "1e9", "9999h"])
def test_a_bad_keep_alive_is_named(text: str) -> None:
    with pytest.raises(LocalModelError, match="LOCAL_MODEL_KEEP_ALIVE"):
        warm_server.keep_alive_seconds(text)


def test_server_files_are_private_to_their_owner() -> None:
    directory = warm_server.servers_dir(data_dir())
    key = directory / "k.key"
    warm_server._write_private(key, "secret")
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text() == "secret"


@contextmanager
def identity_server(answer: dict[str, object], key: str) -> Iterator[int]:
    """A loopback HTTP server answering /shopping-planner/server (with the right key)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            authorized = self.headers.get("Authorization") == f"Bearer {key}"
            body = json.dumps(answer if authorized else {"detail": "Invalid API key"}).encode()
            self.send_response(200 if authorized else 401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def record(port: int, fingerprint: str, key: str) -> warm_server._Files:
    files = warm_server._Files.for_fingerprint(data_dir(), fingerprint)
    state = warm_server.WarmServer(
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key=key,
        model_alias="m",
        pid=os.getpid(),  # a live pid: only the identity check can tell it is not ours
        port=port,
        fingerprint=fingerprint,
        keep_alive_s=300,
        log_file="/dev/null",
    )
    warm_server._write_private(files.key, key)
    saved = {k: v for k, v in asdict(state).items() if k not in ("api_key", "reused")}
    warm_server._write_private(files.state, json.dumps(saved))
    return files


def test_a_server_that_answers_as_ours_is_reused() -> None:
    fingerprint = "a" * 64
    answer = {"fingerprint": fingerprint, "pid": os.getpid()}
    with identity_server(answer, "key-1") as port:
        files = record(port, fingerprint, "key-1")
        found = warm_server._read_running(files, fingerprint)
        assert found is not None and found.port == port
        assert [s.port for s in warm_server.running_servers(data_dir())] == [port]


@pytest.mark.parametrize(
    "case", ["other settings", "foreign process", "wrong key", "dead pid", "nothing listens"]
)
def test_a_stale_or_foreign_server_is_never_reused(case: str) -> None:
    fingerprint = "b" * 64
    answer: dict[str, object] = {"fingerprint": fingerprint, "pid": os.getpid()}
    if case == "other settings":  # same files, but started for another model or version
        answer["fingerprint"] = "c" * 64
    if case == "foreign process":  # the port was taken over by another program
        answer = {"hello": "world"}
    with identity_server(answer, "key-2") as port:
        files = record(port, fingerprint, "key-2")
        if case == "wrong key":
            warm_server._write_private(files.key, "not-the-key")
        if case == "dead pid":
            dead = subprocess.Popen([sys.executable, "-c", "pass"])
            dead.wait()
            state = json.loads(files.state.read_text())
            files.state.write_text(json.dumps({**state, "pid": dead.pid}))
        if case == "nothing listens":
            files.state.write_text(files.state.read_text().replace(str(port), "9"))
        assert warm_server._read_running(files, fingerprint) is None
        assert warm_server.running_servers(data_dir()) == []


def test_idle_time_counts_only_once_every_client_has_left(tmp_path: Path) -> None:
    users = tmp_path / "s.users"
    users.touch()
    watcher = KeepAlive(10, users, cleanup=())
    with users.open("ab") as client:
        fcntl.flock(client.fileno(), fcntl.LOCK_SH)
        assert not nobody_holds(users)
        watcher.idle_since -= 100  # long since the last request, but a client is attached
        assert watcher.idle_for() == 0.0
    assert nobody_holds(users)  # closing the file released the client's lock
    time.sleep(0.05)
    assert 0 < watcher.idle_for() < 1
    watcher.request_started()
    assert watcher.idle_for() == 0.0  # a request in flight is never idle


def test_an_idle_server_removes_its_files_and_stops(tmp_path: Path) -> None:
    state, key = tmp_path / "s.json", tmp_path / "s.key"
    state.write_text("{}")
    key.write_text("k")
    code = (
        "from pathlib import Path; import sys, time\n"
        "from localmodel.launcher import KeepAlive\n"
        "KeepAlive(0.3, None, [Path(p) for p in sys.argv[1:]]).watch(poll_s=0.05)\n"
        "time.sleep(30)\n"
    )
    root = Path(warm_server.__file__).resolve().parents[1]
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", code, str(state), str(key)], cwd=root, timeout=30)
    assert run.returncode == -15  # SIGTERM, as uvicorn gets it
    assert time.monotonic() - started < 10
    assert not state.exists() and not key.exists()
