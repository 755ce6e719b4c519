"""WebShop's purchase reward, reproduced from ``engine/goal.py`` and ``engine/normalize.py``.

    reward = r_type * (n_attr + n_opt + [price <= price_upper]) / (len(attrs) + len(goal_options) + 1)

* ``r_type`` (type match): 1 by default; 0.5 when neither the query, nor two or more
  ``›``-separated product-category levels, nor more than 0.2 of the goal name's nouns match;
  0.1 when the noun overlap (``title_score``) is below 0.1; 0 when it is 0. With no nouns in
  the goal name ``title_score`` is 0.2.
* attributes: a goal attribute matches if thefuzz's ``token_set_ratio`` with one of the
  product's attributes is above 85, else if it is a substring of the lower-cased title,
  bullet points or description (the attribute itself is not lower-cased).
* options: purchased and goal options are colour-normalised (the first of WebShop's colour
  words contained in the string), then each goal option matches if some purchased option
  has ``token_set_ratio`` above 85. Synthetic goals keep options as ``{name: value}`` and
  WebShop iterates ``.items()``, so each goal option is a ``(name, value)`` pair: colour
  normalisation maps it to a colour only when the value *is* a colour word, and otherwise
  the fuzzy match sees ``"name value"`` (thefuzz applies ``str()``). envhub reproduces that.
* ``token_set_ratio`` is thefuzz 0.22's: ``str()``, drop characters 128-255, rapidfuzz's
  ``default_process``, rapidfuzz ``token_set_ratio``, ``int(round(...))``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from envhub.envs.webshop.catalogue import Product
from envhub.envs.webshop.goals import Goal
from envhub.envs.webshop.nouns import NounTagger

__all__ = [
    "COLOR_SET",
    "RewardResult",
    "normalize_color",
    "purchase_reward",
    "token_set_ratio",
    "type_reward",
]

#: WebShop's colour words, in its order (the first one contained in a string wins).
COLOR_SET: tuple[str, ...] = tuple(
    """alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze brown
    burgundy camel camo caramel champagne charcoal cheetah chestnut chocolate christmas coffee
    cognac copper coral cranberry cream crystal dark denim eggplant elephant espresso fuchsia
    gold granite grape graphite grass gray green grey heather indigo ivory ivy khaki lavender
    lemon leopard light lilac lime magenta maroon mauve merlot midnight mint mocha multicolor
    mushroom mustard natural navy nude olive orange peach pewter pink plum purple rainbow red
    rose royal rust sand sapphire seashell silver skull slate steel stone stonewash sunflower
    tan taupe teal tiger turquoise violet walnut wheat white wine yellow""".split()  # noqa: SIM905
)

_LATIN1_HIGH = {i: None for i in range(128, 256)}
_MATCH_THRESHOLD = 85


def normalize_color(option: Any) -> Any:
    """The first colour word ``in`` ``option``, else ``option`` unchanged (WebShop's ``normalize_color``).

    For a string this is a substring test (``"dark brown"`` -> ``"brown"``, ``"washed"`` ->
    ``"ash"``); for a ``(name, value)`` pair it is an element test, as in WebShop.
    """
    for color in COLOR_SET:
        if color in option:
            return color
    return option


def token_set_ratio(a: Any, b: Any) -> int:
    """thefuzz 0.22's ``fuzz.token_set_ratio`` (full processing, ASCII forced)."""
    if a is None or b is None:
        return 0
    pa = default_process(str(a).translate(_LATIN1_HIGH))
    pb = default_process(str(b).translate(_LATIN1_HIGH))
    return round(fuzz.token_set_ratio(pa, pb))


@dataclass(frozen=True)
class RewardResult:
    """A purchase's score and WebShop's verbose components.

    Attributes:
        score: the raw WebShop reward in [0, 1].
        info: ``r_type, r_att, w_att, query_match, category_match, title_score`` and, where
            defined, ``r_option, w_option, r_price, w_price`` (WebShop's verbose dict), plus
            ``noun_tagger``.
    """

    score: float
    info: dict[str, Any]


def type_reward(product: Product, goal: Goal, tagger: NounTagger) -> dict[str, Any]:
    """WebShop's ``get_type_reward``: is the purchase the same kind of product as the goal's?"""
    query_match = product.query == goal.query
    bought = {x.strip() for x in product.product_category.split("›")}
    wanted = {x.strip() for x in goal.product_category.split("›")}
    category_match = len(bought & wanted) >= 2
    bought_nouns = tagger.nouns(product.title)
    wanted_nouns = tagger.nouns(goal.name)
    if len(wanted_nouns) == 0:
        title_score = 0.2
    else:
        title_score = len(set(bought_nouns) & set(wanted_nouns)) / len(wanted_nouns)
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {
        "r_type": r_type,
        "query_match": query_match,
        "category_match": category_match,
        "title_score": title_score,
    }


def _attribute_matches(product: Product, goal: Goal) -> int:
    title = product.title.lower()
    bullets = " ".join(product.bullet_points).lower()
    description = product.description.lower()
    matches = 0
    for wanted in goal.attributes:
        if (
            any(token_set_ratio(have, wanted) > _MATCH_THRESHOLD for have in product.attributes)
            or wanted in title
            or wanted in bullets
            or wanted in description
        ):
            matches += 1
    return matches


def _option_matches(purchased: Iterable[Any], wanted: Iterable[Any]) -> int:
    have = [normalize_color(o) for o in purchased]
    matches = 0
    for goal_option in (normalize_color(o) for o in wanted):
        if any(token_set_ratio(p, goal_option) > _MATCH_THRESHOLD for p in have):
            matches += 1
    return matches


def purchase_reward(
    product: Product, goal: Goal, *, price: float, options: Mapping[str, str], tagger: NounTagger
) -> RewardResult:
    """Score buying ``product`` at ``price`` with ``options`` chosen, for ``goal`` (WebShop's ``get_reward``).

    Args:
        product: what was bought.
        goal: the task.
        price: the product's selling price.
        options: the options chosen on the item page, ``{name: value}``.
        tagger: the noun tagger for the title overlap.

    Returns:
        The score and WebShop's verbose components.
    """
    type_info = type_reward(product, goal, tagger)
    r_price = (price <= goal.price_upper) if goal.price_upper > 0 else None
    n_attr = _attribute_matches(product, goal)
    wanted_options = (
        list(goal.goal_options.items()) if isinstance(goal.goal_options, Mapping) else goal.goal_options
    )
    n_opt = _option_matches(options.values(), wanted_options)
    denominator = len(goal.attributes) + len(goal.goal_options) + 1
    # WebShop adds the boolean r_price as 0/1 (a None would raise there; limits are always > 0).
    score = (n_attr + n_opt + int(bool(r_price))) / denominator * type_info["r_type"]
    info: dict[str, Any] = {
        "r_type": type_info["r_type"],
        "r_att": n_attr / len(goal.attributes) if goal.attributes else 0.0,
        "w_att": len(goal.attributes) / denominator,
        "query_match": type_info["query_match"],
        "category_match": type_info["category_match"],
        "title_score": type_info["title_score"],
    }
    if len(wanted_options) > 0:
        info["r_option"] = n_opt / len(wanted_options)
        info["w_option"] = len(goal.goal_options) / denominator
    if r_price is not None:
        info["r_price"] = r_price
        info["w_price"] = 1 / denominator
    info["noun_tagger"] = tagger.name
    return RewardResult(score=score, info=info)
