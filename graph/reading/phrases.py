"""How shoppers write limits: currency marks and words, the limit words of the languages
the planner is asked in, number words, and the patterns that find price and rating
phrases in a text. graph/reading/stated.py reads a request with them.

The patterns are deliberately conservative: a number counts as a price only with a
currency mark ("$40", "40 dollars", "€40") or a price word beside it ("priced under 40",
"budget 40"); a rating only with "star(s)" or "rating"/"rated" beside it. Sizes, counts
and review numbers ("10 to 10.9 inches", "6 to 8 outlets", "300 reviews") are neither.
"""

from __future__ import annotations

import re
import unicodedata

from price_parser import Price
from text_to_num import alpha2digit, text2num

from catalog.models import PRICE_CURRENCY

# Digits of any script ("٢٠٠" reads as 200) in groups of three, between them ",", ".",
# a space, a thin space, "'", "_" or the Arabic thousands separator (U+066C), or in
# Indian groups of two, then "." or ","
# or the Arabic decimal separator (U+066B) before decimals, and a "k" or "m" suffix:
# "1,500", "1.500,00", "1 000", "1'500", "40,50", "1.5k". Which mark is which is left to
# amount_of. A space-grouped number is one only where no word or count goes on ("$50 100-pack").
_DIGIT_GROUPS = (
    r"\d{1,2}(?:,\d\d)+,\d{3}"  # Indian lakhs and crores: "1,50,000"
    r"|\d{1,3}(?:(?:,\d{3})+|(?:\.\d{3})+|(?:[ \u2009\u202f]\d{3})+(?![\w-])|(?:'\d{3})+"
    r"|(?:٬\d{3})+|(?:_\d{3})+)"
)
_NUMBER_TEXT = rf"(?:{_DIGIT_GROUPS}|\d+)(?:[.,٫]\d+)?(?:[km]\b)?"
_NUMBER = rf"({_NUMBER_TEXT})"
# Currency marks, by the currency they name. The catalog's own (PRICE_CURRENCY) makes a
# limit; any other is read, shown as stated and never converted (no rates offline).
# "pounds" alone is a weight, so sterling needs its sign or its code.
_CURRENCY_WORDS = {
    "USD": r"\$|us\$|usd\b|dollars?\b|d[oó]lar(?:es)?\b|dollari\b|bucks\b|ドル|美元|دولار(?:ا|ات)?"
    r"|доллар(?:ов|а)?",
    "EUR": r"€|eur\b|euros?\b|يورو|евро",
    "GBP": r"£|gbp\b|pounds? sterling\b",
    "JPY": r"¥|円|jpy\b|yen\b",
    "CNY": r"元|cny\b|rmb\b|yuan\b",
    "INR": r"₹|inr\b|rupees?\b",
}
CURRENCY_OF = {code: re.compile(words, re.IGNORECASE) for code, words in _CURRENCY_WORDS.items()}
# Any other currency sign, or a code price-parser knows ("40 CHF", "₩40"): read, and
# shown as stated (currency_of asks price-parser which currency it is).
_OTHER_CURRENCY = (
    r"(?-i:\b[A-Z]{3}(?![^\W\d_]))|["
    + re.escape("".join(c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Sc"))
    + "]"
)
# Every sign ("$", "€", "₹") is one of those; a code glued to its number is still the
# code: "USD60".
_CURRENCY_BEFORE = rf"(?:us\$|(?:usd|eur|gbp)(?![^\W\d_])|{_OTHER_CURRENCY})"
_CURRENCY_AFTER = "(?:" + "|".join([*_CURRENCY_WORDS.values(), _OTHER_CURRENCY]) + ")"
# A price: "$40", "$ 40", "40 dollars", "40 USD", "USD 40", "40 bucks", "40$", "€40",
# "200ドル", "٢٠٠ دولار".
_PRICE = rf"(?:{_CURRENCY_BEFORE}\s*{_NUMBER}|{_NUMBER}\s*{_CURRENCY_AFTER})"
# A number that is a price only because a price word stands right before it.
_PRICED_NUMBER = rf"(?:{_PRICE}|(?<![\w.]){_NUMBER}(?![\w.%]|\s*(?:-|to)?\s*(?:star|%)))"

# Limit words before a price, by the language they are of (the order is the patterns'),
# in the languages the planner is asked in; "" holds the signs of no language.
_UPPER_OF_LANGUAGE = {
    "en": r"under|below|less than|lower than|cheaper than|at most|up to|not to exceed|"
    r"max(?:imum)?(?: price| budget| cost)?(?: of)?|price cap of|cap of|budget(?: of| is|:)?|"
    r"within(?: a| my| the)?(?: budget| price)?(?: of)?|for less than|or less",
    "": r"<=?|≤",
    "es": r"menos de|por debajo de|por menos de|hasta|m[aá]ximo(?: de)?",
    "pt": r"abaixo de|até",
    "fr": r"moins de|en dessous de|jusqu'à|au plus|sous",
    "de": r"unter|bis(?: zu)?|h[oö]chstens|weniger als|maximal",
    "it": r"meno di|sotto|fino a|al massimo",
    "ar": r"تحت|أقل من|اقل من|بأقل من|لا يزيد عن|بحد أقصى",
    "zh": r"低于|不超过|少于|以内",
}
# ... and after it: "200ドル以下", "200 euros o menos".
_UPPER_AFTER_OF_LANGUAGE = {
    "en": r"or less|or under|or below|max(?:imum)?\b|at most|tops|total|in total"
    r"|limit\b|budget\b|cap\b",
    "ja": r"以下|以内|未満|まで",
    "zh": r"以下的|以内的",
    "es": r"o menos",
    "pt": r"ou menos",
    "fr": r"ou moins",
    "de": r"oder weniger",
    "it": r"o meno",
    "ar": r"أو أقل",
}
_LOWER_OF_LANGUAGE = {
    "en": r"over|above|more than|higher than|greater than|exceeding|at least|starting at|"
    r"min(?:imum)?(?: price| cost)?(?: of)?",
    "": r">=?|≥",
    "es": r"m[aá]s de|al menos|m[ií]nimo(?: de)?",
    "pt": r"mais de|pelo menos",
    "fr": r"plus de|au moins",
    "de": r"[uü]ber|mindestens|mehr als",
    "it": r"pi[uù] di|almeno",
    "ar": r"أكثر من|فوق|على الأقل",
    "zh": r"高于|超过|至少",
}
_LOWER_AFTER_OF_LANGUAGE = {
    "en": r"or more|or above|or higher|and up|minimum|min\b|at least",
    "ja": r"以上",
    "es": r"o m[aá]s",
    "pt": r"ou mais",
    "fr": r"ou plus",
    "de": r"oder mehr",
    "it": r"o pi[uù]",
    "ar": r"أو أكثر",
}
# A negation before a limit word turns it round: "nothing over $60", "not less than $20",
# "no más de 50 euros", "nicht mehr als 40 €", "sin gastar más de 90 dólares".
_NEGATION_OF_LANGUAGE = {
    "en": r"no|not|nothing|never|cannot|without|[^\W\d_]+n['’]t",
    "es": r"no|nada|sin",
    "pt": r"não|nada|sem",
    "fr": r"pas|rien|sans",
    "de": r"nicht|nichts|ohne",
    "it": r"non|niente|senza",
}


# Words that add to what came before ("and a kit for it", "plus a lamp", "et aussi"):
# a small closed class in each language, beside the shop's own departments, by which a
# follow-up's "add" is checked (graph/shaping/follow_up.py).
_ADDING_OF_LANGUAGE = {
    "en": r"and|also|too|plus|add|adding|another|as well|with it|along with",
    "es": r"y|también|además|añade|añadir|otro|otra",
    "pt": r"e|também|além|adiciona|outro|outra",
    "fr": r"et|aussi|en plus|ajoute|ajouter|autre",
    "de": r"und|auch|dazu|noch|zusätzlich|füge",
    "it": r"e|anche|inoltre|aggiungi|altro|altra",
}
ADDING = re.compile(
    r"(?<![\w-])(?:" + "|".join(_ADDING_OF_LANGUAGE.values()) + r")(?![\w-])", re.IGNORECASE
)


# A word of a negation's clause: no punctuation, no word that adds ("no frills, over $20").
_WORD_OF_CLAUSE = rf"\s+(?!(?:{'|'.join(_ADDING_OF_LANGUAGE.values())})(?![\w-]))[^\W\d_][\w'’-]*"


def _negated(words: dict[str, str], reach: int = 0) -> str:
    return "|".join(
        rf"(?<![\w'])(?:{negation})(?:{_WORD_OF_CLAUSE}){{0,{reach}}}\s+(?:{words[language]})"
        for language, negation in _NEGATION_OF_LANGUAGE.items()
        if language in words
    )


_LIMIT_WORDS = (
    _UPPER_OF_LANGUAGE,
    _UPPER_AFTER_OF_LANGUAGE,
    _LOWER_OF_LANGUAGE,
    _LOWER_AFTER_OF_LANGUAGE,
)
# Each kind of limit word, in every language.
_UPPER, _UPPER_AFTER, _LOWER, _LOWER_AFTER = ("|".join(words.values()) for words in _LIMIT_WORDS)
# The decimal mark of each language: it decides an amount its digit groups leave open
# ("1.500": $1.50 beside an English limit word, 1500 beside a Spanish one). Arabic writes
# both, so its words leave the digit groups to decide.
_DECIMAL_MARK = {
    **dict.fromkeys(("en", "ja", "zh"), "."),
    **dict.fromkeys(("es", "pt", "fr", "de", "it"), ","),
}
_LIMIT_WORDS_OF_LANGUAGE = {
    language: re.compile(
        r"(?<!\w)(?:" + "|".join(w[language] for w in _LIMIT_WORDS if language in w) + r")(?!\w)",
        re.IGNORECASE,
    )
    for language in _DECIMAL_MARK
}


def decimal_mark_of(phrase: str) -> str | None:
    """The decimal mark of the language of a price phrase's limit words, if they are of
    languages that agree on one ("menos de 1.500 dólares": ","), else None."""
    marks = {
        mark
        for language, mark in _DECIMAL_MARK.items()
        if _LIMIT_WORDS_OF_LANGUAGE[language].search(phrase)
    }
    return marks.pop() if len(marks) == 1 else None


_PRICE_WORDS = r"price[sd]?|priced|costs?|costing|budget|spend|pay|paying"
# "free shipping on orders over $25", "when you spend $50": a threshold of the shop, not a
# limit on the item ("spend $60 total" is the shopper's).
NOT_A_LIMIT = re.compile(
    r"\b(?:shipping|delivery|orders?|purchases?|(?:you|when|if|once)\s+spend(?:ing)?|gift cards?"
    r"|coupons?|discounts?"
    r"|off|saves?|savings)\W+(?:\w+\W+)?$",
    re.IGNORECASE,
)

RANGE = re.compile(
    rf"(?:between|from|range of|range|ranging from|entre|zwischen)?\s*{_PRICE}\s*"
    rf"(?:-|–|to|and|y|e|et|und|a|bis)\s*(?:{_PRICE}|{_NUMBER}(?![\w.%]))"
    rf"|(?<![\w.,]){_NUMBER}\s*(?:-|–|to)\s*{_NUMBER}\s*{_CURRENCY_AFTER}",  # "20 to 30 dollars"
    re.IGNORECASE,
)
PRICE_RANGE_WORDS = re.compile(
    rf"(?:{_PRICE_WORDS})\s+(?:range\s+)?(?:of\s+|between\s+|from\s+)?{_NUMBER}\s*(?:-|–|to|and)"
    rf"\s*{_NUMBER}(?!\s*(?:star|%|[a-z]))",
    re.IGNORECASE,
)
UPPER_LIMIT = re.compile(
    rf"(?:{_UPPER})\s*(?:the\s+|a\s+|an\s+)?(?:price\s+of\s+)?{_PRICE}"
    rf"|(?:(?:{_PRICE_WORDS})\s+(?:{_UPPER})\s*{_PRICED_NUMBER})",
    re.IGNORECASE,
)
LOWER_LIMIT = re.compile(
    rf"(?:{_LOWER})\s*{_PRICE}|(?:(?:{_PRICE_WORDS})\s+(?:{_LOWER})\s*{_PRICED_NUMBER})",
    re.IGNORECASE,
)
# A limit word after the price, read after those before it: "at least $70 total" is a
# floor, not a total.
UPPER_LIMIT_AFTER = re.compile(rf"{_PRICE}\s*(?:{_UPPER_AFTER})", re.IGNORECASE)
LOWER_LIMIT_AFTER = re.compile(rf"{_PRICE}\s*(?:{_LOWER_AFTER})", re.IGNORECASE)
# Read before the two above, so that "not over $60" is never "over $60". A floor word is
# turned up to 3 words after its negation ("don't want to go over $60"), a cap word only
# right after it: "without batteries under $20" is a cap.
NEGATED_LOWER_LIMIT = re.compile(
    rf"(?:{_negated(_LOWER_OF_LANGUAGE, 3)})\s*{_PRICE}", re.IGNORECASE
)
NEGATED_UPPER_LIMIT = re.compile(rf"(?:{_negated(_UPPER_OF_LANGUAGE)})\s*{_PRICE}", re.IGNORECASE)
BARE_PRICE = re.compile(_PRICE, re.IGNORECASE)
BUDGET_NUMBER = re.compile(rf"\bbudget(?: of| is|:)?\s*{_NUMBER}(?![\w.%])", re.IGNORECASE)
# A price written below zero ("under $-5", "-5 dollars"): no product costs that.
NEGATIVE_PRICE = re.compile(
    rf"{_CURRENCY_BEFORE}\s*[-−]\s*\d|(?<![\w.])(?:[-−]|minus\s)\s*{_NUMBER}\s*{_CURRENCY_AFTER}"
    # "-$60", "minus $60", but not a range's "$20-$40" nor a dash: "a card - $850".
    rf"|(?<![\w.,])(?:[-−]|minus\s+){_CURRENCY_BEFORE}\s*{_NUMBER}",
    re.IGNORECASE,
)
# Words that make a cap one on the sum of the items: "$150 total", "all three for $90",
# "under $100 combined", "all within $300", "a total budget of $200".
TOTAL_WORDS = re.compile(
    r"\b(?:total|in all|combined|altogether|all together|overall|for everything|for both|"
    r"for all|all (?:three|four|five|of (?:it|them|these)|within|for|together|in)|"
    r"for the (?:lot|set|bundle|pair)|sum|together|en total|insgesamt|au total|in totale|"
    r"no total|合計|全部で)\b|合計|全部で|総額|总共|一共|المجموع|الإجمالي",
    re.IGNORECASE,
)
TOTAL_BEFORE_CHARS = 30
TOTAL_AFTER_CHARS = 20
# Words that make a cap one on every item: "under $25 each", "$10 apiece".
EACH_WORDS = re.compile(
    r"\b(?:each|apiece|a piece|per item|per piece|every one|cada uno|cada una|chacun|chacune"
    r"|pièce|jeweils|pro stück|ciascuno|cadauno)\b|每个|各",
    re.IGNORECASE,
)
# A clause after a cap that names its item: "no more than $10 on the kit".
ITEM_AFTER = re.compile(r"^\s*(?:on|for|para|pour|für|per)\s+([^,;:.!?()]*)", re.IGNORECASE)

_STARS = (
    r"(?:-|\s)?(?:\+\s*)?(?:stars?|star rating|estrellas?|estrelas?|[eé]toiles?|sterne?|stelle|"
    r"つ星|星|نجوم|نجمات|نجمة)"
)
RATING = re.compile(
    # "4.5 stars or higher", "at least 4.5-star", "4+ stars", "4.5+ star rating"
    rf"(?:(?:at least|minimum(?: of)?|min(?:imum)? rating(?: of)?|no less than|not less than|"
    rf"above|over|exceeding|more than|higher than|rated|rating(?: of)?|al menos|m[ií]nimo|"
    rf"au moins|mindestens|almeno|pelo menos|至少)\s*(?:an?\s+)?)?"
    rf"(\d(?:[.,٫]\d+)?)\s*(\+)?{_STARS}(?:\s*(or (?:higher|more|above|better|up)|and (?:up|above)"
    rf"|\+|minimum|min|or greater|以上|o m[aá]s|ou plus|oder mehr|أو أكثر))?"
    # "rated above 4", "a rating of at least 4.5", "rating exceeding 4.0", "4.5+ rating"
    rf"|(?:rated|rating|ratings|reviews? score)\s+(?:of\s+)?(?:at least|above|over|exceeding|"
    rf"no less than|not less than|higher than|more than|of|>=?|≥)\s*(\d(?:[.,٫]\d+)?)(?![\d.%]|\s*"
    rf"(?:reviews?|ratings?|customers?|users?|people|buyers))"
    rf"|(\d(?:[.,٫]\d+)?)\s*\+\s*(?:rating|rated)",
    re.IGNORECASE,
)

# Number words where a currency or a star follows or a rating word comes before: "fifty
# dollars", "one hundred and fifty dollars", "mil quinientos dólares", "zweihundert Euro",
# "four stars", "rated above four". Elsewhere ("one pair", "two items") a number word is
# no limit and stays as written. text2num reads them, in the planner's languages.
_NUMBER_WORD_LANGUAGES = ("en", "es", "pt", "fr", "de", "it")
_WORDS_BEFORE_UNIT = re.compile(
    rf"(?<![\w'])((?:[^\W\d_]+[\s-]+){{0,7}}[^\W\d_]+)"
    rf"(?=\s*(?:-\s*)?(?:{_CURRENCY_AFTER}|{_STARS}))",
    re.IGNORECASE,
)
_WORDS_AFTER_RATING = re.compile(
    r"\b((?:rated|rating(?: of)?)\s+(?:(?:at least|above|over|of)\s+)?)([^\W\d_]+)\b",
    re.IGNORECASE,
)


# A bare hundred or thousand ("a thousand", "doscientos") is read after a limit or price
# word only; after another word ("a couple hundred", "half a hundred") that word says how
# many, which no reader here knows: it stays in words, and is named (unreadable_amounts).
_BEFORE_A_BARE_SCALE = re.compile(
    rf"(?<!\w)(?:{_UPPER}|{_LOWER}|{_PRICE_WORDS})(?:\s+[^\W\d_]{{1,2}})?\s*$", re.IGNORECASE
)


def _words_to_digits(words: str) -> str:
    """`words` with the number words that end them written in digits by text2num, in the
    first of the planner's languages that reads a number there ("for twenty to thirty" ->
    "for 20 to 30", "fifty-five point five" -> "55.5"); as they are when they end in no
    number, or in a bare hundred or thousand after a word that says how many."""
    for language in _NUMBER_WORD_LANGUAGES:
        digits = alpha2digit(words, language, threshold=0)
        number = re.search(r"\d+$", digits)
        if number is None:
            continue
        last_word = words.split()[-1]
        try:
            bare_scale = int(number.group(0)) >= 100 and text2num(last_word, language) == int(
                number.group(0)
            )
        except ValueError:
            bare_scale = False
        if bare_scale and not _BEFORE_A_BARE_SCALE.search(digits[: number.start()]):
            return words
        return digits
    return words


# A number with nothing after it but a limit word ("without going over 80", "50 at most",
# "no quiero gastar más de 45"): an amount written with no currency, which only the
# planner model's reading makes a limit (graph/shaping/limits.py: model_read_limits).
_BARE_AMOUNT = re.compile(
    rf"(?<![\w.,]){_NUMBER}(?=\s*(?:$|[^\w\s-]|(?:{_UPPER_AFTER}|{_LOWER_AFTER})(?!\w)))",
    re.IGNORECASE,
)


# A cap word right before an amount ("keep it below a hundred"), an article between.
_AFTER_A_CAP = re.compile(rf"(?<!\w)(?:{_UPPER})(?:\s+[^\W\d_]{{1,2}})?\s*$", re.IGNORECASE)


def bare_amounts(text: str, *, capped: bool = False) -> set[float]:
    """The amounts `text` writes in digits or number words with no word after them but a
    limit word; "300 reviews" and "4 stars" are none. `capped`: only those right after a
    cap word ("below a hundred", not "a cheaper one")."""
    return {
        amount
        for language in _NUMBER_WORD_LANGUAGES
        for digits in [alpha2digit(text, language, threshold=0)]
        for match in _BARE_AMOUNT.finditer(digits)
        if not capped or _AFTER_A_CAP.search(digits[: match.start()])
        if (amount := amount_of(match.group(1))) is not None
    }


def count_of(clause: str) -> int | None:
    """The count a clause starts with, in digits or English words ("three camera straps":
    3); None for none. Only English: "Once you sort..." is eleven in Spanish."""
    count = re.match(r"(\d+)\s+[^\W\d_]", alpha2digit(clause.strip(), "en", threshold=0))
    return int(count.group(1)) if count is not None else None


# "60 dollars and 50 cents": one amount, $60.50.
_AND_CENTS = re.compile(
    rf"(?<![\d.,])(\d+)\s*({_CURRENCY_AFTER})\s+(?:[^\W\d_]+\s+)?(\d{{1,2}})\s*cents?\b",
    re.IGNORECASE,
)


def with_digits(text: str) -> str:
    """`text` with the number words of its limits written as digits ("fifty dollars" ->
    "50 dollars"), so one set of patterns reads both."""
    text = _WORDS_BEFORE_UNIT.sub(lambda m: _words_to_digits(m.group(1)), text)
    text = _WORDS_AFTER_RATING.sub(lambda m: m.group(1) + _words_to_digits(m.group(2)), text)
    return _AND_CENTS.sub(lambda m: f"{m[1]}.{int(m[3]):02d} {m[2]}", text)


DANGLING = re.compile(
    r"(?:\s+\b(?:under|below|less|than|over|above|at|least|most|or|more|and|with|for|rated|"
    r"priced|max|min|up|to|no)\b)+\s*$",
    re.IGNORECASE,
)


_SUFFIXES = {"k": 1_000, "m": 1_000_000}
# One "." or "," before three digits: a decimal mark or a thousands separator, as the
# language of the phrase writes it.
_OPEN_GROUPS = re.compile(r"\d{1,3}[.,]\d{3}")


def amount_of(number: str, decimal_mark: str | None = None) -> float | None:
    """The amount a number of a price phrase writes, read by price-parser: its digit
    groups tell which mark is the decimal one ("1.500,00", "40,50", "1 000", "1'500"); where
    they leave it open ("1.500"), `decimal_mark` (the phrase's language's) decides. None
    when the text is no number."""
    number = "".join(str(unicodedata.decimal(c, c)) for c in number.strip())
    number = number.replace("٬", "").replace("_", "").replace("٫", ".")
    multiplier = _SUFFIXES.get(number[-1:].lower(), 1)
    if multiplier != 1:
        number = number[:-1]
    mark = decimal_mark if _OPEN_GROUPS.fullmatch(number) else None
    amount = Price.fromstring(number, decimal_separator=mark).amount
    return None if amount is None else float(amount) * multiplier


def numbers_of(
    groups: tuple[str | None, ...], decimal_mark: str | None = None
) -> list[float | None]:
    return [amount_of(g, decimal_mark) for g in groups if g]


# What stands beside a currency as its amount: digits glued to letters and marks, and
# digits a space apart ("$6 0", a zero-width space read as one); after a sign, a word or a
# symbol ("$NaN", "$∞"); before a currency word, words no number was read from ("a dozen
# dollars", "шестидесяти долларов"). Only one number is an amount ("$1,299.99", "$1.5k",
# "$40USD"); the rest ("$6O", "$1e309", "$60.5.5") is named, never read as the digits it
# starts with.
_AMOUNT_TEXT = r"(\d[\w.,'٬٫]*(?:[ \u2009\u202f]\d[\w.,'٬٫]*(?![\w-]))*)"
_NO_NUMBER_AFTER_SIGN = r"([^\W\d_]+|[^\w\s\-−+<>=≤≥.,;:!?()'\"$€£¥₹])"
# A currency word after Latin letters starts a word of its own: "déclencheur" and
# "ordinateur" end in no euro; "二百ドル" is written without spaces.
_WORDS_BESIDE_CURRENCY = (
    r"(?<![\w'])(?<!\d\s)(?P<words>(?:[^\W\d_]+\s+){0,2}[^\W\d_]+)[\s-]*"
    r"(?<![A-Za-z\u00c0-\u024f])(?=[^\W\d_])"
)
AMOUNT_BESIDE_CURRENCY = re.compile(
    rf"{_CURRENCY_BEFORE}\s*(?:{_AMOUNT_TEXT}|{_NO_NUMBER_AFTER_SIGN})"
    rf"|(?<![\w.,']){_AMOUNT_TEXT}\s*{_CURRENCY_AFTER}"
    rf"|{_WORDS_BESIDE_CURRENCY}{_CURRENCY_AFTER}(?!\s*\d)",
    re.IGNORECASE,
)
_ONE_NUMBER = re.compile(rf"{_NUMBER_TEXT}(?:{_CURRENCY_AFTER})?[.,']*", re.IGNORECASE)


def unreadable_amounts(text: str) -> list[re.Match[str]]:
    """Where `text` writes an amount beside a currency that is no one number; a match of
    words beside a currency (group "words") is one only if a word could name something
    (not "in dollars": the caller knows the words)."""
    return [
        match
        for match in AMOUNT_BESIDE_CURRENCY.finditer(text)
        if (digits := match.group(1) or match.group(3)) is None or not _ONE_NUMBER.fullmatch(digits)
    ]


_OTHER_CURRENCY_MARK = re.compile(_OTHER_CURRENCY)


def currency_of(text: str) -> str | None:
    """The currency a price phrase is written in; a number with a price word only is in
    the catalog's. None when its only mark is three capitals that name no currency
    ("40 LED")."""
    found = [
        (match.start(), code)
        for code, pattern in CURRENCY_OF.items()
        if (match := pattern.search(text)) is not None
    ]
    if found:
        return min(found)[1]
    if _OTHER_CURRENCY_MARK.search(text):
        return Price.fromstring(text).currency
    return PRICE_CURRENCY
