"""WebShop's goals: synthetic per option combination, price limits, the seeded shuffle, splits."""

from __future__ import annotations

import random
import re

from envhub.envs.webshop.catalogue import product_prices
from envhub.envs.webshop.data import ShopData, load_shop_data
from envhub.envs.webshop.goals import PRICE_RANGE, build_goals, split_goal_ids


def test_synthetic_goals_cover_every_option_combination(shop: ShopData) -> None:
    for product in shop.catalogue.products[:5]:
        combos = 1
        for values in product.options.values():
            combos *= len(values)
        assert sum(g.asin == product.asin for g in shop.goals) == combos


def test_synthetic_goal_text_lists_sorted_options_and_the_price_limit(shop: ShopData) -> None:
    goal = shop.goals[0]
    assert isinstance(goal.goal_options, dict)
    names = list(goal.goal_options)
    assert names == sorted(names)
    option_text = ", and ".join(f"{k}: {v}" for k, v in goal.goal_options.items())
    assert goal.instruction_text.endswith(
        f" with {option_text}, and price lower than {goal.price_upper:.2f} dollars"
    )


def test_price_limit_is_one_of_the_next_four_tens_above_the_price(shop: ShopData) -> None:
    for goal in shop.goals[:50]:
        price = shop.prices[goal.asin]
        above = [p for p in PRICE_RANGE if p > price][:4]
        assert goal.price_upper in above[1:]  # the larger of two distinct samples


def test_goal_order_is_the_seeded_shuffle_and_repeatable(shop: ShopData) -> None:
    rng = random.Random(233)
    prices = product_prices(shop.catalogue, rng)
    rebuilt = build_goals(shop.catalogue, prices, human_goals=False, rng=rng, seed=233)
    assert rebuilt == list(shop.goals)
    other_seed = load_shop_data(seed=1)
    assert [g.asin for g in other_seed.goals] != [g.asin for g in shop.goals]


def test_human_goals_come_from_items_human_ins() -> None:
    human = load_shop_data(human_goals=True)
    assert len(human.goals) == 60
    goal = human.goals[0]
    assert isinstance(goal.goal_options, tuple) and goal.weight == 1.0
    assert re.search(r", and price lower than \d+\.00 dollars$", goal.instruction_text)


def test_splits_are_first_500_test_and_the_rest_train(shop: ShopData) -> None:
    assert list(shop.splits["test"]) == [str(i) for i in range(500)]
    assert list(shop.splits["train"]) == [str(i) for i in range(500, len(shop.goals))]


def test_small_goal_sets_split_in_half() -> None:
    splits = split_goal_ids(60)
    assert len(splits["test"]) == 30 and len(splits["train"]) == 30
