"""Constraint checks computed in code, so a small model's pick is informed (and guarded)
by facts rather than by its arithmetic. No LLM call and no replanning happens here.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process

from catalog import CatalogBackend, Product
from catalog.kinds import ProductKinds, is_of_kind
from catalog.text import (
    head_word,
    kind_words,
    mentions_every,
    opening,
    product_words,
    same_word,
    stem,
    title_heads,
    word_stems,
    words_found,
)
from graph.reading.shelves import SAME_KIND
from graph.schemas import MissingItem, Plan, PlanStep, ProductSummary, StatedLimits, StepResult
from meaning import Embedder

FEATURE_MATCH_THRESHOLD = 85  # the same fuzzy cut-off WebShop scores attributes with
_ABOVE_THRESHOLD = math.nextafter(FEATURE_MATCH_THRESHOLD, math.inf)
_EMBEDDER = Embedder()  # the process's one model, loaded when first asked


def drops_stated_limit(stated: StatedLimits, plan: Plan) -> bool:
    """Whether the request states a price cap (or total) that the plan does not carry."""
    limit = stated.budget
    carried = {plan.budget} | {step.max_price for step in plan.search_steps}
    return limit is not None and not any(v is not None and abs(v - limit) < 0.01 for v in carried)


def request_words(words: Sequence[str], plan: Plan) -> set[str]:
    """What a recommended product must be about: the request's product words (`words`),
    and the plan's goal and features (the model may have translated the request). Not the
    plan's queries: a search finds products with its own words, whatever the request asked."""
    texts = [plan.goal, *plan.features]
    planned = (w for t in texts for w in product_words(t.replace("-", " ")))
    return {stem(w) for w in (*words, *planned)}


def record_text(product: Product) -> str:
    """What a product's record says of it: its title, category, tags and description."""
    return " ".join([product.title, product.category or "", *product.tags, product.description])


def is_relevant(product: Product, words: set[str]) -> bool:
    """Whether a product's title, tags, category or description has any of the words: a
    product that matches none of them is not a pick, however it was found."""
    return not words.isdisjoint(word_stems(record_text(product)))


def named_by_meaning(
    texts: Sequence[str], found: dict[str, Product], ids: Collection[str]
) -> set[str]:
    """Those of `ids` whose title one of `texts` names by meaning: as near it as words
    that name a shelf's kind in another language (SAME_KIND)."""
    ids = sorted(ids)
    if not ids or not texts:
        return set()
    vectors = _EMBEDDER.embed([*texts, *(found[i].title for i in ids)])
    nearest = (vectors[len(texts) :] @ vectors[: len(texts)].T).max(axis=1)
    return {i for i, cosine in zip(ids, nearest, strict=True) if cosine >= SAME_KIND}


def goal_words(goal: str) -> list[str]:
    """Content words of the plan's goal sentence (what a product should be about)."""
    return [w for w in product_words(goal) if len(w) >= 3]


def wanted_terms(plan: Plan) -> tuple[list[str], str]:
    """What candidates are checked against: the plan's features, else its goal's words."""
    if plan.features:
        return plan.features, "features"
    return goal_words(plan.goal), "goal words"


def feature_matches(product: Product, features: list[str]) -> list[str]:
    """Requested features a product has, matched as WebShop matches attributes: fuzzy
    against its tags, or as a phrase in its title or description."""
    text = f"{product.title} {product.description}".lower()
    matched = []
    for feature in features:
        wanted = feature.strip().lower()
        if not wanted:
            continue
        # One C loop over the tags (score_cutoff keeps the strict "above the threshold").
        in_tags = bool(product.tags) and process.extractOne(
            wanted,
            product.tags,
            scorer=fuzz.token_set_ratio,
            processor=default_process,
            score_cutoff=_ABOVE_THRESHOLD,
        )
        if in_tags or wanted in text:
            matched.append(feature)
    return matched


