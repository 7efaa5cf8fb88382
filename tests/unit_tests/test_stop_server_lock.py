"""Class 10 of the second red-team round (#24): every wait has a deadline and a message.
`--stop-server` while another process holds a server's lock (a run suspended with Ctrl-Z
while starting the model) gives one line after a deadline instead of waiting forever. (A
.env that is a FIFO: tests/unit_tests/test_env_file.py.) Through the real CLI."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from cli_runs import graph_run_process

from localmodel.warm import STOP_LOCK_TIMEOUT_S


def test_stop_server_gives_up_on_a_held_lock_with_one_line(tmp_path: Path) -> None:
    servers = tmp_path / "servers"
    servers.mkdir(mode=0o700)
    (servers / "0123456789abcdef01234567.json").write_text(json.dumps({"pid": 1}))
    lock = servers / "0123456789abcdef01234567.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the suspended run's hold
    try:
        started = time.monotonic()
        run = graph_run_process(
            "http://127.0.0.1:9",
            tmp_path,
            "--stop-server",
            stdin=None,
            timeout=STOP_LOCK_TIMEOUT_S + 45,
        )
        waited = time.monotonic() - started
    finally:
        os.close(fd)
    output = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in output, output
    assert "held the local model server's lock" in output and str(lock) in output, output
    assert STOP_LOCK_TIMEOUT_S <= waited < STOP_LOCK_TIMEOUT_S + 30
