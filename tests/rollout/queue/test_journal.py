"""The rollout journal: jobs, open groups with their recorded steps, and once-only commits.

Shared behaviour runs on :class:`MemoryJournal` + :class:`MemoryQueue` and on
:class:`RedisJournal` + :class:`RedisQueue` (the real Redis, keys under a unique prefix);
crash tests SIGKILL a real subprocess that writes to the Redis journal.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group
from envhub.rollout.journal import MemoryJournal, RedisJournal, RolloutJournal, group_uid
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.redis import RedisQueue

REDIS_URL = "redis://127.0.0.1:6379/0"
REPO = Path(__file__).resolve().parents[3]
CONFTEST = Path(__file__).resolve().parent / "conftest.py"
MEMBERS = [
    {"base_url": "http://127.0.0.1:8001", "session_id": "s-a"},
    {"base_url": "http://x", "session_id": "s-b"},
]


@pytest.fixture(params=["memory", "redis"])
async def pair(
    request: pytest.FixtureRequest, prefix: str, redis_client: aioredis.Redis
) -> AsyncIterator[tuple[Any, Any]]:
    """(journal, queue) of one backend."""
    if request.param == "memory":
        yield MemoryJournal(), MemoryQueue()
        return
    queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups", consumer="c")
    yield RedisJournal(queue, prefix=f"{prefix}:journal"), queue
    await queue.aclose()


async def _raw_uids(queue: Any) -> list[str]:
    """The uid of every entry the queue holds (undelivered or not), duplicates included."""
    if isinstance(queue, MemoryQueue):
        return await queue.raw_uids()
    return [f[b"uid"].decode() for _, f in await queue.client.xrange(queue.stream)]


async def test_both_journals_implement_the_protocol(pair: tuple[Any, Any]) -> None:
    assert isinstance(pair[0], RolloutJournal)


async def test_jobs_keep_their_spec_status_and_counters(pair: tuple[Any, Any]) -> None:
    journal, _ = pair
    await journal.save_job("j1", {"env": "envhub/TimeSeries-v0", "tasks": ["a", "b"], "n": 4})
    await journal.save_job("j2", {"env": "x"})
    await journal.set_job_status("j1", "cancelled")
    await journal.save_job("j1", {"env": "envhub/TimeSeries-v0", "tasks": ["a", "b"], "n": 8})  # keeps status
    assert await journal.jobs() == [
        ("j1", {"env": "envhub/TimeSeries-v0", "tasks": ["a", "b"], "n": 8}, "cancelled"),
        ("j2", {"env": "x"}, "running"),
    ]
    assert await journal.incr_progress("j1", "steps", 5) == 5
    assert await journal.incr_progress("j1", "steps") == 6
    assert await journal.progress("j1") == {"steps": 6}
    with pytest.raises(ConfigurationError, match="save_job"):
        await journal.set_job_status("nope", "done")


async def test_open_groups_give_back_members_and_exactly_the_recorded_steps(
    pair: tuple[Any, Any], group_factory: Callable[..., Group]
) -> None:
    journal, _ = pair
    await journal.save_job("j", {})
    uid = await journal.begin_group(
        "j", "t0003", attempt=0, task_id="task-3", members=MEMBERS, meta={"seed": 7}
    )
    assert uid == group_uid("j", "t0003", 0)
    played = group_factory(uid, n=2, steps=3)
    for step in played.trajectories[0].steps:
        await journal.record_step("j", "t0003", 0, step)
    await journal.record_step("j", "t0003", 1, played.trajectories[1].steps[0])
    await journal.record_step("j", "t0003", 1, played.trajectories[1].steps[0])  # a retried write
    [group] = await journal.open_groups("j")
    assert (group.slot, group.uid, group.attempt, group.task_id, group.meta) == (
        "t0003",
        uid,
        0,
        "task-3",
        {"seed": 7},
    )
    assert [(m.index, m.base_url, m.session_id) for m in group.members] == [
        (0, "http://127.0.0.1:8001", "s-a"),
        (1, "http://x", "s-b"),
    ]
    assert group.members[0].steps == played.trajectories[0].steps
    assert group.members[1].steps == played.trajectories[1].steps[:1]


async def test_commit_publishes_once_marks_the_slot_done_and_clears_it(
    pair: tuple[Any, Any], group_factory: Callable[..., Group]
) -> None:
    journal, queue = pair
    await journal.save_job("j", {})
    uid = await journal.begin_group("j", "t0", attempt=0, task_id="k", members=MEMBERS)
    group = group_factory(uid)
    await journal.record_step("j", "t0", 0, group.trajectories[0].steps[0])
    assert await journal.commit_group("j", "t0", group, queue) is True
    assert await journal.commit_group("j", "t0", group, queue) is False
    assert await _raw_uids(queue) == [uid]  # counted on the stream itself, not through a consumer
    assert await journal.done_slots("j") == {"t0"}
    assert await journal.open_groups("j") == []
    assert await journal.progress("j") == {"groups_published": 1}
    got = await queue.get(5, timeout_s=0.3)
    assert [d.group for d in got] == [group]
    assert await queue.get(5, timeout_s=0.2) == []
    with pytest.raises(ConfigurationError, match="already committed"):
        await journal.begin_group("j", "t0", attempt=1, task_id="k", members=MEMBERS)


async def test_concurrent_commits_of_one_slot_publish_it_once_and_of_many_slots_publish_all(
    pair: tuple[Any, Any], group_factory: Callable[..., Group]
) -> None:
    journal, queue = pair
    await journal.save_job("j", {})
    group = group_factory(group_uid("j", "t0", 0))
    results = await asyncio.gather(*(journal.commit_group("j", "t0", group, queue) for _ in range(5)))
    assert sorted(results) == [False, False, False, False, True]
    slots = [f"t{i}" for i in range(1, 9)]
    results = await asyncio.gather(
        *(journal.commit_group("j", s, group_factory(group_uid("j", s, 0)), queue) for s in slots)
    )
    assert all(results)
    assert sorted(await _raw_uids(queue)) == sorted(group_uid("j", s, 0) for s in ["t0", *slots])
    assert await journal.done_slots("j") == {"t0", *slots}
    assert await queue.backlog() == 9


async def test_abandon_drops_the_open_group_and_a_new_attempt_starts_clean(
    pair: tuple[Any, Any], group_factory: Callable[..., Group]
) -> None:
    journal, _ = pair
    await journal.save_job("j", {})
    first = await journal.begin_group("j", "t0", attempt=0, task_id="k", members=MEMBERS)
    await journal.record_step("j", "t0", 0, group_factory(first).trajectories[0].steps[0])
    await journal.abandon_group("j", "t0")
    assert await journal.open_groups("j") == [] and await journal.done_slots("j") == set()
    second = await journal.begin_group("j", "t0", attempt=1, task_id="k", members=MEMBERS[:1])
    assert second == group_uid("j", "t0", 1) != first
    [group] = await journal.open_groups("j")
    assert group.attempt == 1 and [m.steps for m in group.members] == [[]]


async def test_begin_group_refuses_members_without_a_session(pair: tuple[Any, Any]) -> None:
    journal, _ = pair
    await journal.save_job("j", {})
    with pytest.raises(ConfigurationError, match="session_id"):
        await journal.begin_group("j", "t0", attempt=0, task_id="k", members=[{"base_url": "http://x"}])


async def test_redis_commit_needs_the_journals_own_queue(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups")
    journal = RedisJournal(queue, prefix=f"{prefix}:journal")
    with pytest.raises(ConfigurationError, match="RedisJournal\\(queue\\)"):
        await journal.commit_group("j", "t0", group_factory("g"), MemoryQueue())
    await queue.aclose()


async def test_redis_commit_waits_for_room_in_the_queue(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups", max_lag=1)
    journal = RedisJournal(queue, prefix=f"{prefix}:journal")
    await journal.save_job("j", {})
    assert await journal.commit_group("j", "t0", group_factory("j:t0:0"), queue)
    second = asyncio.create_task(journal.commit_group("j", "t1", group_factory("j:t1:0"), queue))
    while queue.stats.put_waits == 0:
        await asyncio.sleep(0.02)
    assert not second.done() and await redis_client.xlen(f"{prefix}:groups") == 1
    await queue.get(1, timeout_s=5)  # delivered: no longer lag (acked or not)
    assert await asyncio.wait_for(second, 10)
    await queue.aclose()


def _spawn(script: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True, env=env, cwd=REPO
    )


_CHILD = """
import asyncio, importlib.util, time
from envhub.rollout.journal import RedisJournal
from envhub.rollout.queue.redis import RedisQueue
spec = importlib.util.spec_from_file_location("queue_conftest", {conftest!r})
factory = importlib.util.module_from_spec(spec); spec.loader.exec_module(factory)
async def main():
    queue = RedisQueue({url!r}, stream={stream!r})
    journal = RedisJournal(queue, prefix={jprefix!r})
    await journal.save_job("job", {{"n": 2}})
    uid = await journal.begin_group("job", "t0", attempt=0, task_id="k", members={members!r})
    played = factory.make_group(uid, n=2, steps=4)
{body}
    print("ready", flush=True)
    time.sleep(600)
