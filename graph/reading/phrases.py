"""How shoppers write limits: currency marks and words, the limit words of the languages
the planner is asked in, number words, and the patterns that find price and rating
phrases in a text. graph/checks/stated.py reads a request with them.

The patterns are deliberately conservative: a number counts as a price only with a
currency mark ("$40", "40 dollars", "€40") or a price word beside it ("priced under 40",
"budget 40"); a rating only with "star(s)" or "rating"/"rated" beside it. Sizes, counts
and review numbers ("10 to 10.9 inches", "6 to 8 outlets", "300 reviews") are neither.
"""

from __future__ import annotations

import re

from catalog.models import PRICE_CURRENCY

# Digits of any script ("٢٠٠" reads as 200), with "," or the Arabic thousands separator
# (U+066C) between thousands, and "." or the Arabic decimal separator (U+066B).
_NUMBER = r"(\d{1,3}(?:[,٬]\d{3})+(?:[.٫]\d+)?|\d+(?:[.٫]\d+)?)"
# Currency marks, by the currency they name. The catalog's own (PRICE_CURRENCY) makes a
# limit; any other is read, shown as stated and never converted (no rates offline).
# "pounds" alone is a weight, so sterling needs its sign or its code.
_CURRENCY_WORDS = {
    "USD": r"\$|us\$|usd\b|dollars?\b|d[oó]lar(?:es)?\b|bucks\b|ドル|美元|دولار(?:ا|ات)?"
    r"|доллар(?:ов|а)?",
    "EUR": r"€|eur\b|euros?\b|يورو|евро",
    "GBP": r"£|gbp\b|pounds? sterling\b",
    "JPY": r"¥|円|jpy\b|yen\b",
    "CNY": r"元|cny\b|rmb\b|yuan\b",
    "INR": r"₹|inr\b|rupees?\b",
}
CURRENCY_OF = {code: re.compile(words, re.IGNORECASE) for code, words in _CURRENCY_WORDS.items()}
_CURRENCY_BEFORE = r"(?:\$|us\$|usd\b|€|eur\b|£|gbp\b|¥|₹)"
_CURRENCY_AFTER = "(?:" + "|".join(_CURRENCY_WORDS.values()) + ")"
# A price: "$40", "$ 40", "40 dollars", "40 USD", "USD 40", "40 bucks", "40$", "€40",
# "200ドル", "٢٠٠ دولار".
_PRICE = rf"(?:{_CURRENCY_BEFORE}\s*{_NUMBER}|{_NUMBER}\s*{_CURRENCY_AFTER})"
# A number that is a price only because a price word stands right before it.
_PRICED_NUMBER = rf"(?:{_PRICE}|(?<![\w.]){_NUMBER}(?![\w.%]|\s*(?:-|to)?\s*(?:star|%)))"

# Limit words before a price, in the languages the planner is asked in: English, then
# Spanish, Portuguese, French, German, Italian, Arabic, Chinese.
_UPPER = (
    r"under|below|less than|lower than|cheaper than|at most|up to|no more than|not more than|"
    r"no higher than|not higher than|not exceeding|not to exceed|no greater than|max(?:imum)?"
    r"(?: price| budget| cost)?(?: of)?|price cap of|cap of|budget(?: of| is|:)?|within"
    r"(?: a| my| the)?(?: budget| price)?(?: of)?|for less than|or less|<=?|≤|"
    r"menos de|por debajo de|por menos de|hasta|m[aá]ximo(?: de)?|abaixo de|até|"
    r"moins de|en dessous de|jusqu'à|au plus|sous|unter|bis(?: zu)?|h[oö]chstens|"
    r"weniger als|maximal|meno di|sotto|fino a|al massimo|"
    r"تحت|أقل من|اقل من|بأقل من|لا يزيد عن|بحد أقصى|"
    r"低于|不超过|少于|以内"
)
# ... and after it: "200ドル以下", "200 euros o menos".
_UPPER_AFTER = (
    r"or less|or under|or below|max(?:imum)?\b|at most|tops|total|in total|"
    r"以下|以内|未満|まで|以下的|以内的|o menos|ou menos|ou moins|oder weniger|o meno|أو أقل"
)
_LOWER = (
    r"over|above|more than|at least|no less than|not less than|starting at|min(?:imum)?"
    r"(?: price| cost)?(?: of)?|>=?|≥|"
    r"m[aá]s de|al menos|m[ií]nimo(?: de)?|mais de|pelo menos|plus de|au moins|"
    r"[uü]ber|mindestens|mehr als|pi[uù] di|almeno|أكثر من|فوق|على الأقل|高于|超过|至少"
)
_LOWER_AFTER = (
    r"or more|or above|or higher|and up|minimum|min\b|at least|以上|o m[aá]s|ou mais|"
    r"ou plus|oder mehr|o pi[uù]|أو أكثر"
)
_PRICE_WORDS = r"price[sd]?|priced|costs?|costing|budget|spend|pay|paying"
# "free shipping on orders over $25": a threshold of the shop, not a limit on the item.
NOT_A_LIMIT = re.compile(
    r"\b(?:shipping|delivery|orders?|purchases?|spend(?:ing)?|gift cards?|coupons?|discounts?"
    r"|off|saves?|savings)\W+(?:\w+\W+)?$",
    re.IGNORECASE,
)

