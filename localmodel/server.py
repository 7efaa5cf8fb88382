"""llama-cpp-python's server (through :mod:`localmodel.launcher`) as a subprocess whose
lifetime is bound to a ``with`` block::

    with start_local_server(data_dir=folder) as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key=server.api_key,
                         model=server.model_alias)

Importing this module is cheap: llama_cpp is never imported here (it runs in the child
process) and rich is imported lazily, only when a spinner is shown.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from localmodel.errors import LocalModelError
from localmodel.settings import (
    PROMPT_CACHE_BYTES,
    REPACK_SETTING,
    resolve_fast_paths,
    resolve_jump_forward,
    resolve_prompt_cache,
    resolve_repack_mode,
)
from localmodel.weights import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    missing_server_modules,
    resolve_model_file,
)


def installed_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _bind_port(host: str, port: int) -> int:
    """Bind `port` (0: a free one) on `host` and let it go; OSError when it is in use."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, port))
        return sock.getsockname()[1]


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 64 * 1024))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return "(no log)"
    tail = text.splitlines()[-lines:]
    return "\n".join("    " + line for line in tail) if tail else "    (log is empty)"


def stopped_server_line(what: str, log_file: Path) -> str:
    """`what` happened to a server, with its log's last lines and path, on one line."""
    last = [line.strip() for line in log_tail(log_file, 3).splitlines()]
    return f"{what}; last lines of its log: {' | '.join(last)} (log: {log_file})"


def _parent_death_signal() -> Any:
    """A preexec_fn that makes Linux SIGTERM the child when this process dies (even by
    SIGKILL, which atexit cannot cover). None elsewhere, or when not on the main thread
    (PR_SET_PDEATHSIG fires when the *thread* that forked exits)."""
    if not sys.platform.startswith("linux"):
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec
        prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # parent already died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


def signal_group(pid: int, sig: int) -> None:
    """Send `sig` to the process group a server leads (started with start_new_session, its
    pgid is its pid), if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def ask_server(url: str, api_key: str, timeout: float) -> Any:
    """The JSON a server answers `url` with, asked with `api_key`; None when nothing
    answers there, the key is refused or the answer is not JSON."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return json.load(resp)
    except (urllib.error.URLError, OSError, ValueError):
        return None


class LocalServer(Protocol):
    """A local model server this process sends calls to: one it owns
    (:class:`LocalModelServer`) or a lease on a warm one (:class:`localmodel.warm.Lease`)."""

    @property
    def base_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...

    @property
    def model_alias(self) -> str: ...

    def exit_report(self, grace_s: float = 0.0) -> str | None:
        """One line saying that the server stopped on its own, or None while it runs."""
        ...

    def release(self) -> None:
        """Give the server up: an owned one stops, a leased one stays up for others."""
        ...


