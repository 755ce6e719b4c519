"""envhub's own generator of a small, realistic WebShop catalogue in WebShop's real file format.

The generated files are the embedded default (shipped under ``envhub/envs/webshop/data/``)
and the test fixture. They follow the formats of the WebShop data release (see
``shared/reference/envs_alfworld_webshop.md`` B4):

* ``items_shuffle_1000.json``: a list of products (``asin``, ``name``, ``category``, ``query``,
  ``product_category`` with ``›`` separators, ``full_description``, ``small_description``,
  ``pricing`` as ``"$x"`` or ``"$x - $y"``, ``customization_options``, ``images``);
* ``items_ins_v2_1000.json``: ``{asin: {attributes, instruction, instruction_attributes}}``;
* ``items_human_ins.json``: ``{asin: [{instruction, instruction_attributes, instruction_options}]}``.

Regenerate the embedded copy with ``python -m envhub.envs.webshop.fixtures``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ATTRIBUTES_FILE", "HUMAN_FILE", "PRODUCTS_FILE", "generate_catalogue", "write_catalogue"]

PRODUCTS_FILE = "items_shuffle_1000.json"
ATTRIBUTES_FILE = "items_ins_v2_1000.json"
HUMAN_FILE = "items_human_ins.json"


@dataclass(frozen=True)
class _Kind:
    """One product family of the generated shop."""

    category: str
    query: str
    product_category: str
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...]
    brands: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: tuple[float, float]
    feature: str
    picture: str


_KINDS: tuple[_Kind, ...] = (
    _Kind(
        category="beauty",
        query="shampoo",
        product_category="Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos",
        nouns=("Shampoo", "Shampoo and Conditioner Set", "Clarifying Shampoo", "Volumizing Shampoo"),
        adjectives=("Herbal", "Moisturizing", "Argan Oil", "Tea Tree", "Biotin"),
        brands=("Maple & Moss", "Pure Harbor", "Lumen Botanics"),
        attributes=("sulfate free", "paraben free", "natural ingredients", "cruelty free", "dry hair"),
        options=(
            ("size", ("8 fl oz (pack of 1)", "16 fl oz (pack of 1)", "8 fl oz (pack of 2)")),
            ("scent", ("lavender", "coconut", "unscented", "tea tree")),
        ),
        price=(6.0, 38.0),
        feature="gently cleanses the scalp without stripping natural oils",
        picture="shampoo",
    ),
    _Kind(
        category="fashion",
        query="men's sneakers",
        product_category="Clothing, Shoes & Jewelry › Men › Shoes › Fashion Sneakers",
        nouns=("Sneakers", "Running Shoes", "Walking Shoes", "Canvas Sneakers"),
        adjectives=("Lightweight", "Breathable", "Classic", "Slip-On", "Low Top"),
        brands=("Northline", "Stride Co", "Ardent"),
        attributes=("non slip", "rubber sole", "lace up", "memory foam", "machine washable"),
        options=(
            ("color", ("black", "white", "navy blue", "grey")),
            ("size", ("8", "9", "10", "11")),
        ),
        price=(24.0, 95.0),
        feature="cushioned insole and flexible outsole for all day comfort",
        picture="sneakers",
    ),
    _Kind(
        category="grocery",
        query="coffee beans",
        product_category=(
            "Grocery & Gourmet Food › Beverages › Coffee, Tea & Cocoa › Coffee › Whole Coffee Beans"
        ),
        nouns=("Whole Bean Coffee", "Coffee Beans", "Espresso Beans", "Coffee"),
        adjectives=("Medium Roast", "Dark Roast", "Single Origin", "Colombian", "Breakfast Blend"),
        brands=("Highland Roasters", "Copper Kettle", "Bluebird Coffee Co"),
        attributes=("gluten free", "fair trade", "usda organic", "non gmo", "low acid"),
        options=(
            ("flavor name", ("vanilla", "hazelnut", "original", "mocha")),
            ("size", ("12 ounce (pack of 1)", "2 pound (pack of 1)", "12 ounce (pack of 3)")),
        ),
        price=(8.0, 45.0),
        feature="roasted in small batches and packed fresh",
        picture="coffee",
    ),
    _Kind(
        category="electronics",
        query="headphones",
        product_category="Electronics › Headphones, Earbuds & Accessories › Headphones › Over-Ear Headphones",
        nouns=("Headphones", "Over-Ear Headphones", "Headset", "Studio Headphones"),
        adjectives=("Wireless", "Bluetooth", "Noise Cancelling", "Foldable", "Hi-Fi"),
        brands=("Sonora", "Kestrel Audio", "Volt"),
        attributes=(
            "noise cancelling",
            "wireless bluetooth",
            "long battery life",
            "high definition",
            "easy carry",
        ),
        options=(
            ("color", ("black", "silver", "rose gold")),
            ("style", ("standard", "with case", "with microphone")),
        ),
        price=(19.0, 180.0),
        feature="up to 40 hours of playback on a single charge",
        picture="headphones",
    ),
    _Kind(
        category="furniture",
        query="ottoman",
        product_category="Home & Kitchen › Furniture › Living Room Furniture › Ottomans",
        nouns=("Storage Ottoman", "Ottoman", "Footstool", "Ottoman Bench"),
        adjectives=("Tufted", "Round", "Folding", "Upholstered", "Velvet"),
        brands=("Hearth & Oak", "Linden Home", "Casa Verde"),
        attributes=("easy assemble", "faux leather", "storage space", "solid wood", "living room"),
        options=(
            ("color", ("dark brown", "light grey", "beige", "navy")),
            ("size", ("small", "large", "x-large")),
        ),
        price=(29.0, 160.0),
        feature="sturdy frame that supports up to 300 pounds",
        picture="ottoman",
    ),
    _Kind(
        category="fashion",
        query="women's t-shirts",
        product_category="Clothing, Shoes & Jewelry › Women › Clothing › Tops, Tees & Blouses › T-Shirts",
        nouns=("T-Shirt", "Crew Neck Tee", "V-Neck T-Shirt", "Tunic Top"),
        adjectives=("Casual", "Short Sleeve", "Oversized", "Striped", "Summer"),
        brands=("Willow Lane", "Solstice", "Harbor Knit"),
        attributes=("machine wash", "cotton spandex", "short sleeve", "relaxed fit", "polyester cotton"),
        options=(
            ("color", ("heather grey", "red", "white", "black")),
            ("size", ("small", "medium", "large", "x-large")),
        ),
        price=(9.0, 35.0),
        feature="soft breathable fabric keeps its shape wash after wash",
        picture="tshirt",
    ),
)


def _price_text(rng: random.Random, low: float, high: float) -> str:
    first = round(rng.uniform(low, high), 2)
    if rng.random() < 0.25:
        # A quarter of the products carry a price range, as many WebShop products do.
        second = round(first * rng.uniform(1.1, 1.6), 2)
        return f"${first:.2f} - ${second:.2f}"
    return f"${first:.2f}"


def _product(rng: random.Random, kind: _Kind, index: int, asin: str) -> dict[str, Any]:
    brand = kind.brands[index % len(kind.brands)]
    noun = kind.nouns[index % len(kind.nouns)]
    adjective = kind.adjectives[rng.randrange(len(kind.adjectives))]
    attributes = rng.sample(kind.attributes, 3)
    name = f"{brand} {adjective} {noun} - {attributes[0].title()}, {attributes[1].title()}"
    bullets = [
        f"{attributes[0].capitalize()}: {kind.feature}.",
        f"{attributes[1].capitalize()} and {attributes[2]} by design.",
        f"Backed by {brand}'s 30 day satisfaction promise.",
    ]
    options: dict[str, list[dict[str, Any]]] = {}
    for option_name, values in kind.options:
        # Most products sell every value; some leave one out, so searches must compare products.
        chosen = list(values) if rng.random() < 0.7 else list(values[:-1])
        options[option_name] = [{"value": value, "image": None} for value in chosen]
    return {
        "asin": asin,
        "name": name,
        "category": kind.category,
        "query": kind.query,
        "product_category": kind.product_category,
        "full_description": (
            f"The {brand} {noun.lower()} is {attributes[0]} and {attributes[1]}. "
            f"{kind.feature.capitalize()}. Great as a gift or for everyday use."
        ),
        "small_description": bullets,
        "pricing": _price_text(rng, *kind.price),
        "customization_options": options,
        "images": [f"/static/products/{kind.picture}.svg"],
        "brand": brand,
        "list_price": "",
    }


def generate_catalogue(num_products: int = 60, seed: int = 0) -> dict[str, Any]:
    """Build the three WebShop data files in memory.

    Args:
        num_products: products to generate; they cycle over the product kinds.
        seed: seed of the generator's own ``random.Random``.

    Returns:
        ``{PRODUCTS_FILE: [...], ATTRIBUTES_FILE: {...}, HUMAN_FILE: {...}}``.
    """
    rng = random.Random(seed)
    products: list[dict[str, Any]] = []
    attributes: dict[str, Any] = {}
    human: dict[str, Any] = {}
    for i in range(num_products):
        kind = _KINDS[i % len(_KINDS)]
        asin = f"B0{rng.randrange(10**8):08d}"
        product = _product(rng, kind, i // len(_KINDS), asin)
        products.append(product)
        product_attrs = [a for a in kind.attributes if a.lower() in json.dumps(product).lower()]
        wanted = rng.sample(product_attrs, 2) if len(product_attrs) >= 2 else product_attrs
        noun = kind.nouns[(i // len(_KINDS)) % len(kind.nouns)].lower()
        instruction = f"i am looking for a {noun} that is {' and '.join(wanted)}"
        attributes[asin] = {
            "attributes": product_attrs,
            "instruction": instruction,
            "instruction_attributes": wanted,
        }
        chosen = [
            opts[rng.randrange(len(opts))]["value"] for opts in product["customization_options"].values()
        ]
        human[asin] = [
            {
                "instruction": f"i need a {' and '.join(wanted)} {noun} in {', '.join(chosen)}.",
                "instruction_attributes": wanted,
                "instruction_options": chosen,
            }
        ]
    # WebShop's release ships products already shuffled; do the same so ids do not sort by kind.
    rng.shuffle(products)
    return {PRODUCTS_FILE: products, ATTRIBUTES_FILE: attributes, HUMAN_FILE: human}


def write_catalogue(directory: Path, num_products: int = 60, seed: int = 0) -> Path:
    """Write the generated catalogue's three files into ``directory`` (created if needed).

    Returns:
        ``directory``.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in generate_catalogue(num_products, seed).items():
        (directory / name).write_text(
            json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return directory


if __name__ == "__main__":
    write_catalogue(Path(__file__).parent / "data")
