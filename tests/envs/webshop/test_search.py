"""The shop's BM25 search over WebShop's indexed text."""

from __future__ import annotations

from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.search import SEARCH_RETURN_N, document_text


def test_document_text_is_title_description_first_bullet_and_options(shop: ShopData) -> None:
    product = shop.catalogue.products[0]
    text = document_text(product)
    assert text.startswith(product.title.lower())
    assert product.bullet_points[0].lower() in text and product.bullet_points[1].lower() not in text
    name, values = next(iter(product.options.items()))
    assert f"{name}: {', '.join(values)}" in text


def test_searching_a_title_ranks_that_product_first(shop: ShopData) -> None:
    for product in shop.catalogue.products[:10]:
        assert shop.search(product.title.lower())[0] == product.asin


def test_search_returns_at_most_fifty_positive_hits(shop: ShopData) -> None:
    assert len(shop.search("black white grey navy small large free")) <= SEARCH_RETURN_N
    assert shop.search("zzzz qqqq") == []
    assert shop.search("the and of") == []  # stop words only
