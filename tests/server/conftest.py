"""Real env servers on loopback for the server tests (uvicorn in a background thread)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

#: The two ways a request reaches its handler: the hot path (envhub/server/fastpath.py) answers
#: session and batch steps before FastAPI; with it off, every request goes through FastAPI.
ROUTE_PATHS = ("hot_path", "fastapi")

COUNTER = "tests.server.envs:CounterEnv"
CRASHY = "tests.server.envs:CrashyEnv"
TOKEN = "test-token-123"


@pytest.fixture(scope="session", autouse=True)
def _repo_root_importable() -> None:
    """Workers import the test envs (tests/server/envs.py) by name, from the repo root."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)


@pytest.fixture(scope="session")
def server() -> Iterator[RunningServer]:
    """The main server: the counter env on two workers, a small body limit."""
    with serve_in_thread(ServerSettings(env_id=COUNTER, workers=2, max_body_bytes=64 * 1024)) as running:
        yield running


@pytest.fixture(params=ROUTE_PATHS)
def both_paths(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a test once on each request path: the same requests must get the same answers.

    For ``fastapi`` the hot path of every server the test uses (its ``*server`` fixtures) is
    switched off for the test, so step requests go through FastAPI's routes and middlewares.
    """
    names = [n for n in request.fixturenames if n.endswith("server") and n != "both_paths"]
    servers = [s for s in (request.getfixturevalue(n) for n in names) if isinstance(s, RunningServer)]
    saved = [s.app.hot_path for s in servers]  # type: ignore[attr-defined]
    if request.param == "fastapi":
        for running in servers:
            running.app.hot_path = None  # type: ignore[attr-defined]
    try:
        yield request.param
    finally:
        for running, hot_path in zip(servers, saved, strict=True):
            running.app.hot_path = hot_path  # type: ignore[attr-defined]


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


def new_session(client: httpx.Client, **reset: Any) -> tuple[str, dict[str, Any]]:
    """Create and reset a session; returns its id and the reset response."""
    created = client.post("/v1/sessions", json={})
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    response = client.post(f"/v1/sessions/{sid}/reset", json=reset)
    assert response.status_code == 200, response.text
    return sid, response.json()


def error_code(response: httpx.Response) -> str:
    """The ``code`` of an error body (and check the body has the error shape)."""
    body = response.json()
    assert set(body) == {"code", "message", "detail"}, body
    return str(body["code"])
