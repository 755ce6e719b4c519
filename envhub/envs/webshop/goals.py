"""WebShop's shopping goals: human and synthetic, shuffled with WebShop's fixed seed.

Reproduces ``engine/goal.py``'s ``get_human_goals`` / ``get_synthetic_goals`` and the
``SimServer`` shuffle (reference notes B1, B7):

* a goal's price limit is the larger of two values sampled from the first four multiples
  of 10 above the product's price, and the instruction gets
  ``", and price lower than X.XX dollars"``; with fewer than two such values the limit is
  1,000,000 and no price text is added;
* synthetic goals are one per combination of the product's option values (option names
  sorted), with the text ``" with name: value, and name: value"``; their weight is the mean
  of ``1 / count(attribute)`` over the goal's attributes; human goals weigh 1 and skip
  entries without attributes;
* the list is shuffled with ``random.Random(seed)``, ``seed`` = 233 by default (WebShop's
  ``random.seed(233)``), so goal index ``i`` matches the literature's goal ``i``.

Prices and limits are drawn from one ``random.Random(seed)`` in WebShop's order (product
prices first, then goal limits); WebShop draws them from the unseeded global generator and
verl-agent from one seeded with the worker seed, which this reproduces for ``seed``.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envhub.envs.webshop.catalogue import Catalogue, Product

__all__ = ["NO_PRICE_LIMIT", "PRICE_RANGE", "TEST_GOALS", "Goal", "build_goals", "split_goal_ids"]

#: The price limits a goal can have: WebShop's ``PRICE_RANGE`` (10, 20, ..., 990).
PRICE_RANGE: tuple[float, ...] = tuple(10.0 * i for i in range(1, 100))

#: How many shuffled goals form the test split (verl-agent: test = goals[:500], train = the rest).
TEST_GOALS = 500

NO_PRICE_LIMIT = 1_000_000


@dataclass(frozen=True)
class Goal:
    """One shopping task (WebShop's goal dict).

    Attributes:
        asin: the target product.
        category, query, name, product_category: the target's fields the type reward compares.
        instruction_text: what the shopper is told.
        attributes: the attributes the purchase should have.
        price_upper: the price limit.
        goal_options: ``{name: value}`` for synthetic goals, a list of values for human goals.
        weight: WebShop's sampling weight.
    """

    asin: str
    category: str
    query: str
    name: str
    product_category: str
    instruction_text: str
    attributes: tuple[str, ...]
    price_upper: float
    goal_options: Mapping[str, str] | tuple[str, ...]
    weight: float


def _price_limit(rng: random.Random, price: float) -> tuple[float, str]:
    above = [p for p in PRICE_RANGE if p > price][:4]
    if len(above) >= 2:
        _, upper = sorted(rng.sample(above, 2))
        return upper, f", and price lower than {upper:.2f} dollars"
    return NO_PRICE_LIMIT, ""


def _target(product: Product, **fields: Any) -> dict[str, Any]:
    return dict(
        asin=product.asin,
        category=product.category,
        query=product.query,
        name=product.title,
        product_category=product.product_category,
        **fields,
    )


def _human_goals(catalogue: Catalogue, prices: Mapping[str, float], rng: random.Random) -> list[Goal]:
    goals = []
    for product in catalogue.products:
        for entry in product.human_instructions:
            attributes = tuple(entry["instruction_attributes"])
            if not attributes:
                continue
            upper, price_text = _price_limit(rng, prices[product.asin])
            goals.append(
                Goal(
                    **_target(
                        product,
                        instruction_text=str(entry["instruction"]).strip(".") + price_text,
                        attributes=attributes,
                        price_upper=upper,
                        goal_options=tuple(entry["instruction_options"]),
                        weight=1.0,
                    )
                )
            )
    return goals


def _synthetic_goals(catalogue: Catalogue, prices: Mapping[str, float], rng: random.Random) -> list[Goal]:
    drafts: list[dict[str, Any]] = []
    counts: dict[str, int] = defaultdict(int)
    for product in catalogue.products:
        if product.instruction_text is None:
            continue
        attributes = tuple(product.instruction_attributes or ())
        upper, price_text = _price_limit(rng, prices[product.asin])
        names = sorted(product.options)
        for combination in itertools.product(*(product.options[n] for n in names)):
            options = dict(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in options.items())
            option_text = f" with {option_text}" if option_text else ""
            drafts.append(
                _target(
                    product,
                    instruction_text=f"{product.instruction_text}{option_text}{price_text}",
                    attributes=attributes,
                    price_upper=upper,
                    goal_options=options,
                )
            )
            for attribute in attributes:
                counts[attribute] += 1
    return [
        Goal(**d, weight=sum(1.0 / counts[a] for a in d["attributes"]) / max(len(d["attributes"]), 1))
        for d in drafts
    ]


def build_goals(
    catalogue: Catalogue, prices: Mapping[str, float], *, human_goals: bool, rng: random.Random, seed: int
) -> list[Goal]:
    """All goals of a catalogue in WebShop's shuffled order.

    Args:
        catalogue: the loaded products.
        prices: each product's selling price (from :func:`~envhub.envs.webshop.catalogue.product_prices`).
        human_goals: human goals (``items_human_ins``) instead of synthetic ones (``items_ins_v2``).
        rng: the generator prices were drawn from; goal price limits continue its stream.
        seed: the shuffle seed (WebShop: 233).

    Returns:
        The goals; goal ``i`` is task id ``str(i)``.
    """
    goals = (_human_goals if human_goals else _synthetic_goals)(catalogue, prices, rng)
    random.Random(seed).shuffle(goals)
    return goals


def split_goal_ids(n_goals: int) -> dict[str, Sequence[str]]:
    """Task ids per split: test = the first 500 goals, train = the rest (verl-agent's split).

    A catalogue with 500 goals or fewer (envhub's small human-goal set) is split in half
    instead, so that neither split is empty.
    """
    n_test = TEST_GOALS if n_goals > TEST_GOALS else n_goals // 2
    return {
        "test": tuple(str(i) for i in range(n_test)),
        "train": tuple(str(i) for i in range(n_test, n_goals)),
    }
