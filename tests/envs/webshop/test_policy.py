"""The scripted shopper (the demo's policy) completes purchases and often wins."""

from __future__ import annotations

from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.env import WebShopEnv
from envhub.envs.webshop.policy import ScriptedShopper


def test_scripted_shopper_buys_within_the_step_limit_and_wins_most(shop: ShopData) -> None:
    env = WebShopEnv(shop=shop)
    wins, purchases = 0, 0
    for task_id in env.task_ids("test")[:20]:
        obs, info = env.reset(options={"task_id": task_id})
        policy = ScriptedShopper(0)
        policy.reset(obs, info)
        for _ in range(15):
            obs, _, terminated, _, info = env.step(policy.act(obs, info))
            assert info["is_action_valid"]
            if terminated:
                purchases += 1
                wins += info["won"]
                break
    assert purchases == 20
    assert wins >= 10


def test_scripted_shopper_searches_the_instruction_without_options_and_price(shop: ShopData) -> None:
    env = WebShopEnv(shop=shop)
    obs, info = env.reset(options={"task_id": "0"})
    action = ScriptedShopper(0).act(obs, info)
    assert action.startswith("search[") and "price" not in action and " with " not in action