asyncio.run(main())
"""


async def _run_and_kill(prefix: str, body: str) -> None:
    script = _CHILD.format(
        conftest=str(CONFTEST),
        url=REDIS_URL,
        stream=f"{prefix}:groups",
        jprefix=f"{prefix}:journal",
        members=MEMBERS,
        body=textwrap.indent(textwrap.dedent(body), "    "),
    )
    child = _spawn(script)
    try:
        line = await asyncio.to_thread(child.stdout.readline)  # type: ignore[union-attr]
        assert line.strip() == "ready"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL


async def test_a_service_killed_between_record_step_calls_leaves_exactly_the_recorded_steps(
    prefix: str, redis_client: aioredis.Redis, group_factory: Callable[..., Group]
) -> None:
    await _run_and_kill(
        prefix,
        """
        for step in played.trajectories[0].steps[:3]:
            await journal.record_step("job", "t0", 0, step)
        await journal.record_step("job", "t0", 1, played.trajectories[1].steps[0])
        """,
    )
    queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups")
    journal = RedisJournal(queue, prefix=f"{prefix}:journal")
    assert await journal.jobs() == [("job", {"n": 2}, "running")]
    [group] = await journal.open_groups("job")
    played = group_factory(group_uid("job", "t0", 0), n=2, steps=4)
    assert [m.session_id for m in group.members] == ["s-a", "s-b"]
    assert group.members[0].steps == played.trajectories[0].steps[:3]
    assert group.members[1].steps == played.trajectories[1].steps[:1]
    # The restarted service finishes the episodes and commits: exactly one group is published.
    assert await journal.commit_group("job", "t0", played, queue)
    assert await redis_client.xlen(f"{prefix}:groups") == 1
    await queue.aclose()


async def test_a_service_killed_after_commit_never_publishes_the_group_again(
    prefix: str, redis_client: aioredis.Redis
) -> None:
    await _run_and_kill(prefix, 'assert await journal.commit_group("job", "t0", played, queue)\n')
    queue = RedisQueue(REDIS_URL, stream=f"{prefix}:groups")
    journal = RedisJournal(queue, prefix=f"{prefix}:journal")
    assert await journal.done_slots("job") == {"t0"} and await journal.open_groups("job") == []
    [delivery] = await queue.get(5, timeout_s=1)
    assert delivery.group.uid == group_uid("job", "t0", 0)
    assert not await journal.commit_group("job", "t0", delivery.group, queue)
    assert await redis_client.xlen(f"{prefix}:groups") == 1
    await journal.delete_job("job")
    assert await journal.jobs() == [] and not [
        k async for k in redis_client.scan_iter(match=f"{prefix}:journal*")
    ]
    await queue.aclose()


async def test_a_finished_group_waiting_for_room_keeps_its_place_across_a_crash(
    prefix: str, redis_client: aioredis.Redis
) -> None:
    # The child fills the queue to its bound, then commits t0: the commit waits for room, and
    # the child is killed while it waits. The finished group must not be played again.
    await _run_and_kill(
        prefix,
        """
        queue.max_lag = 1
        await queue.put(factory.make_group("filler", n=1, steps=1))
        waiting = asyncio.create_task(journal.commit_group("job", "t0", played, queue))
        while queue.stats.put_waits == 0:
            await asyncio.sleep(0.01)
        """,
    )
    stream = f"{prefix}:groups"
    queue = RedisQueue(REDIS_URL, stream=stream, consumer="restarted")
    journal = RedisJournal(queue, prefix=f"{prefix}:journal")
    assert await journal.open_groups("job") == []  # nothing to re-run: it had finished
    assert await journal.done_slots("job") == {"t0"}
    assert [f[b"uid"] for _, f in await redis_client.xrange(stream)] == [b"filler"]
    assert await journal.publish_ready("job") == 1  # the restarted service publishes it
    assert await journal.publish_ready("job") == 0
    uids = [f[b"uid"] for _, f in await redis_client.xrange(stream)]
    assert uids == [b"filler", group_uid("job", "t0", 0).encode()]
    assert not await journal.commit_group("job", "t0", factory_group("job"), queue)
    assert await redis_client.xlen(stream) == 2
    await queue.aclose()


def factory_group(job: str) -> Group:
    from tests.rollout.queue.conftest import make_group

    return make_group(group_uid(job, "t0", 0), n=2, steps=4)


_FAULT_CHILD = """
import asyncio, importlib.util, os, signal
import redis.asyncio.connection as connection
from envhub.rollout.journal import RedisJournal
from envhub.rollout.queue.redis import RedisQueue
spec = importlib.util.spec_from_file_location("queue_conftest", {conftest!r})
factory = importlib.util.module_from_spec(spec); spec.loader.exec_module(factory)
sent = 0
original = connection.AbstractConnection.send_packed_command
async def send_then_die(self, command, check_health=True):
    global sent
    await original(self, command, check_health)
    sent += 1
    if sent == {kill_at}:  # the command reached Redis; the process dies before reading the reply
        os.kill(os.getpid(), signal.SIGKILL)
