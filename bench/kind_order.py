"""Does the follow-up kind question follow the order of its list? (issue 40: a choice
among fixed options must not.) Every dev follow-up's kind is asked of the model, one word
back (graph/nodes.py: _read_kind), with the six kinds listed in each of their six
rotations, so each kind stands once at each place; the worked answers are the same.

    python bench/kind_order.py [--json out.json] [--smoke]

Prints, for each rotation, how many answers are the expected kind and how many differ
from the shipped order's; then the same for a vote over the six (the most named kind, a
tie no kind). The model's answer alone is measured: code's checks of it
(graph/shaping/follow_up.py: checked_statement) come after. Needs the embedded model
(the `local` extra); about 400 calls, some 6 minutes warm on 2 cores. --smoke asks a
fake model that names the first kind listed, of a few follow-ups: it must show them all
moved.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from _common import TESTS_DIR, Report
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

import graph.prompts as prompts
from graph.context import Context
from graph.evals.follow_ups import load_cases
from graph.nodes import _one_word
from graph.providers.models import chat_model_session

DEV_SETS = ("follow_ups_dev.json", "follow_ups_new.json")


def cases() -> list[tuple[str, str, list[str]]]:
    """(earlier request, follow-up, expected kinds) of every dev follow-up."""
    found = []
    for name in DEV_SETS:
        for case in load_cases(TESTS_DIR / "fixtures" / name):
            kind = case.expect["kind"]
            found.append((case.first, case.follow_up, [kind] if isinstance(kind, str) else kind))
    return found


class FirstListedFake(BaseChatModel):
    """A fake model for --smoke: it answers the first kind its question lists, as a model
    that follows the list's order wholly would."""

    @property
    def _llm_type(self) -> str:
        return "fake-first-listed"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        listed = str(messages[0].content).split("one word:\n", 1)[1]
        answer = AIMessage(content=listed.split(":", 1)[0])
        return ChatResult(generations=[ChatGeneration(message=answer)])


def vote(answers: list[str]) -> str | None:
    (top, most), *rest = Counter(answers).most_common()
    return None if rest and rest[0][1] == most else top


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--smoke", action="store_true", help="a fake model, 4 follow-ups")
    args = parser.parse_args()
    shipped = list(prompts.FOLLOW_UP_KIND_MEANINGS.items())
    asked = cases()[:4] if args.smoke else cases()
    model = Context(chat_model=FirstListedFake()) if args.smoke else Context(provider="local")
    answers: list[list[str]] = [[] for _ in asked]  # per case, one per rotation
    with chat_model_session(model) as context:
        for turn in range(len(shipped)):
            prompts.FOLLOW_UP_KIND_MEANINGS = dict(shipped[turn:] + shipped[:turn])
            for n, (earlier, words, _) in enumerate(asked):
                word, _ = _one_word(context, prompts.follow_up_kind_messages(earlier, words))
                answers[n].append(word.strip(".,:;!"))
    prompts.FOLLOW_UP_KIND_MEANINGS = dict(shipped)
    report = Report("Follow-up kind by the order of its list")
    rows = []
    for turn in range(len(shipped)):
        order = ", ".join(k for k, _ in shipped[turn:] + shipped[:turn])
        right = sum(a[turn] in expected for a, (_, _, expected) in zip(answers, asked, strict=True))
        changed = sum(a[turn] != a[0] for a in answers)
        rows.append((order, f"{right}/{len(asked)}", changed))
    votes = [vote(a) for a in answers]
    right = sum(v in expected for v, (_, _, expected) in zip(votes, asked, strict=True))
    rows.append(
        (
            "vote of the six",
            f"{right}/{len(asked)}",
            sum(v != a[0] for v, a in zip(votes, answers, strict=True)),
        )
    )
    report.table(
        "follow-up kind, by the order of the list",
        ["kinds listed", "expected kind", "differs from shipped"],
        rows,
    )
    moved = sum(len(set(a)) > 1 for a in answers)
    report.target("answered otherwise in some order", f"{moved} of {len(asked)}", "0", moved == 0)
    report.data = {"answers": answers, "expected": [expected for _, _, expected in asked]}
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
