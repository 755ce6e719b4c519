"""The WebShop text env: purchases, pages, pagination, invalid actions, groups, the info contract."""

from __future__ import annotations

from typing import Any

import gymnasium
import pytest

import envhub  # noqa: F401  (registers the ids)
from envhub.core.errors import UnknownTaskError
from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.env import WebShopEnv
from envhub.envs.webshop.goals import Goal
from envhub.envs.webshop.reward import purchase_reward


def goal_options(goal: Goal) -> dict[str, str]:
    return dict(goal.goal_options)  # type: ignore[arg-type]


def _shampoo_task(shop: ShopData) -> str:
    """A test-split goal for a shampoo with a lavender-free scent choice that a correct purchase wins."""
    for task_id in shop.splits["test"]:
        goal = shop.goals[int(task_id)]
        options = goal_options(goal)
        if (
            goal.query == "shampoo"
            and options.get("scent") not in (None, "coconut")
            and len(goal.attributes) == 2
        ) and shop.reward(goal.asin, goal, options).score == 1.0:
            return task_id
    raise AssertionError("no suitable shampoo goal")


def test_correct_purchase_scores_one_and_wins(env: WebShopEnv, shopping: Any) -> None:
    task_id = _shampoo_task(env.shop)
    goal = env.shop.goals[int(task_id)]
    step = shopping.buy(env, task_id, goal.asin, goal_options(goal))
    assert step["terminated"] and not step["truncated"]
    assert step["reward"] == 10.0
    assert step["info"]["won"] is True and step["info"]["task_score"] == 1.0
    assert step["info"]["reward_info"]["r_type"] == 1.0
    assert step["info"]["purchased"] == {"asin": goal.asin, "options": goal_options(goal)}
    assert step["obs"].startswith("Thank you for shopping with us! [SEP] Your code: [SEP] None")
    assert step["obs"].endswith("Your score (min 0.0, max 1.0) [SEP] 1.0 [SEP] Reward Details [SEP] None")


def test_wrong_option_scores_four_fifths_and_no_training_reward(env: WebShopEnv, shopping: Any) -> None:
    task_id = _shampoo_task(env.shop)
    goal = env.shop.goals[int(task_id)]
    step = shopping.buy(env, task_id, goal.asin, {**goal_options(goal), "scent": "coconut"})
    # 2 attributes + 1 of 2 options + price, over 2 + 2 + 1.
    assert step["info"]["task_score"] == pytest.approx(0.8)
    assert step["reward"] == 0.0 and step["info"]["won"] is False


def test_price_over_the_limit_costs_the_price_share(env: WebShopEnv) -> None:
    shop = env.shop
    goal = shop.goals[int(_shampoo_task(shop))]
    product = shop.products[goal.asin]
    result = purchase_reward(
        product, goal, price=goal.price_upper + 0.01, options=goal_options(goal), tagger=shop.tagger
    )
    # 2 attributes + 2 options, no price share, over 2 + 2 + 1.
    assert result.score == pytest.approx(4 / 5) and result.info["r_price"] is False


def test_search_page_observation_and_actions(env: WebShopEnv) -> None:
    obs, info = env.reset(options={"task_id": "0"})
    goal = env.shop.goals[0]
    assert obs == f"WebShop [SEP] Instruction: [SEP] {goal.instruction_text} [SEP] Search"
    assert info["admissible_actions"] == ["search[<your query>]", "click[search]"]
    assert info["available_actions"] == {"has_search_bar": True, "clickables": ["search"]}
    assert info["anchor"] == "'Search'"
    assert info["task_score"] == 0.0 and info["won"] is False and info["task_id"] == "0"


def test_results_pages_paginate_ten_at_a_time(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "0"})
    total = len(env.shop.search("black"))
    assert 20 < total <= 30
    obs, _, _, _, info = env.step("search[black]")
    assert f"[SEP] Back to Search [SEP] Page 1 (Total results: {total}) [SEP] Next > [SEP] " in obs
    assert "< Prev" not in obs
    assert info["available_actions"]["clickables"][:2] == ["back to search", "next >"]
    assert len(info["available_actions"]["clickables"]) == 2 + 10
    obs, _, _, _, info = env.step("click[next >]")
    assert f"Page 2 (Total results: {total}) [SEP] < Prev [SEP] Next >" in obs
    obs, _, _, _, info = env.step("click[next >]")
    assert len(info["available_actions"]["clickables"]) == 3 + (total - 20)
    obs, _, _, _, info = env.step("click[next >]")  # WebShop offers Next > past the end: an empty page
    assert obs.endswith(f"Page 4 (Total results: {total}) [SEP] < Prev [SEP] Next >")
    obs, _, _, _, info = env.step("click[< prev]")
    assert f"Page 3 (Total results: {total})" in obs
    assert info["anchor"].startswith("'Back to Search' [SEP] 'Page 3")


def test_item_page_sub_pages_and_navigation(env: WebShopEnv, shopping: Any) -> None:
    env.reset(options={"task_id": "0"})
    product = env.shop.products[env.shop.goals[0].asin]
    shopping.find_product(env, product.asin, product.title)
    obs, _, _, _, info = env.step(f"click[{product.asin.lower()}]")
    assert f"[SEP] Back to Search [SEP] < Prev [SEP] {next(iter(product.options))} [SEP] " in obs
    assert obs.endswith(
        f"{product.title} [SEP] Price: {product.price_tag} [SEP] Rating: N.A. "
        "[SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
    )
    clickables = info["available_actions"]["clickables"]
    assert clickables[:6] == ["back to search", "< prev", "description", "features", "reviews", "buy now"]
    assert info["available_actions"]["has_search_bar"] is False
    obs, _, _, _, _ = env.step("click[Features]")  # click text is case-insensitive
    assert obs.endswith(" [SEP] ".join(b.strip() for b in product.bullet_points))
    obs, _, _, _, _ = env.step("click[< prev]")
    assert obs.endswith("Buy Now")
    obs, _, _, _, _ = env.step("click[description]")
    assert obs.endswith(product.description)
    obs, _, _, _, _ = env.step("click[back to search]")
    assert obs.startswith("WebShop [SEP] Instruction:")


