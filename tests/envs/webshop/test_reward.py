"""WebShop's reward formula, checked on hand-computed cases.

The goal wants 2 attributes and 2 options under a $30 limit, so the denominator is
2 + 2 + 1 = 5 and each match is worth 0.2 (times r_type).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from envhub.envs.webshop.catalogue import Product
from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.goals import Goal
from envhub.envs.webshop.nouns import LexiconNounTagger, NounTagger
from envhub.envs.webshop.reward import normalize_color, purchase_reward, token_set_ratio, type_reward

SHAMPOOS = "Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos"
OPTIONS = {"size": "16 fl oz (pack of 1)", "scent": "lavender"}


@pytest.fixture
def base(shop: ShopData) -> Product:
    """A generated shampoo, with the fields the reward reads set explicitly below."""
    shampoo = next(p for p in shop.catalogue.products if p.query == "shampoo")
    return replace(
        shampoo,
        title="Herbal Shampoo for Dry Hair",
        query="shampoo",
        product_category=SHAMPOOS,
        attributes=("sulfate free", "paraben free", "cruelty free"),
        description="A gentle daily shampoo.",
        bullet_points=("Gentle on the scalp.",),
    )


@pytest.fixture
def goal(base: Product) -> Goal:
    return Goal(
        asin=base.asin,
        category="beauty",
        query="shampoo",
        name="Herbal Shampoo for Dry Hair",
        product_category=SHAMPOOS,
        instruction_text="i need a sulfate free and paraben free shampoo",
        attributes=("sulfate free", "paraben free"),
        price_upper=30.0,
        goal_options=dict(OPTIONS),
        weight=1.0,
    )


@pytest.fixture
def tagger(shop: ShopData) -> NounTagger:
    return shop.tagger


def test_correct_purchase_scores_one(base: Product, goal: Goal, tagger: NounTagger) -> None:
    result = purchase_reward(base, goal, price=20.0, options=OPTIONS, tagger=tagger)
    assert result.score == 1.0
    assert result.info["r_type"] == 1.0 and result.info["title_score"] == 1.0
    assert result.info["r_att"] == 1.0 and result.info["r_option"] == 1.0 and result.info["r_price"] is True
    assert result.info["w_att"] == pytest.approx(0.4)
    assert result.info["w_option"] == pytest.approx(0.4)
    assert result.info["w_price"] == pytest.approx(0.2)


def test_wrong_option_loses_one_fifth(base: Product, goal: Goal, tagger: NounTagger) -> None:
    result = purchase_reward(base, goal, price=20.0, options={**OPTIONS, "scent": "coconut"}, tagger=tagger)
    assert result.score == pytest.approx((2 + 1 + 1) / 5)
    assert result.info["r_option"] == 0.5


def test_missing_option_counts_as_unmatched(base: Product, goal: Goal, tagger: NounTagger) -> None:
    result = purchase_reward(base, goal, price=20.0, options={}, tagger=tagger)
    assert result.score == pytest.approx((2 + 0 + 1) / 5)


def test_price_over_the_limit_loses_the_price_share(base: Product, goal: Goal, tagger: NounTagger) -> None:
    result = purchase_reward(base, goal, price=35.0, options=OPTIONS, tagger=tagger)
    assert result.score == pytest.approx((2 + 2 + 0) / 5)
    assert result.info["r_price"] is False


def test_wrong_product_in_same_category_keeps_type_but_loses_attributes(
    base: Product, goal: Goal, tagger: NounTagger
) -> None:
    other = replace(
        base, asin="B000000001", title="Lumen Botanics Volumizing Shampoo", attributes=("cruelty free",)
    )
    result = purchase_reward(other, goal, price=20.0, options=OPTIONS, tagger=tagger)
    # "shampoo" is a shared noun and the query matches: r_type stays 1; no attribute matches.
    assert result.info["r_type"] == 1.0 and result.info["query_match"] is True
    assert result.score == pytest.approx((0 + 2 + 1) / 5)


def test_attribute_found_in_text_when_not_in_attribute_list(
    base: Product, goal: Goal, tagger: NounTagger
) -> None:
    other = replace(
        base, attributes=("cruelty free",), description="Sulfate free? yes: this one is paraben free."
    )
    # "paraben free" is a substring of the lower-cased description; "sulfate free" is too.
    result = purchase_reward(other, goal, price=20.0, options=OPTIONS, tagger=tagger)
    assert result.info["r_att"] == 1.0


def test_wrong_category_scores_zero(base: Product, goal: Goal, tagger: NounTagger) -> None:
    headphones = replace(
        base,
        title="Wireless Bluetooth Headphones",
        query="headphones",
        product_category="Electronics › Headphones, Earbuds & Accessories › Headphones",
        attributes=("wireless bluetooth",),
    )
    result = purchase_reward(headphones, goal, price=20.0, options=OPTIONS, tagger=tagger)
    # No shared noun: title_score 0 -> r_type 0, whatever else matches.
    assert result.info["title_score"] == 0.0 and result.info["r_type"] == 0.0
    assert result.score == 0.0


def test_type_reward_half_when_only_a_few_nouns_overlap(base: Product, goal: Goal) -> None:
    tagger = LexiconNounTagger()
    wanted = replace(goal, name="Herbal Shampoo Bottle Pump Travel Kit Bag", query="kit")
    bought = replace(base, title="Bag", query="bag", product_category="Luggage › Bags")
    info = type_reward(bought, wanted, tagger)
    # nouns of the goal name: herbal shampoo bottle pump travel kit bag (7); overlap 1/7 ~ 0.14.
    assert info["title_score"] == pytest.approx(1 / 7)
    assert info["query_match"] is False and info["category_match"] is False
    assert info["r_type"] == 0.5


def test_type_reward_tenth_when_overlap_below_ten_percent(base: Product, goal: Goal) -> None:
    tagger = LexiconNounTagger()
    name = "Shampoo Bottle Pump Travel Kit Bag Case Box Lid Cap Tube"  # 11 nouns
    wanted = replace(goal, name=name, query="kit")
    bought = replace(base, title="Cap", query="cap", product_category="Hats › Caps")
    info = type_reward(bought, wanted, tagger)
    assert info["title_score"] == pytest.approx(1 / 11)
    assert info["r_type"] == 0.1


def test_type_reward_without_goal_nouns_uses_title_score_point_two(base: Product, goal: Goal) -> None:
    info = type_reward(base, replace(goal, name="123"), LexiconNounTagger())
    assert info["title_score"] == 0.2 and info["r_type"] == 1.0  # the query still matches


def test_category_match_needs_two_shared_levels(base: Product, goal: Goal) -> None:
    tagger = LexiconNounTagger()
    one_level = replace(base, query="x", product_category="Beauty & Personal Care › Makeup")
    two_levels = replace(base, query="x", product_category="Beauty & Personal Care › Hair Care › Combs")
    assert type_reward(one_level, goal, tagger)["category_match"] is False
    assert type_reward(two_levels, goal, tagger)["category_match"] is True


@pytest.mark.parametrize(
    ("option", "normalised"),
    [
        ("dark brown", "brown"),  # first colour word in WebShop's list order, not the first in the text
        ("light grey", "grey"),
        ("navy blue", "blue"),
        ("stonewash denim", "ash"),  # "ash" (in stonewash) precedes "denim" in the list
        ("washed linen", "ash"),  # a substring test, as in WebShop
        ("standard", "tan"),
        ("16 fl oz (pack of 1)", "16 fl oz (pack of 1)"),
        (("color", "black"), "black"),  # synthetic goal options are (name, value) pairs
        (("color", "navy blue"), ("color", "navy blue")),  # element test: no colour word as a whole value
    ],
)
def test_normalize_color(option: object, normalised: object) -> None:
    assert normalize_color(option) == normalised


def test_colour_normalisation_lets_shades_match(base: Product, goal: Goal, tagger: NounTagger) -> None:
    human = replace(goal, goal_options=("dark brown",), attributes=("sulfate free",))
    # "chocolate brown" and "dark brown" both normalise to "brown" -> match.
    assert (
        purchase_reward(base, human, price=1.0, options={"color": "chocolate brown"}, tagger=tagger).score
        == 1.0
    )
    # "royal blue" -> "blue" vs "dark brown" -> "brown": no match.
    assert purchase_reward(
        base, human, price=1.0, options={"color": "royal blue"}, tagger=tagger
    ).score == pytest.approx(2 / 3)


def test_synthetic_option_pairs_match_by_value_tokens(base: Product, goal: Goal, tagger: NounTagger) -> None:
    synthetic = replace(goal, goal_options={"color": "navy blue"}, attributes=("sulfate free",))
    # ("color", "navy blue") is compared as "color navy blue"; "navy blue" -> "blue" is a token subset.
    assert (
        purchase_reward(base, synthetic, price=1.0, options={"color": "navy blue"}, tagger=tagger).score
        == 1.0
    )
    # WebShop's quirk: "standard" normalises to "tan", which is not in "style standard".
    quirky = replace(goal, goal_options={"style": "standard"}, attributes=("sulfate free",))
    score = purchase_reward(base, quirky, price=1.0, options={"style": "standard"}, tagger=tagger).score
    assert score == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("sulfate free", "sulfate free", 100),
        ("free sulfate", "sulfate-free", 100),  # token sets after punctuation removal
        ("gold", ("color", "rose gold"), 100),  # str() of a pair, then a token subset
        ("tan", ("style", "standard"), 35),
        ("café", "caf", 100),  # thefuzz drops characters 128-255 before comparing
        (None, "x", 0),
    ],
)
def test_token_set_ratio_matches_thefuzz(a: object, b: object, expected: int) -> None:
    assert token_set_ratio(a, b) == expected
