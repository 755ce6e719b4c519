"""The time-series env served for real: groups stay in lockstep, many sessions step concurrently."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _repo_root_importable() -> None:
    """Workers import the test envs (tests/server/envs.py) by name, from the repo root."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)


@pytest.fixture(scope="module")
def ts_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


def test_group_on_the_time_series_env_stays_identical(ts_server: RunningServer) -> None:
    with httpx.Client(base_url=ts_server.base_url, timeout=30) as c:
        task = c.get("/v1/tasks", params={"split": "test", "limit": 1}).json()["task_ids"][0]
        body = {"group_size": 4, "task_id": task, "seed": 0, "env_kwargs": {"images": True}}
        group = c.post("/v1/groups", json=body).json()
        members = group["sessions"]
        assert len({m["observation"] for m in members}) == 1
        assert all(isinstance(image, str) for image in members[0]["info"]["images"])  # PNG as base64 text
        for action in ["stats[0:10]", "zscore[0:20]", "not an action"]:
            items = [{"session_id": m["session_id"], "action": action} for m in members]
            slots = c.post("/v1/batch/step", json=items).json()["results"]
            assert all(slot["ok"] for slot in slots)
            outcomes = {
                (s["result"]["observation"], s["result"]["info"]["anchor"], s["result"]["reward"])
                for s in slots
            }
            assert len(outcomes) == 1


def test_many_sessions_step_concurrently_without_errors(ts_server: RunningServer) -> None:
    async def episode(client: httpx.AsyncClient) -> list[int]:
        sid = (await client.post("/v1/sessions", json={})).json()["session_id"]
        statuses = [(await client.post(f"/v1/sessions/{sid}/reset", json={})).status_code]
        for step in range(5):
            response = await client.post(f"/v1/sessions/{sid}/step", json={"action": f"stats[0:{step + 2}]"})
            statuses.append(response.status_code)
        statuses.append((await client.delete(f"/v1/sessions/{sid}")).status_code)
        return statuses

    async def run() -> list[list[int]]:
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(base_url=ts_server.base_url, timeout=60, limits=limits) as client:
            return await asyncio.gather(*(episode(client) for _ in range(60)))

    before = httpx.get(ts_server.base_url + "/ready").json()["active_sessions"]
    results = asyncio.run(run())
    assert all(status == 200 for statuses in results for status in statuses)
    assert httpx.get(ts_server.base_url + "/ready").json()["active_sessions"] == before
