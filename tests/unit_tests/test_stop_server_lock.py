"""Class 10 of the second red-team round (#24): every wait has a deadline and a message.
`--stop-server` while another process holds a server's lock (a run suspended with Ctrl-Z
while starting the model) gives one line after a deadline instead of waiting forever. (A
.env that is a FIFO: tests/unit_tests/test_env_file.py.) Through the real CLI."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cli_runs import REPO_ROOT, graph_run_process

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


# As root every folder is readable: the CLI is run as `nobody` once its imports are done
# (the interpreter itself may live where `nobody` cannot read).
AS_A_USER_WHO_CANNOT_READ_IT = """
import os, sys, tempfile
from graph.cli.main import main
os.environ["SHOPPING_PLANNER_DATA_DIR"] = tempfile.mkdtemp()
main(["--stop-server"])  # what the command imports, imported while it still can be
os.environ["SHOPPING_PLANNER_DATA_DIR"] = sys.argv[1]
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
sys.exit(main(["--stop-server"]))
"""


def test_stop_server_over_a_servers_folder_it_cannot_read_says_so() -> None:
    """It said "No local model server was running." (glob finds nothing where it may not
    read), though a server may be."""
    # Not under tmp_path: pytest's own folders are private to the user running the tests.
    data = Path(tempfile.mkdtemp(prefix="unreadable-servers-"))
    (data / "servers").mkdir()
    data.chmod(0o755)
    (data / "servers").chmod(0o000)
    try:
        run = subprocess.run(
            [sys.executable, "-c", AS_A_USER_WHO_CANNOT_READ_IT, str(data)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        (data / "servers").chmod(0o700)
        shutil.rmtree(data)
    stopped_nothing, refused = run.stdout.splitlines()[0], run.stdout.splitlines()[1:]
    assert stopped_nothing == "No local model server was running."  # the readable one
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stderr
    assert refused == [
        f"error: cannot read the local model servers' folder {data / 'servers'} (Permission "
        "denied): whether a server is running cannot be told"
    ], run.stdout