connection.AbstractConnection.send_packed_command = send_then_die
async def main():
    queue = RedisQueue({url!r}, stream={stream!r}, consumer="service")
    journal = RedisJournal(queue, prefix={jprefix!r})
    await journal.save_job("job", {{"n": 1}})
    uid = await journal.begin_group("job", "t0", attempt=0, task_id="k", members={members!r})
    played = factory.make_group(uid, n=2, steps=2)
    for member, traj in enumerate(played.trajectories):
        for step in traj.steps:
            await journal.record_step("job", "t0", member, step)
    await journal.commit_group("job", "t0", played, queue)
    print(sent, flush=True)
asyncio.run(main())
"""


def _fault_child(prefix: str, kill_at: int) -> subprocess.Popen[str]:
    return _spawn(
        _FAULT_CHILD.format(
            conftest=str(CONFTEST),
            url=REDIS_URL,
            stream=f"{prefix}:groups",
            jprefix=f"{prefix}:journal",
            members=MEMBERS,
            kill_at=kill_at,
        )
    )


async def test_a_service_killed_during_any_redis_command_publishes_each_group_exactly_once(
    prefix: str, redis_client: aioredis.Redis
) -> None:
    dry = _fault_child(f"{prefix}:dry", kill_at=-1)
    out, _ = await asyncio.to_thread(dry.communicate, timeout=60)
    commands = int(out.strip())
    assert commands >= 8
    uid = group_uid("job", "t0", 0)
    for kill_at in range(1, commands + 1):
        run = f"{prefix}:k{kill_at}"
        child = _fault_child(run, kill_at)
        await asyncio.to_thread(child.wait, 60)
        assert child.returncode == -signal.SIGKILL, f"the child was not killed at command {kill_at}"
        stream = f"{run}:groups"
        raw = [f[b"uid"].decode() for _, f in await redis_client.xrange(stream)]
        queue = RedisQueue(REDIS_URL, stream=stream, consumer="restarted")
        journal = RedisJournal(queue, prefix=f"{run}:journal")
        jobs = await journal.jobs()
        done = "t0" in await journal.done_slots("job") if jobs else False
        assert raw == ([uid] if done else []), (kill_at, raw, done)  # published iff marked done
        if jobs:  # the restarted service finishes the job: still exactly one entry
            await journal.publish_ready("job")
            if "t0" not in await journal.done_slots("job"):
                assert await journal.commit_group("job", "t0", factory_group("job"), queue)
            raw = [f[b"uid"].decode() for _, f in await redis_client.xrange(stream)]
            assert raw == [uid], (kill_at, raw)
        await queue.aclose()