@dataclass
class Candidate:
    """A product found by an earlier search step, with its checks."""

    summary: ProductSummary
    source_step: int
    rank: int
    within_limits: bool
    features_matched: list[str] = field(default_factory=list)
    # The step's query words its title, tags or category mention: what kind of product
    # it is, against the kind searched for ("memory foam sneakers": is it a sneaker?).
    type_words: list[str] = field(default_factory=list)
    query_length: int = 0  # the step's query product words, of which type_words
    # Among the results the step shows (and a reasoning model sees), or deeper in its pool.
    shown: bool = True
    # A head word of its item's queries (words.head_word: "water *bottle*") is mentioned:
    # it is of the kind searched for, which a recommended product must be.
    of_searched_kind: bool = False
    # It names the compound the query ends with, the head word and the word before it
    # ("hiking *camera bags*"): a camera bag, where a dry bag for hiking shares as many
    # of the query's words. It breaks ties on type and features (choice.py).
    names_compound: bool = False
    # Its title says it is one (words.title_heads: "...Backpacking *Tent*"), where its
    # text may only name the kind ("Lens Cleaning Kit" for prime lenses): the type check
    # is sure of it, so rating may break its ties without a model (decided.py).
    titled_as_kind: bool = False
    # Its item, named by the item's first search step (item_of_step); candidates_of sets
    # it once for every later check. 0 until then: its own step.
    item: int = 0
    # Of a kind as near the request by meaning as any other that fits (a gift's pick across
    # kinds: near_the_request); always, where one kind is searched per item.
    near_request: bool = True

    def __post_init__(self) -> None:
        self.item = self.item or self.source_step

    @property
    def coverage(self) -> tuple[float, int]:
        """How well it covers what was asked: first its type, the share of its query's
        words it mentions (a share, so the kinds of a gift plan compare fairly), then the
        wanted features matched. Type first: a camera matching three features is still no
        lens, though a bundle's total would reward putting it in the lens's place."""
        return len(self.type_words) / max(self.query_length, 1), len(self.features_matched)

    def label(self, plan: Plan) -> str:
        parts = ["fits limits" if self.within_limits else "OVER LIMIT"]
        terms, kind = wanted_terms(plan)
        if terms:
            parts.append(f"{kind} {len(self.features_matched)}/{len(terms)}")
            if self.features_matched and kind == "features":
                parts[-1] += f" ({', '.join(self.features_matched)})"
        return "; ".join(parts)


# Kinds this near the request's words by meaning, or nearer, are equally near: below it,
# cosines differ by noise, and the model's pick decides. On the 61 recorded gift plans that
# pick one, the kind nearest the request was in an expected department for 6 the model's
# pick was not, and 1 the other way round (docs/evaluation.md).
EQUALLY_NEAR = 0.02


def near_the_request(plan: Plan, candidates: list[Candidate], text: str) -> None:
    """Mark each candidate of a plan that picks one product across kinds (a gift) whose
    kind, as its item's query names it, is as near `text` (the request's words) by
    meaning as the nearest kind with a product within the limits: which kind suits the
    person ("a dad who loves camping": a camp chair before a kettle)."""
    queries = {s.step: s.query for s in plan.search_steps if s.query}
    fitting = {c.item for c in candidates if c.within_limits and c.item in queries}
    if plan.pick != "one" or len(fitting) < 2 or not text.strip():
        return
    items = sorted(fitting)
    cosines = _EMBEDDER.similarity(text, [queries[i] for i in items])
    nearness = dict(zip(items, cosines, strict=True))
    nearest = max(nearness.values())
    for candidate in candidates:
        candidate.near_request = bool(nearness.get(candidate.item, -1.0) >= nearest - EQUALLY_NEAR)


def within_step_limits(product: ProductSummary, plan: Plan, step: PlanStep) -> bool:
    if step.max_price is not None and product.price > step.max_price:
        return False
    if step.min_price is not None and product.price < step.min_price:
        return False
    if step.min_rating is not None and (product.rating or 0) < step.min_rating:
        return False
    return plan.budget is None or product.price <= plan.budget


def candidates_of(
    plan: Plan, results: list[StepResult], catalog: CatalogBackend
) -> list[Candidate]:
    """Every product earlier search steps found, in search-rank order, with checks made
    against its full catalog record (tags and description are not in the step results).
    Its type is checked against its item's queries that name a kind (_kind_queries)."""
    return candidates_and_records(plan, results, catalog)[0]


def candidates_and_records(
    plan: Plan, results: list[StepResult], catalog: CatalogBackend, listed: Sequence[str] = ()
) -> tuple[list[Candidate], dict[str, Product]]:
    """candidates_of, with the catalog records it read (by id; those still in the
    catalog); `listed` are the items the request lists (item_of_step)."""
    searches = [r for r in results if r.kind == "search"]
    records = catalog.get(p.id for r in searches for p in [*r.products, *r.pool])
    terms, _ = wanted_terms(plan)
    candidates, texts, titles, kinds = [], [], [], []
    for result in searches:
        step = plan.steps[result.step - 1]
        shown = len(result.products)
        for rank, product in enumerate([*result.products, *result.pool], start=1):
            record = records.get(product.id)
            text = " ".join([record.title, record.category or "", *record.tags]) if record else ""
            texts.append(text)
            titles.append(record.title if record else "")
            kinds.append(record.kinds if record else ProductKinds([], []))
            candidates.append(
                Candidate(
                    summary=product,
                    source_step=result.step,
                    rank=rank,
                    within_limits=within_step_limits(product, plan, step),
                    features_matched=feature_matches(record, terms) if record else [],
                    shown=rank <= shown,
                )
            )
    item, of_listed = _items_of_steps(candidates, plan, listed)
    for candidate in candidates:
        candidate.item = item.get(candidate.source_step, candidate.source_step)
    queries = _kind_queries(plan, candidates)
    for candidate, text, title, said in zip(candidates, texts, titles, kinds, strict=True):
        _check_kind(candidate, text, queries[candidate.source_step], said)
        _check_title(candidate, title, queries[candidate.source_step])
    _told_from_its_namesakes(candidates, titles, listed, of_listed)
    return candidates, records


