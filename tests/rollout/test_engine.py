"""The group rollout engine on in-process envs: records, independence, deadlines, failures."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import envhub
from envhub.core.errors import PolicyError, PolicyUnavailableError, QueueError, SessionLostError
from envhub.core.wire import ContextConfig, RolloutRequest
from envhub.envs.timeseries.policy import HeuristicPolicy
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.scripted import ScriptedBackend
from envhub.rollout.engine import EngineEvent, GroupTask, JobAborted, RolloutEngine
from envhub.rollout.envpool import InProcessEnvPool
from envhub.rollout.journal import group_uid
from tests.rollout.conftest import CollectingQueue

ENV = "envhub/TimeSeries-v0"


def pool() -> InProcessEnvPool:
    return InProcessEnvPool(lambda **kw: envhub.make(ENV, **kw), env_id=ENV)


def engine(
    backend: Any, queue: CollectingQueue, events: list[EngineEvent] | None = None, **cfg: Any
) -> RolloutEngine:
    config = RolloutRequest(**{"group_size": 3, "split": "test", "env_kwargs": {"images": False}, **cfg})
    return RolloutEngine(
        envs=pool(),
        backend=backend,
        config=config,
        queue=queue,
        job_id="j",
        on_event=None if events is None else events.append,
    )


def slot_of(prompt: Prompt) -> int:
    return int(str(prompt.metadata["member"]).split(":")[1])


def attempt_of(prompt: Prompt) -> int:
    return int(str(prompt.metadata["member"]).split(":")[2])


async def test_groups_are_published_whole_with_deterministic_ids_and_identical_starts() -> None:
    queue = CollectingQueue()
    eng = engine(ScriptedBackend(make_policy=HeuristicPolicy), queue)
    tasks = await eng.resolve_tasks(count=2)
    report = await eng.run(tasks)
    assert report.published == 2 and report.dropped == 0
    # One uid format everywhere: the journal's helper (job:slot:attempt).
    assert (
        sorted(g.uid for g in queue.groups)
        == [group_uid("j", 0, 0), group_uid("j", 1, 0)]
        == ["j:0:0", "j:1:0"]
    )
    for group in queue.groups:
        assert len(group.trajectories) == 3 and group.attempt == 0 and group.job_id == "j"
        assert [t.traj_id for t in group.trajectories] == [f"{group.uid}:{i}" for i in range(3)]
        assert len({t.steps[0].anchor for t in group.trajectories}) == 1
        assert all(t.task_id == group.task_id for t in group.trajectories)
        for traj in group.trajectories:
            assert [s.step_idx for s in traj.steps] == list(range(traj.length))
            assert traj.steps[-1].terminated and traj.won == traj.steps[-1].info["won"]
            step = traj.steps[0]
            assert step.policy_version == 0 and set(step.timings) == {"policy", "env"}
            assert step.prompt_messages and step.observation in step.prompt_messages[-1]["content"]
    assert report.steps == sum(t.length for g in queue.groups for t in g.trajectories)


class SeedRecorder(ScriptedBackend):
    """Records each generate call's (group slot, step, sampling seed)."""

    def __init__(self) -> None:
        super().__init__(lambda p: "<think>x</think><action>stats[0:10]</action>")
        self.seeds: list[tuple[int, int, int | None]] = []

    async def generate(self, prompts: Any, sampling: SamplingParams) -> list[Completion]:
        step = int(prompts[0].metadata["step_idx"])
        self.seeds.append((slot_of(prompts[0]), step, sampling.seed))
        return await super().generate(prompts, sampling)


async def test_seed_each_step_gives_every_group_step_its_own_reproducible_seed() -> None:
    runs = []
    for each_step in (True, True, False):
        backend = SeedRecorder()
        await engine(
            backend,
            CollectingQueue(),
            sampling={"seed": 5},
            seed_each_step=each_step,
            max_steps=3,
        ).run([GroupTask(0, "test-0", 10), GroupTask(1, "test-1", 11)])
        runs.append(sorted(backend.seeds))
    seeded, again, plain = runs
    assert seeded == again  # reproducible
    assert len(seeded) == 6 and len({seed for _, _, seed in seeded}) == 6  # one per group step
    assert {seed for _, _, seed in plain} == {5}  # off: every call takes sampling.seed as it is


def test_seed_each_step_needs_a_sampling_seed() -> None:
    with pytest.raises(ValueError, match=r"set sampling\.seed"):
        RolloutRequest(seed_each_step=True)


