"""A warm embedded model server, shared by runs and processes (as Ollama keeps a model warm).

The first run starts llama-cpp-python's server detached, through localmodel.launcher, and
later runs, in this process or another, reuse it while it is up for the same model file and
settings. It exits by itself once no run has used it for ``LOCAL_MODEL_KEEP_ALIVE`` (default
5 minutes; 0 means one server per run, stopped when the run ends).

Files, in ``<data_dir>/servers/`` (mode 0700), per server fingerprint ``F``:

- ``F.json``: pid, port, model alias and fingerprint of the running server;
- ``F.key``: its random API key (mode 0600): the server answers no request without it, so
  another local user can neither use it nor read the prompts;
- ``F.lock``: held exclusively while a client checks, starts or stops the server, so
  several processes at once start one server, not several;
- ``F.users``: each client holds a shared lock on it while it runs; the server counts its
  idle time only once nobody holds it.

A server is reused only if its ``GET /shopping-planner/server`` (behind the key) reports
the same fingerprint: a hash of this project's and llama-cpp-python's versions, the
launcher's code, the model file and every setting that shapes the server's answers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import re
import secrets
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from localmodel import jump_forward, launcher
from localmodel.errors import LocalModelError
from localmodel.launcher import IDENTITY_PATH
from localmodel.server import (
    LocalModelServer,
    LocalServer,
    start_local_server,
    stopped_server_line,
)

KEEP_ALIVE_SETTING = "LOCAL_MODEL_KEEP_ALIVE"
DEFAULT_KEEP_ALIVE_S = 300.0  # Ollama's default keep-alive
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h)?$")


def keep_alive_seconds(value: str | None = None) -> float:
    """``value``, else $LOCAL_MODEL_KEEP_ALIVE, as seconds: ``300``, ``90s``, ``5m``, ``1h``
    or ``0`` (no warm server). Anything else is refused with a message naming it."""
    raw = value if value is not None else os.environ.get(KEEP_ALIVE_SETTING, "")
    text = raw.strip().lower()
    if not text:
        return DEFAULT_KEEP_ALIVE_S
    match = _DURATION.match(text)
    unit = {"s": 1, "m": 60, "h": 3600}
    seconds = float(match.group(1)) * unit[match.group(2) or "s"] if match else math.nan
    if not math.isfinite(seconds) or seconds > 7 * 24 * 3600:
        raise LocalModelError(
            f"{KEEP_ALIVE_SETTING}={raw!r} is not a keep-alive time; use seconds or a "
            "duration such as 300, 90s, 5m or 1h (0: stop the model when each run ends)"
        )
    return seconds


@dataclass(frozen=True)
class WarmServer:
    """What a client needs to use a warm server, and what --list shows of it."""

    base_url: str
    api_key: str = field(repr=False)
    model_alias: str
    pid: int
    port: int
    fingerprint: str
    keep_alive_s: float
    log_file: str
    reused: bool = False


def servers_dir(data_dir: Path) -> Path:
    path = data_dir / "servers"
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def fingerprint(server: LocalModelServer) -> str:
    """A hash of everything that must match for a running server to be reused."""
    model = server.model_file.resolve()
    stat = model.stat()
    identity = {
        "shopping-planner": _version("shopping-planner"),
        "llama-cpp-python": _version("llama-cpp-python"),
        "launcher": hashlib.sha256(
            b"".join(Path(code.__file__).read_bytes() for code in (launcher, jump_forward))
        ).hexdigest(),
        "model": [str(model), stat.st_size, stat.st_mtime_ns],
        "repack": server.repack,
        "fast_paths": server.fast_paths,
        "arguments": server.server_arguments(),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


# How long a client waits for a server's lock: another client holds it while it checks,
# starts (loading the model can take minutes) or stops that server.
START_LOCK_TIMEOUT_S = 900.0
STOP_LOCK_TIMEOUT_S = 15.0


@contextlib.contextmanager
def _exclusive(path: Path, timeout_s: float = START_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold `path`'s lock; LocalModelError if another process holds it past `timeout_s`
    (for example a run suspended with Ctrl-Z while it starts the model)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LocalModelError(
                        f"another process has held the local model server's lock {path} for "
                        f"{timeout_s:g} s (a run starting or using the model, perhaps suspended "
                        "with Ctrl-Z); let it finish or end it, then try again"
                    ) from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, readable by the owner only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _pid_alive(pid: int) -> bool:
    """True for a running process (a zombie, exited but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _identity(port: int, api_key: str) -> dict[str, Any] | None:
    """The server's own account of itself, or None if nothing of ours answers there."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{IDENTITY_PATH}",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=3) as resp:
            answer = json.load(resp)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


class _Files:
    """The files of one warm server, named by the first 24 hex digits of its fingerprint."""

    def __init__(self, stem: Path) -> None:
        self.state = stem.with_suffix(".json")
        self.key = stem.with_suffix(".key")
        self.lock = stem.with_suffix(".lock")
        self.users = stem.with_suffix(".users")

    @classmethod
    def for_fingerprint(cls, data_dir: Path, fingerprint: str) -> _Files:
        return cls(servers_dir(data_dir) / fingerprint[:24])

    @classmethod
    def all(cls, data_dir: Path) -> list[_Files]:
        states = sorted(servers_dir(data_dir).glob("*.json"))
        return [cls(state.with_suffix("")) for state in states]

    def clear(self) -> None:
        for path in (self.state, self.key):
            path.unlink(missing_ok=True)


def _read_running(files: _Files, fingerprint: str | None = None) -> WarmServer | None:
    """The server the state file names, if it is alive and answers as ours."""
    try:
        state = json.loads(files.state.read_text())
        api_key = files.key.read_text().strip()
        server = WarmServer(**{**state, "api_key": api_key})
    except (OSError, ValueError, TypeError):
        return None
    if not _pid_alive(server.pid):
        return None
    identity = _identity(server.port, api_key)
    if identity is None or identity.get("pid") != server.pid:
        return None
    if identity.get("fingerprint") != server.fingerprint:
        return None
    if fingerprint is not None and server.fingerprint != fingerprint:
        return None
    return server


class Lease:
    """A client's hold on a warm server: while it is held, the server is not idle."""

    def __init__(
        self, server: WarmServer, users: IO[bytes], started: LocalModelServer | None = None
    ) -> None:
        self.server = server
        self._users: IO[bytes] | None = users
        self._started = started  # set when this process started the server

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def api_key(self) -> str:
        return self.server.api_key

    @property
    def model_alias(self) -> str:
        return self.server.model_alias

    def exit_report(self, grace_s: float = 0.0) -> str | None:
        """One line saying the server stopped (see LocalModelServer.exit_report), or None
        while it runs. Only its parent learns the signal; others see that it is gone."""
        if self._started is not None:
            return self._started.exit_report(grace_s)
        deadline = time.monotonic() + grace_s
        while _pid_alive(self.server.pid):
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        what = f"the local model server (pid {self.server.pid}) stopped"
        return stopped_server_line(what, Path(self.server.log_file))

    def release(self) -> None:
        if self._users is not None:
            self._users.close()  # drops the shared lock
            self._users = None


def acquire(
    model: str | None = None, *, data_dir: Path, progress: bool = True, **server_kwargs: Any
) -> Lease:
    """Reuse the warm server for `model` and these settings, or start one detached; its
    files live in `data_dir`."""
    keep_alive = keep_alive_seconds()
    server = start_local_server(model, data_dir=data_dir, progress=progress, **server_kwargs)
    identity = fingerprint(server)
    files = _Files.for_fingerprint(data_dir, identity)
    with _exclusive(files.lock):
        # The shared lock comes first: a server that sees a client never exits under it.
        users = open(files.users, "ab")  # noqa: SIM115 - held for the lease's lifetime
        os.chmod(files.users, 0o600)
        fcntl.flock(users.fileno(), fcntl.LOCK_SH)
        try:
            running = _read_running(files, identity)
            if running is not None:
                return Lease(WarmServer(**{**asdict(running), "reused": True}), users)
            files.clear()
            warm = _start_detached(server, files, identity, keep_alive)
        except BaseException:
            users.close()
            raise
        return Lease(warm, users, started=server)


def open_server(model: str | None = None, *, data_dir: Path) -> LocalServer:
    """A server for `model`: a lease on the warm one while LOCAL_MODEL_KEEP_ALIVE is above 0,
    else one started for this process alone, stopped when it is released."""
    if keep_alive_seconds() > 0:
        return acquire(model, data_dir=data_dir)
    return start_local_server(model, data_dir=data_dir).__enter__()


def _start_detached(
    server: LocalModelServer, files: _Files, identity: str, keep_alive: float
) -> WarmServer:
    api_key = secrets.token_urlsafe(32)
    _write_private(files.key, api_key)
    server.api_key = api_key
    server.detached = True
    server.log_file = server.log_file.with_name(
        f"llama-server-{server.model_alias}-{identity[:8]}.log"
    )
    server.launcher_args = (
        *("--api-key-file", str(files.key)),
        *("--keep-alive", str(keep_alive)),
        *("--users-file", str(files.users)),
        *("--state-file", str(files.state)),
        *("--fingerprint", identity),
    )
    server.start()
    assert server.process is not None and server.port is not None
    warm = WarmServer(
        base_url=server.base_url,
        api_key=api_key,
        model_alias=server.model_alias,
        pid=server.process.pid,
        port=server.port,
        fingerprint=identity,
        keep_alive_s=keep_alive,
        log_file=str(server.log_file),
    )
    state = {k: v for k, v in asdict(warm).items() if k not in ("api_key", "reused")}
    _write_private(files.state, json.dumps(state))
    return warm


def running_servers(data_dir: Path) -> list[WarmServer]:
    """The warm servers of `data_dir` that are up and answer as ours."""
    return [
        server for files in _Files.all(data_dir) if (server := _read_running(files)) is not None
    ]


def stop_servers(data_dir: Path, timeout_s: float = 10.0) -> list[WarmServer]:
    """Stop every warm server of `data_dir`; returns those that were running."""
    stopped = []
    for files in _Files.all(data_dir):
        with _exclusive(files.lock, STOP_LOCK_TIMEOUT_S):
            server = _read_running(files)
            if server is not None:
                _terminate(server.pid, timeout_s)
                stopped.append(server)
            files.clear()
    return stopped


def _terminate(pid: int, timeout_s: float) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)  # the server leads its own process group
    deadline = time.monotonic() + timeout_s
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _pid_alive(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
