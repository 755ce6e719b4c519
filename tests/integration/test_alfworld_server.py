"""ALFWorld through the real env server: a group of 8 on one game, stepped with batch steps."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from envhub.envs.alfworld.data import embedded_data_dir
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.needs import requires_modules

pytestmark = [
    pytest.mark.integration,
    requires_modules("alfworld", extra="alfworld"),
]

DATA_DIR = str(embedded_data_dir().parent)


@pytest.fixture(scope="module")
def alfworld_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/ALFWorld-v0", workers=2)) as running:
        yield running


def smallest_game() -> tuple[str, list[str]]:
    trials = sorted(embedded_data_dir().glob("*/*/*"), key=lambda p: (p / "game.tw-pddl").stat().st_size)
    trial = trials[0]
    plan = json.loads((trial / "game.tw-pddl").read_text())["walkthrough"]
    return trial.relative_to(embedded_data_dir()).as_posix(), plan


def batch_step(client: httpx.Client, sessions: list[str], action: str) -> list[dict[str, Any]]:
    reply = client.post("/v1/batch/step", json=[{"session_id": s, "action": action} for s in sessions])
    assert reply.status_code == 200, reply.text
    slots = reply.json()["results"]
    assert all(slot["ok"] for slot in slots), slots
    return [slot["result"] for slot in slots]


def test_group_of_8_on_one_game_steps_identically_and_wins_together(alfworld_server: RunningServer) -> None:
    task_id, plan = smallest_game()
    with httpx.Client(base_url=alfworld_server.base_url, timeout=300) as client:
        created = client.post(
            "/v1/groups", json={"group_size": 8, "task_id": task_id, "env_kwargs": {"data_dir": DATA_DIR}}
        )
        assert created.status_code == 201, created.text
        members = created.json()["sessions"]
        assert len(members) == 8 and len({m["observation"] for m in members}) == 1
        assert "Your task is to:" in members[0]["observation"]
        sessions = [m["session_id"] for m in members]

        invalid = batch_step(client, sessions, "dance with the fridge")
        assert {r["observation"] for r in invalid} == {"Nothing happens."}
        assert not any(r["terminated"] for r in invalid)
        assert not any(r["info"]["is_action_valid"] for r in invalid)

        for action in plan:
            results = batch_step(client, sessions, action)
            assert len({r["observation"] for r in results}) == 1, action
            assert len({r["info"]["anchor"] for r in results}) == 1
            assert all(r["info"]["task_id"] == task_id for r in results)
    for result in results:
        assert result["terminated"] and result["reward"] == 10.0
        assert (
            result["info"]["won"] is True
            and result["info"]["task_type"] == task_id.split("/")[1].split("-")[0]
        )