async def test_max_steps_truncates_the_last_step() -> None:
    queue = CollectingQueue()
    eng = engine(
        ScriptedBackend(lambda p: "<think>x</think><action>stats[0:10]</action>"),
        queue,
        max_steps=3,
    )
    await eng.run([GroupTask(0, "test-0", 0)])
    [group] = queue.groups
    assert all(
        t.length == 3 and t.steps[-1].truncated and not t.steps[-1].terminated for t in group.trajectories
    )


async def test_a_slow_group_holds_back_only_itself() -> None:
    # Group 0's policy calls take 0.3 s each; groups 1-3 answer at once and must all finish
    # before group 0 does, although they started after it.
    events: list[EngineEvent] = []
    queue = CollectingQueue()
    backend = ScriptedBackend(make_policy=HeuristicPolicy, latency=lambda p: 0.3 if slot_of(p) == 0 else 0.0)
    eng = engine(backend, queue, events, max_concurrent_groups=4)
    await eng.run([GroupTask(i, f"test-{i}", i) for i in range(4)])
    published = [e.slot for e in events if e.kind == "group_published"]
    assert published[-1] == 0 and sorted(published) == [0, 1, 2, 3]
    slow_steps = [e for e in events if e.kind == "step" and e.slot == 0]
    fast_done = max(e.time for e in events if e.kind == "group_published" and e.slot != 0)
    assert fast_done < slow_steps[1].time  # the others finished while group 0 was on its 2nd step


async def test_a_hung_member_makes_its_group_retry_then_drop_at_the_step_deadline() -> None:
    events: list[EngineEvent] = []
    queue = CollectingQueue()
    # Member 1 of group 0 hangs on its second step, in every attempt.
    backend = ScriptedBackend(
        make_policy=HeuristicPolicy,
        hang=lambda p: slot_of(p) == 0 and p.metadata["member_index"] == 1 and p.metadata["step_idx"] == 1,
    )
    eng = engine(backend, queue, events, step_timeout_s=0.5, max_attempts=2, max_concurrent_groups=4)
    report = await eng.run([GroupTask(i, f"test-{i}", i) for i in range(3)])
    assert sorted(g.uid for g in queue.groups) == ["j:1:0", "j:2:0"]  # never a half group
    kinds = [(e.kind, e.slot, e.attempt) for e in events if e.kind.startswith("group_") and e.slot == 0]
    assert ("group_retry", 0, 0) in kinds and ("group_dropped", 0, 1) in kinds
    assert report.retries_by_cause == {"step_timeout": 1} and report.drops_by_cause == {"step_timeout": 1}
    assert eng.metrics.drops.labels("step_timeout")._value.get() == 1
    # The healthy groups did not wait for the deadline.
    drop = next(e.time for e in events if e.kind == "group_dropped")
    assert all(e.time < drop for e in events if e.kind == "group_published")


async def test_on_failure_drop_drops_at_the_first_failure() -> None:
    queue = CollectingQueue()
    backend = ScriptedBackend(make_policy=HeuristicPolicy, hang=lambda p: slot_of(p) == 0)
    eng = engine(backend, queue, step_timeout_s=0.3, on_failure="drop")
    report = await eng.run([GroupTask(0, "test-0", 0), GroupTask(1, "test-1", 1)])
    assert report.retried == 0 and report.dropped == 1 and [g.uid for g in queue.groups] == ["j:1:0"]


async def test_a_lost_session_re_runs_the_group_whole_with_a_new_uid() -> None:
    queue = CollectingQueue()
    fails = {"left": 1}

    def fail(p: Prompt) -> Any:
        if slot_of(p) == 0 and p.metadata["step_idx"] == 2 and fails["left"]:
            fails["left"] -= 1
            return SessionLostError("s", reason="worker died")
        return None

    eng = engine(ScriptedBackend(make_policy=HeuristicPolicy, fail=fail), queue)
    report = await eng.run([GroupTask(0, "test-0", 0)])
    [group] = queue.groups
    assert group.uid == "j:0:1" and group.attempt == 1 and report.retries_by_cause == {"session_lost": 1}
    assert all(t.steps[0].step_idx == 0 and t.steps[-1].terminated for t in group.trajectories)


