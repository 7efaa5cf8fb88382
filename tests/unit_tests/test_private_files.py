"""Class 5 of the second red-team round (#24): stored runs, logs and caches are readable by
their owner only: 0700 folders and 0600 files from the first write, the SQLite database and
its -wal/-shm included, and a data folder an older version left open is closed. Through the
real CLI, started with the common umask 022."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from cli_runs import REPO_ROOT, cli_environment
from conftest import FakeServer


def cli_with_umask_022(url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graph.run", *args],
        cwd=REPO_ROOT,
        env=cli_environment(url, data_dir),
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0o022),
    )


def open_to_others(folder: Path) -> list[str]:
    found = []
    for path in [folder, *folder.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if not path.is_symlink() and mode & 0o077:
            found.append(f"{path.relative_to(folder.parent)} {mode:o}")
    return found


def test_runs_logs_and_caches_are_private_from_the_first_write(
    tmp_path: Path, small_catalog_file: Path, photo_gift_server: FakeServer
) -> None:
    data_dir = tmp_path / "fresh" / "shopping-planner"  # nothing exists yet
    run = cli_with_umask_022(
        photo_gift_server.url,
        data_dir,
        "a strap gift",
        "--yes",
        "--catalog",
        str(small_catalog_file),
    )
    listed = cli_with_umask_022(photo_gift_server.url, data_dir, "--list")
    assert run.returncode == 0 and listed.returncode == 0, run.stdout + run.stderr
    assert (data_dir / "checkpoints.sqlite").exists()
    assert open_to_others(data_dir) == []


def test_a_data_folder_left_open_by_an_older_version_is_closed(tmp_path: Path) -> None:
    data_dir = tmp_path / "old"
    data_dir.mkdir(mode=0o755)
    os.chmod(data_dir, 0o755)
    database = data_dir / "checkpoints.sqlite"
    database.touch()
    os.chmod(database, 0o644)
    listed = cli_with_umask_022("http://127.0.0.1:9", data_dir, "--list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert open_to_others(data_dir) == []
