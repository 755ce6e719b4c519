"""Resuming a job after its engine died: in-flight groups continue on their env sessions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from envhub.core.wire import RolloutRequest
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.engine import EngineEvent, GroupTask, RolloutEngine
from envhub.rollout.envpool import OpenGroup, RemoteEnvPool
from envhub.rollout.journal import EngineJournal, MemoryJournal
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.rollout.conftest import CollectingQueue
from tests.rollout.scripted_policies import stateless

pytestmark = pytest.mark.integration

TS = "envhub/TimeSeries-v0"
CONFIG = RolloutRequest(group_size=3, max_concurrent_groups=4, env_kwargs={"images": False})
TASKS = [GroupTask(i, f"test-{i}", i) for i in range(4)]


class DyingPool(RemoteEnvPool):
    """A pool whose process "dies": it never closes its sessions (a SIGKILL runs no cleanup)."""

    async def close_group(self, group: OpenGroup) -> None:
        return None


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=TS, workers=2)) as running:
        yield running


def steps_of(groups: list[Any]) -> dict[str, list[tuple[Any, ...]]]:
    return {
        f"{g.task_id}/{i}": [(s.step_idx, s.anchor, s.action, s.reward, s.terminated) for s in t.steps]
        for g in groups
        for i, t in enumerate(g.trajectories)
    }


async def first_life(server: RunningServer, journal: EngineJournal) -> None:
    """Run until group 0 has journaled 3 steps, then die mid-job."""
    engine = RolloutEngine(
        envs=DyingPool([server.base_url], env_id=TS),
        backend=ScriptedBackend(stateless, latency=lambda p: 0.02),
        config=CONFIG,
        journal=journal,
        job_id="job",
    )
    run = asyncio.create_task(engine.run(TASKS))

    def on_event(event: EngineEvent) -> None:
        if event.kind == "step" and event.slot == 0 and event.step_idx == 2:
            run.cancel()

    engine._on_event = on_event
    with pytest.raises(asyncio.CancelledError):
        await run


async def second_life(server: RunningServer, journal: EngineJournal) -> RolloutEngine:
    done = await journal.done_slots("job")
    engine = RolloutEngine(
        envs=RemoteEnvPool([server.base_url], env_id=TS),
        backend=ScriptedBackend(stateless),
        config=CONFIG,
        journal=journal,
        job_id="job",
    )
    await engine.run([t for t in TASKS if t.slot not in done], resume=await journal.open_groups("job"))
    await engine.envs.aclose()
    return engine


def test_a_dead_engine_resumes_in_flight_groups_from_the_journal(server: RunningServer) -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)
    asyncio.run(journal.save_job("job", {}))
    asyncio.run(first_life(server, journal))
    in_flight = {p.slot: sum(map(len, p.entries)) for p in asyncio.run(journal.open_groups("job"))}
    assert in_flight.get(0) == 3 * 3  # three members, three journaled steps each

    engine = asyncio.run(second_life(server, journal))
    assert sorted(g.task_id for g in queue.groups) == [t.task_id for t in TASKS]  # each task once
    resumed = next(g for g in queue.groups if g.task_id == "test-0")
    assert resumed.uid == "job:0:0" and resumed.attempt == 0  # continued, not re-run
    # Every journaled step was either kept (its sessions stood where the journal says) or redone.
    assert engine.report.steps_resumed >= 9
    assert engine.report.steps_resumed + engine.report.steps_redone == sum(in_flight.values())

    clean = CollectingQueue()

    async def unbroken() -> None:
        eng = RolloutEngine(
            envs=RemoteEnvPool([server.base_url], env_id=TS),
            backend=ScriptedBackend(stateless),
            config=CONFIG,
            queue=clean,
            job_id="job",
        )
        await eng.run(TASKS)
        await eng.envs.aclose()

    asyncio.run(unbroken())
    assert steps_of(queue.groups) == steps_of(clean.groups)


def test_sessions_that_are_gone_re_run_the_group_whole_and_count_the_redone_steps(
    server: RunningServer,
) -> None:
    queue = CollectingQueue()
    journal = EngineJournal(MemoryJournal(), queue)
    asyncio.run(journal.save_job("job", {}))
    asyncio.run(first_life(server, journal))
    points = asyncio.run(journal.open_groups("job"))
    journaled = sum(sum(map(len, p.entries)) for p in points)

    async def delete_sessions() -> None:
        pool = RemoteEnvPool([server.base_url], env_id=TS)
        for p in points:
            await pool.close_group(OpenGroup(p.replica, tuple()))  # keep the load count balanced
            for m in p.members:
                await pool._clients[p.replica].delete_session(m["session_id"])
        await pool.aclose()

    asyncio.run(delete_sessions())
    engine = asyncio.run(second_life(server, journal))
    assert sorted(g.task_id for g in queue.groups) == [t.task_id for t in TASKS]
    assert engine.report.steps_resumed == 0 and engine.report.steps_redone == journaled
    assert all(
        t.steps[0].step_idx == 0 and t.steps[-1].terminated for g in queue.groups for t in g.trajectories
    )
