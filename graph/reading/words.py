"""Product words: the words of a request (or a query, a goal, a product's text) that can
name a product, without fillers, shop names or the words of limits."""

from __future__ import annotations

import re

# Words that carry no product meaning in a request: requests' verbs and fillers, shops,
# and the words of limits (whose numbers graph/checks/stated.py reads).
_FILLER = frozenset(
    """a an the and or but for of to in on at by with without from into onto that this these
    those it its is are be been am was were i me my we our you your he she they them some any
    find get buy want wants need needs looking look search locate explore discover identify
    seek seeking please help show give order purchase shop shopping pick choose select recommend
    recommendation suggest can could would should will must also just only very really
    ideally preferably specifically ensure ensuring make sure check verify confirm which who
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
    words = [w.lower().strip("'-") for w in _REQUEST_WORD.findall(request)]
    kept = [w for w in words if len(w) > 1 and w not in _FILLER]
    return list(dict.fromkeys(kept))


def stem(word: str) -> str:
    """A crude plural-free form, the same on both sides of a comparison."""
    for suffix in ("es", "s"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


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


def title_heads(title: str) -> list[str]:
    """The head word of each part of a catalog title (head_word): what the title says
    the product is. English names are right-headed, so "Lens Cleaning *Kit*" is a kit
    and "50mm f/1.8 Prime *Lens* for E Mount" a lens, though both name a lens."""
    return [head for part in _TITLE_PARTS.split(title) if (head := head_word(part))]


def same_word(a: str, b: str) -> bool:
    """Two words of one product sense, up to a plural ("shoe", "shoes"; "box", "boxes"):
    their stems are equal, or one stem is the other and at most two letters more."""
    a, b = stem(a), stem(b)
    short, long = sorted((a, b), key=len)
    return short == long or (
        len(short) >= 3 and long.startswith(short) and len(long) - len(short) <= 2
    )


def words_found(words: list[str], text: str) -> list[str]:
    """The `words` (product words of a query, say) that `text` mentions, in their order."""
    found = product_words(text.replace("-", " "))
    return [w for w in words if any(same_word(w, f) for f in found)]
