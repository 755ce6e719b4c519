"""Shared fixtures of the WebShop tests: the embedded shop (loaded once) and a shopping helper."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from envhub.envs.webshop.data import ShopData, load_shop_data
from envhub.envs.webshop.env import WebShopEnv
from envhub.envs.webshop.goals import Goal


@pytest.fixture(scope="session")
def shop() -> ShopData:
    return load_shop_data()


@pytest.fixture
def env(shop: ShopData) -> Iterator[WebShopEnv]:
    environment = WebShopEnv(shop=shop)
    yield environment
    environment.close()


def find_product(env: WebShopEnv, asin: str, query: str) -> list[str]:
    """Search ``query`` and page forward until ``asin`` is listed; return the actions taken."""
    actions = [f"search[{query}]"]
    env.step(actions[-1])
    for _ in range(5):
        if asin.lower() in env.unwrapped._session.page.clickables:  # type: ignore[union-attr]
            return actions
        actions.append("click[next >]")
        env.step(actions[-1])
    raise AssertionError(f"{asin} not found for {query!r}")


def buy(env: WebShopEnv, task_id: str, asin: str, options: Mapping[str, str]) -> dict[str, Any]:
    """Reset to ``task_id``, find ``asin`` by its title, choose ``options``, buy; return the last step."""
    env.reset(options={"task_id": task_id})
    product = env.shop.products[asin]
    find_product(env, asin, product.title)
    env.step(f"click[{asin.lower()}]")
    for value in options.values():
        env.step(f"click[{value}]")
    obs, reward, terminated, truncated, info = env.step("click[buy now]")
    return {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated, "info": info}


def goal_options(goal: Goal) -> dict[str, str]:
    assert isinstance(goal.goal_options, Mapping)
    return dict(goal.goal_options)


@pytest.fixture
def shopping() -> SimpleNamespace:
    """The helpers above, for tests (test modules cannot import this conftest)."""
    return SimpleNamespace(buy=buy, find_product=find_product, goal_options=goal_options)
