"""``RolloutClient`` and ``AsyncRolloutClient``: one suite over both twins, against a real service.

The rollout service runs under uvicorn on loopback (with a token and an in-memory journal), the
env server too; each test drives the whole job lifecycle through the client.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn

from envhub.client import AsyncRolloutClient, RolloutClient, RolloutJobTimeout
from envhub.core.errors import EnvhubError, JobNotFoundError, ServerUnreachableError, UnauthorizedError
from envhub.core.wire import RolloutRequest
from envhub.rollout.journal import EngineJournal, MemoryJournal
from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import SCRIPTED
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration

TOKEN = "client-test-token"


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


@pytest.fixture(scope="module")
def service_url() -> Iterator[str]:
    queue = CollectingQueue()
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED, token=TOKEN)
    app = create_app(settings, queue=queue, journal=EngineJournal(MemoryJournal(), queue))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(timeout=30)
    sock.close()


class Twin:
    """The sync client, or the async one driven by ``asyncio.run``: one face for the suite."""

    def __init__(self, make: Callable[[], Any], is_async: bool) -> None:
        self.make, self.is_async = make, is_async

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if not self.is_async:
            with self.make() as client:
                return getattr(client, method)(*args, **kwargs)

        async def run() -> Any:
            async with self.make() as client:
                return await getattr(client, method)(*args, **kwargs)

        return asyncio.run(run())


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest, service_url: str) -> Callable[..., Twin]:
    def make(url: str = service_url, token: str | None = TOKEN) -> Twin:
        cls = RolloutClient if request.param == "sync" else AsyncRolloutClient
        return Twin(lambda: cls(url, token=token), request.param == "async")

    return make


def job(server: RunningServer, **fields: Any) -> dict[str, Any]:
    body = {
        "env_urls": [server.base_url],
        "count": 2,
        "split": "test",
        "group_size": 2,
        "env_kwargs": {"images": False},
        "policy": "scripted:heuristic",
    }
    return {**body, **fields}


def test_submit_wait_get_and_list(env_server: RunningServer, twin: Callable[..., Twin]) -> None:
    client = twin()
    created = client("submit", RolloutRequest.model_validate(job(env_server)))
    final = client("wait", created.job_id, timeout_s=60, poll_s=0.05)
    assert final.status == "done" and final.published == 2
    assert client("get", created.job_id) == final
    assert created.job_id in {p.job_id for p in client("list").data}


def test_cancel_then_retry_is_refused_with_its_code(
    env_server: RunningServer, twin: Callable[..., Twin]
) -> None:
    client = twin()
    created = client("submit", job(env_server, policy="scripted:slow_heuristic", count=8))
    assert client("cancel", created.job_id).status == "cancelled"
    with pytest.raises(EnvhubError) as refused:
        client("retry", created.job_id)
    assert refused.value.code == "JOB_NOT_RETRYABLE"


def test_a_failed_job_is_retried(env_server: RunningServer, twin: Callable[..., Twin]) -> None:
    client = twin()
    created = client("submit", job(env_server, policy="scripted:dies_after_a_while", max_concurrent_groups=1))
    assert client("wait", created.job_id, timeout_s=60, poll_s=0.05).status == "failed"
    assert client("retry", created.job_id).status in ("starting", "running")


def test_errors_come_back_as_their_classes(env_server: RunningServer, twin: Callable[..., Twin]) -> None:
    with pytest.raises(JobNotFoundError):
        twin()("get", "no-such-job")
    with pytest.raises(UnauthorizedError):
        twin(token="wrong")("list")
    with pytest.raises(EnvhubError) as rejected:
        twin()("submit", job(env_server, policy="scripted:os:system"))
    assert rejected.value.code == "NOT_REGISTERED" and rejected.value.status_code == 422
    with pytest.raises(ServerUnreachableError):
        twin(url="http://127.0.0.1:9")("list")


def test_wait_gives_up_after_its_timeout(env_server: RunningServer, twin: Callable[..., Twin]) -> None:
    client = twin()
    created = client("submit", job(env_server, policy="scripted:slow_heuristic", count=8))
    with pytest.raises(RolloutJobTimeout):
        client("wait", created.job_id, timeout_s=0.2, poll_s=0.05)
    client("cancel", created.job_id)
