"""WebShop through the real env server: a group on one goal sees identical pages and wins together."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from envhub.envs.webshop.data import load_shop_data
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def webshop_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/WebShop-v0", workers=1)) as running:
        yield running


def _batch_step(client: httpx.Client, sessions: list[str], action: str) -> list[dict[str, Any]]:
    reply = client.post("/v1/batch/step", json=[{"session_id": s, "action": action} for s in sessions])
    assert reply.status_code == 200, reply.text
    slots = reply.json()["results"]
    assert all(slot["ok"] for slot in slots), slots
    return [slot["result"] for slot in slots]


def test_group_on_one_goal_sees_identical_pages_and_scores_the_purchase(
    webshop_server: RunningServer,
) -> None:
    shop = load_shop_data()
    goal = shop.goals[0]
    product = shop.products[goal.asin]
    with httpx.Client(base_url=webshop_server.base_url, timeout=120) as client:
        created = client.post("/v1/groups", json={"group_size": 3, "task_id": "0"})
        assert created.status_code == 201, created.text
        members = created.json()["sessions"]
        assert len({m["observation"] for m in members}) == 1
        assert members[0]["observation"].endswith(f"{goal.instruction_text} [SEP] Search")
        sessions = [m["session_id"] for m in members]
        actions = [
            f"search[{product.title}]",
            f"click[{goal.asin.lower()}]",
            *[f"click[{v}]" for v in dict(goal.goal_options).values()],  # type: ignore[arg-type]
        ]
        for action in actions:
            results = _batch_step(client, sessions, action)
            assert len({r["observation"] for r in results}) == 1, action
            assert len({r["info"]["anchor"] for r in results}) == 1
            assert all(r["info"]["is_action_valid"] for r in results)
        final = _batch_step(client, sessions, "click[buy now]")
    for result in final:
        assert result["terminated"] and result["reward"] == 10.0
        assert result["info"]["won"] is True and result["info"]["task_score"] == 1.0
