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