class LocalModelServer:
    """llama-cpp-python's server (via ``python -m localmodel.launcher``) as a
    context-managed subprocess.

    Entering starts the server (own process group, output to ``log_file``) and blocks until
    ``GET /v1/models`` answers; leaving stops it (SIGTERM, then SIGKILL after
    ``stop_timeout``), also on exceptions and KeyboardInterrupt. An atexit hook (and, on
    Linux, a parent-death signal) covers a parent that never reaches ``__exit__``.
    """

    # Any key works unless the launcher is given one (--api-key-file), as a warm server is.
    api_key = "sk-local"
    # A detached server outlives this process (localmodel.warm): no parent-death signal,
    # no atexit stop; it stops itself when idle.
    detached = False
    launcher_args: tuple[str, ...] = ()

    def __init__(
        self,
        model_file: Path,
        *,
        data_dir: Path,
        model_alias: str | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        log_file: Path | None = None,
        startup_timeout: float = 120,
        stop_timeout: float = 10,
        repack: str | None = None,
        prompt_cache: str | None = None,
        fast_paths: str | None = None,
        jump_forward: str | None = None,
        progress: bool = True,
    ) -> None:
        self.model_file = Path(model_file)
        self.data_dir = data_dir
        self.model_alias = model_alias or self.model_file.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads or min(os.cpu_count() or 1, 4)
        self.host = host
        self.port = port
        self.log_file = (
            Path(log_file)
            if log_file
            else data_dir / "logs" / (f"llama-server-{self.model_alias}.log")
        )
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.repack = resolve_repack_mode(repack)
        self.prompt_cache = resolve_prompt_cache(prompt_cache)
        self.fast_paths = resolve_fast_paths(fast_paths)
        self.jump_forward = resolve_jump_forward(jump_forward)
        self.progress = progress
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None
        self._log_fh: Any = None
        self._stopping = False

    # -- public --------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LocalModelError("The local model server has not been started yet.")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def rss_mb(self) -> float | None:
        """Resident memory of the running server in MB, from Linux /proc; None elsewhere."""
        if self.process is None or not self.running:
            return None
        with contextlib.suppress(OSError), open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return None

    def exit_report(self, grace_s: float = 0.0) -> str | None:
        """One line saying that the server stopped on its own (how, its log's last lines
        and path), or None while it runs or after :meth:`stop`. Waits up to ``grace_s`` for
        the exit: a dying process closes its sockets before its exit status is ready."""
        proc = self.process
        if proc is None or self._stopping:
            return None
        try:
            code = proc.wait(timeout=grace_s) if grace_s > 0 else proc.poll()
        except subprocess.TimeoutExpired:
            return None
        if code is None:
            return None
        if code < 0:
            try:
                how = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        report = stopped_server_line(f"the local model server stopped ({how})", self.log_file)
        if -code in (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS) and self.repack != "off":
            # A crash inside llama.cpp's CPU kernels: the slowest, plainest ones may hold.
            report += f"; if it happens again, try {REPACK_SETTING}=off"
        return report

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def release(self) -> None:
        """Owned by this process: giving it up stops it (see :class:`LocalServer`)."""
        self.stop()

    def __repr__(self) -> str:
        state = f"pid={self.process.pid}" if self.running and self.process else "stopped"
        return f"<LocalModelServer {self.model_alias} port={self.port} {state}>"

    def start(self) -> None:
        if self.running:
            return
        if not self.model_file.is_file():
            raise LocalModelError(f"Local model file {self.model_file} does not exist.")
        try:
            self.port = _bind_port(self.host, self.port or 0)
        except OSError:
            raise LocalModelError(
                f"Port {self.port} on {self.host} is already in use; pick another port "
                f"or leave port=None to use a free one."
            ) from None
        command = self._server_command()
        self._stopping = False
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.chmod(0o700)  # a server log may quote prompts
        self._log_fh = os.fdopen(
            os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb"
        )
        started = time.monotonic()
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self._log_fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: no terminal Ctrl-C, killpg-able
                preexec_fn=None if self.detached else _parent_death_signal(),
            )
        except OSError as exc:
            self._close_log()
            raise LocalModelError(f"Could not start the local model server: {exc}") from exc
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except BaseException:  # includes KeyboardInterrupt during the load
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        if self.detached:
            atexit.unregister(self.stop)
            self._close_log()  # the server writes its log through its own descriptor

    def stop(self) -> None:
        """Terminate the server process group; idempotent."""
        atexit.unregister(self.stop)
        self._stopping = True
        proc = self.process
        if proc is not None:
            try:
                if proc.poll() is None:
                    signal_group(proc.pid, signal.SIGTERM)
                    try:
                        proc.wait(timeout=self.stop_timeout)
                    except subprocess.TimeoutExpired:
                        signal_group(proc.pid, signal.SIGKILL)
                        proc.wait(timeout=10)
                # Reap stragglers (e.g. helpers the server spawned) left in its group.
                signal_group(proc.pid, signal.SIGKILL)
            except KeyboardInterrupt:  # a second Ctrl-C while waiting: do not leave an orphan
                signal_group(proc.pid, signal.SIGKILL)
                raise
        self._close_log()

    # -- internals -----------------------------------------------------------------
    def server_arguments(self) -> list[str]:
        """The llama-cpp-python server settings that shape its answers (not its address)."""
        cmd = [
            "--model",
            str(self.model_file),
            "--model_alias",
            self.model_alias,
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            # The server keeps every prompt token's logits by default (for logprobs, which
            # we never ask for): 151k floats per token, ~2 s of a 700-token planner prompt
            # on 2 cores.
            "--logits_all",
            "false",
        ]
        if self.prompt_cache != "off":
            cmd += ["--cache", "true", "--cache_type", self.prompt_cache]
            cmd += ["--cache_size", str(PROMPT_CACHE_BYTES)]
        return cmd

    def prompt_cache_dir(self) -> Path:
        """Where a disk prompt cache lives: one directory per model, settings and llama.cpp
        release, since a saved state is only valid for the model and context that made it,
        in the state format of the llama.cpp that wrote it."""
        settings = [arg for arg in self.server_arguments() if arg != str(self.model_file)]
        stat = self.model_file.stat()
        runtime = installed_version("llama-cpp-python")
        identity = json.dumps([str(self.model_file.resolve()), stat.st_size, settings, runtime])
        return self.data_dir / "prompt-cache" / hashlib.sha256(identity.encode()).hexdigest()[:16]

    def _server_command(self) -> list[str]:
        """The argv of the server process (tests substitute a stub)."""
        missing = missing_server_modules()
        if missing:
            raise LocalModelError(
                "llama-cpp-python with its server extra is not installed (missing modules: "
                f"{', '.join(missing)}). Install it with: pip install -e '.[local]'"
            )
        return [
            sys.executable,
            "-m",
            "localmodel.launcher",
            "--repack",
            self.repack,
            "--fast-paths",
            self.fast_paths,
            "--jump-forward",
            self.jump_forward,
            *(
                ["--prompt-cache-dir", str(self.prompt_cache_dir())]
                if self.prompt_cache == "disk"
                else []
            ),
            *self.launcher_args,
            "--",
            *self.server_arguments(),
            "--host",
            self.host,
            "--port",
            str(self.port),
        ]

    def _close_log(self) -> None:
        if self._log_fh is not None:
            with contextlib.suppress(OSError):
                self._log_fh.close()
            self._log_fh = None

    def _wait_ready(self) -> None:
        assert self.process is not None
        if self.progress:
            # Imported here: rich costs ~0.1 s, and importing this module stays cheap
            # (test_local_model.py: test_import_is_cheap).
            from rich.console import Console

            status: Any = Console(stderr=True).status(
                f"Loading local model {self.model_alias}…", spinner="dots"
            )
        else:
            status = contextlib.nullcontext()
        deadline = time.monotonic() + self.startup_timeout
        with status:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise LocalModelError(
                        f"The local model server exited during startup (exit code {code}). "
                        f"Last lines of {self.log_file}:\n{log_tail(self.log_file)}"
                    )
                if ask_server(f"{self.base_url}/models", self.api_key, timeout=2) is not None:
                    if self.process.poll() is None:  # answered by *our* server
                        return
                    continue
                if time.monotonic() > deadline:
                    raise LocalModelError(
                        f"The local model server did not become ready within "
                        f"{self.startup_timeout:.0f} s. Last lines of {self.log_file}:\n"
                        f"{log_tail(self.log_file)}"
                    )
                time.sleep(0.25)


def start_local_server(
    model: str | None = None,
    *,
    data_dir: Path,
    cache_dir: Path | None = None,
    progress: bool = True,
    **kwargs: Any,
) -> LocalModelServer:
    """Resolve ``model`` (see :func:`resolve_model_file`; the weights are assembled in
    ``cache_dir``, default ``<data_dir>/models``) and return a not-yet-started
    :class:`LocalModelServer` for it; use it as a context manager."""
    models = cache_dir if cache_dir is not None else data_dir / "models"
    model_file = resolve_model_file(model, cache_dir=models, progress=progress)
    if "model_alias" not in kwargs:
        if model is not None and model in LOCAL_MODELS:
            kwargs["model_alias"] = model
        elif model is None and not os.environ.get("LOCAL_MODEL_PATH"):
            kwargs["model_alias"] = DEFAULT_LOCAL_MODEL
    return LocalModelServer(model_file, data_dir=data_dir, progress=progress, **kwargs)
