"""Crash isolation: SIGKILL one worker mid-episode; only its sessions are lost, nothing hangs."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from envhub.server import ServerSettings
from envhub.server.testing import serve_in_thread
from tests.scrape import scrape

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _repo_root_importable() -> None:
    """Workers import the test envs (tests/server/envs.py) by name, from the repo root."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)


CRASHY = "tests.server.envs:CrashyEnv"


def _session(c: httpx.Client) -> str:
    sid = c.post("/v1/sessions", json={}).json()["session_id"]
    assert c.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 200
    return str(sid)


def test_sigkill_of_a_worker_loses_only_its_sessions() -> None:
    settings = ServerSettings(env_id=CRASHY, workers=2, step_timeout=20)
    with serve_in_thread(settings) as server, httpx.Client(base_url=server.base_url, timeout=20) as c:
        ids = [_session(c) for _ in range(6)]
        workers = c.get("/v1/debug/workers").json()["workers"]
        assert [w["sessions"] for w in workers] == [3, 3]
        for sid in ids:
            assert c.post(f"/v1/sessions/{sid}/step", json={"action": "warm"}).status_code == 200

        # Keep every session stepping from another thread while the worker dies. The hammer
        # counts its full rounds; the kill waits for one, and the verdict for two more after the
        # kill (one may have been in flight), so a slow machine only makes the test slower.
        statuses: dict[str, list[int]] = {sid: [] for sid in ids}
        stop = threading.Event()
        rounds = [0]
        round_done = threading.Condition()

        def hammer() -> None:
            with httpx.Client(base_url=server.base_url, timeout=20) as h:
                while not stop.is_set():
                    for sid in ids:
                        statuses[sid].append(
                            h.post(f"/v1/sessions/{sid}/step", json={"action": "x"}).status_code
                        )
                    with round_done:
                        rounds[0] += 1
                        round_done.notify_all()

        def wait_rounds(count: int) -> None:
            with round_done:
                assert round_done.wait_for(lambda: rounds[0] >= count, timeout=120), "the hammer stalled"

        before = scrape(c)
        thread = threading.Thread(target=hammer)
        thread.start()
        wait_rounds(1)
        victim = workers[0]
        os.kill(victim["pid"], signal.SIGKILL)
        wait_rounds(rounds[0] + 2)
        stop.set()
        thread.join(timeout=60)
        assert not thread.is_alive(), "a request hung after the worker was killed"

        lost = [sid for sid in ids if statuses[sid][-1] == 410]
        kept = [sid for sid in ids if statuses[sid][-1] == 200]
        assert len(lost) == 3 and len(kept) == 3
        for sid in lost:
            response = c.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
            assert response.status_code == 410
            assert response.json()["code"] == "SESSION_LOST"
            assert "SIGKILL" in response.json()["message"]
            assert set(statuses[sid]) <= {200, 410}  # never a 5xx, never a hang
        for sid in kept:
            assert set(statuses[sid]) == {200}

        deadline = time.monotonic() + 30
        while c.get("/ready").status_code != 200:
            assert time.monotonic() < deadline, "/ready did not recover"
            time.sleep(0.1)
        workers_after = c.get("/v1/debug/workers").json()["workers"]
        assert workers_after[0]["pid"] != victim["pid"] and workers_after[0]["restarts"] == 1
        assert c.get("/ready").json()["active_sessions"] == 3
        fresh = _session(c)
        assert c.post(f"/v1/sessions/{fresh}/step", json={"action": "x"}).status_code == 200
        after = scrape(c)
        assert after.delta(before, "envhub_sessions_lost_total") == 3
        assert after.delta(before, "envhub_worker_restarts_total") == 1
        assert after.delta(before, "envhub_steps_total", env=CRASHY, status="error") == 0


def test_crash_action_kills_its_worker_and_answers_410() -> None:
    settings = ServerSettings(env_id=CRASHY, workers=1)
    with serve_in_thread(settings) as server, httpx.Client(base_url=server.base_url, timeout=20) as c:
        sid = _session(c)
        response = c.post(f"/v1/sessions/{sid}/step", json={"action": "crash"})
        assert response.status_code == 410
        assert response.json()["code"] == "SESSION_LOST"
        assert "status 1" in response.json()["message"]
        assert c.get("/health").status_code == 200
        deadline = time.monotonic() + 30
        while c.get("/ready").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert c.post(f"/v1/sessions/{_session(c)}/step", json={"action": "x"}).status_code == 200
