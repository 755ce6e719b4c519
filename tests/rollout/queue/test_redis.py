"""What only the Redis backend does: survive a SIGKILLed consumer, restart by name, fail clearly."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from envhub.core.errors import QueueError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.codec import decode_group
from envhub.rollout.queue.redis import RedisQueue, mask_url

REDIS_URL = "redis://127.0.0.1:6379/0"
REPO = Path(__file__).resolve().parents[3]


def _spawn(script: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True, env=env, cwd=REPO
    )


async def _drain(queue: RedisQueue, n: int, within_s: float = 15.0) -> list[Delivery]:
    got: list[Delivery] = []
    deadline = time.monotonic() + within_s
    while len(got) < n and time.monotonic() < deadline:
        got += await queue.get(n - len(got), timeout_s=0.5)
    return got


async def test_groups_of_a_consumer_killed_before_xack_go_to_another_consumer(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    producer = RedisQueue(REDIS_URL, stream=stream, consumer="producer")
    for i in range(3):
        await producer.put(group_factory(f"g{i}"))
    victim = _spawn(
        f"""
        import asyncio, time
        from envhub.rollout.queue.redis import RedisQueue
        async def main():
            queue = RedisQueue({REDIS_URL!r}, stream={stream!r}, consumer="victim", claim_idle_ms=300)
            got = await queue.get(3, timeout_s=10)
            print(len(got), flush=True)
            time.sleep(600)  # "training" on them; never acks
        asyncio.run(main())
        """
    )
    try:
        line = await asyncio.to_thread(victim.stdout.readline)  # type: ignore[union-attr]
        assert line.strip() == "3"
        pending = await redis_client.xpending(stream, "trainers")
        assert pending["pending"] == 3 and pending["consumers"][0]["name"] == b"victim"
    finally:
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
    assert victim.returncode == -signal.SIGKILL
    rescuer = RedisQueue(REDIS_URL, stream=stream, consumer="rescuer", claim_idle_ms=300)
    got = await _drain(rescuer, 3)
    assert sorted(d.group.uid for d in got) == ["g0", "g1", "g2"]
    assert all(d.times_delivered == 2 for d in got)
    await rescuer.ack(got)
    assert await rescuer.backlog() == 0 and await redis_client.xlen(stream) == 0  # acked by every group
    await rescuer.aclose()
    await producer.aclose()


async def test_a_consumer_restarted_under_its_name_takes_back_its_pending_groups_at_once(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    before = RedisQueue(REDIS_URL, stream=stream, consumer="trainer-0")
    await before.put(group_factory("g0"))
    await before.put(group_factory("g1"))
    assert len(await before.get(2, timeout_s=5)) == 2
    await before.client.aclose()  # dies without acking (aclose would hand them back)
    after = RedisQueue(REDIS_URL, stream=stream, consumer="trainer-0", claim_idle_ms=3_600_000)
    got = await after.get(5, timeout_s=0)
    assert [(d.group.uid, d.times_delivered) for d in got] == [("g0", 2), ("g1", 2)]
    await after.ack(got)
    await after.aclose()


async def test_entries_carry_header_fields_and_are_never_trimmed(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    queue = RedisQueue(REDIS_URL, stream=stream, max_backlog=100, compress=1)
    group = group_factory("g0").model_copy(update={"job_id": "job-7"})
    for _ in range(30):
        await queue.put(group)
    assert await redis_client.xlen(stream) == 30
    [(_, fields)] = await redis_client.xrange(stream, count=1)
    assert fields[b"uid"] == b"g0" and fields[b"env"] == b"envhub/Test-v0"
    assert fields[b"policy_version"] == b"3" and fields[b"job"] == b"job-7"
    assert decode_group(fields[b"v"]) == group
    await queue.aclose()


async def test_an_undecodable_entry_is_dead_lettered_with_its_reason(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    queue = RedisQueue(REDIS_URL, stream=stream)
    await queue.backlog()  # creates the group
    await redis_client.xadd(stream, {"uid": "junk", "v": b"\xc1garbage"})
    await queue.put(group_factory("good"))
    got = await _drain(queue, 1)
    assert [d.group.uid for d in got] == ["good"]
    [(_, dead)] = await redis_client.xrange(f"{stream}:dead")
    assert dead[b"uid"] == b"junk" and dead[b"reason"].startswith(b"undecodable payload")
    assert queue.stats.dead_lettered == 1
    await queue.aclose()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("operation", ["put", "get", "backlog"])
async def test_an_unreachable_redis_gives_a_queue_error_naming_redis_url(
    operation: str, group_factory: Callable[..., Group]
) -> None:
    url = f"redis://:s3cret@127.0.0.1:{_closed_port()}/0"
    queue = RedisQueue(url, connect_timeout_s=2)
    calls = {
        "put": lambda: queue.put(group_factory("g")),
        "get": lambda: queue.get(1),
        "backlog": queue.backlog,
    }
    with pytest.raises(QueueError, match="REDIS_URL") as caught:
        await calls[operation]()
    message = str(caught.value)
    assert "redis-cli -u" in message and "ping" in message
    assert "s3cret" not in message and ":***@127.0.0.1" in message
    assert caught.value.code == "QUEUE_UNAVAILABLE"
    await queue.aclose()


def test_mask_url_hides_only_the_password() -> None:
    assert mask_url("redis://user:pw@host:6380/2") == "redis://user:***@host:6380/2"
    assert mask_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


async def test_a_consumer_past_max_unacked_gets_a_queue_error_saying_what_to_change(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups", max_unacked=2)
    for i in range(3):
        await queue.put(group_factory(f"g{i}"))
    held = await queue.get(2, timeout_s=5)
    with pytest.raises(QueueError, match="ENVHUB_QUEUE_MAX_UNACKED") as caught:
        await queue.get(1, timeout_s=0)
    assert "checkpoint_every" in str(caught.value)
    await queue.ack(held)
    assert [d.group.uid for d in await queue.get(1, timeout_s=5)] == ["g2"]
    await queue.aclose()
