"""The bearer token: 401 without it on everything but /health and /ready."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

from .conftest import COUNTER, TOKEN, error_code

# Every test here runs on both request paths (the hot path and FastAPI's routes).
pytestmark = pytest.mark.usefixtures("both_paths")

PROTECTED = [
    ("POST", "/v1/sessions", {}),
    ("GET", "/v1/sessions/s-x", None),
    ("DELETE", "/v1/sessions/s-x", None),
    ("POST", "/v1/sessions/s-x/reset", {}),
    ("POST", "/v1/sessions/s-x/step", {"action": "x"}),  # answered by the hot path, not FastAPI
    ("POST", "/v1/batch/reset", []),
    ("POST", "/v1/groups", {"group_size": 1}),
    ("POST", "/v1/batch/step", []),
    ("GET", "/v1/tasks", None),
    ("GET", "/v1/debug/workers", None),
    ("GET", "/metrics", None),
    ("POST", "/reset", {}),
    ("POST", "/step", {"action": {"action": "x"}}),
    ("GET", "/state", None),
    ("GET", "/schema", None),
    ("GET", "/metadata", None),
]


@pytest.fixture(scope="module")
def token_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=COUNTER, workers=1, token=TOKEN)) as running:
        yield running


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_protected_endpoint_without_token_is_401(
    token_server: RunningServer, method: str, path: str, body: object
) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        response = httpx.request(method, token_server.base_url + path, json=body, headers=headers)
        assert response.status_code == 401, (path, headers)
        assert error_code(response) == "UNAUTHORIZED"
        assert response.headers["www-authenticate"] == "Bearer"


def test_right_token_is_served(token_server: RunningServer) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=token_server.base_url, headers=headers) as c:
        sid = c.post("/v1/sessions", json={}).json()["session_id"]
        assert c.post(f"/v1/sessions/{sid}/reset", json={}).status_code == 200
        assert c.get("/metrics").status_code == 200


def test_health_and_ready_stay_open(token_server: RunningServer) -> None:
    assert httpx.get(token_server.base_url + "/health").status_code == 200
    assert httpx.get(token_server.base_url + "/ready").status_code == 200


def test_websocket_without_token_is_refused_and_with_it_is_served(token_server: RunningServer) -> None:
    url = token_server.ws_url + "/ws"
    for target, headers in ((url, {}), (url, {"Authorization": "Bearer wrong"}), (f"{url}?token=wrong", {})):
        with pytest.raises(InvalidStatus) as refused, connect(target, additional_headers=headers):
            pass
        # The same typed answer as REST: 401 UNAUTHORIZED with the fix in the message.
        response = refused.value.response
        assert response.status_code == 401, (target, headers)
        assert json.loads(response.body)["code"] == "UNAUTHORIZED"
        assert response.headers["www-authenticate"] == "Bearer"
    for target, headers in ((url, {"Authorization": f"Bearer {TOKEN}"}), (f"{url}?token={TOKEN}", {})):
        with connect(target, additional_headers=headers) as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(ws.recv(timeout=30))["type"] == "observation"
            ws.send(json.dumps({"type": "close"}))
