"""Several readers on one stream: consumer groups never take from each other (real Redis).

An entry leaves the stream only once every consumer group acked it (the MINID retention rule);
a reader without a group (``envhub rollouts export``) consumes nothing; a reader can filter by
env and run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import redis.asyncio as aioredis

from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.redis import RedisQueue, read_stream

REDIS_URL = "redis://127.0.0.1:6379/0"


async def _drain(queue: RedisQueue, n: int, within_s: float = 10.0) -> list[Delivery]:
    got: list[Delivery] = []
    deadline = time.monotonic() + within_s
    while len(got) < n and time.monotonic() < deadline:
        got += await queue.get(n - len(got), timeout_s=0.3)
    return got


async def test_an_ack_by_one_consumer_group_leaves_the_entries_to_the_others(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    trainers = RedisQueue(REDIS_URL, stream=stream, group="trainers", consumer="t")
    monitor = RedisQueue(REDIS_URL, stream=stream, group="monitor", consumer="m")
    await monitor.lag()  # the monitor's group exists before anything is published
    for i in range(3):
        await trainers.put(group_factory(f"g{i}"))
    seen = await _drain(monitor, 3)
    await monitor.ack(seen)
    assert await redis_client.xlen(stream) == 3  # the trainers have not read them: kept
    used = await _drain(trainers, 3)
    assert [d.group.uid for d in used] == ["g0", "g1", "g2"]
    await trainers.ack(used)
    assert await redis_client.xlen(stream) == 0  # acked by every group: trimmed
    await trainers.aclose()
    await monitor.aclose()


async def test_retention_keeps_what_the_slowest_group_has_not_acked(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    fast = RedisQueue(REDIS_URL, stream=stream, group="fast", consumer="f")
    slow = RedisQueue(REDIS_URL, stream=stream, group="slow", consumer="s")
    await slow.lag()
    for i in range(5):
        await fast.put(group_factory(f"g{i}"))
    held = await _drain(slow, 2)  # delivered to the slow group, not acked
    await fast.ack(await _drain(fast, 5))
    assert await redis_client.xlen(stream) == 5  # the slow group's pending and unread entries stay
    await slow.ack(held[:1])
    assert await redis_client.xlen(stream) == 4  # only g0: every group is done with it
    rest = await _drain(slow, 3)
    await slow.ack([*held[1:], *rest])
    assert await redis_client.xlen(stream) == 0
    await fast.aclose()
    await slow.aclose()


async def test_read_stream_consumes_nothing_and_filters_by_env_and_run(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    run_a = RedisQueue(REDIS_URL, stream=stream, run="run-a", consumer="pa")
    run_b = RedisQueue(REDIS_URL, stream=stream, run="run-b", consumer="pb")
    await run_a.put(group_factory("a0"))
    await run_b.put(group_factory("b0"))
    await run_a.put(group_factory("a1"))
    [(_, fields)] = await redis_client.xrange(stream, count=1)
    assert fields[b"run"] == b"run-a" and fields[b"env"] == b"envhub/Test-v0"
    every = [g.uid async for g in read_stream(run_a.client, stream)]
    assert every == ["a0", "b0", "a1"]
    only_a = [g.uid async for g in read_stream(run_a.client, stream, runs={"run-a"})]
    assert only_a == ["a0", "a1"]
    assert [g.uid async for g in read_stream(run_a.client, stream, envs={"envhub/Other-v0"})] == []
    assert await redis_client.xlen(stream) == 3
    assert [d.group.uid for d in await _drain(run_a, 3)] == ["a0", "b0", "a1"]  # nothing was taken
    await run_a.aclose()
    await run_b.aclose()


async def test_a_consumer_filtering_by_run_gets_only_that_run_and_leaves_the_rest_to_other_groups(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    producer_a = RedisQueue(REDIS_URL, stream=stream, run="run-a", consumer="pa")
    producer_b = RedisQueue(REDIS_URL, stream=stream, run="run-b", consumer="pb")
    reader_a = RedisQueue(REDIS_URL, stream=stream, group="trainer-a", consumer="a", runs={"run-a"})
    reader_b = RedisQueue(REDIS_URL, stream=stream, group="trainer-b", consumer="b", runs={"run-b"})
    await reader_a.lag()
    await reader_b.lag()
    for i in range(2):
        await producer_a.put(group_factory(f"a{i}"))
        await producer_b.put(group_factory(f"b{i}"))
    got_a = await _drain(reader_a, 2)
    got_b = await _drain(reader_b, 2)
    assert [d.group.uid for d in got_a] == ["a0", "a1"]
    assert [d.group.uid for d in got_b] == ["b0", "b1"]
    assert reader_a.stats.filtered_out >= 1  # b0 (b1 may not have been read yet)
    for queue in (producer_a, producer_b, reader_a, reader_b):
        await queue.aclose()
