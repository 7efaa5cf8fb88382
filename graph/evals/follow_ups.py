"""Follow-up evaluation (issue 26): each dev case runs its first request, then its
follow-up on a new thread linked to it, both approved as planned, and scores the checks
the case states (tests/fixtures/follow_ups_dev.json describes them; the command line:
graph/evals/main.py). A revision (issue 41) is scored with the same checks: its request
is planned, the plan changed in the case's words at approval, and the revision run
(tests/fixtures/revisions_dev.json; `--revisions`).

Threads are `followup-{label}-{id}-first` and `-next`, so a rerun reads back the runs
that finished and resumes the rest. A case passes when both runs finished and every check
holds; the figure is passed/total.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from catalog import CatalogBackend, SearchArgs
from catalog.terminal import terminal_markup
from catalog.text import product_words, same_word, stem, title_heads
from graph.context import Context
from graph.evals.driver import EvalReport, Note, run_cases
from graph.evals.inputs import EvalInputError
from graph.evals.overrides import (
    as_listed,
    first_shown,
    judged,
    override_counts,
    overrides_cell,
    overrides_of,
)
from graph.runs.approval import ApprovalDecision, ApprovalRequest
from graph.runs.session import approve_all, run_thread
from graph.runs.threads import ShoppingGraph
from graph.schemas import PlanStep, ProductSummary
from graph.state import plan_that_runs
from graph.tools import catalog_for

CHECKS = tuple(
    "kind cap_below_pick searches_below_pick floor_above_pick not_below_pick missing kept "
    "dropped new_item max_price min_rating budget carried uncapped min_price feature".split()
)


class FollowUpFileError(EvalInputError):
    """The follow-up file is not a list of cases with known checks."""


@dataclass(frozen=True)
class FollowUpCase:
    id: str
    first: str
    follow_up: str
    expect: Mapping[str, Any]


def load_cases(path: Path, key: str = "follow_ups") -> list[FollowUpCase]:
    """The cases of a follow-up file (or, `key` "revisions", of a revision file: a
    request and the words that change its plan); FollowUpFileError naming the first bad one."""
    words = "follow_up" if key == "follow_ups" else "words"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data[key]
        cases = [
            FollowUpCase(str(r["id"]), str(r["first"]), str(r[words]), dict(r["expect"]))
            for r in records
        ]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise FollowUpFileError(f"{path}: not a follow-up file ({error})") from None
    for case in cases:
        unknown = set(case.expect) - set(CHECKS)
        if unknown:
            raise FollowUpFileError(
                f"{path}: case {case.id!r} has unknown checks {sorted(unknown)}"
            )
    return cases


def _words(words: Sequence[str]) -> set[str]:
    return {stem(w) for text in words for w in product_words(text)}


def _named(picks: Sequence[ProductSummary], words: Sequence[str]) -> list[ProductSummary]:
    wanted = _words(words)
    return [p for p in picks if wanted & {stem(w) for w in product_words(p.title)}]


def score_case(
    case: FollowUpCase, first: Mapping[str, Any], second: Mapping[str, Any], catalog: CatalogBackend
) -> dict[str, bool]:
    """Each check the case states, True where it holds."""
    expect = case.expect
    first_picks = list(first["outcome"].picks) if first.get("outcome") else []
    outcome = second.get("outcome")
    picks = list(outcome.picks) if outcome else []
    picked = {p.id for p in picks}
    plan = plan_that_runs(second)
    searches = plan.search_steps if plan else []
    follow_up = second.get("follow_up")
    kept_ids = {p.id for p in follow_up.kept} if follow_up else set()
    new_picks = [p for p in picks if p.id not in kept_ids]
    limits = second.get("stated_limits")
    carried = set(limits.carried) if limits else set()
    checks: dict[str, bool] = {}
    if "kind" in expect:
        kinds = expect["kind"] if isinstance(expect["kind"], list) else [expect["kind"]]
        checks["kind"] = follow_up is not None and follow_up.kind in kinds
    # Where the shop holds nothing cheaper of that kind, "none cheaper" is the answer
    # (no new pick of it, and it is named missing), and the expected new pick cannot be.
    none_cheaper = False
    if "cap_below_pick" in expect:
        referenced = _named(first_picks, expect["cap_below_pick"])
        none_cheaper = _none_cheaper(referenced, searches, new_picks, outcome, catalog)
        checks["cap_below_pick"] = none_cheaper or _cap_below(referenced, searches, new_picks)
    if "searches_below_pick" in expect:
        referenced = _named(first_picks, expect["searches_below_pick"])
        checks["searches_below_pick"] = len(referenced) == 1 and _searches_below(
            referenced[0].price, searches
        )
    if "floor_above_pick" in expect:
        referenced = _named(first_picks, expect["floor_above_pick"])
        price = referenced[0].price if len(referenced) == 1 else None
        checks["floor_above_pick"] = (
            price is not None
            and bool(searches)
            and all(s.min_price is not None and s.min_price > price for s in searches)
            and bool(new_picks)
            and all(p.price > price for p in new_picks)
        )
    if "not_below_pick" in expect:
        referenced = _named(first_picks, expect["not_below_pick"])
        checks["not_below_pick"] = len(referenced) == 1 and not any(
            s.max_price is not None and s.max_price < referenced[0].price for s in searches
        )
    if "missing" in expect:
        wanted = _words(expect["missing"])
        reported = [m for m in outcome.missing if wanted & _words([m.query])] if outcome else []
        checks["missing"] = bool(reported) and not _named(new_picks, expect["missing"])
    if "kept" in expect:
        named = _named(first_picks, expect["kept"])
        checks["kept"] = bool(named or not expect["kept"]) and all(p.id in picked for p in named)
    if "dropped" in expect:
        # The item given up is gone: its earlier pick, and any new pick of its kind.
        gone = not {p.id for p in _named(first_picks, expect["dropped"])} & picked
        checks["dropped"] = gone and not _named(new_picks, expect["dropped"])
    if "new_item" in expect:
        checks["new_item"] = none_cheaper or bool(_named(new_picks, expect["new_item"]))
    if "max_price" in expect:
        cap = expect["max_price"]
        checks["max_price"] = bool(searches) and all(
            s.max_price is not None and s.max_price <= cap for s in searches
        )
    if "min_rating" in expect:
        floor = expect["min_rating"]
        checks["min_rating"] = bool(searches) and all(
            s.min_rating is not None and s.min_rating >= floor for s in searches
        )
    if "budget" in expect:
        budget = expect["budget"]
        checks["budget"] = (
            outcome is not None
            and outcome.budget == budget
            and outcome.total_price <= budget + 0.005
            # The kept picks are in the total: it is the sum of every pick.
            and abs(outcome.total_price - sum(p.price for p in picks)) < 0.005
        )
    if "carried" in expect:
        wanted = set(expect["carried"])
        checks["carried"] = wanted <= carried if wanted else not carried
    if "uncapped" in expect:
        uncapped = all(s.max_price is None for s in searches)
        checks["uncapped"] = uncapped == bool(expect["uncapped"])
    if "min_price" in expect:
        floor = expect["min_price"]
        checks["min_price"] = bool(searches) and all(
            s.min_price is not None and s.min_price >= floor for s in searches
        )
    if "feature" in expect and plan is not None:
        said = _words([*plan.features, *(s.query or "" for s in searches)])
        checks["feature"] = _words(expect["feature"]) <= said
    return checks


def _cap_below(
    referenced: list[ProductSummary], searches: Sequence[Any], new_picks: list[ProductSummary]
) -> bool:
    """Every search is capped below the referenced first-run pick, and so is each new pick."""
    if len(referenced) != 1 or not searches or not new_picks:
        return False
    price = referenced[0].price
    return _searches_below(price, searches) and all(p.price < price for p in new_picks)


def _none_cheaper(
    referenced: list[ProductSummary],
    searches: Sequence[Any],
    new_picks: list[ProductSummary],
    outcome: Any,
    catalog: CatalogBackend,
) -> bool:
    """The shop holds nothing titled as the referenced pick's kind below its price (the
    first run took its cheapest); every search was capped below it, nothing new was
    picked, and the outcome names the item missing."""
    if len(referenced) != 1 or new_picks or outcome is None:
        return False
    pick = referenced[0]
    kind = next(iter(title_heads(pick.title)), "")
    named = any(same_word(kind, w) for m in outcome.missing for w in product_words(m.query))
    if not (kind and named and _searches_below(pick.price, searches)):
        return False  # decided without asking the catalog
    found = catalog.search(SearchArgs(kind, max_price=round(pick.price - 0.01, 2), limit=50))
    return not any(same_word(kind, k) for h in found for k in title_heads(h.product.title))


def _searches_below(price: float, searches: Sequence[Any]) -> bool:
    return bool(searches) and all(s.max_price is not None and s.max_price < price for s in searches)


@dataclass
class CaseResult:
    id: str
    first: str
    follow_up: str
    passed: bool = False
    checks: dict[str, bool] = field(default_factory=dict)
    first_picks: list[str] = field(default_factory=list)
    picks: list[str] = field(default_factory=list)
    # The follow-up's kind as the planner read it and as it ran (code may overrule it).
    planner_kind: str | None = None
    kind: str | None = None
    expected_kinds: list[str] = field(default_factory=list)
    # Code's changes to the model's plan of the run scored, judged where the case names
    # the item it wants (new_item): graph/evals/overrides.py.
    overrides: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass
class FollowUpReport(EvalReport):
    label: str
    follow_ups_file: str
    provider: str | None
    model: str | None
    results: list[CaseResult]

    def summary(self) -> dict[str, Any]:
        return {
            "passed": self.count("passed"),
            "total": len(self.results),
            "overrides": {
                "follow-up kind": kind_overrides(self.results),
                **override_counts(r.overrides for r in self.results),
            },
        }


def kind_overrides(results: Sequence[CaseResult]) -> dict[str, int]:
    """Where code ran another follow-up kind than the planner read (or read one where the
    planner gave none), on the cases that state the right kind: how often code was right,
    and how often the planner alone would have been."""
    overruled = [
        r for r in results if r.expected_kinds and r.kind is not None and r.kind != r.planner_kind
    ]
    return {
        "overruled": len(overruled),
        "code_right": sum(r.kind in r.expected_kinds for r in overruled),
        "planner_right": sum(r.planner_kind in r.expected_kinds for r in overruled),
    }


def run_follow_ups_eval(
    cases: Sequence[FollowUpCase],
    context: Context,
    graph: ShoppingGraph,
    *,
    label: str,
    follow_ups_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> FollowUpReport:
    """Run each case's first request and its follow-up (auto-approved) and score them."""

    def run(result: CaseResult, case: FollowUpCase, note: Note) -> None:
        first_thread = f"followup-{label}-{case.id}-first"
        first = run_thread(graph, first_thread, case.first, context, approve_all).values
        second = run_thread(
            graph,
            f"followup-{label}-{case.id}-next",
            case.follow_up,
            context,
            approve_all,
            follow_up_of=first_thread,
        ).values
        result.first_picks = [p.id for p in first["outcome"].picks]
        result.picks = [p.id for p in second["outcome"].picks] if second.get("outcome") else []
        follow_up = second.get("follow_up")
        if follow_up is not None:
            result.planner_kind, result.kind = follow_up.planner_kind, follow_up.kind
        expected = case.expect.get("kind", [])
        result.expected_kinds = expected if isinstance(expected, list) else [expected]
        result.checks = score_case(case, first, second, catalog_for(context))
        result.passed = bool(result.checks) and all(result.checks.values())
        result.overrides = judged_searches(case, second, catalog_for(context))

    results = run_cases(
        cases, "case", _start, run, _line, name=_name, limit=limit, progress=progress
    )
    return FollowUpReport(label, follow_ups_file, context.provider, context.model, results)


