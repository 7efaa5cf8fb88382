"""The shipped llama.cpp runtime against a prebuilt one from PyPI, side by side (issue 38):
the recorded planner request of `cassettes/photo-gift.yaml` on each, twice (the second
time with the prompt cache warm), and what each answers.

    pip install xllamacpp            # the prebuilt runtime, into the same venv
    python bench/runtimes.py

Both use the same GGUF file, 2 threads and llama.cpp's own timings: the shipped server is
llama-cpp-python's (built from source for this CPU) behind the launcher; xllamacpp runs
llama.cpp's C++ server in this process. The planner request forces the `Plan` tool with a
named `tool_choice`, as the local provider sends it; xllamacpp is also asked the same
schema as `response_format` (json_schema), the form its server constrains.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import _calls
import yaml
from _common import REPO_ROOT, Report, load_average

REQUEST_CASSETTE = REPO_ROOT / "cassettes" / "photo-gift.yaml"


def recorded_request() -> dict[str, Any]:
    interaction = yaml.safe_load(REQUEST_CASSETTE.read_text())["interactions"][0]
    body = interaction["request"]["body"]
    return json.loads(body) if isinstance(body, str) else body


def answer_of(response: dict[str, Any]) -> tuple[str, bool]:
    """How the plan came back (a tool call, or text) and whether it parses as JSON."""
    message = response["choices"][0]["message"]
    if message.get("tool_calls"):
        text, how = message["tool_calls"][0]["function"]["arguments"], "tool call"
    else:
        text, how = message.get("content") or "", "text"
    try:
        json.loads(text)
    except ValueError:
        return how, False
    return how, True


def shipped(model_file: Path, body: dict[str, Any]) -> list[dict[str, Any]]:
    import httpx

    from catalog.paths import data_dir
    from localmodel.server import LocalModelServer

    rows = []
    server = LocalModelServer(
        model_file, data_dir=data_dir(), model_alias=body["model"], prompt_cache="ram"
    )
    with server:
        for turn in ("cold", "warm"):
            before = _calls.log_sizes(data_dir())
            started = time.perf_counter()
            response = httpx.post(
                f"{server.base_url}/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {server.api_key}"},
                timeout=600,
            ).json()
            wall = time.perf_counter() - started
            call = _calls.calls_since(data_dir(), before)[-1]
            rows.append(row("llama-cpp-python, tool", turn, wall, call, response))
    return rows


def prebuilt(model_file: Path, body: dict[str, Any]) -> list[dict[str, Any]]:
    from localmodel.launcher import SPIN_COUNT

    os.environ.setdefault("GOMP_SPINCOUNT", SPIN_COUNT)  # as the launcher sets it for ours
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_file)
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = min(os.cpu_count() or 1, 4)
    params.model_alias = body["model"]
    server = xllamacpp.Server(params)
    schema = body["tools"][0]["function"]["parameters"]
    as_schema = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
    as_schema.pop("parallel_tool_calls", None)
    as_schema["response_format"] = {
        "type": "json_schema",
        "json_schema": {"name": "Plan", "schema": schema, "strict": True},
    }
    rows = []
    for form, request in (("tool", body), ("json_schema", as_schema)):
        for turn in ("cold", "warm"):
            started = time.perf_counter()
            response = server.handle_chat_completions(copy.deepcopy(request))
            wall = time.perf_counter() - started
            t = response.get("timings", {})
            call = _calls.Call(
                t.get("prompt_n", 0),
                t.get("prompt_ms", 0) / 1000,
                t.get("predicted_n", 0),
                t.get("predicted_ms", 0) / 1000,
            )
            rows.append(row(f"xllamacpp, {form}", turn, wall, call, response))
    return rows


def row(
    runtime: str, turn: str, wall: float, call: _calls.Call, response: dict[str, Any]
) -> dict[str, Any]:
    how, parses = answer_of(response)
    prompt_tps, generated_tps = _calls.rates([call])
    return {
        "runtime": runtime,
        "turn": turn,
        "wall_s": wall,
        "prompt_tokens": call.prompt_tokens,
        "prompt_tps": prompt_tps,
        "generated": call.generated_tokens,
        "generated_tps": generated_tps,
        "answer": how,
        "json": parses,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/runtimes.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--model", default=None, help="local model name (default: 1.5B)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    from catalog.paths import data_dir
    from localmodel.weights import DEFAULT_LOCAL_MODEL, resolve_model_file

    load_before = load_average()
    model_file = resolve_model_file(
        args.model or DEFAULT_LOCAL_MODEL, cache_dir=data_dir() / "models", progress=False
    )
    body = recorded_request()
    rows = shipped(model_file, body)
    try:
        rows += prebuilt(model_file, body)
        import xllamacpp

        built_for = f"{xllamacpp.__version__}: {xllamacpp.get_system_info().strip()}"
    except ImportError:
        built_for = "xllamacpp not installed: pip install xllamacpp"
    report = Report("llama.cpp runtimes: the planner request of cassettes/photo-gift.yaml")
    report.table(
        "One request each, 2 threads, llama.cpp's own timings",
        [
            "runtime",
            "turn",
            "whole s",
            "prompt tok",
            "prompt tok/s",
            "generated",
            "generated tok/s",
            "plan came back as",
            "valid JSON",
        ],
        [
            [
                r["runtime"],
                r["turn"],
                f"{r['wall_s']:.1f}",
                r["prompt_tokens"],
                f"{r['prompt_tps']:.0f}",
                r["generated"],
                f"{r['generated_tps']:.1f}",
                r["answer"],
                "yes" if r["json"] else "no",
            ]
            for r in rows
        ],
    )
    report.note(
        "tool: the request as recorded (the Plan tool, forced by a named tool_choice); "
        "json_schema: the same schema as response_format, without the tool"
    )
    report.note(f"xllamacpp's build: {built_for}")
    report.note(f"CPU flags: {_calls.cpu_flags()}; cores: {os.cpu_count()}")
    report.note(f"load average before: {load_before}; after: {load_average()}")
    report.data = {"rows": rows}
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
