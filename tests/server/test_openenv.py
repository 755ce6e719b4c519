"""The OpenEnv-compatible surface, checked against ``openenv-core``'s own wire models."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    HealthResponse,
    ResetResponse,
    SchemaResponse,
    State,
    StepResponse,
)
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from envhub.server.testing import RunningServer

from .conftest import COUNTER, error_code, new_session


def test_http_reset_is_stateless_and_openenv_shaped(client: httpx.Client) -> None:
    before = client.get("/ready").json()["active_sessions"]
    body = ResetResponse.model_validate(client.post("/reset", json={"seed": 4}).json())
    assert body.done is False and body.reward is None
    assert body.observation["text"].startswith("task ")
    assert body.observation["info"]["anchor"].endswith(":0")  # info kept on the wire
    assert client.get("/ready").json()["active_sessions"] == before  # the env was closed again
    assert client.post("/reset", json={"seed": 4}).json() == body.model_dump()


def test_http_reset_accepts_an_empty_body(client: httpx.Client) -> None:
    assert client.post("/reset").status_code == 200


def test_http_step_without_session_runs_on_a_fresh_env(client: httpx.Client) -> None:
    body = StepResponse.model_validate(client.post("/step", json={"action": {"action": "hi"}}).json())
    assert body.observation["text"] == "echo hi #1"
    assert body.reward == 0.0 and body.done is False


def test_http_step_with_session_header_is_stateful(client: httpx.Client) -> None:
    sid, _ = new_session(client, task_id="t1")
    headers = {"X-Session-Id": sid}
    client.post("/step", json={"action": {"message": "a"}}, headers=headers)  # OpenEnv echo's field name
    second = client.post("/step", json={"action": {"action": "b"}, "session_id": sid}).json()
    assert second["observation"]["text"] == "echo b #2"
    assert second["observation"]["session_id"] == sid
    state = State.model_validate(client.get("/state", headers=headers).json())
    assert state.step_count == 2
    assert state.model_extra is not None and state.model_extra["task_id"] == "t1"


def test_http_reset_with_session_resets_that_session(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    client.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
    reset = client.post("/reset", json={"task_id": "t6", "episode_id": "ep-1"}, headers={"X-Session-Id": sid})
    assert reset.json()["observation"]["text"].startswith("task t6")
    state = client.get("/state", headers={"X-Session-Id": sid}).json()
    assert (state["episode_id"], state["step_count"]) == ("ep-1", 0)


def test_http_step_with_bad_action_is_422(client: httpx.Client) -> None:
    for action in ({}, {"action": 5}, {"action": "x", "extra": 1}):
        response = client.post("/step", json={"action": action})
        assert response.status_code == 422, action
        assert error_code(response) == "VALIDATION_ERROR"


def test_http_unknown_session_is_404(client: httpx.Client) -> None:
    response = client.post("/step", json={"action": {"action": "x"}}, headers={"X-Session-Id": "s-nope"})
    assert response.status_code == 404
    assert error_code(response) == "SESSION_NOT_FOUND"


def test_state_schema_metadata_health_match_openenv_models(client: httpx.Client) -> None:
    assert State.model_validate(client.get("/state").json()).step_count == 0
    schema = SchemaResponse.model_validate(client.get("/schema").json())
    assert schema.action["properties"]["action"]["type"] == "string"
    assert "info" in schema.observation["properties"]
    metadata = EnvironmentMetadata.model_validate(client.get("/metadata").json())
    assert metadata.name == COUNTER and metadata.readme_content and "Echo the action" in metadata.description
    assert HealthResponse.model_validate(client.get("/health").json()).status == "healthy"


def _ws(server: RunningServer, messages: list[dict[str, object] | str | bytes]) -> list[dict[str, object]]:
    replies = []
    with connect(server.ws_url + "/ws") as ws:
        for message in messages:
            ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
            replies.append(json.loads(ws.recv(timeout=30)))
        ws.send(json.dumps({"type": "close"}))
    return replies


def test_ws_session_resets_steps_and_reports_state(server: RunningServer) -> None:
    reset, step, state = _ws(
        server,
        [
            {"type": "reset", "data": {"seed": 1, "task_id": "t2"}},
            {"type": "step", "data": {"action": "go"}},
            {"type": "state"},
        ],
    )
    assert reset["type"] == "observation" and reset["data"]["observation"]["text"].startswith("task t2")
    assert step["type"] == "observation"
    assert step["data"]["observation"]["text"] == "echo go #1"
    assert step["data"]["reward"] == 0.0 and step["data"]["done"] is False
    assert state == {"type": "state", "data": state["data"]} and state["data"]["step_count"] == 1


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("{not json", "INVALID_JSON"),
        ({"type": "dance"}, "UNKNOWN_TYPE"),
        ({"type": "step", "data": {"action": 1}}, "VALIDATION_ERROR"),
        ({"type": "reset", "data": {"seed": -1}}, "VALIDATION_ERROR"),
        ({"type": "reset", "data": {"task_id": "nope"}}, "EXECUTION_ERROR"),
    ],
)
def test_ws_errors_use_openenv_codes_and_keep_the_connection(
    server: RunningServer, message: dict[str, object] | str, code: str
) -> None:
    error, after = _ws(server, [message, {"type": "reset", "data": {}}])
    assert error["type"] == "error" and error["data"]["code"] == code
    assert after["type"] == "observation"


def test_ws_message_over_the_body_limit_closes_with_1009_like_rest_answers_413(server: RunningServer) -> None:
    """``max_body_bytes`` binds ``/ws`` too: a frame over it is refused (close 1009, message too big)."""
    limit = server.settings.max_body_bytes
    with connect(server.ws_url + "/ws", max_size=None) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv())["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"action": "x" * (limit + 1024)}}))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


def test_ws_binary_frames_are_read_as_utf8_json_and_garbage_is_invalid_json(server: RunningServer) -> None:
    reset, garbage, step = _ws(
        server,
        [
            b'{"type": "reset", "data": {"task_id": "t3"}}',
            b"\xff\xfe\x00",
            {"type": "step", "data": {"action": "a"}},
        ],
    )
    assert reset["type"] == "observation" and reset["data"]["observation"]["text"].startswith("task t3")
    assert garbage["type"] == "error" and garbage["data"]["code"] == "INVALID_JSON"
    assert step["type"] == "observation" and step["data"]["observation"]["text"] == "echo a #1"


def test_ws_session_is_closed_when_the_client_leaves(server: RunningServer, client: httpx.Client) -> None:
    before = client.get("/ready").json()["active_sessions"]
    _ws(server, [{"type": "reset", "data": {}}])
    deadline = time.monotonic() + 60  # the close runs after the socket drops; a loaded machine is slow
    while client.get("/ready").json()["active_sessions"] != before:
        assert time.monotonic() < deadline, "the WebSocket session was never closed"
        time.sleep(0.05)
