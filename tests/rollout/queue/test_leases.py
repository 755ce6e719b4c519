"""At most one holder per group: consumer PROCESSES on one real Redis never hold a uid at once.

Each consumer process holds every group it gets for longer than the lease (``claim_idle_ms``)
without calling ``touch``: its background renewal keeps the lease, so no other process may
take the group over. A holder that dies stops renewing; its groups go to another consumer
only after the lease lapsed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import redis.asyncio as aioredis

from envhub.core.records import Group
from envhub.rollout.queue.redis import RedisQueue

REDIS_URL = "redis://127.0.0.1:6379/0"
REPO = Path(__file__).resolve().parents[3]

_CONSUMER = """
import asyncio, json, sys, time
from envhub.rollout.queue.redis import RedisQueue
async def main():
    queue = RedisQueue({url!r}, stream={stream!r}, consumer={name!r}, claim_idle_ms={lease_ms})
    held, idle_since = [], time.monotonic()
    while time.monotonic() - idle_since < {quiet_s}:
        for d in await queue.get(1, timeout_s=0.2):
            start = time.time()
            await asyncio.sleep({hold_s})  # "training": no touch, longer than the lease
            held.append([d.group.uid, start, time.time()])
            await queue.ack([d])
            idle_since = time.monotonic()
    await queue.aclose()
    print(json.dumps(held), flush=True)
asyncio.run(main())
"""


def _spawn(script: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True, env=env, cwd=REPO
    )


async def test_consumer_processes_never_hold_one_group_at_the_same_time(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    producer = RedisQueue(REDIS_URL, stream=stream, consumer="producer")
    uids = [f"g{i}" for i in range(6)]
    for uid in uids:
        await producer.put(group_factory(uid, n=1, steps=1))
    children = [
        _spawn(
            _CONSUMER.format(
                url=REDIS_URL, stream=stream, name=f"c{i}", lease_ms=1500, hold_s=3.5, quiet_s=6.0
            )
        )
        for i in range(3)
    ]
    intervals: list[list[object]] = []
    for child in children:
        out, _ = await asyncio.to_thread(child.communicate, timeout=90)
        assert child.returncode == 0
        intervals += [[*row, child.pid] for row in json.loads(out.strip().splitlines()[-1])]
    by_uid: dict[str, list[tuple[float, float, int]]] = {}
    for uid, start, end, pid in intervals:
        by_uid.setdefault(str(uid), []).append((float(start), float(end), int(pid)))  # type: ignore[arg-type]
    assert sorted(by_uid) == uids  # every group was used
    for uid, held in by_uid.items():
        assert len(held) == 1, f"{uid} was held {len(held)} times: {held}"  # one holder, used once
    assert await redis_client.xlen(stream) == 0
    await producer.aclose()


async def test_a_dead_holders_group_is_taken_over_only_after_its_lease_lapsed(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    stream = f"{prefix}:groups"
    producer = RedisQueue(REDIS_URL, stream=stream, consumer="producer")
    await producer.put(group_factory("g0", n=1, steps=1))
    victim = _spawn(
        f"""
        import asyncio, time
        from envhub.rollout.queue.redis import RedisQueue
        async def main():
            queue = RedisQueue({REDIS_URL!r}, stream={stream!r}, consumer="victim", claim_idle_ms=1500)
            got = await queue.get(1, timeout_s=10)
            print(len(got), flush=True)
            await asyncio.sleep(600)  # holds it (renewing in the background) until killed
        asyncio.run(main())
        """
    )
    rescuer = RedisQueue(REDIS_URL, stream=stream, consumer="rescuer", claim_idle_ms=1500)
    try:
        line = await asyncio.to_thread(victim.stdout.readline)  # type: ignore[union-attr]
        assert line.strip() == "1"
        await asyncio.sleep(2.5)  # past the lease: a live, renewing holder keeps it
        assert await rescuer.get(1, timeout_s=0.5) == []
    finally:
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
    killed_at = time.monotonic()
    got: list[object] = []
    while not got:
        got = await rescuer.get(1, timeout_s=0.3)  # type: ignore[assignment]
        assert time.monotonic() - killed_at < 15, "the dead holder's group was never taken over"
    assert time.monotonic() - killed_at >= 0.5  # not before the lease could have lapsed
    await rescuer.ack(got)  # type: ignore[arg-type]
    await rescuer.aclose()
    await producer.aclose()
