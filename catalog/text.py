"""The catalog's text analysis: the index's own analyzer (Snowball English, stop words),
and product words, the words of a request (or a query, a goal, a product's text) that
can name a product, without fillers, shop names or the words of limits, with the head
word of a name and the heads of a catalog title."""

from __future__ import annotations

import functools
import re

import tantivy

# Words that carry no product meaning in a request: requests' verbs and fillers, shops,
# and the words of limits (whose numbers graph/reading/stated.py reads).
_FILLER = frozenset(
    """a an the and or but for of to in on at by with without from into onto that this these
    those it its is are be been am was were i me my we our you your he she they them some any
    find get buy want wants need needs looking look search locate explore discover identify
    seek seeking please help show give order purchase shop shopping pick choose select recommend
    recommendation suggest can could would should will must also just only very really
    actually ideally preferably specifically ensure ensuring make sure check verify confirm
    which who
    what where when how best good great nice new high quality high-quality top premium
    amazon online store price priced prices pricing cost costs costing budget total
    under below less than lower cheaper at most up no more not over above least minimum
    maximum max min between around about within dollars dollar usd bucks cheap affordable
    star stars rating rated ratings review reviews customer customers user users score
    free shipping delivery returns return policy eligible prime options option available
    has have having while all each every one two three something someone
    thing things item items product products pair set like likes liked""".split()
)
# A word starts at a word boundary, so "16GB" is a size, not the word "gb".
_REQUEST_WORD = re.compile(r"\b[^\W\d_][\w'&+-]*")
WORD = re.compile(r"[^\W\d_][\w'-]*")  # a word of a plan's text as written (a query, a goal)


def product_words(request: str) -> list[str]:
    """The request's words that can name a product, in order, each once."""
    return list(_product_words(request))


# The same product texts are read again at every pick step and at verify, for each of
# an item's queries: worked out once per text (bench/load.py, #37).
@functools.lru_cache(maxsize=8192)
def _product_words(text: str) -> tuple[str, ...]:
    words = [w.lower().strip("'-") for w in _REQUEST_WORD.findall(text)]
    kept = [w for w in words if len(w) > 1 and w not in _FILLER]
    return tuple(dict.fromkeys(kept))


# catalog/index.py indexes and queries with it: tantivy's built-in "en_stem" pipeline plus
# English stop words (so "and", "or", "not", "for", "the" in chatty queries do not drown
# the real terms) and ASCII folding ("café" ~ "cafe").
# We build it ourselves because the very same object then tokenizes queries in
# Python, so query terms equal index terms by construction: no query parser (and
# so no query syntax) is ever involved, and stemming still lets "straps" match "strap".
ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stopword("english"))
    .filter(tantivy.Filter.ascii_fold())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


# The index's Snowball stemmer on a word as a whole ("t-shirts" -> "t-shirt", "women's" ->
# "women"), stop words kept: the one stem a word has, in a kind the index stores and
# whenever two words are compared (same_word).
_WORD_ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.ascii_fold())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


@functools.lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """`word` as the index's stemmer writes it ("Boxes" -> "box", "shoes" -> "shoe")."""
    return next(iter(_WORD_ANALYZER.analyze(word)), "")


_OPENING_END = re.compile(r"\s(?:for|with|without|to|under|in|from|by)\s", re.IGNORECASE)


# Words that name an occasion, never a kind of product: "camera strap gift" is a strap.
_NOT_A_KIND = frozenset({"gift", "gifts", "present", "presents", "idea", "ideas"})


def opening(text: str) -> str:
    """What `text` says before its first preposition: "running shoes" of "running shoes
    for her"."""
    return _OPENING_END.split(f" {text} ", maxsplit=1)[0]


def kind_words(text: str) -> list[str]:
    """The product words of `text` that can name a kind of product (occasion words
    aside), hyphenated words split."""
    return [w for w in product_words(text.replace("-", " ")) if w not in _NOT_A_KIND]


def head_word(query: str) -> str | None:
    """The word naming the kind of product in an English query: the last product word
    before a preposition ("water *bottle*", "running *shoes* for her"), occasion words
    aside."""
    words = kind_words(opening(query))
    return words[-1] if words else None


# Where a catalog title's parts meet: "Bluetooth Headphones Over Ear, Wireless Headphones
# with Mic" is two names, and each has a head of its own.
_TITLE_PARTS = re.compile(r"\s*[,;|()\[\]]\s*|\s+[-\u2013\u2014]\s+")


# Numbers with a short unit ending a name ("Water Bottle 32 oz", "Coffee Maker 6-Cup",
# "Headlamp 1000 Lumen"): measures of the product, never what it is.
_MEASURE = re.compile(r"(?:\s+\d[\d.,]*\s*-?\s*[^\W\d_]{1,5})+\s*$")


def title_heads(title: str) -> list[str]:
    """The head word of each part of a catalog title (head_word): what the title says
    the product is. English names are right-headed, so "Lens Cleaning *Kit*" is a kit
    and "50mm f/1.8 Prime *Lens* for E Mount" a lens, though both name a lens; measures
    aside ("Insulated Water *Bottle* 32 oz" is a bottle)."""
    return [head for part in title_parts(title) if (head := head_word(without_measures(part)))]


def without_measures(name: str) -> str:
    """`name` without the measures that end it (_MEASURE)."""
    return _MEASURE.sub("", name)


def title_parts(title: str) -> list[str]:
    """The parts of a catalog title, each a name of its own (title_heads)."""
    return [part for part in _TITLE_PARTS.split(title) if part.strip()]


def same_word(a: str, b: str) -> bool:
    """Two words of one product sense: the same stem ("shoe", "shoes"; "battery",
    "batteries"), and at most two letters apart, as an inflection is: Snowball also
    joins an activity to its gear ("backpacking" and "backpack", "camping" and "camp")."""
    return stem(a) == stem(b) and abs(len(a) - len(b)) <= 2


def words_found(words: list[str], text: str) -> list[str]:
    """The `words` (product words of a query, say) that `text` mentions, in their order:
    those that are the same word (same_word) as one of its words."""
    lengths = _word_lengths(text)
    return [w for w in words if any(abs(len(w) - n) <= 2 for n in lengths.get(stem(w), ()))]


def mentions_every(words: list[str], text: str) -> bool:
    """Whether `text` mentions every one of `words` (words_found finds them all)."""
    return len(words_found(words, text)) == len(words)


@functools.lru_cache(maxsize=8192)
def _word_lengths(text: str) -> dict[str, frozenset[int]]:
    """The stems of `text`'s product words, its hyphenated words split, each with the
    lengths of the words it stems."""
    lengths: dict[str, set[int]] = {}
    for word in product_words(text.replace("-", " ")):
        lengths.setdefault(stem(word), set()).add(len(word))
    return {s: frozenset(n) for s, n in lengths.items()}


@functools.lru_cache(maxsize=8192)
def word_stems(text: str) -> frozenset[str]:
    """The stems of `text`'s product words, its hyphenated words split."""
    return frozenset(_word_lengths(text))