def test_prev_from_item_returns_to_results_and_clears_options(env: WebShopEnv, shopping: Any) -> None:
    env.reset(options={"task_id": "0"})
    product = env.shop.products[env.shop.goals[0].asin]
    shopping.find_product(env, product.asin, product.title)
    env.step(f"click[{product.asin.lower()}]")
    value = next(iter(product.options.values()))[0]
    env.step(f"click[{value}]")
    assert env.unwrapped._session.state.options  # type: ignore[union-attr]
    obs, _, _, _, _ = env.step("click[< prev]")
    assert "Page 1 (Total results:" in obs
    assert env.unwrapped._session.state.options == {}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "action",
    ["dance", "", "click[nothing here]", "click[search]", "search[]", "click[buy now]", "search", 42],
)
def test_invalid_action_changes_nothing_and_does_not_raise(env: WebShopEnv, action: object) -> None:
    obs0, _ = env.reset(options={"task_id": "3"})
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs == obs0 and reward == 0.0 and not terminated and not truncated
    assert info["is_action_valid"] is False


def test_search_works_from_an_item_page_as_in_webshop(env: WebShopEnv) -> None:
    env.reset(options={"task_id": "0"})
    env.step("search[shampoo]")
    first = env.unwrapped._session.page.clickables  # type: ignore[union-attr]
    asin = next(c for c in first if c.startswith("b0"))
    env.step(f"click[{asin}]")
    obs, _, _, _, info = env.step("search[coffee]")
    assert info["is_action_valid"] is True and "Page 1 (Total results:" in obs


def test_step_after_purchase_repeats_final_page_with_zero_reward(env: WebShopEnv, shopping: Any) -> None:
    task_id = _shampoo_task(env.shop)
    goal = env.shop.goals[int(task_id)]
    last = shopping.buy(env, task_id, goal.asin, goal_options(goal))
    obs, reward, terminated, _, info = env.step("click[back to search]")
    assert obs == last["obs"] and reward == 0.0 and terminated and info["is_action_valid"] is False


def test_group_members_on_one_task_see_identical_pages(shop: ShopData) -> None:
    members = [WebShopEnv(shop=shop) for _ in range(3)]
    other = WebShopEnv(shop=shop)
    actions = ["search[black sneakers]", "click[next >]", "click[< prev]", None, "click[buy now]"]
    traces: list[list[tuple[str, str]]] = [[] for _ in members]
    for trace, member in zip(traces, members, strict=True):
        obs, info = member.reset(options={"task_id": "7"})
        other.reset(options={"task_id": "8"})
        trace.append((obs, info["anchor"]))
        for action in actions:
            if action is None:  # open the first listed product
                action = (
                    f"click[{next(c for c in info['available_actions']['clickables'] if c.startswith('b0'))}]"
                )
            other.step("search[coffee]")
            obs, _, _, _, info = member.step(action)
            trace.append((obs, info["anchor"]))
    assert traces[0] == traces[1] == traces[2]


def test_unknown_task_id_raises_a_clear_error(env: WebShopEnv) -> None:
    with pytest.raises(UnknownTaskError, match="task_ids"):
        env.reset(options={"task_id": "99999"})
    with pytest.raises(UnknownTaskError):
        env.reset(options={"task_id": "007"})


def test_registered_env_truncates_after_fifteen_steps() -> None:
    env = gymnasium.make("envhub/WebShop-v0")
    env.reset(options={"task_id": "0"})
    for _ in range(14):
        *_, truncated, _ = env.step("click[nothing]")
        assert not truncated
    *_, truncated, _ = env.step("click[nothing]")
    assert truncated
    env.close()


def test_human_goal_env_wins_with_the_instruction_options(shop: ShopData, shopping: Any) -> None:
    env = WebShopEnv(human_goals=True)
    goal = env.shop.goals[0]
    assert isinstance(goal.goal_options, tuple)
    product = env.shop.products[goal.asin]
    chosen = {
        name: next(v for v in values if v in goal.goal_options) for name, values in product.options.items()
    }
    step = shopping.buy(env, "0", goal.asin, chosen)
    assert step["info"]["task_score"] == pytest.approx(env.shop.reward(goal.asin, goal, chosen).score)
    assert step["info"]["reward_info"]["r_option"] == 1.0


def test_special_searches_list_by_query_category_and_attribute(env: WebShopEnv) -> None:
    shop = env.shop
    env.reset(options={"task_id": "0"})
    n_shampoo = sum(p.query == "shampoo" for p in shop.catalogue.products)
    obs, *_ = env.step("search[<q> shampoo]")
    assert f"Page 1 (Total results: {n_shampoo})" in obs
    n_beauty = sum(p.category == "beauty" for p in shop.catalogue.products)
    obs, *_ = env.step("search[<c> beauty]")
    assert f"(Total results: {n_beauty})" in obs
    n_attr = sum("fair trade" in p.attributes for p in shop.catalogue.products)
    obs, *_ = env.step("search[<a> fair trade]")
    assert f"(Total results: {n_attr})" in obs
    first, *_ = env.step("search[<r>]")
    env.reset(options={"task_id": "0"})
    again, *_ = env.step("search[<r>]")
    assert "(Total results: 50)" in first and first == again  # random, but replayable per task