def _start(index: int, case: FollowUpCase) -> CaseResult:
    return CaseResult(case.id, case.first, case.follow_up)


def _line(result: CaseResult) -> str:
    failed = [name for name, ok in result.checks.items() if not ok]
    return "pass" if result.passed else terminal_markup(f"fail {failed or ''}".strip(), 300)


def _name(index: int, case: FollowUpCase) -> str:
    return terminal_markup(case.id, 40)


def markdown_table(report: dict[str, Any]) -> str:
    lines = ["| case | passed | failed checks | first picks | picks |", "|---|---|---|---|---|"]
    for r in report["results"]:
        failed = ", ".join(n for n, ok in r["checks"].items() if not ok) or (r["error"] or "")
        lines.append(
            f"| {r['id']} | {'yes' if r['passed'] else 'no'} | {failed} | "
            f"{' '.join(r['first_picks'])} | {' '.join(r['picks'])} |"
        )
    summary = report["summary"]
    lines.append(f"\n{summary['passed']}/{summary['total']} follow-ups pass ({report['label']})")
    kind = summary.get("overrides", {}).get("follow-up kind")
    if kind:
        lines.append(
            f"follow-up kind: code overruled the planner {kind['overruled']} times; code "
            f"right {kind['code_right']}, the planner alone right {kind['planner_right']}"
        )
    searches = {k: v for k, v in summary.get("overrides", {}).items() if k != "follow-up kind"}
    if searches:
        lines.append(
            f"code's changes to the model's searches: {overrides_cell({'overrides': searches})}"
        )
    return "\n".join(lines)


