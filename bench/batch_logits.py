"""Are llama.cpp's logits for a batch of tokens the same as for one-token decodes? (issue 25)

Jump-forward decoding (localmodel/jump_forward.py) evaluates the tokens a JSON grammar
forces as one batch. It writes the same tokens as the plain path only if a batch row's
logits equal a one-token decode's bit for bit; otherwise a near tie later in a plan can
go the other way. This script evaluates one plan's text after its prompt twice, once a
token at a time and once with some tokens in batches (as jump-forward does), and prints,
for each weight-repacking mode, the largest logit difference, how many rows are
bit-identical and how many rows' greedy choice agree. Each mode runs in its own process
(the modes patch llama.cpp at load time); a mode whose kernels crash here is reported.

    python bench/batch_logits.py                  # repack modes off and no-amx
    python bench/batch_logits.py --repack off no-amx all
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys

from _common import REPO_ROOT, Report

PROMPT = (
    "<|im_start|>user\na tent and a sleeping bag for camping, under $300 total<|im_end|>\n"
    '<|im_start|>assistant\n{"goal": "'
)
# A plan's text as the grammar makes the model write it: keys, quotes and step numbers
# are what jump-forward would batch.
PLAN_TEXT = (
    'Buy a tent and a sleeping bag for camping for $300 or less.", "steps": [{"step": 1, '
    '"action": "Search camping tents", "query": "camping tent"}, {"step": 2, '
    '"action": "Search sleeping bags", "query": "sleeping bag"}]}'
)
BATCHES = (1, 5, 1, 1, 7, 3, 1, 4, 2, 6)  # then one at a time


def measure(mode: str) -> dict[str, object]:
    """Run in a child process: the figures for one repack mode."""
    import numpy as np

    from localmodel.launcher import apply_repack_mode

    in_force = apply_repack_mode(mode)
    from llama_cpp import Llama

    from catalog.paths import data_dir
    from localmodel.weights import resolve_model_file

    path = resolve_model_file(None, cache_dir=data_dir() / "models", progress=False)
    llm = Llama(model_path=str(path), n_ctx=2048, n_threads=2, verbose=False, logits_all=True)
    prompt = llm.tokenize(PROMPT.encode(), special=True)
    text = llm.tokenize(PLAN_TEXT.encode(), add_bos=False)
    sizes = [*BATCHES, *[1] * (len(text) - sum(BATCHES))]

    def logits(batch_sizes: list[int]) -> np.ndarray:
        llm.reset()
        llm.eval(prompt)
        rows, start = [], 0
        for size in batch_sizes:
            llm.eval(text[start : start + size])
            rows.append(np.array(llm.scores[llm.n_tokens - size : llm.n_tokens]))
            start += size
        return np.concatenate(rows)

    single, batched = logits([1] * len(text)), logits(sizes)
    return {
        "mode": in_force,
        "tokens": len(text),
        "max_diff": float(np.abs(single - batched).max()),
        "identical_rows": int((single == batched).all(axis=1).sum()),
        "same_greedy": int((single.argmax(1) == batched.argmax(1)).sum()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repack", nargs="+", default=["off", "no-amx"])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return 0
    report = Report("Batched against one-token logits, embedded 1.5B model")
    rows = []
    for mode in args.repack:
        done = subprocess.run(
            [sys.executable, __file__, "--child", mode],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            check=False,
        )
        if done.returncode != 0:
            why = (
                f"crashed ({signal.Signals(-done.returncode).name})"
                if done.returncode < 0
                else f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
            )
            rows.append([mode, why, "", "", ""])
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(
            [
                f"{mode} (in force: {figures['mode']})",
                f"{figures['max_diff']:.4f}",
                f"{figures['identical_rows']} of {figures['tokens']}",
                f"{figures['same_greedy']} of {figures['tokens']}",
                "yes" if figures["identical_rows"] == figures["tokens"] else "no",
            ]
        )
    report.table(
        "Logits of a plan's text: one token at a time, and partly in batches",
        ["repack", "max |difference|", "rows bit-identical", "same greedy token", "batch-exact"],
        rows,
    )
    report.note(
        "The first row of each run is a one-token decode in both, so it matches; a mode is "
        "batch-exact only if every row does. Where none is, jump-forward cannot be proven "
        "token for token equal to the plain path, and it stays off by default."
    )
    report.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
