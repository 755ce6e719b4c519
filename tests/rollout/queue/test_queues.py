"""Behaviour both queue backends share: at-least-once, back-pressure, de-dup, dead letters.

Every test runs against the in-process :class:`MemoryQueue` and against :class:`RedisQueue` on
the real Redis at 127.0.0.1:6379 (keys under a unique prefix, deleted afterwards).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery, GroupQueue
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.redis import RedisQueue

REDIS_URL = "redis://127.0.0.1:6379/0"

QueueFactory = Callable[..., Any]


@pytest.fixture(params=["memory", "redis"])
async def make_queue(
    request: pytest.FixtureRequest, prefix: str, redis_client: aioredis.Redis
) -> AsyncIterator[QueueFactory]:
    """``make_queue(consumer, **options)``: a consumer on one shared queue of the backend."""
    made: list[Any] = []
    shared: dict[str, MemoryQueue] = {}

    def factory(consumer: str = "c0", **options: Any) -> Any:
        if request.param == "memory":
            renew = options.pop("renew_leases", True)
            if "base" not in shared:
                shared["base"] = MemoryQueue(options.pop("max_lag", 1024), **options)
            queue: Any = shared["base"].consumer(consumer, renew_leases=renew)
        else:
            queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups", consumer=consumer, **options)
        made.append(queue)
        return queue

    yield factory
    for queue in made:
        await queue.aclose()


async def _eventually(check: Callable[[], Awaitable[bool]], within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while not await check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def _drain(queue: Any, n: int, within_s: float = 10.0) -> list[Delivery]:
    got: list[Delivery] = []
    deadline = time.monotonic() + within_s
    while len(got) < n and time.monotonic() < deadline:
        got += await queue.get(n - len(got), timeout_s=0.5)
    return got


async def test_both_backends_implement_the_group_queue_protocol(make_queue: QueueFactory) -> None:
    assert isinstance(make_queue(), GroupQueue)


async def test_a_group_is_delivered_once_and_gone_after_ack(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    queue = make_queue()
    group = group_factory("g1")
    await queue.put(group)
    [delivery] = await queue.get(5, timeout_s=5)
    assert delivery.group == group and delivery.times_delivered == 1
    assert await queue.backlog() == 1  # delivered but not acked still counts
    await queue.ack([delivery])
    assert await queue.get(5, timeout_s=0.2) == []
    assert await queue.backlog() == 0
    assert queue.stats.put == 1 and queue.stats.acked == 1


async def test_get_returns_nothing_after_its_timeout_on_an_empty_queue(make_queue: QueueFactory) -> None:
    queue = make_queue()
    assert await queue.get(3, timeout_s=0) == []
    assert await queue.get(3, timeout_s=0.2) == []


async def test_get_preserves_publication_order(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    queue = make_queue()
    for i in range(6):
        await queue.put(group_factory(f"g{i}"))
    got = await _drain(queue, 6)
    assert [d.group.uid for d in got] == [f"g{i}" for i in range(6)]


async def test_put_waits_at_the_undelivered_lag_bound_and_drops_nothing(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    producer = make_queue("producer", max_lag=4)
    consumer = make_queue("consumer", max_lag=4)
    for i in range(4):
        await producer.put(group_factory(f"g{i}"))
    fifth = asyncio.create_task(producer.put(group_factory("g4")))

    async def waiting() -> bool:
        return producer.stats.put_waits == 1

    await _eventually(waiting)  # the producer saw the bound and is waiting
    assert not fifth.done()
    assert await consumer.lag() == 4
    first = await consumer.get(1, timeout_s=5)
    await asyncio.wait_for(fifth, timeout=10)  # delivered (even unacked) is no longer lag
    rest = await _drain(consumer, 4)
    assert [d.group.uid for d in first + rest] == [f"g{i}" for i in range(5)]


async def test_groups_held_unacked_until_a_checkpoint_never_stall_the_producer(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    # A trainer acks only at its checkpoint: it may hold many more groups than the bound.
    producer = make_queue("producer", max_lag=4)
    trainer = make_queue("trainer", max_lag=4)
    uids = [f"g{i}" for i in range(12)]

    async def produce() -> None:
        for uid in uids:
            await producer.put(group_factory(uid, n=1, steps=1))

    async def train() -> list[Delivery]:
        held: list[Delivery] = []
        while len(held) < len(uids):
            held += await trainer.get(4, timeout_s=0.2)
        return held

    _, held = await asyncio.wait_for(asyncio.gather(produce(), train()), timeout=30)
    assert [d.group.uid for d in held] == uids  # 12 held unacked, 3x the bound
    await trainer.ack(held)  # the checkpoint
    assert await trainer.lag() == 0


async def test_unacked_deliveries_of_a_closed_consumer_go_to_another(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    first, second = make_queue("a", claim_idle_ms=60_000), make_queue("b", claim_idle_ms=60_000)
    for i in range(3):
        await first.put(group_factory(f"g{i}"))
    held = await first.get(2, timeout_s=5)
    assert [d.group.uid for d in held] == ["g0", "g1"]
    await first.aclose()
    got = await _drain(second, 3)
    assert sorted(d.group.uid for d in got) == ["g0", "g1", "g2"]
    assert {d.group.uid: d.times_delivered for d in got} == {"g0": 2, "g1": 2, "g2": 1}


async def test_deliveries_left_idle_past_the_claim_limit_are_taken_over(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    # A holder that stopped renewing its lease (hung, or renewal switched off) loses the group.
    slow = make_queue("slow", claim_idle_ms=300, renew_leases=False)
    fast = make_queue("fast", claim_idle_ms=300)
    await slow.put(group_factory("g0"))
    [held] = await slow.get(1, timeout_s=5)
    [taken] = await _drain(fast, 1)
    assert taken.group.uid == "g0" and taken.times_delivered == 2
    assert fast.stats.claimed == 1
    await fast.ack([taken])
    assert await slow.backlog() == 0


async def test_a_group_redelivered_after_it_was_used_is_skipped(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    first, second = make_queue("a"), make_queue("b")
    group = group_factory("g-dup")
    await first.put(group)
    used = await first.get(1, timeout_s=5)
    await first.ack(used)
    await first.put(group)  # e.g. a producer that published it again
    await first.put(group_factory("g-next"))
    got = await _drain(second, 1)
    assert [d.group.uid for d in got] == ["g-next"]
    assert await second.get(5, timeout_s=0.2) == []
    assert second.stats.duplicates_skipped == 1
    await second.ack(got)
    assert await second.backlog() == 0


async def test_a_uid_this_consumer_already_holds_is_not_returned_again(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    queue = make_queue()
    await queue.put(group_factory("same"))
    await queue.put(group_factory("same"))
    got = await queue.get(5, timeout_s=5)
    got += await queue.get(5, timeout_s=0.2)
    assert [d.group.uid for d in got] == ["same"]
    assert queue.stats.duplicates_skipped == 1


async def test_an_entry_delivered_too_often_goes_to_the_dead_letters(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    options = {"claim_idle_ms": 60_000, "dead_letter_after": 2}
    producer = make_queue("p", **options)
    await producer.put(group_factory("poison"))
    for name in ("a", "b"):  # two consumers die holding it
        consumer = make_queue(name, **options)
        assert len(await _drain(consumer, 1)) == 1
        await consumer.aclose()
    last = make_queue("c", **options)
    assert await last.get(1, timeout_s=0.5) == []
    assert last.stats.dead_lettered == 1
    assert await last.backlog() == 0


async def test_touch_keeps_a_slow_consumers_delivery_from_being_taken_over(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    # touch still works for a consumer that renews its leases by hand (no background renewal).
    slow = make_queue("slow", claim_idle_ms=2000, renew_leases=False)
    fast = make_queue("fast", claim_idle_ms=2000)
    await slow.put(group_factory("g0"))
    held = await slow.get(1, timeout_s=5)
    for _ in range(4):  # 4 x 600 ms of work (2.4 s in all), touching in between: never idle for 2 s
        await asyncio.sleep(0.6)
        await slow.touch(held)
        assert await fast.get(1, timeout_s=0) == []
    await slow.ack(held)
    assert await fast.get(1, timeout_s=0.5) == [] and fast.stats.claimed == 0


async def test_a_bounded_producer_and_two_consumers_deliver_every_group_exactly_once(
    make_queue: QueueFactory, group_factory: Callable[..., Group]
) -> None:
    producer = make_queue("p", max_lag=5)
    consumers = [make_queue("a", max_lag=5), make_queue("b", max_lag=5)]
    uids = [f"g{i}" for i in range(40)]
    used: list[str] = []

    async def produce() -> None:
        for uid in uids:
            await producer.put(group_factory(uid, n=1, steps=1))

    async def consume(queue: Any) -> None:
        while producer.stats.put_waits == 0:  # start once the producer is held at the bound
            await asyncio.sleep(0.01)
        while len(used) < len(uids):
            batch = await queue.get(3, timeout_s=0.2)
            used.extend(d.group.uid for d in batch)
            await queue.ack(batch)

    await asyncio.wait_for(asyncio.gather(produce(), *(consume(q) for q in consumers)), timeout=60)
    assert sorted(used) == sorted(uids)


async def test_get_refuses_a_count_below_one(make_queue: QueueFactory) -> None:
    with pytest.raises(ConfigurationError, match="count >= 1"):
        await make_queue().get(0)
