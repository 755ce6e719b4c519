"""Loading WebShop's product files the way WebShop processes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.envs.webshop.catalogue import load_catalogue, parse_pricing
from envhub.envs.webshop.fixtures import ATTRIBUTES_FILE, HUMAN_FILE, PRODUCTS_FILE, generate_catalogue


def _write(tmp_path: Path, products: list[dict[str, Any]], attributes: dict[str, Any]) -> tuple[Path, Path]:
    (tmp_path / PRODUCTS_FILE).write_text(json.dumps(products))
    (tmp_path / ATTRIBUTES_FILE).write_text(json.dumps(attributes))
    return tmp_path / PRODUCTS_FILE, tmp_path / ATTRIBUTES_FILE


@pytest.mark.parametrize(
    ("pricing", "prices", "tag"),
    [
        ("$12.99", (12.99,), "$12.99"),
        ("$10.00", (10.0,), "$10.0"),
        ("$10.00 - $20.50", (10.0, 20.5), "$10.0 to $20.5"),
        ("$1,299.00", (1299.0,), "$1299.0"),
        ("", (100.0,), "$100.0"),
        (None, (100.0,), "$100.0"),
    ],
)
def test_parse_pricing_like_webshop(pricing: object, prices: tuple[float, ...], tag: str) -> None:
    assert parse_pricing(pricing) == (prices, tag)


def test_unparseable_pricing_names_the_product() -> None:
    with pytest.raises(ConfigurationError, match="B0BAD"):
        parse_pricing("$abc", asin="B0BAD")


def test_loader_skips_bad_and_duplicate_asins_and_normalises_options(tmp_path: Path) -> None:
    generated = generate_catalogue(num_products=3, seed=1)[PRODUCTS_FILE]
    first = dict(generated[0])
    first["customization_options"] = {"Color": [{"value": " Black/White ", "image": "x.jpg"}], "Size": None}
    first["small_description"] = "one bullet"
    products = [
        first,
        dict(first, name="duplicate"),
        dict(generated[1], asin="nan"),
        dict(generated[2], asin="B0123456789"),
    ]
    paths = _write(
        tmp_path, products, {first["asin"]: {"attributes": ["easy clean"], "instruction": "i want it"}}
    )
    catalogue = load_catalogue(*paths)
    assert [p.asin for p in catalogue.products] == [first["asin"]]
    product = catalogue.products[0]
    assert product.title == first["name"]
    assert dict(product.options) == {"color": ("black | white",)}
    assert product.option_to_image == {"black | white": "x.jpg"}
    assert product.bullet_points == ("one bullet",)
    assert product.attributes == ("easy clean",)
    assert product.instruction_text == "i want it"


def test_product_without_attributes_gets_dummy_attr(tmp_path: Path) -> None:
    product = generate_catalogue(num_products=1, seed=1)[PRODUCTS_FILE][0]
    catalogue = load_catalogue(*_write(tmp_path, [product], {}))
    assert catalogue.products[0].attributes == ("DUMMY_ATTR",)


def test_missing_file_raises_data_not_found_with_how_to(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="WEBSHOP_DATA"):
        load_catalogue(tmp_path / PRODUCTS_FILE, tmp_path / ATTRIBUTES_FILE)


def test_generated_catalogue_has_the_real_file_format() -> None:
    files = generate_catalogue()
    products = files[PRODUCTS_FILE]
    assert len(products) == 60
    assert len({p["category"] for p in products}) >= 5
    for product in products:
        assert set(product) >= {
            "asin", "name", "category", "query", "product_category", "full_description",
            "small_description", "pricing", "customization_options", "images",
        }  # fmt: skip
        assert product["pricing"].startswith("$") and " › " in product["product_category"]
        assert product["asin"] in files[ATTRIBUTES_FILE] and product["asin"] in files[HUMAN_FILE]


def test_embedded_catalogue_is_the_generator_output() -> None:
    embedded = Path(__file__).parents[3] / "envhub" / "envs" / "webshop" / "data"
    for name, content in generate_catalogue().items():
        assert json.loads((embedded / name).read_text(encoding="utf-8")) == content, f"regenerate {name}"
