"""HTML mode in real headless Chromium: the same episode, observations and reward as text mode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.env import WebShopEnv
from envhub.envs.webshop.goals import Goal
from tests.needs import require_binary, require_module


def _require_browser() -> None:
    require_module("selenium", extra="browser")
    for binary, package in (("chromium", "chromium"), ("chromedriver", "chromium-driver")):
        require_binary(binary, how=f"run scripts/install-system-deps.sh (apt-get install {package})")


@pytest.fixture(scope="module")
def html_env(shop: ShopData) -> Iterator[object]:
    _require_browser()
    from envhub.envs.webshop.html_env import WebShopHTMLEnv

    env = WebShopHTMLEnv(shop=shop)
    yield env
    env.close()


def _episode(goal: Goal) -> list[str]:
    options = dict(goal.goal_options)  # type: ignore[arg-type]
    return [
        "search[{title}]",
        f"click[{goal.asin.lower()}]",
        *[f"click[{v}]" for v in options.values()],
        "click[buy now]",
    ]


def test_full_episode_matches_text_mode_step_by_step(
    html_env: object, shop: ShopData, tmp_path: Path
) -> None:
    from envhub.envs.webshop.html_env import WebShopHTMLEnv

    assert isinstance(html_env, WebShopHTMLEnv)
    text_env = WebShopEnv(shop=shop)
    goal = shop.goals[0]
    actions = [a.format(title=shop.products[goal.asin].title) for a in _episode(goal)]
    obs_h, info_h = html_env.reset(options={"task_id": "0"})
    obs_t, info_t = text_env.reset(options={"task_id": "0"})
    assert obs_h == obs_t and info_h["admissible_actions"] == info_t["admissible_actions"]
    for action in actions:
        obs_h, reward_h, done_h, _, info_h = html_env.step(action)
        obs_t, reward_t, done_t, _, info_t = text_env.step(action)
        assert obs_h == obs_t, action
        assert (reward_h, done_h) == (reward_t, done_t)
        assert {
            k: info_h[k]
            for k in ("anchor", "admissible_actions", "available_actions", "is_action_valid", "page")
        } == {
            k: info_t[k]
            for k in ("anchor", "admissible_actions", "available_actions", "is_action_valid", "page")
        }
        if action == f"click[{goal.asin.lower()}]":
            shot = tmp_path / "item.png"
            shot.write_bytes(html_env.screenshot_png())
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert done_h and reward_h == 10.0 and info_h["won"] is True and info_h["task_score"] == 1.0
    assert info_h["reward_info"] == info_t["reward_info"]
    assert info_h["purchased"] == info_t["purchased"]


def test_invalid_action_in_the_browser_changes_nothing(html_env: object) -> None:
    from envhub.envs.webshop.html_env import WebShopHTMLEnv

    assert isinstance(html_env, WebShopHTMLEnv)
    obs0, _ = html_env.reset(options={"task_id": "1"})
    obs, reward, done, _, info = html_env.step("click[not a button]")
    assert obs == obs0 and reward == 0.0 and not done and info["is_action_valid"] is False


def test_search_without_a_search_bar_works_like_text_mode(html_env: object, shop: ShopData) -> None:
    from envhub.envs.webshop.html_env import WebShopHTMLEnv

    assert isinstance(html_env, WebShopHTMLEnv)
    text_env = WebShopEnv(shop=shop)
    for env in (html_env, text_env):
        env.reset(options={"task_id": "2"})
        env.step("search[black]")
    results_h = html_env.step("search[coffee]")[0]
    results_t = text_env.step("search[coffee]")[0]
    assert results_h == results_t
