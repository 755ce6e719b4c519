"""Jobs name their stream and run: two trainers on one service never take each other's groups.

A real ``envhub serve-rollouts`` process on the shared Redis, a real env server; two trainer-side
consumers built exactly as the trainer builds its queue (:func:`envhub.train.rollouts.trainer_queue`)
read one stream. Counts are checked on the raw stream (XRANGE), not through a consumer.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envhub.rollout.queue.settings import QueueSettings
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from envhub.train.rollouts import trainer_queue
from tests.integration.rollout_service_proc import Service, delete_keys, free_port, raw_stream, redis_up
from tests.needs import require

pytestmark = pytest.mark.integration

REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def stream() -> Iterator[str]:
    require(redis_up(), "a Redis server on 127.0.0.1:6379", how="redis-server --daemonize yes --port 6379")
    name = f"envhub:test-runs:{uuid.uuid4().hex[:8]}"
    yield name
    delete_keys(REDIS, name)


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


def body(server: RunningServer, count: int, **extra: Any) -> dict[str, Any]:
    return {
        "env_urls": [server.base_url],
        "split": "test",
        "count": count,
        "group_size": 2,
        "max_concurrent_groups": 4,
        "env_kwargs": {"images": False},
        "policy": "scripted:heuristic",
        **extra,
    }


async def take_all(url: str, stream: str, run: str, want: int, timeout_s: float = 60) -> list[str]:
    queue = trainer_queue(
        url, stream=stream, consumer="trainer-0", run=run, groups_per_iteration=4, settings=QueueSettings()
    )
    got: list[str] = []
    try:
        deadline = time.monotonic() + timeout_s
        while len(got) < want and time.monotonic() < deadline:
            deliveries = await queue.get(want - len(got), timeout_s=0.5)
            got += [d.group.uid for d in deliveries]
            await queue.ack(deliveries)
        # Nothing more arrives for this run.
        got += [d.group.uid for d in await queue.get(1, timeout_s=1.0)]
    finally:
        await queue.aclose()
    return got


def test_two_runs_on_one_service_and_one_stream_each_get_only_their_own_groups(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    service = Service(free_port(), redis_url=REDIS, stream="envhub:groups-unused", log=tmp_path / "s.log")
    try:
        jobs = {}
        for run, count in (("run-a", 5), ("run-b", 3)):
            created = service.post("/v1/rollouts", body(env_server, count, stream=stream, run=run))
            assert created.status_code == 201, created.text
            jobs[run] = created.json()["job_id"]
        for job_id in jobs.values():
            assert service.wait(job_id, {"done", "failed"})["status"] == "done"

        # The raw stream: every task of both jobs in exactly one entry, each labelled with its run.
        entries = raw_stream(REDIS, stream)
        by_run = Counter(e[b"run"].decode() for e in entries)
        assert by_run == {"run-a": 5, "run-b": 3}, by_run
        uids = Counter(e[b"uid"].decode() for e in entries)
        assert all(n == 1 for n in uids.values()) and len(uids) == 8
        assert raw_stream(REDIS, "envhub:groups-unused") == []

        async def both() -> tuple[list[str], list[str]]:
            a, b = await asyncio.gather(
                take_all(REDIS, stream, "run-a", 5), take_all(REDIS, stream, "run-b", 3)
            )
            return a, b

        got_a, got_b = asyncio.run(both())
        assert sorted(got_a) == sorted(u for u in uids if u.startswith(jobs["run-a"]))
        assert sorted(got_b) == sorted(u for u in uids if u.startswith(jobs["run-b"]))
    finally:
        service.stop()


def test_a_stream_name_that_is_not_a_plain_key_is_a_422(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    service = Service(free_port(), redis_url=REDIS, stream=stream, log=tmp_path / "s.log")
    try:
        reply = service.post("/v1/rollouts", body(env_server, 1, stream="a b\nc"))
        assert reply.status_code == 422 and reply.json()["code"] == "VALIDATION_ERROR", reply.text
        reply = service.post("/v1/rollouts", body(env_server, 1, stream=f"{stream}:journal:x"))
        assert reply.status_code == 422, reply.text
    finally:
        service.stop()