def _told_from_its_namesakes(
    candidates: list[Candidate],
    titles: list[str],
    listed: Sequence[str],
    of_listed: dict[int, int | None],
) -> None:
    """A product of the kind its search's listed item (`of_listed`, by step) names by
    head word, or whose record mentions that word, is of that item only when, of the
    listed items with that head, it is nearest that one by meaning: a cold brew coffee
    maker found by the pour-over search is the "cold brew coffee maker" the request lists
    beside the "pour-over coffee maker", a hiking day backpack found by the camera backpack
    search the "hiking day backpack", and a "Travel Backpack Camera Bag", which its title's
    words call a bag, the "camera backpack"."""
    heads = {n: head_word(item) for n, item in enumerate(listed)}
    for step, mine in of_listed.items():
        if mine is None:
            continue
        rivals = [n for n, h in heads.items() if h == heads[mine]]
        if len(rivals) < 2:
            continue
        head = heads[mine] or ""
        judged = [
            (c, t)
            for c, t in zip(candidates, titles, strict=True)
            if c.source_step == step
            and t
            and (c.of_searched_kind or any(same_word(head, w) for w in c.type_words))
        ]
        if not judged:
            continue
        items = _EMBEDDER.embed([listed[n] for n in rivals])
        vectors = _EMBEDDER.embed([t for _, t in judged])
        for (candidate, _), vector in zip(judged, vectors, strict=True):
            candidate.of_searched_kind = rivals[int((items @ vector).argmax())] == mine


def _kind_queries(plan: Plan, candidates: list[Candidate]) -> dict[int, list[str]]:
    """For each search step, the queries of its item (item_of_step) that name a kind of
    product: those that are not only wanted features ("machine wash" names none), or all
    of them when every one is."""
    steps_of: dict[int, set[int]] = {}
    for candidate in candidates:
        steps_of.setdefault(candidate.item, set()).add(candidate.source_step)
    queries: dict[int, list[str]] = {}
    for mates in steps_of.values():
        naming = [s for s in sorted(mates) if not _only_features(plan, s)] or sorted(mates)
        for step in mates:
            queries[step] = [plan.steps[s - 1].query or "" for s in naming]
    return queries


def _check_kind(
    candidate: Candidate, text: str, queries: list[str], said: ProductKinds | None = None
) -> None:
    """The candidate's type against the best of its item's kind-naming queries: the query
    words its text mentions, and whether it is of a query's kind (is_of_kind: what its
    title says it is, else what its text mentions; `said` None: its text alone)."""
    best: tuple[float, list[str], int] = (-1.0, [], 0)
    for query in queries:
        words = product_words(query.replace("-", " "))
        found = words_found(words, text)
        share = len(found) / max(len(words), 1)
        if share > best[0]:
            best = (share, found, len(words))
        head = head_word(query)
        if head is None or is_of_kind(head, said or ProductKinds([], []), head in found):
            candidate.of_searched_kind = True
        before = words.index(head) - 1 if head in words else -1
        if before >= 0 and head in found and words[before] in found:
            candidate.names_compound = True
    candidate.type_words, candidate.query_length = best[1], best[2]


def _check_title(candidate: Candidate, title: str, queries: list[str]) -> None:
    """Whether the candidate's title is headed by a head word of its item's queries."""
    wanted = [head for query in queries if (head := head_word(query))]
    said = title_heads(title)
    candidate.titled_as_kind = any(same_word(w, s) for w in wanted for s in said)


