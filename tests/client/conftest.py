"""Fixtures of the client tests: real envhub servers on loopback, and both client twins.

The servers are the server package's own test harness (``tests/server/serving.py``): uvicorn
in a background thread on a free port, env instances in real worker processes. The twins are
driven through one synchronous surface, so every test runs against ``EnvClient`` and
``AsyncEnvClient`` alike.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from envhub.client import AsyncEnvClient, EnvClient, RetryPolicy
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.client.faults import Faults, FaultyAsyncTransport, FaultySyncTransport
from tests.clock import ManualClock, install_manual_clock

#: A small env from the server tests: echoes actions, ``stop`` ends the episode.
COUNTER = "tests.server.envs:CounterEnv"
TOKEN = "client-test-token"


@pytest.fixture(scope="package")
def ts_server() -> Iterator[RunningServer]:
    """The time-series env, default settings, one worker."""
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1, port=0)) as server:
        yield server


@pytest.fixture(scope="package")
def counter_server() -> Iterator[RunningServer]:
    """The counter env, one worker."""
    with serve_in_thread(ServerSettings(env_id=COUNTER, workers=1, port=0)) as server:
        yield server


@pytest.fixture(scope="package")
def tight_server() -> Iterator[RunningServer]:
    """The counter env behind a bearer token, with room for two sessions only."""
    settings = ServerSettings(env_id=COUNTER, workers=1, port=0, max_sessions=2, token=TOKEN)
    with serve_in_thread(settings) as server:
        yield server


@pytest.fixture(scope="package")
def ttl_server() -> Iterator[RunningServer]:
    """The counter env with a 4 s TTL on a :class:`ManualClock`: sessions expire only when a test
    calls :func:`tests.clock.expire_idle_sessions`, however slow the machine."""
    with serve_in_thread(ServerSettings(env_id=COUNTER, workers=1, port=0, session_ttl=4)) as server:
        install_manual_clock(server)
        yield server


@pytest.fixture
def ttl_clock(ttl_server: RunningServer) -> ManualClock:
    clock = ttl_server.app.state.manager.clock
    assert isinstance(clock, ManualClock)
    return clock


class SyncFacade:
    """Runs an :class:`AsyncEnvClient` on a private event loop behind synchronous methods.

    It lets one test body drive both twins; every call is a real awaited request.
    """

    def __init__(self, client: AsyncEnvClient) -> None:
        self._client = client
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run_until_complete(attr(*args, **kwargs))

        return call

    def close(self) -> None:
        self._loop.run_until_complete(self._client.close())

    def dispose(self) -> None:
        """Close the client and then its private loop (fixture teardown)."""
        self.close()
        self._loop.close()


MakeClient = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
def make_client(request: pytest.FixtureRequest) -> Iterator[MakeClient]:
    """``make_client(base_url, faults=None, **kwargs)`` builds the twin under test (closed after the test).

    ``faults`` puts a :class:`~tests.client.faults.Faults` transport between client and server.
    """
    made: list[Any] = []

    def build(base_url: str, *, faults: Faults | None = None, **kwargs: Any) -> Any:
        kwargs.setdefault("retry", RetryPolicy(max_attempts=4, backoff_s=0.01, max_backoff_s=0.05))
        if request.param == "sync":
            if faults is not None:
                kwargs["transport"] = FaultySyncTransport(faults)
            client: Any = EnvClient(base_url, **kwargs)
        else:
            if faults is not None:
                kwargs["transport"] = FaultyAsyncTransport(base_url, faults)
            client = SyncFacade(AsyncEnvClient(base_url, **kwargs))
        made.append(client)
        return client

    yield build
    for client in made:
        if isinstance(client, SyncFacade):
            client.dispose()
        else:
            client.close()
