"""The rollout service SIGKILLed mid-job and restarted: every task ends in exactly one published group.

Real processes and real Redis: the service runs as ``envhub serve-rollouts`` with ``REDIS_URL``,
the env server on loopback. In-flight episodes continue from the journal on their env sessions.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import SCRIPTED
from tests.needs import require

pytestmark = pytest.mark.integration

REDIS = "redis://127.0.0.1:6379/0"
ROOT = Path(__file__).resolve().parents[2]


def redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Service:
    """``envhub serve-rollouts`` in its own process."""

    def __init__(self, port: int, stream: str, log: Path) -> None:
        env = {
            **os.environ,
            "REDIS_URL": REDIS,
            "ENVHUB_STREAM": stream,
            "PYTHONPATH": str(ROOT),
            "ENVHUB_SCRIPTED_POLICIES": json.dumps(SCRIPTED),  # requests name registered policies only
        }
        self.url = f"http://127.0.0.1:{port}"
        self.log = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "envhub.cli", "serve-rollouts", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the rollout service did not start; see {log}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


@pytest.fixture
def stream() -> Iterator[str]:
    require(
        redis_up(),
        "a Redis server on 127.0.0.1:6379",
        how="start one: redis-server --daemonize yes --bind 127.0.0.1 --port 6379",
    )
    import redis

    name = f"envhub:test-crash:{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(f"{name}*"))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


def published_groups(stream: str) -> list[Any]:
    """Every entry of the raw stream, decoded: duplicates are counted, nothing is consumed."""
    import redis

    from envhub.rollout.queue.codec import decode_group

    client = redis.Redis.from_url(REDIS)
    try:
        return [decode_group(fields[b"v"]) for _, fields in client.xrange(stream)]
    finally:
        client.close()


def journaled_steps(stream: str, job_id: str) -> int:
    """Steps the journal holds for the job's in-flight groups (what a restart can resume)."""
    import asyncio

    from envhub.rollout.journal import RedisJournal
    from envhub.rollout.queue.redis import RedisQueue

    async def count() -> int:
        queue = RedisQueue(REDIS, stream=stream, group="crash-test-peek", consumer="peek")
        try:
            journal = RedisJournal(queue, prefix=f"{stream}:journal")
            return sum(len(m.steps) for g in await journal.open_groups(job_id) for m in g.members)
        finally:
            await queue.aclose()

    return asyncio.run(count())


def test_a_sigkilled_service_resumes_its_job_and_publishes_every_task_once(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    port = free_port()
    first = Service(port, stream, tmp_path / "service.log")
    body = {
        "env_urls": [env_server.base_url],
        "split": "test",
        "count": 8,
        "group_size": 3,
        "max_concurrent_groups": 2,
        "env_kwargs": {"images": False},
        "policy": "scripted:stateless_slow",
    }
    try:
        job_id = httpx.post(f"{first.url}/v1/rollouts", json=body, timeout=30).json()["job_id"]
        deadline = time.monotonic() + 60
        while httpx.get(f"{first.url}/v1/rollouts/{job_id}").json()["published"] < 2:
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.05)
        # Kill only once the journal holds steps of episodes still in flight, so the restart
        # has something to resume (an event, not a guess at timing).
        while journaled_steps(stream, job_id) == 0:
            assert time.monotonic() < deadline, "no in-flight step was journaled"
            time.sleep(0.02)
        first.kill()
    finally:
        first.stop()

    second = Service(port, stream, tmp_path / "service.log")
    try:
        deadline = time.monotonic() + 120
        while (progress := httpx.get(f"{second.url}/v1/rollouts/{job_id}").json())["status"] not in (
            "done",
            "failed",
        ):
            assert time.monotonic() < deadline, progress
            time.sleep(0.1)
    finally:
        second.stop()
    assert progress["status"] == "done" and progress["total"] == 8 and progress["published"] == 8
    assert progress["steps_resumed"] > 0  # in-flight episodes continued from the journal

    groups = published_groups(stream)  # the raw stream: a duplicate publish would show here
    assert len(groups) == 8
    assert sorted(g.task_id for g in groups) == sorted(f"test-{i}" for i in range(8))  # none lost, none twice
    assert len({g.uid for g in groups}) == 8
    for group in groups:
        assert len(group.trajectories) == 3
        for traj in group.trajectories:
            assert [s.step_idx for s in traj.steps] == list(range(len(traj.steps)))
            assert traj.steps[-1].terminated and all("_next" not in s.info for s in traj.steps)
