"""Faults the rollout service lives through: a dead Redis, groups that all drop, retries, retention.

Real processes and a Redis of the test's own (started on a free port, killed and restarted with
its append-only file); counts are read on the raw stream (XRANGE).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from envhub.rollout.journal import EngineJournal, MemoryJournal
from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import SCRIPTED, OwnRedis, Service, free_port, raw_stream
from tests.needs import require_binary
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    require_binary("redis-server", how="apt-get install redis-server")
    redis = OwnRedis(tmp_path)
    yield redis
    redis.kill()


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


def body(server: RunningServer, **fields: Any) -> dict[str, Any]:
    return {
        "env_urls": [server.base_url],
        "split": "test",
        "count": 6,
        "group_size": 2,
        "max_concurrent_groups": 2,
        "env_kwargs": {"images": False},
        "policy": "scripted:stateless_slow",
        **fields,
    }


def test_ready_is_503_and_health_says_so_while_redis_is_down(
    env_server: RunningServer, own_redis: OwnRedis, tmp_path: Path
) -> None:
    replicas = {"ENVHUB_ENV_URLS": json.dumps([env_server.base_url, "http://127.0.0.1:9"])}
    service = Service(
        free_port(), redis_url=own_redis.url, stream="envhub:t-ready", log=tmp_path / "s.log", env=replicas
    )
    try:
        assert service.get("/ready").status_code == 200
        health = service.get("/health").json()
        assert health["redis"] == "up"
        assert health["env_replicas"] == {env_server.base_url: "up", "http://127.0.0.1:9": "down"}
        own_redis.kill()
        down = service.get("/ready")
        assert down.status_code == 503 and down.json()["redis"] == "down"
        health = service.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "degraded"
        assert health.json()["redis"] == "down"
        own_redis.start()
        assert service.get("/ready").status_code == 200
    finally:
        service.stop()


def test_a_redis_outage_mid_job_is_retried_and_every_task_is_published_once(
    env_server: RunningServer, own_redis: OwnRedis, tmp_path: Path
) -> None:
    stream = "envhub:t-outage"
    service = Service(free_port(), redis_url=own_redis.url, stream=stream, log=tmp_path / "s.log")
    try:
        job_id = service.post("/v1/rollouts", body(env_server)).json()["job_id"]
        deadline = time.monotonic() + 60
        while service.progress(job_id)["published"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        own_redis.kill()
        time.sleep(2.5)  # steps finish and groups complete while Redis is gone
        own_redis.start()
        progress = service.wait(job_id, {"done", "failed", "cancelled"})
        metrics = service.get("/metrics").text
    finally:
        service.stop()
    assert progress["status"] == "done", progress
    assert progress["published"] == 6
    uids = Counter(e[b"uid"].decode() for e in raw_stream(own_redis.url, stream))
    assert sum(uids.values()) == 6 and set(uids.values()) == {1}, uids
    retries = [line for line in metrics.splitlines() if line.startswith("envhub_rollout_redis_retries ")]
    assert retries and float(retries[0].split()[1]) > 0
    assert "envhub_rollout_queue_length 6.0" in metrics and "envhub_rollout_queue_put" in metrics


def test_a_job_whose_groups_all_drop_ends_failed_with_the_causes(env_server: RunningServer) -> None:
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED)
    with TestClient(create_app(settings, queue=CollectingQueue())) as client:
        slow = body(env_server, policy="scripted:slow_heuristic", step_timeout_s=0.01, on_failure="drop")
        job_id = client.post("/v1/rollouts", json=slow).json()["job_id"]
        progress = _wait(client, job_id)
    assert progress["status"] == "failed", progress
    assert progress["error"]["code"] == "ALL_GROUPS_DROPPED"
    assert progress["dropped"] == 6 and progress["drops_by_cause"] == {"step_timeout": 6}


def test_a_failed_job_is_retried_until_done_and_publishes_each_task_once(env_server: RunningServer) -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED)
    with TestClient(create_app(settings, queue=queue, journal=journal)) as client:
        dying = body(env_server, policy="scripted:dies_after_a_while", max_concurrent_groups=1)
        job_id = client.post("/v1/rollouts", json=dying).json()["job_id"]
        progress = _wait(client, job_id)
        assert progress["status"] == "failed" and progress["error"]["code"] == "POLICY_UNAVAILABLE"
        for _ in range(10):
            if progress["status"] == "done":
                break
            again = client.post(f"/v1/rollouts/{job_id}/retry")
            assert again.status_code == 200, again.text
            progress = _wait(client, job_id)
        assert progress["status"] == "done" and progress["published"] == 6
        refused = client.post(f"/v1/rollouts/{job_id}/retry")
        assert refused.status_code == 409 and refused.json()["code"] == "JOB_NOT_RETRYABLE"
    assert sorted(g.task_id for g in queue.groups) == sorted(f"test-{i}" for i in range(6))


def test_finished_jobs_and_their_journal_keys_are_pruned_after_the_retention(
    env_server: RunningServer,
) -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED, retention_s=0.5)
    with TestClient(create_app(settings, queue=queue, journal=journal)) as client:
        job_id = client.post("/v1/rollouts", json=body(env_server, policy="scripted:heuristic")).json()[
            "job_id"
        ]
        assert _wait(client, job_id)["status"] == "done"
        deadline = time.monotonic() + 10
        while client.get(f"/v1/rollouts/{job_id}").status_code != 404:
            assert time.monotonic() < deadline, "the finished job was never pruned"
            time.sleep(0.1)
    assert asyncio.run(journal.job_statuses()) == []


def _wait(client: TestClient, job_id: str, timeout_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        progress: dict[str, Any] = client.get(f"/v1/rollouts/{job_id}").json()
        if progress.get("status") in ("done", "failed", "cancelled"):
            return progress
        assert time.monotonic() < deadline, progress
        time.sleep(0.05)


def test_concurrent_retries_of_a_failed_job_start_it_once(
    env_server: RunningServer, own_redis: OwnRedis, tmp_path: Path
) -> None:
    # Two operators (or a client retrying on a timeout) POST .../retry at once: the check "is it
    # failed?" and the restart are separated by Redis round trips, so both used to pass it and
    # start two tasks on one job (stepping the same sessions; the first task orphaned, so DELETE
    # could no longer stop it). Both retries enter the manager on the service's own loop.
    from envhub.rollout.service import JobManager, JobNotRetryableError

    stream = "envhub:t-retry-race"
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED, redis_url=own_redis.url, stream=stream)
    with TestClient(create_app(settings)) as client:
        dying = body(env_server, policy="scripted:dies_after_a_while", max_concurrent_groups=1)
        job_id = client.post("/v1/rollouts", json=dying).json()["job_id"]
        assert _wait(client, job_id)["status"] == "failed"
        manager: JobManager = client.app.state.jobs  # type: ignore[attr-defined]

        async def race() -> list[Any]:
            return await asyncio.gather(*(manager.retry(job_id) for _ in range(3)), return_exceptions=True)

        outcomes = client.portal.call(race)  # type: ignore[union-attr]
        started = [o for o in outcomes if not isinstance(o, BaseException)]
        refused = [o for o in outcomes if isinstance(o, JobNotRetryableError)]
        assert len(started) == 1 and len(refused) == 2, outcomes
        _wait(client, job_id)
    uids = Counter(e[b"uid"].decode() for e in raw_stream(own_redis.url, stream))
    assert set(uids.values()) <= {1}, uids


def test_the_service_publishes_under_envhub_queue_max_lag(
    env_server: RunningServer, own_redis: OwnRedis, tmp_path: Path
) -> None:
    # docs/rollout.md: "a producer waits while the trainers' group has ENVHUB_QUEUE_MAX_LAG groups
    # published but not yet delivered". The service built its queue without QueueSettings, so the
    # setting did nothing there (the bound stayed 1,024). Counted on the raw stream.
    from envhub.rollout.queue.redis import RedisQueue

    stream = "envhub:t-max-lag"
    service = Service(
        free_port(),
        redis_url=own_redis.url,
        stream=stream,
        log=tmp_path / "s.log",
        env={"ENVHUB_QUEUE_MAX_LAG": "2"},
    )
    try:
        job_id = service.post("/v1/rollouts", body(env_server, policy="scripted:heuristic")).json()["job_id"]
        deadline = time.monotonic() + 60
        while len(raw_stream(own_redis.url, stream)) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(3.0)  # every group finishes meanwhile; the rest must wait (parked), unpublished
        assert len(raw_stream(own_redis.url, stream)) == 2
        assert service.progress(job_id)["status"] == "running"

        async def consume() -> list[str]:
            queue = RedisQueue(own_redis.url, stream=stream, consumer="t")
            uids: list[str] = []
            try:
                while len(uids) < 6:
                    got = await queue.get(6, timeout_s=30)
                    assert got, uids
                    uids += [d.group.uid for d in got]
                    await queue.ack(got)
            finally:
                await queue.aclose()
            return uids

        uids = asyncio.run(consume())
        assert service.wait(job_id, {"done", "failed", "cancelled"})["status"] == "done"
    finally:
        service.stop()
    assert sorted(Counter(uids).values()) == [1] * 6
