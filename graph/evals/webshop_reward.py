"""WebShop's reward for a purchased product, re-implemented from the benchmark's
`web_agent_site/engine/goal.py` (Yao et al., 2022), so runs here score as WebShop scores.

reward = r_type * (attributes matched + options matched + price ok) / (attributes + options + 1)

One documented approximation: WebShop finds the nouns of product names with spaCy's
part-of-speech tagger. We take the name's words of three letters or more that are not
stop words or common descriptive words, which avoids shipping a language model.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

CATEGORY_SEPARATOR = "\u203a"  # WebShop joins category paths with this
FUZZY_MATCH_THRESHOLD = 85  # WebShop's token_set_ratio cut-off

_STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to with "
    "without your you our their his her new set pack pcs piece pieces size color inch inches "
    "men mens women womens woman man kids girls boys unisex adult adults".split()
)
# Words that spaCy tags as adjectives or numbers in typical product names.
_DESCRIPTIVE = frozenset(
    "black white red blue green pink purple yellow grey gray brown silver gold large small "
    "medium big mini long short soft hard high low best premium professional natural portable "
    "adjustable waterproof durable lightweight heavy light easy comfortable cute classic "
    "modern vintage casual warm cool slim thick thin wide extra super ultra organic free".split()
)
_WORD = re.compile(r"[a-z][a-z'-]+")


def as_list(value: Any) -> list[str]:
    """WebShop stores lists as Python-literal strings ("['a', 'b']"); accept both."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value)
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return [text]
    return [str(v) for v in parsed] if isinstance(parsed, list | tuple) else [str(parsed)]


def name_nouns(name: str) -> set[str]:
    words = _WORD.findall(name.lower())
    return {w for w in words if len(w) >= 3 and w not in _STOP_WORDS and w not in _DESCRIPTIVE}


def fuzzy_match(a: str, b: str) -> bool:
    return fuzz.token_set_ratio(a, b, processor=default_process) > FUZZY_MATCH_THRESHOLD


@dataclass(frozen=True)
class Reward:
    reward: float
    r_type: float
    attributes_matched: int
    attributes_total: int
    options_matched: int
    options_total: int
    price_ok: bool
    category_match: bool
    title_score: float


def type_reward(purchased: dict[str, Any], target: dict[str, Any]) -> tuple[float, bool, float]:
    """(r_type, category match, title score), as WebShop's get_type_reward."""
    query_match = bool(purchased.get("query")) and purchased.get("query") == target.get("query")
    purchased_path = {
        p.strip() for p in str(purchased.get("product_category", "")).split(CATEGORY_SEPARATOR)
    }
    target_path = {
        p.strip() for p in str(target.get("product_category", "")).split(CATEGORY_SEPARATOR)
    }
    category_match = len((purchased_path & target_path) - {""}) >= 2
    desired = name_nouns(str(target.get("name", "")))
    bought = name_nouns(str(purchased.get("name", "")))
    title_score = 0.2 if not desired else len(desired & bought) / len(desired)
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, category_match, title_score


def attributes_matched(purchased: dict[str, Any], goal_attributes: list[str]) -> int:
    """Goal attributes found in the product's attributes (fuzzy), or in its title,
    bullet points or description (substring), as WebShop's get_attribute_reward."""
    product_attributes = as_list(purchased.get("Attributes"))
    text = " ".join(
        [
            str(purchased.get("Title") or purchased.get("name") or ""),
            " ".join(as_list(purchased.get("BulletPoints") or purchased.get("small_description"))),
            str(purchased.get("Description") or purchased.get("full_description") or ""),
        ]
    ).lower()
    matched = 0
    for wanted in goal_attributes:
        if any(fuzzy_match(have, wanted) for have in product_attributes) or wanted.lower() in text:
            matched += 1
    return matched


def options_matched(chosen_options: list[str], goal_options: list[str]) -> int:
    return sum(
        1 for wanted in goal_options if any(fuzzy_match(have, wanted) for have in chosen_options)
    )


def webshop_reward(
    purchased: dict[str, Any],
    price: float,
    goal: dict[str, Any],
    target: dict[str, Any],
    chosen_options: list[str] | None = None,
) -> Reward:
    """Score buying `purchased` (a raw WebShop product) at `price` for `goal`, whose
    target product is `target` (its name, category and query define the wanted type)."""
    attributes = list(goal.get("attributes") or [])
    goal_options = goal.get("goal_options") or {}
    wanted_options = list(goal_options.values() if isinstance(goal_options, dict) else goal_options)
    price_upper = float(goal.get("price_upper") or 0)
    price_ok = price <= price_upper if price_upper > 0 else True
    r_type, category_match, title_score = type_reward(purchased, target)
    n_attributes = attributes_matched(purchased, attributes)
    n_options = options_matched(chosen_options or [], wanted_options)
    total = (n_attributes + n_options + int(price_ok)) / (len(attributes) + len(wanted_options) + 1)
    return Reward(
        reward=round(total * r_type, 4),
        r_type=r_type,
        attributes_matched=n_attributes,
        attributes_total=len(attributes),
        options_matched=n_options,
        options_total=len(wanted_options),
        price_ok=price_ok,
        category_match=category_match,
        title_score=round(title_score, 4),
    )
