"""Loading WebShop's product files into :class:`Product` records.

Reproduces how WebShop's ``engine.load_products`` processes its data release (reference
notes B1/B4): products with an ``asin`` of ``'nan'`` or longer than 10 characters are
skipped, later duplicates of an ``asin`` are dropped, ``small_description`` becomes the
bullet points, ``pricing`` ``"$x"`` / ``"$x - $y"`` is parsed by splitting on ``$`` and
keeping digits and dots, option values are stripped, lower-cased and have ``/`` replaced
by `` | ``, and the attribute list comes from ``items_ins_v2`` (``['DUMMY_ATTR']`` when a
product has none there).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError, DataNotFoundError

__all__ = ["Catalogue", "Product", "load_catalogue", "parse_pricing", "product_prices"]

_NOT_DIGITS = re.compile(r"[^\d.]")


@dataclass(frozen=True)
class Product:
    """One product as the shop shows it and the reward reads it (WebShop's field names in comments).

    Attributes:
        asin: product id (``asin``); shown upper-case, clicked lower-case.
        title: ``Title`` (from ``name``).
        description: ``Description`` (from ``full_description``).
        bullet_points: ``BulletPoints`` (from ``small_description``).
        category: ``category``.
        query: ``query``, lower-cased and stripped.
        product_category: ``product_category`` (``"A › B › C"``).
        options: option name (lower-case) -> values, in file order.
        option_to_image: option value -> image URL or None.
        attributes: ``Attributes`` from ``items_ins_v2``.
        main_image: ``MainImage`` (first image) or None.
        pricing: one price or a ``(low, high)`` range.
        price_tag: the price as shown (``"$12.5"`` or ``"$10.0 to $20.0"``).
        instruction_text: synthetic instruction from ``items_ins_v2`` (or None).
        instruction_attributes: its attributes (or None).
        human_instructions: entries of ``items_human_ins`` for this product.
    """

    asin: str
    title: str
    description: str
    bullet_points: tuple[str, ...]
    category: str
    query: str
    product_category: str
    options: Mapping[str, tuple[str, ...]]
    option_to_image: Mapping[str, str | None]
    attributes: tuple[str, ...]
    main_image: str | None
    pricing: tuple[float, ...]
    price_tag: str
    instruction_text: str | None = None
    instruction_attributes: tuple[str, ...] | None = None
    human_instructions: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @property
    def rating(self) -> str:
        """WebShop ships no reviews, so every rating reads ``N.A.``."""
        return "N.A."


@dataclass(frozen=True)
class Catalogue:
    """The products of one shop, in file order, with lookup by ``asin``."""

    products: tuple[Product, ...]
    by_asin: Mapping[str, Product]
    source: str


def parse_pricing(pricing: Any, *, asin: str = "?") -> tuple[tuple[float, ...], str]:
    """Parse WebShop's ``pricing`` string the way ``load_products`` does.

    Args:
        pricing: ``"$12.99"``, ``"$10.00 - $20.00"``, or empty/None (then $100.0).
        asin: the product, named in the error.

    Returns:
        The prices (one, or the first two) and the price tag shown on pages.

    Raises:
        ConfigurationError: the string has a ``$`` part with no number.
    """
    if not pricing:
        return (100.0,), "$100.0"
    try:
        values = [float(Decimal(_NOT_DIGITS.sub("", part))) for part in str(pricing).split("$")[1:]]
    except InvalidOperation as exc:
        raise ConfigurationError(
            f"Product {asin} has pricing {pricing!r}, which WebShop cannot parse; "
            "use '$12.99' or '$10.00 - $20.00'.",
            asin=asin,
            pricing=str(pricing),
        ) from exc
    if not values:
        raise ConfigurationError(
            f"Product {asin} has pricing {pricing!r} with no '$' amount; use '$12.99' or '$10.00 - $20.00'.",
            asin=asin,
            pricing=str(pricing),
        )
    if len(values) == 1:
        return (values[0],), f"${values[0]}"
    return (values[0], values[1]), f"${values[0]} to ${values[1]}"


def _options(raw: Any) -> tuple[dict[str, tuple[str, ...]], dict[str, str | None]]:
    options: dict[str, tuple[str, ...]] = {}
    images: dict[str, str | None] = {}
    for name, contents in (raw or {}).items():
        if contents is None:
            continue
        values = []
        for content in contents:
            value = str(content["value"]).strip().replace("/", " | ").lower()
            values.append(value)
            images[value] = content.get("image")
        options[str(name).lower()] = tuple(values)
    return options, images


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DataNotFoundError(
            what,
            path=path,
            env_var="WEBSHOP_DATA",
            how_to_get="download WebShop's data release (items_shuffle_1000.json, items_ins_v2_1000.json, "
            "items_human_ins.json) as described in princeton-nlp/WebShop's setup.sh, "
            "or run `python -m envhub.envs.webshop.fixtures` for envhub's small catalogue.",
        )
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def load_catalogue(
    products_path: Path,
    attributes_path: Path,
    human_path: Path | None = None,
    *,
    num_products: int | None = None,
) -> Catalogue:
    """Load WebShop's product and attribute files.

    Args:
        products_path: ``items_shuffle_1000.json`` or ``items_shuffle.json``.
        attributes_path: ``items_ins_v2_1000.json`` or ``items_ins_v2.json``.
        human_path: ``items_human_ins.json``; only needed for human goals.
        num_products: keep only the first ``num_products`` entries (WebShop's ``num_products``).

    Returns:
        The catalogue.

    Raises:
        DataNotFoundError: a file is missing.
        ConfigurationError: a product's pricing cannot be parsed.
    """
    raw_products: Sequence[dict[str, Any]] = _read_json(Path(products_path), "WebShop product file")
    attributes: Mapping[str, Any] = _read_json(Path(attributes_path), "WebShop attribute file")
    human: Mapping[str, Any] = (
        _read_json(Path(human_path), "WebShop human instruction file") if human_path else {}
    )
    if num_products is not None:
        raw_products = raw_products[:num_products]
    seen: set[str] = set()
    products: list[Product] = []
    for raw in raw_products:
        asin = str(raw["asin"])
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        products.append(_product(raw, attributes.get(asin) or {}, human.get(asin)))
    return Catalogue(tuple(products), {p.asin: p for p in products}, source=str(Path(products_path).parent))


def _product(raw: Mapping[str, Any], attrs: Mapping[str, Any], human: Any) -> Product:
    asin = str(raw["asin"])
    bullets = raw.get("small_description")
    pricing, price_tag = parse_pricing(raw.get("pricing"), asin=asin)
    options, images = _options(raw.get("customization_options"))
    images_list = raw.get("images") or [None]
    instruction_attributes = attrs.get("instruction_attributes")
    return Product(
        asin=asin,
        title=str(raw["name"]),
        description=str(raw.get("full_description") or ""),
        bullet_points=tuple(bullets) if isinstance(bullets, list) else (str(bullets),),
        category=str(raw["category"]),
        query=str(raw["query"]).lower().strip(),
        product_category=str(raw["product_category"]),
        options=options,
        option_to_image=images,
        attributes=tuple(attrs["attributes"]) if "attributes" in attrs else ("DUMMY_ATTR",),
        main_image=images_list[0],
        pricing=pricing,
        price_tag=price_tag,
        instruction_text=attrs.get("instruction"),
        instruction_attributes=None if instruction_attributes is None else tuple(instruction_attributes),
        human_instructions=tuple(human or ()),
    )


def product_prices(catalogue: Catalogue, rng: random.Random) -> dict[str, float]:
    """The price each product sells at: WebShop's ``generate_product_prices``.

    A product with a price range sells at ``rng.uniform(low, high)``, drawn in catalogue
    order (WebShop draws from the global ``random``; envhub passes a seeded generator so a
    task id always means the same price).
    """
    prices: dict[str, float] = {}
    for product in catalogue.products:
        if len(product.pricing) == 1:
            prices[product.asin] = product.pricing[0]
        else:
            prices[product.asin] = rng.uniform(*product.pricing[:2])
    return prices
