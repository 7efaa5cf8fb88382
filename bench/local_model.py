"""The embedded local model, end to end: model load, plan latency and a whole request.

Run by hand, not in CI, on otherwise idle cores (it prints the load average before and
after: figures taken while another model or build runs are not comparable):

    python bench/local_model.py                               # qwen2.5-coder-1.5b
    python bench/local_model.py --model qwen2.5-coder-0.5b
    python bench/local_model.py --runs 2 --json out.json
    python bench/local_model.py --repack all no-amx off       # repack modes side by side

Steps: resolve the model file (graph.local_model.resolve_model_file: assembles the GGUF
from the installed part packages on first use, timed apart), start llama.cpp's server
(start_local_server; "model load" = start until the server answers), then with the graph
(provider local, tool mode direct, MemorySaver): a plan only (the run pauses at the
approval interrupt) and a whole request of about 4 steps, auto-approved.

llama.cpp reuses the KV cache of a prompt prefix it has just seen, so a plan timed right
after the same plan would skip reading its prompt. Before each timed run the bench sends
an unrelated one-token completion, so every figure is what a fresh `python -m graph.run`
sees: the whole prompt read, nothing cached.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from _common import Report, load_average, median

PLAN_TARGET_S = 20.0
REQUEST_TARGET_S = 90.0
# Asks for three kinds of item, so the plan is three searches and one reasoning step.
REQUEST = "running shoes, a water bottle and a running cap, $200 total"


def clear_prefix_cache(base_url: str, alias: str) -> None:
    """Make the server's next prompt share no prefix with the planner or reasoning prompts."""
    import httpx

    body = {"model": alias, "prompt": "0", "max_tokens": 1, "temperature": 0}
    httpx.post(f"{base_url}/completions", json=body, timeout=120).raise_for_status()


def run_request(chat_model: Any, alias: str, *, auto_approve: bool) -> tuple[float, dict]:
    from langgraph.checkpoint.memory import MemorySaver

    from graph.builder import build_graph
    from graph.context import Context
    from graph.session import approve_all, start, stay_paused

    graph = build_graph(checkpointer=MemorySaver())
    context = Context(
        provider="local", model=alias, chat_model=chat_model, auto_approve=auto_approve
    )
    started = time.perf_counter()
    # Without auto-approval the run stops at its plan: that times planning alone.
    result = start(graph, REQUEST, context, approve_all if auto_approve else stay_paused)
    return time.perf_counter() - started, result


