"""Where a plan's output tokens go, and how many of them the run uses (issue 25).

Reads the planner's answers recorded in cassettes (real traffic of the embedded model),
splits each answer into its JSON pieces (keys and punctuation, each step's number, each
search step's action, the reasoning step's action, the queries, the features, the goal)
and counts each piece's tokens with the model's own tokenizer. A piece code overwrites
or derives is waste: a step's number is its place in the list, and a search step's
action restates its query.

    python bench/plan_tokens.py                      # every recorded planner answer
    python bench/plan_tokens.py cassettes/eval-webshop-dev.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from _common import REPO_ROOT, Report

PLANNER_PROMPT_START = "You plan shopping"


def planner_answers(cassette: Path) -> list[dict[str, Any]]:
    """The plans the model wrote in one cassette (non-streamed and streamed calls)."""
    answers = []
    for interaction in yaml.safe_load(cassette.read_text())["interactions"]:
        body = json.loads(interaction["request"]["body"])
        if not str(body["messages"][0]["content"]).startswith(PLANNER_PROMPT_START):
            continue
        text = interaction["response"]["body"]["string"]
        arguments = _arguments(text)
        if arguments is not None:
            try:
                answers.append(json.loads(arguments))
            except ValueError:
                continue  # a plan the model broke off: not a plan to count
    return answers


def _arguments(text: str) -> str | None:
    if text.lstrip().startswith("{"):
        calls = json.loads(text)["choices"][0]["message"].get("tool_calls") or []
        return calls[0]["function"]["arguments"] if calls else None
    pieces = []  # server-sent events: the arguments arrive in chunks
    for line in text.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            for choice in json.loads(line[6:]).get("choices", []):
                for call in choice.get("delta", {}).get("tool_calls") or []:
                    pieces.append(call.get("function", {}).get("arguments") or "")
    return "".join(pieces) or None


def pieces_of(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, text) for every piece of the plan as the model writes it (json.dumps with
    its default separators, as the recorded answers are)."""
    out: list[tuple[str, str]] = [("structure", "{")]
    for key, value in plan.items():
        out.append(("structure", json.dumps(key) + ": "))
        if key != "steps":
            out.append((key, json.dumps(value)))
        else:
            out.append(("structure", "["))
            for step in value:
                out.append(("structure", "{"))
                search = step.get("query") is not None
                for name, field in step.items():
                    what = {
                        "step": "step number (code numbers steps)",
                        "action": "search action (restates the query)" if search else "pick action",
                    }.get(name, f"step {name}")
                    out.append((what, json.dumps(name) + ": " + json.dumps(field) + ", "))
                out.append(("structure", "}, "))
            out.append(("structure", "]"))
        out.append(("structure", ", "))
    out.append(("structure", "}"))
    return out


WASTE = ("step number (code numbers steps)", "search action (restates the query)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/plan_tokens.py", description=__doc__)
    parser.add_argument("cassettes", nargs="*", type=Path)
    parser.add_argument("--model", default=None, help="local model whose tokenizer counts")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    files = args.cassettes or sorted((REPO_ROOT / "cassettes").glob("*.yaml"))

    from llama_cpp import Llama

    from catalog.paths import data_dir
    from localmodel.weights import DEFAULT_LOCAL_MODEL, resolve_model_file

    path = resolve_model_file(
        args.model or DEFAULT_LOCAL_MODEL, cache_dir=data_dir() / "models", progress=False
    )
    tokenizer = Llama(model_path=str(path), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(tokenizer.tokenize(text.encode(), add_bos=False, special=False))

    plans = [plan for f in files for plan in planner_answers(f)]
    tokens: Counter[str] = Counter()
    whole = 0
    for plan in plans:
        whole += count(json.dumps(plan))
        for what, text in pieces_of(plan):
            tokens[what] += count(text)
    total = sum(tokens.values()) or 1
    report = Report(f"Plan output tokens: {len(plans)} recorded plans in {len(files)} cassettes")
    rows = [
        [what, n, n / len(plans), f"{100 * n / total:.0f}%", "waste" if what in WASTE else ""]
        for what, n in tokens.most_common()
    ]
    report.table("Tokens by piece", ["piece", "tokens", "per plan", "share", ""], rows)
    waste = sum(tokens[w] for w in WASTE)
    report.note(
        f"whole plans: {whole / max(len(plans), 1):.0f} tokens each (pieces counted apart: "
        f"{total / max(len(plans), 1):.0f}); overwritten or derivable in code: "
        f"{100 * waste / total:.0f}%"
    )
    report.data = {"plans": len(plans), "tokens": dict(tokens), "per_plan": whole / len(plans)}
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
