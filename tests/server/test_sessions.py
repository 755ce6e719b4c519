"""``/v1/sessions``: the session lifecycle, idempotency, TTL and capacity over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from envhub.core.wire import ResetResponse, SessionCreated, SessionState, StepResponse
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.clock import ManualClock, expire_idle_sessions, install_manual_clock
from tests.scrape import scrape

from .conftest import COUNTER, error_code, new_session

# Every test here runs on both request paths (the hot path and FastAPI's routes).
pytestmark = pytest.mark.usefixtures("both_paths")


def test_create_returns_id_and_future_expiry(client: httpx.Client) -> None:
    response = client.post("/v1/sessions", json={})
    assert response.status_code == 201
    created = SessionCreated.model_validate(response.json())
    assert created.env_id == COUNTER
    assert created.expires_at > time.time()


def test_create_passes_env_kwargs_to_the_constructor(client: httpx.Client) -> None:
    sid = client.post("/v1/sessions", json={"env_kwargs": {"prefix": "P:"}}).json()["session_id"]
    reset = client.post(f"/v1/sessions/{sid}/reset", json={"task_id": "t1"}).json()
    assert reset["observation"].startswith("P:task t1")


def test_create_with_bad_env_kwargs_is_400_and_holds_no_slot(client: httpx.Client) -> None:
    before = client.get("/ready").json()["active_sessions"]
    response = client.post("/v1/sessions", json={"env_kwargs": {"no_such_arg": 1}})
    assert response.status_code == 400
    assert error_code(response) == "INVALID_CONFIG"
    assert "no_such_arg" in response.json()["message"]
    assert client.get("/ready").json()["active_sessions"] == before


def test_reset_with_task_and_seed_is_reproducible(client: httpx.Client) -> None:
    _, first = new_session(client, task_id="t3", seed=7)
    _, second = new_session(client, task_id="t3", seed=7)
    assert ResetResponse.model_validate(first).observation == second["observation"]
    assert first["info"]["task_id"] == "t3"
    assert first["info"]["anchor"] == "t3:0"


def test_step_returns_a_gymnasium_complete_transition(client: httpx.Client) -> None:
    sid, _ = new_session(client, task_id="t0")
    body = StepResponse.model_validate(client.post(f"/v1/sessions/{sid}/step", json={"action": "go"}).json())
    assert (body.observation, body.reward, body.terminated, body.truncated, body.done) == (
        "echo go #1",
        0,
        False,
        False,
        False,
    )
    assert body.step_count == 1
    assert body.info["anchor"] == "t0:1"
    final = client.post(f"/v1/sessions/{sid}/step", json={"action": "stop"}).json()
    assert final["terminated"] and final["done"] and final["reward"] == 1.0 and final["info"]["won"]


def test_step_before_reset_is_409_reset_needed(client: httpx.Client) -> None:
    sid = client.post("/v1/sessions", json={}).json()["session_id"]
    response = client.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
    assert response.status_code == 409
    assert error_code(response) == "RESET_NEEDED"


def test_same_request_id_twice_steps_once(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    first = client.post(f"/v1/sessions/{sid}/step", json={"action": "a", "request_id": "r-1"}).json()
    again = client.post(f"/v1/sessions/{sid}/step", json={"action": "a", "request_id": "r-1"}).json()
    assert again == first
    after = client.post(f"/v1/sessions/{sid}/step", json={"action": "a", "request_id": "r-2"}).json()
    assert after["step_count"] == 2
    assert client.get(f"/v1/sessions/{sid}").json()["step_count"] == 2


def test_same_reset_request_id_twice_resets_once(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    first = client.post(f"/v1/sessions/{sid}/reset", json={"request_id": "z"}).json()
    client.post(f"/v1/sessions/{sid}/step", json={"action": "a"})
    again = client.post(f"/v1/sessions/{sid}/reset", json={"request_id": "z"}).json()
    assert again == first
    assert client.get(f"/v1/sessions/{sid}").json()["step_count"] == 1  # the retry did not reset


def test_get_reports_task_steps_and_last_observation(client: httpx.Client) -> None:
    sid, _ = new_session(client, task_id="t5")
    client.post(f"/v1/sessions/{sid}/step", json={"action": "hello"})
    state = SessionState.model_validate(client.get(f"/v1/sessions/{sid}").json())
    assert (state.task_id, state.step_count, state.done, state.last_observation) == (
        "t5",
        1,
        False,
        "echo hello #1",
    )
    assert state.created_at <= time.time() < state.expires_at


def test_delete_frees_the_session_and_later_use_is_404(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    deleted = client.delete(f"/v1/sessions/{sid}")
    assert deleted.status_code == 200 and deleted.json() == {"session_id": sid, "closed": True}
    for response in (
        client.get(f"/v1/sessions/{sid}"),
        client.post(f"/v1/sessions/{sid}/step", json={"action": "x"}),
        client.delete(f"/v1/sessions/{sid}"),
    ):
        assert response.status_code == 404
        assert error_code(response) == "SESSION_NOT_FOUND"


def test_unknown_task_is_404_unknown_task(client: httpx.Client) -> None:
    sid = client.post("/v1/sessions", json={}).json()["session_id"]
    response = client.post(f"/v1/sessions/{sid}/reset", json={"task_id": "nope"})
    assert response.status_code == 404
    assert error_code(response) == "UNKNOWN_TASK"
    assert "GET /v1/tasks" in response.json()["message"]


@pytest.mark.parametrize(
    "body",
    [{}, {"action": 3}, {"action": "x", "typo": 1}, {"action": "x", "request_id": "r" * 300}],
)
def test_malformed_step_is_422_with_pydantic_detail(client: httpx.Client, body: dict[str, object]) -> None:
    sid, _ = new_session(client)
    response = client.post(f"/v1/sessions/{sid}/step", json=body)
    assert response.status_code == 422
    assert error_code(response) == "VALIDATION_ERROR"
    assert response.json()["detail"]["errors"][0]["loc"][0] == "body"


def test_any_action_string_is_accepted(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    for action in ["", "   ", "ünïcødé ✓", "\x00\n", "{json: true}"]:
        response = client.post(f"/v1/sessions/{sid}/step", json={"action": action})
        assert response.status_code == 200, response.text


# -- TTL ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ttl_server() -> Iterator[RunningServer]:
    """A 4 s TTL on a manual clock: time moves only when a test advances it."""
    with serve_in_thread(ServerSettings(env_id=COUNTER, workers=1, session_ttl=4)) as running:
        install_manual_clock(running)
        yield running


@pytest.fixture
def clock(ttl_server: RunningServer) -> ManualClock:
    installed = ttl_server.app.state.manager.clock
    assert isinstance(installed, ManualClock)
    return installed


def test_idle_session_is_reaped_and_answers_410_expired(
    ttl_server: RunningServer, clock: ManualClock
) -> None:
    with httpx.Client(base_url=ttl_server.base_url) as c:
        before = scrape(c)
        sid, _ = new_session(c)
        clock.advance(3.9)  # not yet past the TTL: the reaper leaves it
        assert c.post(f"/v1/sessions/{sid}/step", json={"action": "x"}).status_code == 200
        expire_idle_sessions(ttl_server, clock)  # past it: the reaper takes it
        response = c.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
        assert response.status_code == 410
        assert error_code(response) == "SESSION_EXPIRED"
        assert scrape(c).delta(before, "envhub_sessions_reaped_total") == 1


def test_use_refreshes_expiry(ttl_server: RunningServer, clock: ManualClock) -> None:
    with httpx.Client(base_url=ttl_server.base_url) as c:
        sid, first = new_session(c)
        assert first["expires_at"] == clock() + 4
        clock.advance(3)
        refreshed = c.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
        assert refreshed.status_code == 200
        assert refreshed.json()["expires_at"] == first["expires_at"] + 3
        clock.advance(3)  # 6 s after creation but 3 s after the step: still alive
        assert c.post(f"/v1/sessions/{sid}/step", json={"action": "x"}).status_code == 200
        c.delete(f"/v1/sessions/{sid}")


# -- capacity -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=COUNTER, workers=1, max_sessions=3, retry_after=2)) as running:
        yield running


def test_past_capacity_is_503_with_retry_after_and_delete_frees_a_slot(small_server: RunningServer) -> None:
    with httpx.Client(base_url=small_server.base_url) as c:
        ids = [c.post("/v1/sessions", json={}).json()["session_id"] for _ in range(3)]
        refused = c.post("/v1/sessions", json={})
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "2"
        assert error_code(refused) == "CAPACITY_REACHED"
        assert refused.json()["detail"] == {"active": 3, "max_sessions": 3, "retry_after_s": 2}
        ready = c.get("/ready")
        assert ready.status_code == 503 and ready.json()["ready"] is False
        group = c.post("/v1/groups", json={"group_size": 2})
        assert group.status_code == 503
        c.delete(f"/v1/sessions/{ids[0]}")
        again = c.post("/v1/sessions", json={})
        assert again.status_code == 201
        for sid in [*ids[1:], again.json()["session_id"]]:  # leave the server empty for the next test
            c.delete(f"/v1/sessions/{sid}")


def test_unusual_session_ids_take_the_documented_slow_path(client: httpx.Client) -> None:
    too_long = client.post(f"/v1/sessions/{'x' * 300}/step", json={"action": "x"})
    assert too_long.status_code == 422
    assert error_code(too_long) == "VALIDATION_ERROR"
    nested = client.post("/v1/sessions/a/b/step", json={"action": "x"})
    assert nested.status_code == 404
    assert error_code(nested) == "NOT_FOUND"
