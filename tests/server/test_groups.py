"""``/v1/groups``: GRPO groups start identical and stay identical under identical actions."""

from __future__ import annotations

import httpx

from envhub.core.wire import GroupCreated

from .conftest import error_code


def test_group_members_share_the_first_observation(client: httpx.Client) -> None:
    response = client.post("/v1/groups", json={"group_size": 5, "seed": 11})
    assert response.status_code == 201
    group = GroupCreated.model_validate(response.json())
    assert len(group.sessions) == 5
    assert len({m.session_id for m in group.sessions}) == 5
    assert len({m.observation for m in group.sessions}) == 1
    assert group.seed == 11
    assert group.task_id == group.sessions[0].info["task_id"]


def test_group_members_make_identical_transitions(client: httpx.Client) -> None:
    group = client.post("/v1/groups", json={"group_size": 4, "task_id": "t2", "seed": 3}).json()
    ids = [m["session_id"] for m in group["sessions"]]
    for action in ["look", "take", "stop"]:
        steps = [client.post(f"/v1/sessions/{sid}/step", json={"action": action}).json() for sid in ids]
        assert (
            len({(s["observation"], s["reward"], s["terminated"], s["info"]["anchor"]) for s in steps}) == 1
        )


def test_group_spreads_members_over_workers(client: httpx.Client) -> None:
    before = {w["index"]: w["sessions"] for w in client.get("/v1/debug/workers").json()["workers"]}
    client.post("/v1/groups", json={"group_size": 6, "seed": 1})
    after = {w["index"]: w["sessions"] for w in client.get("/v1/debug/workers").json()["workers"]}
    assert all(after[i] > before[i] for i in before)


def test_group_without_seed_reports_the_seed_it_drew(client: httpx.Client) -> None:
    group = client.post("/v1/groups", json={"group_size": 2, "task_id": "t4"}).json()
    again = client.post("/v1/groups", json={"group_size": 1, "task_id": "t4", "seed": group["seed"]}).json()
    assert again["sessions"][0]["observation"] == group["sessions"][0]["observation"]


def test_group_with_unknown_task_fails_whole_and_holds_no_slot(client: httpx.Client) -> None:
    before = client.get("/ready").json()["active_sessions"]
    response = client.post("/v1/groups", json={"group_size": 3, "task_id": "missing"})
    assert response.status_code == 404
    assert error_code(response) == "UNKNOWN_TASK"
    assert client.get("/ready").json()["active_sessions"] == before


def test_group_size_is_bounded(client: httpx.Client) -> None:
    for size in (0, 100_000):
        response = client.post("/v1/groups", json={"group_size": size})
        assert response.status_code == 422
        assert error_code(response) == "VALIDATION_ERROR"