def item_of_step(
    candidates: list[Candidate], plan: Plan, listed: Sequence[str] = ()
) -> dict[int, int]:
    """Each search step's item, numbered by its first step: the items are what the
    request lists and the plan names, never what the results happen to share (a
    laptop-stand search and a hub search both find USB-C chargers, yet a stand is no
    hub). A query holding an item the request lists (`listed`, RequestReading.items) is
    that item's search ("power bank laptop" of "a power bank and a usb-c charger for my
    laptop"), never another listed item's. Steps are one item when their queries name
    one kind (_same_kind: "wool sweater", "crew neck sweater"). A step whose query names
    no kind, only the plan's wanted features ("machine wash") and finds no product its
    head word names, or no readable head, is a feature of an item, not a thing to buy: it
    joins the first item whose shown results share a product with its own, else it is an
    item of its own."""
    return _items_of_steps(candidates, plan, listed)[0]


def _items_of_steps(
    candidates: list[Candidate], plan: Plan, listed: Sequence[str]
) -> tuple[dict[int, int], dict[int, int | None]]:
    """item_of_step, and each search step's listed item (_listed_item), by step, in order:
    both read what each product a step found says it is (words.title_heads)."""
    heads: dict[int, list[list[str]]] = {}
    found: dict[int, set[str]] = {}  # the ids each step shows
    for candidate in candidates:
        heads.setdefault(candidate.source_step, []).append(title_heads(candidate.summary.title))
        if candidate.shown:
            found.setdefault(candidate.source_step, set()).add(candidate.summary.id)
    of_listed = {s: _listed_item(plan, s, listed, heads[s]) for s in sorted(heads)}
    steps = sorted(heads)
    kindless = {s for s in steps if _kindless(s, plan, heads[s])}
    item: dict[int, int] = {}
    for step in (s for s in steps if s not in kindless):
        mine = of_listed[step]
        same = (
            e
            for e in sorted(item)
            if (mine is not None and of_listed[e] == mine)
            or ((mine is None or of_listed[e] is None) and _same_kind(plan, step, e))
        )
        item[step] = next((item[e] for e in same), step)
    for step in (s for s in steps if s in kindless):  # wherever the plan lists them
        shared = [e for e in sorted(item) if found.get(step, set()) & found.get(e, set())]
        item[step] = item[shared[0]] if shared else step
    return dict(sorted(item.items())), of_listed


def _listed_item(
    plan: Plan, step: int, listed: Sequence[str], found: list[list[str]]
) -> int | None:
    """The listed item the step's query is for, of those whose head word heads the title
    of a product the step found (`found`: each one's title heads; a kind, not a listed
    feature like "dairy free"): the longest whose every word the query holds; else, of
    two or more such items, the nearest the query by meaning ("running open-ear
    headphones" is the "open ear sport headphones", not the "noise cancelling headphones"
    of the same head). By its place in the list."""
    if not listed:
        return None
    query = plan.steps[step - 1].query or ""
    # A title's first head is what it says the product is ("Oat Drink, Nut Free, Soy
    # Free" is a drink); later parts name its features.
    firsts = {title[0] for title in found if title}
    kinds = [
        (n, item_words)
        for n, item in enumerate(listed)
        if (item_words := product_words(item.replace("-", " ")))
        and any(same_word(item_words[-1], h) for h in firsts)
    ]
    held = [(len(item_words), n) for n, item_words in kinds if mentions_every(item_words, query)]
    if held or len(kinds) < 2:
        return max(held)[1] if held else None
    nearness = _EMBEDDER.similarity(query, [listed[n] for n, _ in kinds])
    return kinds[max(range(len(kinds)), key=nearness.__getitem__)][0]


def _kindless(step: int, plan: Plan, found: list[list[str]]) -> bool:
    """Whether a search names no kind: no readable head, or only the plan's wanted
    features and no product found (`found`: each one's title heads) whose title its
    head word heads ("USB-C hub" finds hubs, so it names a kind, though the plan lists
    its words as features; "machine wash" finds sweaters, no wash)."""
    head = _head(plan, step)
    if head is None:
        return True
    return _only_features(plan, step) and not any(
        same_word(head, h) for title in found for h in title
    )


def _head(plan: Plan, step: int) -> str | None:
    return head_word(plan.steps[step - 1].query or "")


def _same_kind(plan: Plan, a: int, b: int) -> bool:
    """Whether two searches name one kind of product: their head words agree, or each
    one's head is among the other's words ("leather camera strap", "camera strap
    leather": a model does not always write the kind last)."""
    head_a, head_b = _head(plan, a), _head(plan, b)
    if head_a is None or head_b is None:
        return False
    words_a = kind_words(opening(plan.steps[a - 1].query or ""))
    words_b = kind_words(opening(plan.steps[b - 1].query or ""))
    return same_word(head_a, head_b) or (
        any(same_word(head_a, w) for w in words_b) and any(same_word(head_b, w) for w in words_a)
    )


