"""The recommendation, chosen in code from what the search steps found. No LLM call and
no replanning happens here.

A plan recommends one product per item it searched for (`Plan.pick == "each"`), or the
single best product among all the kinds it searched (`"one"`, an open-ended gift). Every
step's limits hold, and the total stays within the plan's budget whenever some choice of
one product per item does: a combinatorial choice, made exactly here over each search's
whole pool (tools.POOL_DEPTH matches), not only the few rows a model was shown.

Among the choices that fit, the one a shopper would take: the kind searched for, then (a
gift's pick across kinds) a kind as near the request by meaning as any, then the wanted
features matched (Candidate.coverage), then whether it names the compound the
query ends with (Candidate.names_compound), then the model's own pick, then rating, then
search rank. So the model's pick stands unless another candidate covers the request
better, and it breaks ties. When nothing fits, the cheapest choice is shown, with how
far over it is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from catalog import money
from graph.choosing.picks import Candidate
from graph.schemas import Plan

Score = tuple[float, ...]
Scorer = Callable[[Candidate], Score]
CENT = 0.005  # prices are in cents: a total this close to the budget is at the budget


@dataclass(frozen=True)
class Item:
    """One thing to buy: the queries that searched for it, and its candidates (each
    product once, at its best rank)."""

    query: str
    options: tuple[Candidate, ...]
    step: int  # its first search step (Candidate.item), which names it among the plan's


@dataclass
class Choice:
    """What code recommends: one candidate per item it could fill, whether that fits every
    limit and the budget, one line per pick on why, and notes for the shopper."""

    picks: list[Candidate] = field(default_factory=list)
    fits: bool = True
    reasons: dict[str, str] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)  # per pick id: the item it fills
    notes: list[str] = field(default_factory=list)


def items_of(plan: Plan, candidates: list[Candidate]) -> list[Item]:
    """The plan's items (Candidate.item: its search steps, those for one kind merged);
    with `pick == "one"`, every kind searched is one item. Only products of the kind
    searched for are options (a search for "running shoes" under $100 that
    shows only vests has found no option)."""
    group = {c.source_step: c.item for c in candidates}
    if plan.pick == "one":
        group = dict.fromkeys(group, min(group, default=0))
    best: dict[int, dict[str, Candidate]] = defaultdict(dict)
    for candidate in candidates:
        if not candidate.of_searched_kind:
            continue
        options = best[group[candidate.source_step]]
        known = options.get(candidate.summary.id)
        if known is None or _order(candidate) < _order(known):
            options[candidate.summary.id] = candidate
    items = []
    for first in sorted(best):
        steps = [s for s, g in sorted(group.items()) if g == first]
        queries = [plan.steps[s - 1].query or "" for s in steps]
        items.append(Item(" / ".join(dict.fromkeys(queries)), tuple(best[first].values()), first))
    return items


def fillable_items(plan: Plan, candidates: list[Candidate]) -> list[Item]:
    """The items a recommendation fills: those with options, but an item is left out
    (and so named missing) when its options are all products the items before it need, as
    a product answers one item only (a tent found by the footprint search too)."""
    kept: list[Item] = []
    for item in items_of(plan, candidates):
        grown = [*kept, item]
        if item.options and best_combination([i.options for i in grown], _cheapness, None):
            kept = grown
    return kept


def _order(candidate: Candidate) -> tuple[bool, int]:
    return not candidate.shown, candidate.rank


def choose(plan: Plan, candidates: list[Candidate], model_ids: list[str]) -> Choice:
    """The recommendation for `plan` from `candidates`, the model's picks (`model_ids`, in
    its order) kept where nothing covers the request better."""
    items = fillable_items(plan, candidates)
    if not items:
        return Choice(fits=False)
    wanted, outdone = _model_pick_per_item(plan, items, model_ids)
    standing = {i for index, i in wanted.items() if index not in outdone}
    score = pick_score(plan, standing)
    fitting = [tuple(c for c in item.options if c.within_limits) for item in items]
    best = best_combination(fitting, score, plan.budget)
    if best is not None:
        choice = Choice(picks=list(best))
    else:
        # Nothing fits every limit: the cheapest choice of what best names each kind (a
        # bottle, not a belt with a bottle holder), so the shopper sees how far off.
        closest = [_best_typed(item.options, plan) for item in items]
        cheapest = best_combination(closest, _cheapness, None)
        assert cheapest is not None  # every item has an option, and no budget applies
        choice = Choice(list(cheapest), fits=False, notes=_over_notes(plan, items, list(cheapest)))
    for index, (item, pick) in enumerate(zip(items, choice.picks, strict=True)):
        reason = _reason(plan, item, pick, choice, score, wanted.get(index), outdone.get(index))
        choice.reasons[pick.summary.id] = reason
        choice.items[pick.summary.id] = item
    return choice


def _kind(candidate: Candidate, plan: Plan) -> float:
    return coverage_of(candidate, plan)[0]


def _near_request(candidate: Candidate, plan: Plan) -> float:
    return float(candidate.near_request)


def _features(candidate: Candidate, plan: Plan) -> float:
    return coverage_of(candidate, plan)[1]


def _names_compound(candidate: Candidate, plan: Plan) -> float:
    return float(candidate.names_compound)


# What the request asks of a pick, weightiest first: the kind searched for, a kind as near
# the request by meaning as any (a gift's), the wanted features matched, the compound its
# query ends with. The one definition: code decides a pick step on these (decided.py),
# and the model's pick, rating and rank only break their ties (pick_score), so a check
# added here changes both. Which kind of gift suits the person is the model's to judge
# first, though: code asks it whatever the nearness (`by_meaning=False`), and overrules
# a pick of a kind further from the request only in the choice.
REQUEST_CHECKS: tuple[Callable[[Candidate, Plan], float], ...] = (
    _kind,
    _near_request,
    _features,
    _names_compound,
)


def request_score(candidate: Candidate, plan: Plan, *, by_meaning: bool = True) -> Score:
    return tuple(
        check(candidate, plan)
        for check in REQUEST_CHECKS
        if by_meaning or check is not _near_request
    )


def pick_score(plan: Plan, model_picks: set[str]) -> Scorer:
    """The pick score: the request's checks, then the model's pick, rating, search rank."""

    def score(candidate: Candidate) -> Score:
        tie_breaks = (
            float(candidate.summary.id in model_picks),
            candidate.summary.rating or 0.0,
            -candidate.rank,
        )
        return (*request_score(candidate, plan), *tie_breaks)

    return score


def coverage_of(candidate: Candidate, plan: Plan) -> tuple[float, int]:
    """Candidate.coverage, counting features only when the plan states some: with none,
    candidates were checked against the goal's words, which in a bundle name the other
    items too (a strap whose text says "zoom lens" would gain from the kit's words)."""
    kind, features = candidate.coverage
    return kind, features if plan.features else 0


def _best_typed(options: tuple[Candidate, ...], plan: Plan) -> tuple[Candidate, ...]:
    best = max(coverage_of(c, plan)[0] for c in options)
    return tuple(c for c in options if coverage_of(c, plan)[0] == best)


def _cheapness(candidate: Candidate) -> Score:
    return (-candidate.summary.price, -candidate.rank)


def _model_pick_per_item(
    plan: Plan, items: list[Item], model_ids: list[str]
) -> tuple[dict[int, str], dict[int, Candidate]]:
    """Each item's model pick, by the item's index: the first id the model named among
    its options (a "one" plan has one item, so one pick). A pick another option
    dominates (outdoes) is no tie-break: the model's word is an opinion among equals, not
    a veto over a product better on every count. Those are returned apart, each with
    the option that outdoes it, for the why-line."""
    picks: dict[int, str] = {}
    outdone: dict[int, Candidate] = {}
    for index, item in enumerate(items):
        first = next((c for i in model_ids for c in item.options if c.summary.id == i), None)
        if first is None:
            continue
        picks[index] = first.summary.id
        better = [c for c in item.options if outdoes(c, first, plan)]
        if better:
            outdone[index] = max(better, key=lambda c: (c.summary.rating or 0, -c.rank))
    return picks, outdone


def outdoes(other: Candidate, pick: Candidate, plan: Plan) -> bool:
    """Whether `other` is better than `pick` on every count a shopper weighs: within
    every limit, no less of the kind and of every request check, every wanted feature
    the pick has, rated higher, and no dearer (so the total still holds)."""
    return (
        other.within_limits
        and other.titled_as_kind >= pick.titled_as_kind
        and all(
            a >= b
            for a, b in zip(request_score(other, plan), request_score(pick, plan), strict=True)
        )
        and set(pick.features_matched) <= set(other.features_matched)
        and (other.summary.rating or 0) > (pick.summary.rating or 0)
        and other.summary.price <= pick.summary.price + CENT
    )


def best_combination(
    pools: list[tuple[Candidate, ...]], score: Scorer, budget: float | None
) -> tuple[Candidate, ...] | None:
    """One candidate per pool, all distinct products, of the highest summed score (scores
    are tuples, compared in order; a sum of them compares the same way), with the total
    price within `budget`; None when no such choice exists. Exact: partial choices are
    extended pool by pool, and one is dropped only when another costs no more, scores at
    least as much and can meet the same later pools (it holds none of their products)."""
    later_ids: list[set[str]] = [set() for _ in pools]
    for index in range(len(pools) - 2, -1, -1):
        later_ids[index] = later_ids[index + 1] | {c.summary.id for c in pools[index + 1]}
    limit = float("inf") if budget is None else budget + CENT
    partials: list[tuple[float, Score, tuple[Candidate, ...]]] = [(0.0, (), ())]
    for index, pool in enumerate(pools):
        grown = []
        for cost, total, chosen in partials:
            taken = {c.summary.id for c in chosen}
            for candidate in pool:
                price = cost + candidate.summary.price
                if candidate.summary.id in taken or price > limit:
                    continue
                grown.append((price, add_scores(total, score(candidate)), (*chosen, candidate)))
        partials = _undominated(grown, later_ids[index])
        if not partials:
            return None
    return max(partials, key=lambda p: (p[1], -p[0]))[2]


def add_scores(a: Score, b: Score) -> Score:
    """Two scores summed part by part (the empty score is nothing yet)."""
    return b if not a else tuple(x + y for x, y in zip(a, b, strict=True))


def _undominated(
    partials: list[tuple[float, Score, tuple[Candidate, ...]]], later: set[str]
) -> list[tuple[float, Score, tuple[Candidate, ...]]]:
    """The partial choices no other beats: cheaper or as cheap, and better or as good,
    among those that hold the same products of later pools."""
    groups: dict[frozenset[str], list[tuple[float, Score, tuple[Candidate, ...]]]] = defaultdict(
        list
    )
    for partial in partials:
        groups[frozenset(c.summary.id for c in partial[2]) & later].append(partial)
    kept = []
    for group in groups.values():
        best: Score | None = None
        for partial in sorted(group, key=lambda p: (p[0], [-x for x in p[1]])):
            if best is None or partial[1] > best:
                kept.append(partial)
                best = partial[1]
    return kept


def _reason(
    plan: Plan,
    item: Item,
    pick: Candidate,
    choice: Choice,
    score: Scorer,
    model_id: str | None,
    outdone_by: Candidate | None = None,
) -> str:
    """One line, from catalog figures only: what the pick fits, matches and is rated,
    who decided (the model's pick breaking a tie, or code), the model's pick it replaced,
    and what the next best candidate would have given."""
    total = sum(c.summary.price for c in choice.picks)
    parts = []
    if plan.budget is not None and choice.fits:
        left = money(plan.budget - total)
        parts.append(f"fits the {money(plan.budget)} total with {left} left")
    elif not choice.fits:
        parts.append("the cheapest found")
    if plan.features:
        parts.append(", ".join(pick.features_matched) or "none of the wanted features")
    parts.append(f"rated {pick.summary.rating:.1f}" if pick.summary.rating else "not rated")
    model_pick = next((c for c in item.options if c.summary.id == model_id), None)
    if model_pick is pick:
        parts.append("the model's pick, among equals on the request's checks")
    elif model_pick is not None:
        versus = f": {_versus(model_pick, pick, plan, total)}"
        if outdone_by is not None:
            # Said of the model's pick against this one: "(bk-004: $19.99 dearer)".
            versus = f", which {outdone_by.summary.id} outdoes on every count ({model_id}{versus})"
        parts.append(f"chosen in code in place of the model's pick {model_id}{versus}")
    else:
        parts.append("chosen in code")
    others = [c for c in item.options if c.summary.id not in {pick.summary.id, model_id}]
    runner = max(others, key=score, default=None)
    if runner is not None:
        parts.append(f"next best {runner.summary.id}: {_versus(runner, pick, plan, total)}")
    return "; ".join(parts)


def _versus(other: Candidate, pick: Candidate, plan: Plan, total: float) -> str:
    """How `other` compares with the pick, in the terms a shopper weighs."""
    said = []
    if other.near_request != pick.near_request:
        said.append(f"of a kind {'nearer' if other.near_request else 'further from'} the request")
    elif request_score(other, plan) != request_score(pick, plan):
        more = request_score(other, plan) > request_score(pick, plan)
        said.append(f"matches {'more' if more else 'less'} of the request")
    if (other.summary.rating or 0) > (pick.summary.rating or 0):
        said.append(f"rated higher ({other.summary.rating:.1f})")
    difference = other.summary.price - pick.summary.price
    if difference > CENT:
        over = plan.budget is not None and total + difference > plan.budget + CENT
        said.append(f"{money(difference)} dearer" + (" (over the total)" if over else ""))
    elif difference < -CENT:
        said.append(f"{money(-difference)} cheaper")
    if not other.within_limits:
        said.append("breaks a limit")
    return ", ".join(said) or "no better on any check"


def _over_notes(plan: Plan, items: list[Item], picks: list[Candidate]) -> list[str]:
    """When no choice fits: the total of the cheapest, and one line per item on how far
    it is over what the budget leaves it after the cheapest of the others."""
    total = sum(c.summary.price for c in picks)
    if plan.budget is None:
        return ["no choice of the products found keeps every step's limits"]
    notes = [
        f"no choice of one product per item fits the {money(plan.budget)} total: the "
        f"cheapest is shown, {money(total)} in all, {money(total - plan.budget)} over"
    ]
    for item, pick in zip(items, picks, strict=True):
        left = plan.budget - (total - pick.summary.price)
        notes.append(
            f"{item.query!r}: the cheapest found is {pick.summary.id} at "
            f"{money(pick.summary.price)}; with the cheapest of the rest it would need to "
            f"cost {money(max(left, 0))} or less, {money(pick.summary.price - left)} over"
        )
    return notes