RANGE = re.compile(
    rf"(?:between|from|range of|range|ranging from|entre|zwischen)?\s*{_PRICE}\s*"
    rf"(?:-|–|to|and|y|e|et|und|a|bis)\s*(?:{_PRICE}|{_NUMBER}(?![\w.%]))",
    re.IGNORECASE,
)
PRICE_RANGE_WORDS = re.compile(
    rf"(?:{_PRICE_WORDS})\s+(?:range\s+)?(?:of\s+|between\s+|from\s+)?{_NUMBER}\s*(?:-|–|to|and)"
    rf"\s*{_NUMBER}(?!\s*(?:star|%|[a-z]))",
    re.IGNORECASE,
)
UPPER_LIMIT = re.compile(
    rf"(?:{_UPPER})\s*(?:the\s+|a\s+|an\s+)?(?:price\s+of\s+)?{_PRICE}"
    rf"|(?:(?:{_PRICE_WORDS})\s+(?:{_UPPER})\s*{_PRICED_NUMBER})"
    rf"|{_PRICE}\s*(?:{_UPPER_AFTER})",
    re.IGNORECASE,
)
LOWER_LIMIT = re.compile(
    rf"(?:{_LOWER})\s*{_PRICE}|(?:(?:{_PRICE_WORDS})\s+(?:{_LOWER})\s*{_PRICED_NUMBER})"
    rf"|{_PRICE}\s*(?:{_LOWER_AFTER})",
    re.IGNORECASE,
)
BARE_PRICE = re.compile(_PRICE, re.IGNORECASE)
BUDGET_NUMBER = re.compile(rf"\bbudget(?: of| is|:)?\s*{_NUMBER}(?![\w.%])", re.IGNORECASE)
# A price written below zero ("under $-5", "-5 dollars"): no product costs that.
NEGATIVE_PRICE = re.compile(
    rf"{_CURRENCY_BEFORE}\s*[-−]\s*\d|(?<![\w.])[-−]\s*{_NUMBER}\s*{_CURRENCY_AFTER}",
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

_STARS = (
    r"(?:-|\s)?(?:\+\s*)?(?:stars?|star rating|estrellas?|estrelas?|[eé]toiles?|sterne?|stelle|"
    r"つ星|星|نجوم|نجمات|نجمة)"
)
RATING = re.compile(
    # "4.5 stars or higher", "at least 4.5-star", "4+ stars", "4.5+ star rating"
    rf"(?:(?:at least|minimum(?: of)?|min(?:imum)? rating(?: of)?|no less than|not less than|"
    rf"above|over|exceeding|more than|higher than|rated|rating(?: of)?|al menos|m[ií]nimo|"
    rf"au moins|mindestens|almeno|pelo menos|至少)\s*(?:an?\s+)?)?"
    rf"(\d(?:[.٫]\d+)?)\s*(\+)?{_STARS}(?:\s*(or (?:higher|more|above|better|up)|and (?:up|above)"
    rf"|\+|minimum|min|or greater|以上|o m[aá]s|ou plus|oder mehr|أو أكثر))?"
    # "rated above 4", "a rating of at least 4.5", "rating exceeding 4.0", "4.5+ rating"
    rf"|(?:rated|rating|ratings|reviews? score)\s+(?:of\s+)?(?:at least|above|over|exceeding|"
    rf"no less than|not less than|higher than|more than|of|>=?|≥)\s*(\d(?:[.٫]\d+)?)(?![\d.%]|\s*"
    rf"(?:reviews?|ratings?|customers?|users?|people|buyers))"
    rf"|(\d(?:[.٫]\d+)?)\s*\+\s*(?:rating|rated)",
    re.IGNORECASE,
)

# Number words up to a hundred, where a currency or a star follows or a rating word
# comes before: "fifty dollars", "four stars", "rated above four". Elsewhere ("one
# pair", "two items") a number word is no limit and stays as written.
_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUES = {word: n for n, word in enumerate(_UNITS)} | {
    word: 10 * n for n, word in enumerate(_TENS, start=2)
}
_NUMBER_WORD = (
    rf"(?:(?:a|one)[\s-]+hundred|(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(_UNITS[1:10])}))?"
    rf"|{'|'.join(_UNITS)})"
)
_WORDS_BEFORE_UNIT = re.compile(
    rf"\b({_NUMBER_WORD})\b(?=\s*(?:-\s*)?(?:{_CURRENCY_AFTER}|stars?\b|star rating))",
    re.IGNORECASE,
)
_WORDS_AFTER_RATING = re.compile(
    rf"\b((?:rated|rating(?: of)?)\s+(?:(?:at least|above|over|of)\s+)?)({_NUMBER_WORD})\b",
    re.IGNORECASE,
)


def _word_value(text: str) -> int:
    words = re.split(r"[\s-]+", text.lower())
    if words[-1] == "hundred":
        return 100
    return sum(_WORD_VALUES[w] for w in words)


def with_digits(text: str) -> str:
    """`text` with the number words of its limits written as digits ("fifty dollars" ->
    "50 dollars"), so one set of patterns reads both."""
    text = _WORDS_BEFORE_UNIT.sub(lambda m: str(_word_value(m.group(1))), text)
    return _WORDS_AFTER_RATING.sub(lambda m: m.group(1) + str(_word_value(m.group(2))), text)


DANGLING = re.compile(
    r"(?:\s+\b(?:under|below|less|than|over|above|at|least|most|or|more|and|with|for|rated|"
    r"priced|max|min|up|to|no)\b)+\s*$",
    re.IGNORECASE,
)


def number_of(text: str) -> float:
    return float(text.replace(",", "").replace("٬", "").replace("٫", "."))


def numbers_of(groups: tuple[str | None, ...]) -> list[float]:
    return [number_of(g) for g in groups if g]


def currency_of(text: str) -> str:
    """The currency a price phrase is written in; a number with a price word only is in
    the catalog's."""
    found = [
        (match.start(), code)
        for code, pattern in CURRENCY_OF.items()
        if (match := pattern.search(text)) is not None
    ]
    return min(found)[1] if found else PRICE_CURRENCY
