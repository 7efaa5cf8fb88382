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
Listing (``server_records``) only reads, and calls a record "running" only then; a record
whose server is gone is stale, and a file that is not a record (not JSON, a folder, a FIFO)
says what it is instead, so --list and --stop-server never report a server they cannot see.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import inspect
import json
import math
import os
import re
import secrets
import signal
import stat
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from localmodel import jump_forward, launcher
from localmodel.errors import LocalModelError, LocalModelSettingError
from localmodel.launcher import IDENTITY_PATH
from localmodel.server import (
    LocalModelServer,
    LocalServer,
    ask_server,
    installed_version,
    signal_group,
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
        raise LocalModelSettingError(
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


def servers_dir(data_dir: Path, *, create: bool = True) -> Path:
    """`data_dir`'s folder of warm-server files, made (0700) if `create`. LocalModelError,
    naming the folder, when something else is in its place or it cannot be made."""
    path = data_dir / "servers"
    try:
        # A file, or a symlink to nothing or to no folder (is_dir follows a symlink).
        if (path.exists() or path.is_symlink()) and not path.is_dir():
            raise LocalModelError(
                f"{path} should be the local model servers' folder, but something else is "
                "in its place; move it away and try again"
            )
        if create:
            path.mkdir(parents=True, exist_ok=True)
            path.chmod(0o700)
    except OSError as exc:
        raise LocalModelError(_files_problem(path, exc)) from None
    return path


def _files_problem(path: Path, exc: OSError) -> str:
    """One line for a warm server's file that cannot be read or written."""
    where = exc.filename or path
    read_only = exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    advice = (
        "; the data directory must be writable (set SHOPPING_PLANNER_DATA_DIR to another)"
        if read_only
        else ""
    )
    return f"cannot use the local model server file {where}: {exc.strerror}{advice}"


def fingerprint(server: LocalModelServer) -> str:
    """A hash of everything that must match for a running server to be reused."""
    model = server.model_file.resolve()
    stat = model.stat()
    identity = {
        "shopping-planner": installed_version("shopping-planner"),
        "llama-cpp-python": installed_version("llama-cpp-python"),
        "launcher": hashlib.sha256(
            b"".join(Path(inspect.getfile(code)).read_bytes() for code in (launcher, jump_forward))
        ).hexdigest(),
        "model": [str(model), stat.st_size, stat.st_mtime_ns],
        "repack": server.repack,
        "fast_paths": server.fast_paths,
        "jump_forward": server.jump_forward,
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
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise LocalModelError(_files_problem(path, exc)) from None
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
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise LocalModelError(_files_problem(path, exc)) from None


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
    answer = ask_server(f"http://127.0.0.1:{port}{IDENTITY_PATH}", api_key, timeout=3)
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
        """The records of `data_dir` (none while its servers folder does not exist: listing
        and stopping never create it, so they work in a read-only data directory)."""
        folder = servers_dir(data_dir, create=False)
        try:
            # iterdir, not glob: glob finds nothing in a folder it may not read.
            found = folder.iterdir() if folder.is_dir() else iter(())
            states = sorted(path for path in found if path.suffix == ".json")
        except OSError as exc:
            raise LocalModelError(
                f"cannot read the local model servers' folder {folder} ({exc.strerror}): "
                "whether a server is running cannot be told"
            ) from None
        return [cls(state.with_suffix("")) for state in states]

    def clear(self) -> None:
        """Remove the record and its key (never a directory in their place: that is not
        ours to delete). LocalModelError naming the file when it cannot be removed."""
        for path in (self.state, self.key):
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                if exc.errno in (errno.EISDIR, errno.EPERM) and path.is_dir():
                    raise LocalModelError(
                        f"{path} should be a local model server file, but it is a folder; "
                        "move it away and try again"
                    ) from None
                raise LocalModelError(_files_problem(path, exc)) from None


class _NotARecord(ValueError):
    """A record's file holds something other than what the launcher writes there."""


# A record is a few hundred bytes and a key 43 characters: anything far larger is neither.
_MAX_RECORD_BYTES = 64 * 1024
_TEXT_FIELDS = ("base_url", "model_alias", "fingerprint", "log_file")


def _read_small_file(path: Path) -> str:
    """The text of a small regular file: opened without following a symlink and without
    blocking, so a FIFO or a device in its place is refused instead of hanging the read.
    FileNotFoundError when there is none; _NotARecord naming what is there instead."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        symlink = exc.errno == errno.ELOOP
        what = "is a symbolic link" if symlink else f"cannot be read ({exc.strerror})"
        raise _NotARecord(what) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO, socket or device"
            raise _NotARecord(f"is {kind}, not a file")
        data = os.read(fd, _MAX_RECORD_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_RECORD_BYTES:
        raise _NotARecord(f"is over {_MAX_RECORD_BYTES // 1024} KB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotARecord("is not UTF-8 text") from None


def _parse_record(text: str, api_key: str) -> WarmServer:
    """The server a record describes; _NotARecord naming the first field that is wrong."""
    try:
        state = json.loads(text)
    except ValueError:
        raise _NotARecord("is not JSON") from None
    if not isinstance(state, dict):
        raise _NotARecord("holds no JSON object")
    for name in _TEXT_FIELDS:
        if not isinstance(state.get(name), str):
            raise _NotARecord(f"has no text {name}")
    pid, port, keep_alive = state.get("pid"), state.get("port"), state.get("keep_alive_s")
    # bool is an int to Python; a pid must also fit the kernel's int (os.kill raises past it).
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 2**31:
        raise _NotARecord("has no valid pid")
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise _NotARecord("has no valid port")
    if not isinstance(keep_alive, int | float) or not 0 <= keep_alive < math.inf:
        raise _NotARecord("has no valid keep_alive_s")
    known = {k: state[k] for k in (*_TEXT_FIELDS, "pid", "port", "keep_alive_s")}
    return WarmServer(**known, api_key=api_key)


@dataclass(frozen=True)
class ServerRecord:
    """One record in a data directory's servers folder, checked: a running server of ours
    (`running`), a stale one (its process is gone, or is not our server), or a file that
    is not a record at all (`problem` says what it is instead)."""

    path: Path
    server: WarmServer | None = None
    running: bool = False
    problem: str | None = None

    @property
    def removable(self) -> bool:
        """Whether --stop-server may remove it: a folder in a record's place is not ours."""
        return not (self.path.is_dir() or self.path.with_suffix(".key").is_dir())


def _check_record(files: _Files, fingerprint: str | None = None) -> ServerRecord:
    try:
        text = _read_small_file(files.state)
    except FileNotFoundError:  # removed since it was listed (the server stopped)
        return ServerRecord(files.state)
    except _NotARecord as exc:
        return ServerRecord(files.state, problem=f"{files.state} {exc}")
    try:
        api_key = _read_small_file(files.key).strip()
    except FileNotFoundError:
        api_key = ""  # nothing can be asked of the server without it: stale at best
    except _NotARecord as exc:
        return ServerRecord(files.state, problem=f"the key file {files.key} {exc}")
    try:
        server = _parse_record(text, api_key)
    except _NotARecord as exc:
        return ServerRecord(files.state, problem=f"{files.state} {exc}")
    running = bool(api_key) and _answers_as_ours(server, fingerprint)
    return ServerRecord(files.state, server, running=running)


def _read_running(files: _Files, fingerprint: str | None = None) -> WarmServer | None:
    """The server the state file names, if it is alive and answers as ours."""
    record = _check_record(files, fingerprint)
    return record.server if record.running else None


def _answers_as_ours(server: WarmServer, fingerprint: str | None) -> bool:
    """True if the record's process is alive and its port answers, behind the key, with
    that pid and fingerprint: a reused pid or port never passes for our server."""
    identity = _identity(server.port, server.api_key) if _pid_alive(server.pid) else None
    return (
        identity is not None
        and identity.get("pid") == server.pid
        and identity.get("fingerprint") == server.fingerprint
        and fingerprint in (None, server.fingerprint)
    )


class Lease:
    """A client's hold on a warm server: while it is held, the server is not idle."""

    def __init__(
        self, server: WarmServer, users: IO[bytes], started: LocalModelServer | None = None
    ) -> None:
        self.server = server
        self.base_url = server.base_url
        self.api_key = server.api_key
        self.model_alias = server.model_alias
        self._users: IO[bytes] | None = users
        self._started = started  # set when this process started the server

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
        try:
            users = open(files.users, "ab")  # noqa: SIM115 - held for the lease's lifetime
        except OSError as exc:
            raise LocalModelError(_files_problem(files.users, exc)) from None
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


def server_records(data_dir: Path) -> list[ServerRecord]:
    """Every record of `data_dir`, checked (read only: nothing is created or removed)."""
    return [_check_record(files) for files in _Files.all(data_dir)]


def running_servers(data_dir: Path) -> list[WarmServer]:
    """The warm servers of `data_dir` that are up and answer as ours."""
    return [r.server for r in server_records(data_dir) if r.running and r.server is not None]


@dataclass(frozen=True)
class StopReport:
    """What --stop-server did: the servers it stopped, the stale records it removed (their
    server had already gone), the files it removed that were not records at all (what each
    was), and the files it could not remove (why)."""

    stopped: list[WarmServer] = field(default_factory=list)
    stale: list[WarmServer] = field(default_factory=list)
    not_records: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def stop_servers(data_dir: Path, timeout_s: float = 10.0) -> StopReport:
    """Stop every warm server of `data_dir` and remove its records; a file that cannot be
    removed (a read-only data directory, a folder in its place) is left and named."""
    report = StopReport()
    for files in _Files.all(data_dir):
        with _exclusive(files.lock, STOP_LOCK_TIMEOUT_S):
            record = _check_record(files)
            if record.server is None and record.problem is None:
                continue  # gone since it was listed
            if record.running and record.server is not None:
                _terminate(record.server.pid, timeout_s)
                report.stopped.append(record.server)
            try:
                files.clear()
            except LocalModelError as error:  # a read-only data directory, a folder
                report.left.append(str(error))
                continue
            if record.problem is not None:
                report.not_records.append(record.problem)
            elif not record.running and record.server is not None:
                report.stale.append(record.server)
    return report


def _terminate(pid: int, timeout_s: float) -> None:
    signal_group(pid, signal.SIGTERM)  # the server leads its own process group
    deadline = time.monotonic() + timeout_s
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _pid_alive(pid):
        signal_group(pid, signal.SIGKILL)