def measure(model: str, repack: str, runs: int, threads: int | None) -> dict[str, Any]:
    """Start a server with weight-repack mode `repack`, then time `runs` plans and requests."""
    from graph.local_model import start_local_server
    from graph.providers import make_chat_model

    plans: list[float] = []
    requests: list[float] = []
    details: list[list[Any]] = []
    plan_tokens: list[tuple[int, int]] = []
    kwargs: dict[str, Any] = {"n_threads": threads} if threads else {}
    server = start_local_server(model, progress=False, repack=repack, **kwargs)
    started = time.perf_counter()
    with server:
        load_s = time.perf_counter() - started
        chat_model = make_chat_model(
            "local", server.model_alias, max_output_tokens=512, base_url=server.base_url
        )
        for number in range(1, runs + 1):
            clear_prefix_cache(server.base_url, server.model_alias)
            seconds, result = run_request(chat_model, server.model_alias, auto_approve=False)
            plans.append(seconds)
            state = result.values
            steps = len(state["plan"].steps) if state.get("plan") else 0
            usage = state["planner_usage"]
            plan_tokens.append((usage.input_tokens, usage.output_tokens))
            details.append([server.repack, f"plan {number}", f"{seconds:.1f}", steps, "-", "-"])
            clear_prefix_cache(server.base_url, server.model_alias)
            seconds, result = run_request(chat_model, server.model_alias, auto_approve=True)
            requests.append(seconds)
            state = result.values
            results = state.get("step_results", [])
            outcome = state.get("outcome")
            picks = ", ".join(p.id for p in outcome.picks) if outcome else "-"
            details.append(
                [
                    server.repack,
                    f"request {number}",
                    f"{seconds:.1f}",
                    len(results),
                    result.totals.llm_calls,
                    picks,
                ]
            )
        rss_mb = server.rss_mb() or float("nan")
        log_lines = server.log_file.read_text(errors="replace").splitlines()
    return {
        "repack": server.repack,
        "load_s": load_s,
        "plans_s": plans,
        "requests_s": requests,
        "plan_tokens": plan_tokens,
        "server_rss_mb": rss_mb,
        "details": details,
        # What llama.cpp itself says it did with the weights, to check the mode took effect.
        "repacked_buffers": sum("REPACK" in line and "buffer size" in line for line in log_lines),
        "amx_refused": any("AMX is not ready" in line for line in log_lines),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/local_model.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--model", default=None, help="local model name (default: 1.5B)")
    parser.add_argument("--runs", type=int, default=1, help="plans and requests to time")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument(
        "--repack",
        nargs="+",
        default=["auto"],
        choices=["auto", "all", "no-amx", "off"],
        help="weight-repack modes to measure side by side (LOCAL_MODEL_REPACK; default auto)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    from graph.local_model import DEFAULT_LOCAL_MODEL, cpu_has_amx, resolve_model_file

    model = args.model or DEFAULT_LOCAL_MODEL
    load_before = load_average()
    report = Report(f"Local model {model}: load, plan and whole request")
    started = time.perf_counter()
    resolve_model_file(model, progress=False)
    resolve_s = time.perf_counter() - started

    figures = [measure(model, mode, args.runs, args.threads) for mode in args.repack]
    report.table(
        "Runs (s)",
        ["repack", "run", "seconds", "plan steps", "LLM calls", "picks"],
        [row for figure in figures for row in figure["details"]],
    )
    baseline = figures[0]
    summary = [["resolve model file (assembled once, then cached)", resolve_s, "", ""]]
    for figure in figures:
        for label, key in (
            ("model load (server start until ready)", "load_s"),
            ("plan (median)", "plans_s"),
            ("whole request (median)", "requests_s"),
        ):
            value = figure[key] if key == "load_s" else median(figure[key])
            base = baseline[key] if key == "load_s" else median(baseline[key])
            summary.append([label, value, figure["repack"], f"{value / base:.2f}x"])
    report.table("Summary", ["figure", "seconds", "repack", f"vs {baseline['repack']}"], summary)
    for figure in figures:
        report.note(
            f"repack {figure['repack']}: planner tokens (prompt, output) per plan: "
            + ", ".join(f"({read:,}, {written:,})" for read, written in figure["plan_tokens"])
            + f"; server RSS after the runs: {figure['server_rss_mb']:,.0f} MB; "
            f"repacked weight buffers in the server log: {figure['repacked_buffers']}; "
            f"AMX refused: {figure['amx_refused']}"
        )
    report.target(
        "plan latency",
        f"{median(baseline['plans_s']):.1f} s",
        f"<= {PLAN_TARGET_S:.0f} s",
        median(baseline["plans_s"]) <= PLAN_TARGET_S,
    )
    report.target(
        "whole ~4-step request",
        f"{median(baseline['requests_s']):.1f} s",
        f"<= {REQUEST_TARGET_S:.0f} s",
        median(baseline["requests_s"]) <= REQUEST_TARGET_S,
    )
    report.note(f"load average before: {load_before}; after: {load_average()}")
    report.note(
        f"request: {REQUEST!r}; llama.cpp threads: {args.threads or 'default'}; "
        f"cores: {os.cpu_count()}; CPU reports AMX: {cpu_has_amx()}"
    )
    report.data = {
        "resolve_s": resolve_s,
        **{k: v for k, v in baseline.items() if k != "details"},
        "by_repack": [{k: v for k, v in f.items() if k != "details"} for f in figures],
    }
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
