"""Classes 9 and 11 of the second red-team round (#24): warm-server files that are not
what they should be, and what --list and --stop-server say of them.

- A record that is not one (not JSON, wrong fields, a folder, a FIFO, a symlink) is named
  in one line with exit code 2, never a traceback or a hang; --stop-server removes it
  (never a folder: that is not ours).
- A file where the `servers` folder should be is named in one line and left alone.
- A stale record (its process is gone, or the pid and port now belong to another program)
  is never shown "up", --stop-server says it removed a stale record and kills nothing,
  and only a process that answers as our server is reported up and stopped.

No llama.cpp server starts: the records are written by hand, and the "server" is a tiny
Python HTTP process. Through the real CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
from cli_runs import graph_run_output

from localmodel import warm
from localmodel.launcher import IDENTITY_PATH

STEM = "0123456789abcdef01234567"
FINGERPRINT = STEM + "89" * 20
KEY = "test-key"


# `cli(data_dir, ARGS)`: nothing listens on port 9, so no command here may call a model.
cli = partial(graph_run_output, "http://127.0.0.1:9", COLUMNS="400")


def one_error_line(output: str, *words: str) -> str:
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for word in words:
        assert word in errors[0], output
    return errors[0]


def servers(data_dir: Path) -> Path:
    folder = data_dir / "servers"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def record(data_dir: Path, *, pid: object, port: object, **changes: object) -> Path:
    """A record as the launcher writes it (with `changes`), and its key."""
    state = {
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model_alias": "qwen-test",
        "pid": pid,
        "port": port,
        "fingerprint": FINGERPRINT,
        "keep_alive_s": 300,
        "log_file": "/dev/null",
        **changes,
    }
    (servers(data_dir) / f"{STEM}.key").write_text(KEY)
    path = servers(data_dir) / f"{STEM}.json"
    path.write_text(json.dumps(state))
    return path


# ---------------------------------------------------------------- records that are not


def _text(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(text)


def _fields(**changes: object) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        given: dict[str, object] = {"pid": os.getpid(), "port": 9, **changes}
        record(path.parent.parent, **given)  # type: ignore[arg-type]

    return write


NOT_RECORDS: dict[str, Callable[[Path], None]] = {
    "not JSON": _text("{pid: 12"),
    "not UTF-8": lambda path: path.write_bytes(b"\xff\xfe\x00{}"),
    "a JSON list": _text("[1, 2]"),
    "no fields": _text("{}"),
    "a text pid": _fields(pid="12"),
    "a negative pid": _fields(pid=-1),  # os.kill(-1, 0) asks about every process
    "a pid past the kernel's int": _fields(pid=2**40),
    "a true pid": _fields(pid=True),
    "a port out of range": _fields(port=70000),
    "an infinite keep-alive": _fields(keep_alive_s=float("inf")),
    "too large": _text(" " * 100_000 + "{}"),
    "a folder": lambda path: path.mkdir(),
    "a FIFO": lambda path: os.mkfifo(path),
    "a symlink to /dev/zero": lambda path: path.symlink_to("/dev/zero"),
    "a key that is a FIFO": lambda path: _key_is_a_fifo(path),
}


def _key_is_a_fifo(path: Path) -> None:
    _fields()(path)
    path.with_suffix(".key").unlink()
    os.mkfifo(path.with_suffix(".key"))


@pytest.mark.parametrize("case", list(NOT_RECORDS))
def test_a_file_that_is_not_a_record_is_named_not_read_as_a_server(
    case: str, isolated_data_dir: Path
) -> None:
    path = servers(isolated_data_dir) / f"{STEM}.json"
    NOT_RECORDS[case](path)
    started = time.monotonic()
    [found] = warm.server_records(isolated_data_dir)
    assert time.monotonic() - started < 5  # a FIFO is never waited on
    assert not found.running and found.problem and STEM in found.problem, found
    assert warm.running_servers(isolated_data_dir) == []


@pytest.mark.parametrize("case", ["a negative pid", "a FIFO", "a folder"])
def test_list_and_stop_server_name_a_broken_record_in_one_line(
    case: str, isolated_data_dir: Path
) -> None:
    path = servers(isolated_data_dir) / f"{STEM}.json"
    NOT_RECORDS[case](path)
    code, out = cli(isolated_data_dir, "--list")
    assert code == 1 and "No runs yet." in out, out  # the runs are still listed
    one_error_line(out, "cannot tell whether a local model server is running", str(path))
    assert " up (" not in out

    code, out = cli(isolated_data_dir, "--stop-server")
    assert code == 1 and "Stopped" not in out, out
    one_error_line(out, str(path))
    if case == "a folder":  # not ours to delete: named, and left
        assert "move it away" in out and path.is_dir()
        return
    assert "removed what was not a local model server record" in out
    assert not path.exists() and not os.path.lexists(path)
    code, out = cli(isolated_data_dir, "--stop-server")
    assert (code, out.strip()) == (0, "No local model server was running."), out


@pytest.mark.parametrize("kind", ["a file", "a dangling symlink"])
@pytest.mark.parametrize("command", ["--list", "--stop-server"])
def test_a_file_where_the_servers_folder_should_be_is_named_and_left(
    kind: str, command: str, isolated_data_dir: Path
) -> None:
    isolated_data_dir.mkdir(parents=True, exist_ok=True)
    folder = isolated_data_dir / "servers"
    if kind == "a file":
        folder.write_text("mine")
    else:
        folder.symlink_to(isolated_data_dir / "nowhere")
    code, out = cli(isolated_data_dir, command)
    assert code == 1, out
    one_error_line(out, str(folder), "should be the local model servers' folder")
    assert os.path.lexists(folder) and not (isolated_data_dir / "nowhere").exists()
    if kind == "a file":
        assert folder.read_text() == "mine"


def test_listing_and_stopping_create_no_servers_folder(isolated_data_dir: Path) -> None:
    for command in ("--list", "--stop-server"):
        code, out = cli(isolated_data_dir, command)
        assert code == 0 and "Traceback" not in out, out
    assert not (isolated_data_dir / "servers").exists()


# ---------------------------------------------------------------- stale and live records


@contextmanager
def process(code: str) -> Iterator[subprocess.Popen[str]]:
    """A child in its own process group (as the launcher's server is), printing a line
    once ready."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()  # ready
        yield child
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


SLEEPER = "import time; print('ready', flush=True); time.sleep(120)"


def http_server(answer_as_ours: bool) -> str:
    """A loopback HTTP process: with `answer_as_ours`, it answers the identity check as
    the launcher does (behind the key, with its pid and the fingerprint); else it is a
    foreign program that answers 200 to everything."""
    return f"""
        import json, os
        from http.server import BaseHTTPRequestHandler, HTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                ours = {answer_as_ours!r} and self.path == {IDENTITY_PATH!r}
                authorized = self.headers.get("Authorization") == "Bearer {KEY}"
                answer = {{"pid": os.getpid(), "fingerprint": {FINGERPRINT!r}}}
                body = json.dumps(answer if ours and authorized else {{"ok": True}}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = HTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
    """


@contextmanager
def http_process(answer_as_ours: bool) -> Iterator[tuple[subprocess.Popen[str], int]]:
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(http_server(answer_as_ours))],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        yield child, port
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


