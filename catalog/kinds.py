"""What a product's record says it is: the kinds its title and labels name (ProductKinds),
and whether it is of the kind a search's head word names (is_of_kind). Worked out once,
when a product is loaded (``Product.kinds``), and stored beside it by both backends, so
a "Wrist Camera Strap" is a strap, not a camera, to the pick checks and the shop check
alike, and a spatula tagged "utensils" is a utensil.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from catalog.text import (
    WORD,
    head_word,
    kind_words,
    product_words,
    same_word,
    stem,
    title_heads,
    title_parts,
)


@dataclass(frozen=True)
class ProductKinds:
    """What a product's record says it is. `title`: the head of each part of its title
    (words.title_heads; English names are right-headed, so "Wrist Camera *Strap*" is a
    strap). `classes`: the classes its labels put it in, each the head of a tag or of its
    category ("clothing", "kitchen tools"; _class_of). `known`: the kinds its title and its own
    labels agree on: a title head that a tag or the category also names, and the head
    of each tag that the title mentions, brand aside. `known` is empty when they agree
    on none (the "Corefit Kettlebell 16 kg Cast Iron" tagged "home gym", "strength"):
    the title has no clear head, and the kind check falls back to what the text says.
    `words`: the words of each part of the title, in order (a word's neighbour there
    says whether it names the product or only modifies what does)."""

    title: list[str]
    known: list[str]
    classes: list[str] = field(default_factory=list)
    words: list[list[str]] = field(default_factory=list)
    labels: list[list[str]] = field(default_factory=list)  # each tag's (or its parts') words

    @property
    def terms(self) -> list[str]:
        """The kinds a backend indexes the product under (``SearchArgs.kind``): the stem
        of each title head and class, as kind_term writes a kind asked for; where its title
        and labels agree on no kind, every word of its title too, as is_of_kind reads it
        then ("Camp Chair Ultralight", "Corefit Kettlebell 16 kg Cast Iron": a chair, a
        kettlebell, though no right-headed reading says so)."""
        said = [*self.title, *self.classes]
        if not self.known:
            said += [w for part in self.words for w in kind_words(" ".join(part))]
        return list(dict.fromkeys(s for w in said if (s := stem(w))))

    def in_title(self, word: str) -> bool:
        return any(same_word(w, word) for part in self.words for w in part)

    def labelled(self, word: str) -> bool:
        """Whether a tag names `word` as more than what the product is
        for: a tag whose other words the title mentions ("*instant* camera" on a film
        pack) is about what it goes with; one the title says nothing of ("assembly
        required" on a bed frame) is about the product."""
        return any(
            any(same_word(w, word) for w in label)
            and not any(self.in_title(w) for w in label if not same_word(w, word))
            for label in self.labels
        )

    def ends_a_name(self, word: str) -> bool:
        """Whether the title mentions `word` where it ends a name, so it can name the
        product: last in a part of the title, or before a word that names nothing (a
        preposition: "Sit to Stand Up *Desk* for Home Office"), never only inside a
        compound ("Wrist *Camera* Strap", "Vintage *Camera* Collection")."""
        return any(
            same_word(w, word) and (i + 1 == len(part) or not product_words(part[i + 1]))
            for part in self.words
            for i, w in enumerate(part)
        )


_PATH = re.compile(r"\s*[\u203a>/|]\s*")


def kinds_of(title: str, category: str | None, tags: list[str], brand: str | None) -> ProductKinds:
    """The kinds a product's record names (ProductKinds): ``Product.kinds``, worked out
    when the product is loaded."""
    heads = title_heads(title)
    category = (category or "").replace("-", " ")
    # A label may be a path of classes (WebShop's "Beauty / Makeup / Blush"): each is one.
    paths = [_PATH.split(label) for label in [*tags, category]]
    labels = [part for path in paths for part in path]
    label_words = [w for label in labels for w in kind_words(label)]
    brand_words = set(kind_words(brand or ""))
    in_title = [w for w in kind_words(title) if w not in brand_words]
    known = [h for h in heads if any(same_word(h, w) for w in label_words)]
    for label in tags:
        head = head_word(label)
        if head and head not in brand_words and any(same_word(head, w) for w in in_title):
            known.append(head)
    # A part of a path is a class as it stands ("Hair Clippers & *Accessories*"), a
    # label of its own only when its title does not say what it is for (_class_of).
    parts = [
        head_word(part) if len(path) > 1 else _class_of(part, in_title)
        for path in paths
        for part in path
    ]
    classes = [head for head in parts if head and head not in brand_words]
    words = [WORD.findall(part.lower().replace("-", " ")) for part in title_parts(title)]
    # The category's words join departments ("cameras-photography"): only its head (a
    # class) speaks of the product, so only the tags are read by ProductKinds.labelled.
    label_parts = [kind_words(part) for path in paths[: len(tags)] for part in path]
    return ProductKinds(
        heads,
        list(dict.fromkeys(known)),
        list(dict.fromkeys(classes)),
        [w for w in words if w],
        [w for w in label_parts if w],
    )


def _class_of(label: str, in_title: list[str]) -> str | None:
    """The class a tag (or the category) puts a product in: its head ("kitchen *tools*"
    on tongs, "sports *equipment*" on a basketball), unless the title mentions the tag's
    other words and not its head: then the tag says what the product is for ("*instant*
    camera" on an instant film pack), not what it is."""
    words = kind_words(label)
    if not words:
        return None
    *others, head = words
    said = [w for w in words if any(same_word(w, t) for t in in_title)]
    if head not in said and any(w in said for w in others):
        return None
    return head


def is_of_kind(head: str, said: ProductKinds, mentioned: bool) -> bool:
    """Whether a product is of the kind `head` names (a query's head word): its title is
    headed by it, or its labels class it so (a shirt tagged "clothing"); else, when its
    title and labels agree on what it is (said.known), when its title mentions the word
    where it ends a name ("Wrist Camera Strap", tagged "camera strap", is a strap, not
    a camera), or, its title silent on it, a label names it as more than what the
    product goes with (a film pack tagged "instant camera" is film: ProductKinds.labelled);
    else, with no clear head, when its text mentions the word (`mentioned`)."""
    if any(same_word(head, h) for h in [*said.title, *said.classes]):
        return True
    if said.known:
        return said.ends_a_name(head) if said.in_title(head) else said.labelled(head)
    return mentioned


def kind_term(kind: str) -> str:
    """A kind as the backends index it (ProductKinds.terms): the stem of the word naming
    it ("running shoes" -> "shoe"); "" when no word of `kind` names one ("the")."""
    return stem(head_word(kind) or "")


@dataclass(frozen=True)
class KindStock:
    """Whether and where the shop carries a kind within a price cap (``kind_stock`` of
    both backends): the departments (catalog categories) holding products of it, each with
    how many, most first; and the cheapest price among them (None: it carries none)."""

    kind: str
    departments: dict[str, int]
    cheapest: float | None

    @property
    def count(self) -> int:
        return sum(self.departments.values())

    @property
    def stocked(self) -> bool:
        return bool(self.departments)

    @classmethod
    def of(cls, kind: str, rows: list[tuple[str, int, float]]) -> KindStock:
        """From (department, count, cheapest) rows, in any order."""
        ordered = sorted(rows, key=lambda row: (-row[1], row[0]))
        cheapest = min((row[2] for row in rows), default=None)
        return cls(kind, {department: count for department, count, _ in ordered}, cheapest)