def compare_table(reports: list[dict[str, Any]]) -> str:
    """Follow-up (or revision) reports side by side: which cases pass in each, then each
    report's total."""
    passed = [{r["id"]: r["passed"] for r in report["results"]} for report in reports]
    cases = dict.fromkeys(case for report in passed for case in report)
    lines = ["| case | " + " | ".join(r["label"] for r in reports) + " |"]
    lines.append("|---" * (len(reports) + 1) + "|")
    for case in cases:
        cells = (("yes" if p[case] else "no") if case in p else "–" for p in passed)
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    totals = (f"{r['summary']['passed']}/{r['summary']['total']}" for r in reports)
    lines.append("| passed | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def judged_searches(
    case: FollowUpCase, values: Mapping[str, Any], catalog: CatalogBackend
) -> list[dict[str, Any]]:
    """The searches code changed in the run scored (`values`), judged where the case
    names the items it wants (new_item, kept): right when the search's first five, within
    its cap, hold a product of one of those names. None judged otherwise."""
    wanted = [*case.expect.get("new_item", []), *case.expect.get("kept", [])]
    plan = values.get("plan")
    if not wanted or plan is None:
        return []
    not_searches = ("kept named by a shelf", "pick decided in code")
    searches = [o for o in overrides_of(values) if o.name not in not_searches]

    def shows_what_it_wants(step: PlanStep) -> bool:
        shown = first_shown(catalog, step, plan.budget)
        return bool(_named([ProductSummary.of(product) for product in shown], wanted))

    return as_listed(judged(searches, shows_what_it_wants, open_ended=False))


