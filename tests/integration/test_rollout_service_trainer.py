"""The trainer's ``ServiceRollouts`` submits through ``AsyncRolloutClient``: typed errors, no raw dicts.

A real env server, a loopback ``/v1/models`` endpoint that serves ``tiny`` and refuses
completions, and the rollout service under uvicorn on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import uvicorn

from envhub.core.errors import EnvhubError
from envhub.core.wire import PolicyEndpoint, SamplingRequest
from envhub.rollout.engine import GroupTask
from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from envhub.train.config import RolloutSettings
from envhub.train.rollouts import ServiceRollouts
from tests.integration.test_rollout_service_input import Models
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration

TS = "envhub/TimeSeries-v0"


@pytest.fixture(scope="module")
def policy_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=TS, workers=1)) as running:
        yield running


@pytest.fixture(scope="module")
def service_url() -> Iterator[str]:
    app = create_app(RolloutServiceSettings(token="t"), queue=CollectingQueue())
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


def play(service_url: str, env_server: RunningServer, policy_url: str, model: str) -> int:
    async def run() -> int:
        rollouts = ServiceRollouts(
            service_url=service_url,
            env_id=TS,
            settings=RolloutSettings(
                env_urls=[env_server.base_url], env_kwargs={"images": False}, split="test"
            ),
            policy=PolicyEndpoint(base_url=policy_url, model=model, tokenizer="/no/such/tokenizer"),
            poll_s=0.05,
            service_token="t",
        )
        try:
            return await rollouts.play([GroupTask(0, "test-0", 0)], version=1, sampling=SamplingRequest())
        finally:
            await rollouts.aclose()

    return asyncio.run(run())


def test_a_model_the_server_does_not_list_is_a_typed_error(
    service_url: str, env_server: RunningServer, policy_url: str
) -> None:
    with pytest.raises(EnvhubError) as refused:
        play(service_url, env_server, policy_url, "no-such-model")
    assert refused.value.code == "MODEL_NOT_SERVED" and refused.value.status_code == 422


def test_a_job_that_fails_is_reported_with_its_status(
    service_url: str, env_server: RunningServer, policy_url: str
) -> None:
    with pytest.raises(EnvhubError, match="ended failed"):
        play(service_url, env_server, policy_url, "tiny")


#: How long the slow policy takes to refuse a completion: a job in flight that long.
DELAY_S = 1.0


class _SlowRefusal(Models):
    """Serves ``tiny``; refuses every completion after ``DELAY_S`` (a job then ends failed)."""

    def do_POST(self) -> None:
        time.sleep(DELAY_S)
        data = b'{"error": {"message": "refused", "type": "invalid_request_error"}}'
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def slow_policy_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowRefusal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


class _RecordingSync:
    """A weight sync that records when each push happened and how many jobs were submitted then."""

    def __init__(self) -> None:
        self.source: ServiceRollouts | None = None
        self.pushes: list[tuple[int, float, int]] = []  # version, time, jobs submitted

    async def push(self, model: object, version: int) -> dict[str, float]:
        assert self.source is not None
        self.pushes.append((version, time.monotonic(), len(self.source.jobs)))
        return {}


def test_a_push_waits_for_the_jobs_in_flight_and_holds_new_ones_until_it_is_done(
    service_url: str, env_server: RunningServer, slow_policy_url: str, small_model_dir: Path
) -> None:
    from envhub.core.errors import ConfigurationError

    async def run() -> None:
        sync = _RecordingSync()
        rollouts = ServiceRollouts(
            service_url=service_url,
            env_id=TS,
            settings=RolloutSettings(
                env_urls=[env_server.base_url], env_kwargs={"images": False}, split="test"
            ),
            policy=PolicyEndpoint(base_url=slow_policy_url, model="tiny", tokenizer=str(small_model_dir)),
            weight_sync=sync,
            poll_s=0.05,
            service_token="t",
        )
        sync.source = rollouts
        ended: dict[str, float] = {}

        async def job(name: str, version: int) -> None:
            with contextlib.suppress(EnvhubError):  # the policy refuses: the job ends failed
                await rollouts.play([GroupTask(0, "test-0", 0)], version=version, sampling=SamplingRequest())
            ended[name] = time.monotonic()

        try:
            await rollouts.push_weights(None, 1)
            start = time.monotonic()
            first = asyncio.create_task(job("first", 1))
            while not rollouts.jobs:  # submitted: the service plays it
                await asyncio.sleep(0.01)
            push = asyncio.create_task(rollouts.push_weights(None, 2))
            await asyncio.sleep(0.1)
            second = asyncio.create_task(job("second", 2))  # comes while the push waits
            await asyncio.gather(first, push, second)
            assert ended["first"] - start >= DELAY_S  # the job was in flight that long
            version, pushed, submitted = sync.pushes[-1]
            # The weights changed only once the first job had ended, and before the second
            # job (held meanwhile) was submitted.
            assert version == 2 and pushed >= ended["first"] and submitted == 1, (sync.pushes, ended)
            assert sorted(rollouts.jobs.values()) == [1, 2]
            # A play at a version the served weights no longer hold is refused.
            with pytest.raises(ConfigurationError, match="holds version 2"):
                await rollouts.play([GroupTask(0, "test-0", 0)], version=1, sampling=SamplingRequest())
        finally:
            await rollouts.aclose()

    asyncio.run(run())


def test_a_push_whose_jobs_do_not_end_stops_the_run_at_its_drain_deadline_with_a_clear_error(
    service_url: str, env_server: RunningServer, slow_policy_url: str, small_model_dir: Path
) -> None:
    from envhub.train.rollouts import PushDrainTimeoutError

    async def run() -> None:
        sync = _RecordingSync()
        rollouts = ServiceRollouts(
            service_url=service_url,
            env_id=TS,
            settings=RolloutSettings(
                env_urls=[env_server.base_url],
                env_kwargs={"images": False},
                split="test",
                push_drain_timeout_s=DELAY_S / 4,  # the job holds the policy for DELAY_S
            ),
            policy=PolicyEndpoint(base_url=slow_policy_url, model="tiny", tokenizer=str(small_model_dir)),
            weight_sync=sync,
            poll_s=0.05,
            service_token="t",
        )
        sync.source = rollouts
        try:
            await rollouts.push_weights(None, 1)
            job = asyncio.create_task(
                rollouts.play([GroupTask(0, "test-0", 0)], version=1, sampling=SamplingRequest())
            )
            while not rollouts.jobs:
                await asyncio.sleep(0.01)
            start = time.monotonic()
            with pytest.raises(PushDrainTimeoutError, match=r"waited .* for 1 play") as err:
                await rollouts.push_weights(None, 2)
            waited = time.monotonic() - start
            assert DELAY_S / 4 <= waited < DELAY_S, waited  # at the deadline, not when the job ended
            assert err.value.code == "PUSH_DRAIN_TIMEOUT" and err.value.detail["in_flight"] == 1
            assert [v for v, _, _ in sync.pushes] == [1]  # the weights were never swapped
            with contextlib.suppress(EnvhubError):
                await job
        finally:
            await rollouts.aclose()

    asyncio.run(run())