def _only_features(plan: Plan, step: int) -> bool:
    words = product_words((plan.steps[step - 1].query or "").replace("-", " "))
    features = product_words(" ".join(plan.features).replace("-", " "))
    return bool(words) and all(any(same_word(w, f) for f in features) for w in words)


def one_pick_per_search(
    picked_ids: list[str], candidates: list[Candidate]
) -> tuple[list[str], str | None]:
    """Plans search once per kind of item wanted, so a pick keeps the first product the
    model named for each item (Candidate.item: a search step, or searches for one kind);
    the others are dropped with a note."""
    item_of = {c.summary.id: c.item for c in candidates}
    kept: list[str] = []
    dropped: list[str] = []
    seen_items: set[int] = set()
    for product_id in picked_ids:
        wanted = item_of.get(product_id)
        (dropped if wanted in seen_items else kept).append(product_id)
        if wanted is not None:
            seen_items.add(wanted)
    if not dropped:
        return picked_ids, None
    return kept, (
        f"kept one product per kind of item (one per search, or per searches for one "
        f"kind): dropped {', '.join(dropped)}"
    )


def missing_items(
    plan: Plan,
    results: list[StepResult],
    picks: list[ProductSummary],
    filled: Collection[int],
    candidates: list[Candidate] | None = None,
    listed: Sequence[str] = (),
) -> list[MissingItem]:
    """The plan's searched-for items that no pick fills, each with its reason, named by
    the item's first search step (searches for one item, item_of_step, are one item), then
    the items the request lists (`listed`, RequestReading.items) that no step searched
    for (_unsearched). `filled` holds the items (by first step) the choice filled
    (Choice.items): a pick fills one item only, though several searches found it. A plan
    for the single best of several kinds (pick "one") misses nothing once it has a pick."""
    if plan.pick == "one" and picks:
        return []
    picked = {p.id for p in picks}
    by_step = {r.step: r for r in results}
    item = {c.source_step: c.item for c in candidates or []}
    found_for: dict[int, set[str]] = {}
    of_kind: dict[int, bool] = {}
    for candidate in candidates or []:
        found_for.setdefault(candidate.item, set()).add(candidate.summary.id)
        of_kind[candidate.item] = of_kind.get(candidate.item, False) or candidate.of_searched_kind
    named = []  # each item's first search step, and what its searches found
    for step in plan.steps:
        group = item.get(step.step, step.step)
        if step.query is None or (group != step.step and group in item):
            continue  # a reasoning step, or a later search for an item already named
        result = by_step.get(step.step)
        every = {p.id for p in [*result.products, *result.pool]} if result else set()
        named.append((step, result, found_for.get(group) or every))
    missing = []
    for step, result, found in named:
        group = item.get(step.step, step.step)
        if result is None:
            reason = "its search step did not run"
        elif result.error:
            reason = f"its search failed ({result.error})"
        elif not result.products and not result.pool:
            reason = "the search found no matching product"
        elif group in filled:
            continue
        elif candidates is not None and not of_kind.get(group, False):
            reason = f"none of the {len(found)} products found is of the kind searched for"
        elif not picked.isdisjoint(found):
            reason = "the product picked from what it found answers another item"
        else:
            reason = f"none of the {len(found)} products found for it was picked"
        missing.append(MissingItem(step=step.step, query=step.query or "", reason=reason))
    return missing + _unsearched(plan, results, listed, len(named))


def _unsearched(
    plan: Plan, results: list[StepResult], listed: Sequence[str], searched: int
) -> list[MissingItem]:
    """The listed items no search looks for: an item's head word (its last) is in no
    search's query, nor in the title of a product one shows (the shop's own word for it:
    a backpack searched as "hiking daypack" shows "... Hiking Day Backpack"). As many as
    the list holds more items than the plan searches for, at most: a search whose words
    are not the request's ("lens cleaning kit" for "a lens cleaner") is for one of them,
    and is named missing by its step if nothing answers it. A plan that runs out of steps
    leaves the last items out, so those are the ones named."""
    texts = [s.query or "" for s in plan.search_steps]
    texts += [p.title for r in results if r.kind == "search" for p in r.products]
    said = {w for text in texts for w in product_words(text.replace("-", " "))}
    unsearched = [i for i in listed if not any(same_word(i.split()[-1], w) for w in said)]
    spare = len(listed) - searched
    return [
        MissingItem(step=0, query=item, reason="not searched: the plan has no step for it")
        for item in (unsearched[-spare:] if spare > 0 else [])
    ]
