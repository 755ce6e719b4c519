"""Worker isolation: env exceptions, step timeouts and worker replacement."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.scrape import scrape

from .conftest import CRASHY, error_code, new_session


@pytest.fixture(scope="module")
def crashy_server() -> Iterator[RunningServer]:
    # 5 s: far above an ordinary step or a worker start on a loaded machine, far below sleep:30.
    with serve_in_thread(ServerSettings(env_id=CRASHY, workers=2, step_timeout=5.0)) as running:
        yield running


@pytest.fixture
def crashy(crashy_server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=crashy_server.base_url, timeout=30) as c:
        yield c


def _wait_ready(c: httpx.Client, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while c.get("/ready").status_code != 200:
        assert time.monotonic() < deadline, "the pool did not recover"
        time.sleep(0.1)


def test_env_exception_is_500_execution_error_and_session_survives(crashy: httpx.Client) -> None:
    sid, _ = new_session(crashy)
    before = scrape(crashy)
    response = crashy.post(f"/v1/sessions/{sid}/step", json={"action": "raise"})
    assert response.status_code == 500
    assert error_code(response) == "EXECUTION_ERROR"
    assert response.json()["detail"]["exception_type"] == "RuntimeError"
    assert crashy.post(f"/v1/sessions/{sid}/step", json={"action": "ok"}).status_code == 200
    after = scrape(crashy)
    assert after.delta(before, "envhub_steps_total", env=CRASHY, status="error") == 1
    assert after.delta(before, "envhub_steps_total", env=CRASHY, status="ok") == 1
    assert after.delta(before, "envhub_request_errors_total", code="EXECUTION_ERROR") == 1
    assert after.delta(before, "envhub_worker_restarts_total") == 0


def test_env_error_with_a_detail_json_cannot_hold_is_answered_and_the_worker_survives(
    crashy: httpx.Client,
) -> None:
    _wait_ready(crashy)
    sid, _ = new_session(crashy)
    restarts = sum(w["restarts"] for w in crashy.get("/v1/debug/workers").json()["workers"])
    response = crashy.post(f"/v1/sessions/{sid}/step", json={"action": "raise-odd-detail"})
    assert response.status_code == 400
    assert error_code(response) == "INVALID_CONFIG"
    assert response.json()["detail"]["tags"] == ["a"]
    slots = crashy.post("/v1/batch/step", json=[{"session_id": sid, "action": "raise-odd-detail"}]).json()
    assert slots["results"][0]["error"]["code"] == "INVALID_CONFIG"
    assert crashy.post(f"/v1/sessions/{sid}/step", json={"action": "ok"}).status_code == 200
    assert sum(w["restarts"] for w in crashy.get("/v1/debug/workers").json()["workers"]) == restarts


def test_slow_step_is_504_then_session_lost_and_worker_replaced(crashy: httpx.Client) -> None:
    _wait_ready(crashy)
    sid, _ = new_session(crashy)
    restarts = sum(w["restarts"] for w in crashy.get("/v1/debug/workers").json()["workers"])
    response = crashy.post(f"/v1/sessions/{sid}/step", json={"action": "sleep:30"})
    assert response.status_code == 504
    assert error_code(response) == "STEP_TIMEOUT"
    after = crashy.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
    assert after.status_code == 410
    assert error_code(after) == "SESSION_LOST"
    _wait_ready(crashy)
    assert sum(w["restarts"] for w in crashy.get("/v1/debug/workers").json()["workers"]) == restarts + 1
    assert all(w["alive"] for w in crashy.get("/v1/debug/workers").json()["workers"])
    fresh, _ = new_session(crashy)
    assert crashy.post(f"/v1/sessions/{fresh}/step", json={"action": "x"}).status_code == 200


def test_crash_in_a_batch_fails_only_that_workers_items(crashy: httpx.Client) -> None:
    _wait_ready(crashy)
    ids = [new_session(crashy)[0] for _ in range(4)]  # least-loaded placement: two per worker
    victim = ids[0]
    before = scrape(crashy)
    items = [{"session_id": victim, "action": "crash"}] + [{"session_id": s, "action": "x"} for s in ids[1:]]
    slots = crashy.post("/v1/batch/step", json=items).json()["results"]
    assert slots[0]["ok"] is False and slots[0]["error"]["code"] == "SESSION_LOST"
    survivors = [s for s in slots[1:] if s["ok"]]
    assert len(survivors) >= 1  # the other worker's items were answered
    assert all(s["error"]["code"] == "SESSION_LOST" for s in slots[1:] if not s["ok"])
    _wait_ready(crashy)
    assert crashy.get("/health").json()["status"] == "healthy"
    after = scrape(crashy)
    # Every session the dead worker held is counted lost, and nothing else went away.
    lost = after.delta(before, "envhub_sessions_lost_total")
    assert lost >= 1 and lost == before.value("envhub_sessions_active") - after.value(
        "envhub_sessions_active"
    )
    assert after.delta(before, "envhub_worker_restarts_total") == 1


# -- the step timeout measures the step, not the queue in front of it ---------------------------


#: The one-worker server's step timeout, and a step that stays well under it (2.5 s of slack).
SLOW_TIMEOUT, SLOW_STEP = 4.0, 1.5
assert 3 * SLOW_STEP > SLOW_TIMEOUT > SLOW_STEP + 2


@pytest.fixture(scope="module")
def one_slow_worker() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=CRASHY, workers=1, step_timeout=SLOW_TIMEOUT)) as running:
        yield running


def test_steps_queued_behind_slow_steps_are_not_timed_out(one_slow_worker: RunningServer) -> None:
    # Each step sleeps 1.5 s (2.5 s under the timeout, room for a loaded machine); on one worker
    # the later ones wait for the earlier ones, so the last is answered 6 s after being sent,
    # past the timeout. Waiting is not a slow step.
    with httpx.Client(base_url=one_slow_worker.base_url, timeout=60) as c:
        ids = [new_session(c)[0] for _ in range(4)]

    def slow_step(sid: str) -> httpx.Response:
        with httpx.Client(base_url=one_slow_worker.base_url, timeout=60) as h:
            return h.post(f"/v1/sessions/{sid}/step", json={"action": f"sleep:{SLOW_STEP}"})

    with ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(slow_step, ids))
    assert [r.status_code for r in responses] == [200] * 4, [r.text for r in responses]
    with httpx.Client(base_url=one_slow_worker.base_url, timeout=30) as c:
        assert c.get("/v1/debug/workers").json()["workers"][0]["restarts"] == 0


def test_a_batch_longer_than_the_timeout_with_no_slow_item_is_answered(
    one_slow_worker: RunningServer,
) -> None:
    with httpx.Client(base_url=one_slow_worker.base_url, timeout=30) as c:
        sid, _ = new_session(c)
        items = [
            {"session_id": sid, "action": f"sleep:{SLOW_STEP}"} for _ in range(3)
        ]  # 4.5 s in one message
        slots = c.post("/v1/batch/step", json=items).json()["results"]
        assert [s["ok"] for s in slots] == [True, True, True], slots
        assert [s["result"]["step_count"] for s in slots] == [1, 2, 3]
        assert c.get("/v1/debug/workers").json()["workers"][0]["restarts"] == 0
