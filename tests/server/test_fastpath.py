"""The hot path answers steps before FastAPI, with the pieces it shares with the routes.

Behaviour is specified once, by the route tests, which run on both request paths (the
``both_paths`` fixture); these tests check that the hot path is really taken when it is on,
and the shared pieces on their own.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from envhub.core.errors import CapacityReachedError, PayloadTooLargeError, UnauthorizedError
from envhub.server import ServerSettings
from envhub.server.body import read_body
from envhub.server.deps import authorize
from envhub.server.errors import error_response
from envhub.server.testing import RunningServer

from .conftest import new_session


class _Spy:
    """Stands in front of the real hot path and counts the requests it answered."""

    def __init__(self, hot_path: Any) -> None:
        self.hot_path = hot_path
        self.answered: list[str] = []

    async def try_handle(self, scope: Any, receive: Any, send: Any) -> bool:
        handled = bool(await self.hot_path.try_handle(scope, receive, send))
        if handled:
            self.answered.append(scope["path"])
        return handled


def test_steps_and_batch_steps_take_the_hot_path_and_nothing_else_does(
    server: RunningServer, client: httpx.Client
) -> None:
    real = server.app.hot_path  # type: ignore[attr-defined]
    spy = _Spy(real)
    server.app.hot_path = spy  # type: ignore[attr-defined]
    try:
        sid, _ = new_session(client)
        assert client.post(f"/v1/sessions/{sid}/step", json={"action": "a"}).status_code == 200
        assert client.post("/v1/batch/step", json=[{"session_id": sid, "action": "b"}]).status_code == 200
        assert client.get(f"/v1/sessions/{sid}").status_code == 200
    finally:
        server.app.hot_path = real  # type: ignore[attr-defined]
    assert spy.answered == [f"/v1/sessions/{sid}/step", "/v1/batch/step"]


def test_both_paths_give_the_same_step_answer(server: RunningServer, client: httpx.Client) -> None:
    answers = []
    for hot_path in (server.app.hot_path, None):  # type: ignore[attr-defined]
        saved, server.app.hot_path = server.app.hot_path, hot_path  # type: ignore[attr-defined]
        try:
            sid, _ = new_session(client, task_id="t3", seed=7)
            body = client.post(f"/v1/sessions/{sid}/step", json={"action": "hi"}).json()
        finally:
            server.app.hot_path = saved  # type: ignore[attr-defined]
        answers.append({k: v for k, v in body.items() if k not in ("session_id", "expires_at")})
    assert answers[0] == answers[1]


def test_authorize_passes_without_a_token_and_checks_it_with_one() -> None:
    authorize(ServerSettings(), None)
    guarded = ServerSettings(token=SecretStr("s3cret"))
    authorize(guarded, "Bearer s3cret")
    for header in (None, "Bearer wrong", "s3cret"):
        with pytest.raises(UnauthorizedError):
            authorize(guarded, header)


def _receiver(chunks: list[bytes]) -> Any:
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    return receive


def test_read_body_refuses_a_declared_or_received_size_over_the_limit() -> None:
    declared = {"headers": [(b"content-length", b"11")]}
    with pytest.raises(PayloadTooLargeError) as too_long:
        asyncio.run(read_body(declared, _receiver([b"x" * 11]), 10))
    assert too_long.value.detail["size"] == 11
    chunked = {"headers": []}
    with pytest.raises(PayloadTooLargeError):
        asyncio.run(read_body(chunked, _receiver([b"x" * 6, b"x" * 6]), 10))
    assert asyncio.run(read_body(chunked, _receiver([b"ab", b"cd"]), 10)) == b"abcd"


def test_error_response_carries_the_body_headers_and_metric() -> None:
    counted: list[str] = []

    class State:
        class metrics:
            @staticmethod
            def count_error(code: str) -> None:
                counted.append(code)

    busy = error_response(CapacityReachedError(active=3, max_sessions=3, retry_after_s=2), State)
    assert busy.status_code == 503 and busy.headers["retry-after"] == "2"
    assert json.loads(busy.body)["code"] == "CAPACITY_REACHED"
    assert error_response(UnauthorizedError(), None).headers["www-authenticate"] == "Bearer"
    assert counted == ["CAPACITY_REACHED"]
