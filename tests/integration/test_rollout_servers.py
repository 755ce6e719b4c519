"""Rollouts through real env servers (two replicas each) match in-process rollouts exactly."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

import envhub
from envhub.client import RetryPolicy
from envhub.core.policy import Policy
from envhub.core.records import Group
from envhub.core.wire import RolloutRequest
from envhub.envs.timeseries.policy import HeuristicPolicy
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.engine import EngineEvent, GroupTask, RolloutEngine
from envhub.rollout.envpool import EnvPool, InProcessEnvPool, RemoteEnvPool
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.needs import requires_modules
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration

TS = "envhub/TimeSeries-v0"
ALF = "envhub/ALFWorld-v0"


@pytest.fixture(scope="module")
def ts_replicas() -> Iterator[list[RunningServer]]:
    with ExitStack() as stack:
        yield [stack.enter_context(serve_in_thread(ServerSettings(env_id=TS, workers=2))) for _ in range(2)]


async def play(
    envs: EnvPool, make_policy: Callable[[int], Policy], tasks: list[GroupTask], **cfg: Any
) -> tuple[list[Group], list[EngineEvent]]:
    queue, events = CollectingQueue(), []
    config = RolloutRequest(**{"group_size": 3, "max_concurrent_groups": 4, **cfg})
    engine = RolloutEngine(
        envs=envs,
        backend=ScriptedBackend(make_policy=make_policy),
        config=config,
        queue=queue,
        job_id="same",
        on_event=events.append,
    )
    try:
        await engine.run(tasks)
    finally:
        await envs.aclose()
    return sorted(queue.groups, key=lambda g: g.uid), events


def trajectories(groups: list[Group]) -> list[list[tuple[Any, ...]]]:
    """What must match exactly: per trajectory, every step's anchor, action, reward, validity, flags."""
    return [
        [
            (
                s.step_idx,
                s.anchor,
                s.observation,
                s.action,
                s.reward,
                s.is_action_valid,
                s.terminated,
                s.truncated,
                s.info,
            )
            for s in t.steps
        ]
        for g in groups
        for t in g.trajectories
    ]


def assert_same(remote: list[Group], local: list[Group]) -> None:
    assert [g.uid for g in remote] == [g.uid for g in local]
    assert [g.task_id for g in remote] == [g.task_id for g in local]
    assert trajectories(remote) == trajectories(local)
    assert [(t.won, t.task_score, t.length) for g in remote for t in g.trajectories] == [
        (t.won, t.task_score, t.length) for g in local for t in g.trajectories
    ]


def test_timeseries_through_two_replicas_matches_in_process(ts_replicas: list[RunningServer]) -> None:
    kwargs = {"images": False}
    tasks = [GroupTask(i, f"test-{i}", 100 + i) for i in range(6)]
    remote, events = asyncio.run(
        play(
            RemoteEnvPool([s.base_url for s in ts_replicas], env_id=TS),
            HeuristicPolicy,
            tasks,
            env_kwargs=kwargs,
        )
    )
    local, _ = asyncio.run(
        play(
            InProcessEnvPool(lambda **kw: envhub.make(TS, **kw), env_id=TS),
            HeuristicPolicy,
            tasks,
            env_kwargs=kwargs,
        )
    )
    assert len(remote) == 6 and sum(t.length for g in remote for t in g.trajectories) > 6 * 3
    assert_same(remote, local)
    # Groups went to both replicas, each group to one.
    assert {e.replica for e in events if e.kind == "group_started"} == {0, 1}


@requires_modules("alfworld", extra="alfworld")
def test_alfworld_through_two_replicas_matches_in_process() -> None:
    from envhub.envs.alfworld.data import embedded_data_dir
    from envhub.envs.alfworld.policy import WalkthroughPolicy

    kwargs = {"data_dir": str(embedded_data_dir().parent)}
    with ExitStack() as stack:
        servers = [
            stack.enter_context(serve_in_thread(ServerSettings(env_id=ALF, workers=1))) for _ in range(2)
        ]
        task_ids = httpx.get(f"{servers[0].base_url}/v1/tasks", params={"limit": 3}).json()["task_ids"]
        tasks = [GroupTask(i, t, i) for i, t in enumerate(task_ids)]
        remote, events = asyncio.run(
            play(
                RemoteEnvPool([s.base_url for s in servers], env_id=ALF),
                WalkthroughPolicy,
                tasks,
                group_size=2,
                env_kwargs=kwargs,
            )
        )
    local, _ = asyncio.run(
        play(
            InProcessEnvPool(lambda **kw: envhub.make(ALF, **kw), env_id=ALF),
            WalkthroughPolicy,
            tasks,
            group_size=2,
            env_kwargs=kwargs,
        )
    )
    assert len(remote) == 3 and all(t.won for g in remote for t in g.trajectories)
    assert_same(remote, local)
    assert {e.replica for e in events if e.kind == "group_started"} == {0, 1}


def test_a_sigkilled_env_worker_re_runs_its_group_whole_once(ts_replicas: list[RunningServer]) -> None:
    server = ts_replicas[0]
    workers = httpx.get(f"{server.base_url}/v1/debug/workers").json()["workers"]
    killed: list[int] = []

    def on_event(event: EngineEvent) -> None:
        # Kill the replica's first worker right after group 0's first step.
        if event.kind == "step" and event.slot == 0 and event.attempt == 0 and not killed:
            os.kill(workers[0]["pid"], signal.SIGKILL)
            killed.append(workers[0]["pid"])

    async def main() -> tuple[list[Group], Any]:
        queue = CollectingQueue()
        engine = RolloutEngine(
            envs=RemoteEnvPool([server.base_url], env_id=TS),
            backend=ScriptedBackend(make_policy=HeuristicPolicy, latency=lambda p: 0.05),
            config=RolloutRequest(group_size=4, env_kwargs={"images": False}),
            queue=queue,
            job_id="kill",
            on_event=on_event,
        )
        try:
            report = await engine.run([GroupTask(0, "test-0", 0), GroupTask(1, "test-1", 1)])
        finally:
            await engine.envs.aclose()
        return queue.groups, (report, engine.metrics)

    groups, (report, metrics) = asyncio.run(main())
    assert killed
    assert sorted(g.uid for g in groups) == ["kill:0:1", "kill:1:0"] or sorted(g.uid for g in groups) == [
        "kill:0:1",
        "kill:1:1",
    ]
    assert report.published == 2 and report.dropped == 0
    assert report.retries_by_cause.get("session_lost", 0) >= 1
    assert metrics.retries.labels("session_lost")._value.get() == report.retries_by_cause["session_lost"]
    for group in groups:
        assert all(t.steps[-1].terminated for t in group.trajectories)


def test_an_unreachable_replica_takes_no_more_groups_and_its_groups_re_run_elsewhere(
    ts_replicas: list[RunningServer],
) -> None:
    dead = "http://127.0.0.1:9"  # discard port: nothing listens
    envs = RemoteEnvPool([dead, ts_replicas[1].base_url], env_id=TS, retry=RetryPolicy(max_attempts=2))
    tasks = [GroupTask(i, f"test-{i}", i) for i in range(4)]
    groups, events = asyncio.run(play(envs, HeuristicPolicy, tasks, env_kwargs={"images": False}))
    assert sorted(g.task_id for g in groups) == [f"test-{i}" for i in range(4)]
    retried = [e for e in events if e.kind == "group_retry"]
    assert retried and all(e.cause == "env_unreachable" for e in retried)
    assert all(e.replica == 1 for e in events if e.kind == "group_started")
