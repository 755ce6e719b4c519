"""The shop site over real HTTP on loopback: pages, local assets, actions by redirect."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.html_env import ShopServer


@pytest.fixture(scope="module")
def site(shop: ShopData) -> Iterator[str]:
    server = ShopServer(shop)
    yield server.base_url
    server.close()


@pytest.fixture
def client(site: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=site, follow_redirects=True, timeout=30) as http:
        yield http


def test_session_starts_at_the_search_page_of_its_goal(client: httpx.Client, shop: ShopData) -> None:
    page = client.get("/t1?task=3")
    assert page.status_code == 200
    assert 'id="search_input"' in page.text
    assert shop.goals[3].instruction_text in page.text
    assert client.get("/fixed_4").text.count(shop.goals[4].instruction_text) == 1


def test_pages_use_only_local_assets(client: httpx.Client, shop: ShopData) -> None:
    client.get("/t2?task=0")
    client.get("/t2/search", params={"q": "shampoo"})
    asin = shop.search("shampoo")[0]
    item = client.get("/t2/click", params={"target": asin.lower()})
    assert "Buy Now" in item.text
    assert not re.search(r"""(src|href)=["']https?://""", item.text)
    for asset in re.findall(r"""(?:src|href)=["'](/static/[^"']+)""", item.text):
        assert client.get(asset).status_code == 200, asset


def test_actions_redirect_so_reloading_does_not_repeat_them(client: httpx.Client) -> None:
    client.get("/t3?task=0")
    first = client.get("/t3/search", params={"q": "black"})
    assert str(first.url).endswith("/t3/page") and "Page 1 (Total results:" in first.text
    second = client.get("/t3/click", params={"target": "next >"})
    assert "Page 2 (Total results:" in second.text
    assert "Page 2 (Total results:" in client.get("/t3/page").text  # a reload stays on page 2


def test_purchase_page_carries_the_score(client: httpx.Client, shop: ShopData) -> None:
    goal = shop.goals[0]
    client.get("/t4?task=0")
    client.get("/t4/search", params={"q": shop.products[goal.asin].title})
    client.get("/t4/click", params={"target": goal.asin.lower()})
    for value in dict(goal.goal_options).values():  # type: ignore[arg-type]
        client.get("/t4/click", params={"target": value})
    done = client.get("/t4/click", params={"target": "buy now"})
    assert "Thank you for shopping with us!" in done.text
    assert '"score": 1.0' in done.text
