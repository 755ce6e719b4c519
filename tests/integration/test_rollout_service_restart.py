"""SIGTERM (``docker stop``) pauses the rollout service's jobs; the next start resumes them.

Real processes and a real Redis: ``envhub serve-rollouts`` with ``REDIS_URL``, the env server on
loopback. Counts are read on the raw stream (XRANGE), never through a de-duplicating consumer.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import Service, delete_keys, free_port, raw_stream, redis_up
from tests.needs import require

pytestmark = pytest.mark.integration

REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def stream() -> Iterator[str]:
    require(
        redis_up(),
        "a Redis server on 127.0.0.1:6379",
        how="start one: redis-server --daemonize yes --bind 127.0.0.1 --port 6379",
    )
    name = f"envhub:test-restart:{uuid.uuid4().hex[:8]}"
    yield name
    delete_keys(REDIS, name)


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=2)) as running:
        yield running


def body(server: RunningServer, count: int) -> dict[str, Any]:
    return {
        "env_urls": [server.base_url],
        "split": "test",
        "count": count,
        "group_size": 3,
        "max_concurrent_groups": 2,
        "env_kwargs": {"images": False},
        "policy": "scripted:tests.rollout.scripted_policies:stateless_slow",
    }


def test_a_sigtermed_service_leaves_its_job_resumable_and_the_next_start_finishes_it(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    port = free_port()
    first = Service(port, redis_url=REDIS, stream=stream, log=tmp_path / "service.log")
    try:
        created = first.post("/v1/rollouts", body(env_server, 8))
        assert created.status_code == 201, created.text
        job_id = created.json()["job_id"]
        deadline = time.monotonic() + 60
        while first.progress(job_id)["published"] < 1:
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.05)
        first.signal(signal.SIGTERM)  # what `docker stop` sends
        time.sleep(0.3)
        # Draining (the job runs on for the grace period): no new work, with a code that says why.
        refused = first.post("/v1/rollouts", body(env_server, 1))
        assert refused.status_code == 503 and refused.json()["code"] == "SHUTTING_DOWN", refused.text
        assert first.get("/ready").status_code == 503
        first.wait_exit(30)  # uvicorn re-raises the signal after a clean shutdown
    finally:
        first.stop()
    assert b"cancelled" not in _journal_status(stream, job_id)

    second = Service(port, redis_url=REDIS, stream=stream, log=tmp_path / "service.log")
    try:
        progress = second.wait(job_id, {"done", "failed", "cancelled"})
    finally:
        second.stop()
    assert progress["status"] == "done", progress
    assert progress["total"] == 8 and progress["published"] == 8
    entries = raw_stream(REDIS, stream)
    uids = Counter(e[b"uid"].decode() for e in entries)
    assert len(entries) == 8 and all(n == 1 for n in uids.values()), uids
    assert sorted(int(uid.split(":")[1]) for uid in uids) == list(range(8))  # every task, once


def test_only_delete_cancels_a_job_and_a_cancelled_job_is_not_resumed(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    port = free_port()
    first = Service(port, redis_url=REDIS, stream=stream, log=tmp_path / "service.log")
    try:
        job_id = first.post("/v1/rollouts", body(env_server, 8)).json()["job_id"]
        cancelled = first.get(f"/v1/rollouts/{job_id}")
        assert cancelled.status_code == 200
        reply = _delete(first, job_id)
        assert reply["status"] == "cancelled"
        first.signal(signal.SIGTERM)
        first.wait_exit(30)
    finally:
        first.stop()
    second = Service(port, redis_url=REDIS, stream=stream, log=tmp_path / "service.log")
    try:
        time.sleep(1.0)
        progress = second.progress(job_id)
    finally:
        second.stop()
    assert progress.get("status") in ("cancelled", None) or progress.get("code") == "JOB_NOT_FOUND"
    assert progress.get("status") != "running"


def _delete(service: Service, job_id: str) -> dict[str, Any]:
    import httpx

    return httpx.delete(f"{service.url}/v1/rollouts/{job_id}", headers=service.headers, timeout=30).json()  # type: ignore[no-any-return]


def _journal_status(stream: str, job_id: str) -> list[bytes]:
    import redis

    client = redis.Redis.from_url(REDIS)
    try:
        return [client.hget(f"{stream}:journal:job:{job_id}", "status") or b""]
    finally:
        client.close()


def test_two_instances_on_one_redis_never_step_the_same_job_and_one_adopts_a_dead_ones_jobs(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    lease = {"ENVHUB_LEASE_TTL_S": "2"}
    first = Service(free_port(), redis_url=REDIS, stream=stream, log=tmp_path / "a.log", env=lease)
    second: Service | None = None
    try:
        job_id = first.post("/v1/rollouts", body(env_server, 6)).json()["job_id"]
        second = Service(free_port(), redis_url=REDIS, stream=stream, log=tmp_path / "b.log", env=lease)
        time.sleep(3.0)  # past a lease TTL: the first instance keeps renewing its lease
        assert first.progress(job_id)["status"] == "running"
        assert second.get(f"/v1/rollouts/{job_id}").status_code == 404  # not stepped here
        first.signal(signal.SIGKILL)
        first.wait_exit(30)
        progress = second.wait(job_id, {"done", "failed", "cancelled"})  # adopted once the lease lapsed
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert progress["status"] == "done" and progress["published"] == 6, progress
    uids = Counter(e[b"uid"].decode() for e in raw_stream(REDIS, stream))
    assert sorted(int(uid.split(":")[1]) for uid in uids) == list(range(6)) and set(uids.values()) == {1}


def test_an_instance_that_lost_a_jobs_lease_adopts_it_again_once_the_lease_lapses(
    env_server: RunningServer, stream: str, tmp_path: Path
) -> None:
    # A Redis blip longer than the TTL lets another instance take a job's lease: this instance
    # pauses the job ("interrupted"). If the other instance then dies, the job must come back
    # here once that lease lapses; it used to stay interrupted until this instance restarted
    # (resume_all skipped every job id it already knew).
    import redis

    service = Service(
        free_port(), redis_url=REDIS, stream=stream, log=tmp_path / "s.log", env={"ENVHUB_LEASE_TTL_S": "1"}
    )
    try:
        job_id = service.post("/v1/rollouts", body(env_server, 6)).json()["job_id"]
        deadline = time.monotonic() + 60
        while service.progress(job_id)["published"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # "another instance" holds the lease for 2.5 s, then dies without releasing it
        redis.Redis.from_url(REDIS).set(f"{stream}:lease:{job_id}", "other-instance:1", px=2500)
        deadline = time.monotonic() + 10
        while service.progress(job_id)["status"] != "interrupted":
            assert time.monotonic() < deadline, service.progress(job_id)
            time.sleep(0.05)
        progress = service.wait(job_id, {"done", "failed", "cancelled"}, timeout_s=90)
    finally:
        service.stop()
    assert progress["status"] == "done" and progress["published"] == 6, progress
    uids = Counter(e[b"uid"].decode() for e in raw_stream(REDIS, stream))
    assert sorted(int(uid.split(":")[1]) for uid in uids) == list(range(6)) and set(uids.values()) == {1}