async def test_a_down_policy_aborts_the_job_with_a_clear_error_and_publishes_nothing_half() -> None:
    queue = CollectingQueue()
    backend = ScriptedBackend(
        lambda p: "x", fail=lambda p: PolicyUnavailableError("vLLM is down", endpoint="u")
    )
    eng = engine(backend, queue, max_attempts=2)
    with pytest.raises(JobAborted, match="vLLM is down") as caught:
        await eng.run([GroupTask(0, "test-0", 0), GroupTask(1, "test-1", 1)])
    assert caught.value.failure.cause == "policy_unavailable" and queue.groups == []


async def test_a_terminal_policy_error_is_not_retried() -> None:
    queue = CollectingQueue()
    backend = ScriptedBackend(lambda p: "x", fail=lambda p: PolicyError("prompt too long", endpoint="u"))
    eng = engine(backend, queue, max_attempts=3)
    with pytest.raises(JobAborted):
        await eng.run([GroupTask(0, "test-0", 0)])
    assert eng.report.retried == 0 and eng.report.drops_by_cause == {"policy_error": 1}


async def test_agentocr_steps_carry_an_image_reference_and_token_counts() -> None:
    queue = CollectingQueue()
    eng = engine(
        ScriptedBackend(make_policy=HeuristicPolicy),
        queue,
        group_size=1,
        context=ContextConfig(
            agentocr=True,
            compression=True,
            projection="agentocr",
            render_preset="envhub/ALFWorld-v0",
        ),
        max_steps=3,
    )
    await eng.run([GroupTask(0, "test-0", 0)])
    steps = queue.groups[0].trajectories[0].steps
    assert all(s.history_image_ref and s.history_image_ref.startswith("sha256:") for s in steps)
    assert all(s.vision_tokens and s.vision_tokens > 0 and s.text_tokens is not None for s in steps)
    assert steps[0].prompt_messages[-1]["content"][0]["type"] == "image_ref"  # no inline bytes
    assert steps[1].history_image_ref != steps[0].history_image_ref
    assert "render" in steps[1].timings


def test_cancelling_a_run_publishes_nothing_more() -> None:
    async def main() -> CollectingQueue:
        queue = CollectingQueue()
        eng = engine(ScriptedBackend(make_policy=HeuristicPolicy, latency=lambda p: 0.2), queue)
        task = asyncio.create_task(eng.run([GroupTask(i, f"test-{i}", i) for i in range(3)]))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return queue

    assert asyncio.run(main()).groups == []


async def test_a_queue_that_fails_ends_the_run_with_the_typed_error() -> None:
    class DownQueue(CollectingQueue):
        async def put(self, group: Any) -> None:
            raise QueueError("Redis at redis://127.0.0.1:6390 refused the connection")

    eng = engine(ScriptedBackend(make_policy=HeuristicPolicy), DownQueue())
    with pytest.raises(QueueError, match="refused"):
        await eng.run([GroupTask(0, "test-0", 0), GroupTask(1, "test-1", 1)])
    assert eng.report.published == 0


async def test_server_rendering_needs_env_servers() -> None:
    eng = engine(
        ScriptedBackend(make_policy=HeuristicPolicy),
        CollectingQueue(),
        context=ContextConfig(agentocr=True, render_at="server", render_preset="envhub/ALFWorld-v0"),
    )
    with pytest.raises(JobAborted, match="render_at='client'"):
        await eng.run([GroupTask(0, "test-0", 0)])


async def test_the_task_list_comes_from_the_env_the_job_builds(tmp_path: Any) -> None:
    """The split of the job's ``env_kwargs`` (its dataset), and a keyword the env does not take
    is a clear ``ConfigurationError``, not a ``TypeError``."""
    from envhub.core.errors import ConfigurationError
    from envhub.envs.search.fixtures import write_world

    write_world(tmp_path, n_passages=60, n_train=5, n_test=2, seed=1)
    search = InProcessEnvPool(
        lambda **kw: envhub.make("envhub/SearchQA-v0", **kw), env_id="envhub/SearchQA-v0"
    )
    try:
        assert await search.task_ids("train", None, {"data_dir": str(tmp_path)}) == [
            f"train-{i:05d}" for i in range(5)
        ]
        assert len(await search.task_ids("train", None)) == 400  # the embedded world
        with pytest.raises(ConfigurationError, match=r"cannot be built with env_kwargs \['bogus'\]"):
            await search.task_ids("train", 2, {"bogus": 1})
    finally:
        await search.aclose()