STALE_LINE = "local model server: not running (a stale record; --stop-server removes it)"


@pytest.mark.parametrize("case", ["dead pid", "live pid, nothing listens", "foreign program"])
def test_a_stale_record_is_never_up_and_stop_server_kills_nothing(
    case: str, isolated_data_dir: Path
) -> None:
    if case == "dead pid":
        check_stale(isolated_data_dir, record(isolated_data_dir, pid=dead_pid(), port=9))
    elif case == "live pid, nothing listens":  # the pid was reused by another process
        with process(SLEEPER) as sleeper:
            check_stale(isolated_data_dir, record(isolated_data_dir, pid=sleeper.pid, port=9))
            assert sleeper.poll() is None  # an unrelated process is never killed
    else:  # the pid and the port now belong to another program, which answers 200
        with http_process(answer_as_ours=False) as (foreign, port):
            check_stale(isolated_data_dir, record(isolated_data_dir, pid=foreign.pid, port=port))
            assert foreign.poll() is None


def check_stale(data_dir: Path, path: Path) -> None:
    code, out = cli(data_dir, "--list")
    assert code == 0 and STALE_LINE in out and " up (" not in out, out
    code, out = cli(data_dir, "--stop-server")
    assert code == 0, out
    assert out.strip() == "No local model server was running (removed a stale record).", out
    assert not path.exists() and not path.with_suffix(".key").exists()


def test_only_a_server_that_answers_as_ours_is_up_and_stopped(isolated_data_dir: Path) -> None:
    with http_process(answer_as_ours=True) as (server, port):
        path = record(isolated_data_dir, pid=server.pid, port=port)
        code, out = cli(isolated_data_dir, "--list")
        assert code == 0, out
        assert f"local model server: qwen-test up (pid {server.pid}, 127.0.0.1:{port})" in out
        code, out = cli(isolated_data_dir, "--stop-server")
        assert code == 0, out
        assert out.strip() == f"Stopped the local model server qwen-test (pid {server.pid}).", out
        server.wait(timeout=10)  # it is really gone
        assert not path.exists()