def run_revisions_eval(
    cases: Sequence[FollowUpCase],
    context: Context,
    graph: ShoppingGraph,
    *,
    label: str,
    revisions_file: str = "",
    limit: int | None = None,
    progress: bool = True,
) -> FollowUpReport:
    """Plan each case's request, change the plan once in its words (`{"revise": ...}` at
    approval), approve what comes back and score the run: the follow-up checks, with no
    earlier picks (an item kept is one the run still picks, as an added one is), and
    `revised`, that the change was made rather than refused."""
    context = replace(context, auto_approve=False)  # asked: the words are its answer

    def run(result: CaseResult, case: FollowUpCase, note: Note) -> None:
        def answer(request: ApprovalRequest) -> ApprovalDecision:
            if request.error:
                note(request.error)
            if request.revision is not None or request.error is not None:
                return ApprovalDecision(True)  # the revision, or the plan a refusal kept
            return ApprovalDecision(False, revise=case.follow_up)

        values = run_thread(graph, f"revise-{label}-{case.id}", case.first, context, answer).values
        revisions = values.get("revisions") or []
        outcome = values.get("outcome")
        result.picks = [p.id for p in outcome.picks] if outcome else []
        kept = case.expect.get("kept", [])
        expect = {name: value for name, value in case.expect.items() if name != "kept"}
        result.checks = {
            "revised": len(revisions) == 1,
            **({"kept": bool(outcome and _named(outcome.picks, kept))} if kept else {}),
            **score_case(replace(case, expect=expect), {}, values, catalog_for(context)),
        }
        result.passed = all(result.checks.values())
        result.overrides = judged_searches(case, values, catalog_for(context))

    results = run_cases(
        cases, "case", _start, run, _line, name=_name, limit=limit, progress=progress
    )
    return FollowUpReport(label, revisions_file, context.provider, context.model, results)
