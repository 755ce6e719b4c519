"""GraphGPO in the trainer sees the state each failed episode ended in, as the authors' rollout does.

The authors' rollout (``recipe/GraphGPO/rollout_loop.py``) gives every row ``next_obs``, the
anchor of the observation its step returned, so a failed episode's last step leads to its real
final state. Here the real engine plays a real env (Sokoban, a one-push corridor) with a
scripted group whose failed episodes end in states the group visited: the trainer's
advantages, from records (in-process queue) and from columns (Redis), must equal
``graphgpo_advantages`` given the true final states, which this test finds by replaying each
trajectory's actions on a fresh env.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import envhub
from envhub.algos import graphgpo_advantages
from envhub.algos.config import default_config
from envhub.core.records import Group, StepBatch
from envhub.core.wire import RolloutRequest, SamplingRequest
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.scripted import ScriptedBackend, think_action
from envhub.rollout.engine import GroupTask, RolloutEngine
from envhub.rollout.envpool import InProcessEnvPool
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.redis import RedisQueue
from envhub.rollout.queue.settings import QueueSettings
from envhub.train.config import load_config
from envhub.train.rollouts import trainer_queue
from envhub.train.trainer import Trainer
from tests.integration.rollout_service_proc import delete_keys, redis_up
from tests.needs import require

ENV = "envhub/Sokoban-v0"
ROOM = {"dim_room": (3, 6), "rooms": "one-push"}  # a corridor: the player, the box, the target
TASK = "room-0"
REDIS = "redis://127.0.0.1:6379/0"
OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}


def _make(**kw: Any) -> Any:
    return envhub.make(ENV, **{**ROOM, **kw})


def _push() -> str:
    """The move that solves the room (the room decides it)."""
    for move in OPPOSITE:
        env = _make()
        env.reset(options={"task_id": TASK})
        if env.step(move)[4]["won"]:
            return move
    raise AssertionError("no single push solves the room")


def _scripts() -> list[list[str]]:
    """Member scripts over two steps: one wins, three fail in states the group visits."""
    push = _push()
    back = OPPOSITE[push]  # a step away from the box (the corridor's free cell)
    return [
        [back, push],  # away and back: fails where every episode began
        ["still", push],  # wins
        [back, back],  # away, then into the wall: fails where member 0 stood after step 0
        ["up", "up"],  # into the wall twice: fails where it began
    ]


class _TokenScript(ScriptedBackend):
    """Scripted moves with token ids, so the trainer builds a row from every step."""

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        out = await super().generate(prompts, sampling)
        return [
            replace(
                c,
                prompt_token_ids=[1, 2, 3, 4 + int(p.metadata["step_idx"])],
                token_ids=[10 + int(p.metadata["member_index"]), 20],
                logprobs=[-0.5, -0.25],
                token_exact=True,
            )
            for p, c in zip(prompts, out, strict=True)
        ]


@pytest.fixture(scope="module")
def played() -> Group:
    scripts = _scripts()

    def script(prompt: Prompt) -> str:
        meta = prompt.metadata
        return think_action(scripts[int(meta["member_index"])][int(meta["step_idx"])])

    async def play() -> Group:
        queue = MemoryQueue()
        envs = InProcessEnvPool(_make, env_id=ENV)
        engine = RolloutEngine(
            envs=envs,
            backend=_TokenScript(script),
            config=RolloutRequest(
                group_size=len(scripts), sampling=SamplingRequest(max_tokens=4), max_steps=2, split="train"
            ),
            queue=queue,
        )
        await engine.run([GroupTask(0, TASK, 0)])
        (delivery,) = await queue.get(1, timeout_s=1)
        await envs.aclose()
        return delivery.group

    return asyncio.run(play())


def _true_final_states(group: Group) -> dict[str, str]:
    """Each trajectory's actions replayed on a fresh env: the anchor it ended in."""
    out = {}
    for traj in group.trajectories:
        env = _make()
        env.reset(options={"task_id": group.task_id})
        for step in traj.steps:
            info = env.step(step.action)[4]
        out[traj.traj_id] = str(info["anchor"])
    return out


def _expected(group: Group, config: Any, next_anchor: list[str] | None) -> np.ndarray:
    steps = [s for t in group.trajectories for s in t.steps]
    batch = StepBatch.from_columns(
        uid=[s.uid for s in steps],
        traj_id=[s.traj_id for s in steps],
        step_idx=[s.step_idx for s in steps],
        anchor=[s.anchor for s in steps],
        reward=[s.reward for s in steps],
        is_action_valid=[s.is_action_valid for s in steps],
    )
    fields = dataclasses.asdict(config)
    keep = ("mode", "gamma", "step_advantage_w", "episode_advantage_w", "normalize_distance")
    return graphgpo_advantages(
        batch,
        **{k: fields[k] for k in keep},
        invalid_penalty=fields["invalid_penalty"],
        epsilon=fields["epsilon"],
        next_anchor=next_anchor,
    )


def _true_next(group: Group) -> list[str]:
    final = _true_final_states(group)
    out = []
    for t in group.trajectories:
        out += [s.anchor for s in t.steps[1:]] + [final[t.traj_id]]
    return out


def _deliver(group: Group) -> list[Delivery]:
    require(redis_up(), "a Redis server on 127.0.0.1:6379", how="redis-server --daemonize yes --port 6379")
    stream = f"envhub:test-graphgpo-final:{uuid.uuid4().hex[:8]}"

    async def go() -> list[Delivery]:
        producer = RedisQueue(REDIS, stream=stream, group="trainers:run-g", run="run-g")
        consumer = trainer_queue(
            REDIS,
            stream=stream,
            consumer="trainer-0",
            run="run-g",
            groups_per_iteration=1,
            settings=QueueSettings(),
        )
        try:
            await producer.put(group)
            got: list[Delivery] = []
            while not got:
                got += await consumer.get(1, timeout_s=2.0)
            await consumer.ack(got)
            return got
        finally:
            await consumer.aclose()
            await producer.aclose()

    try:
        return asyncio.run(go())
    finally:
        delete_keys(REDIS, stream)


def test_the_scripted_group_has_failed_episodes_ending_in_visited_states(played: Group) -> None:
    won = [t.won for t in played.trajectories]
    assert won == [False, True, False, False]
    final = _true_final_states(played)
    visited = {s.anchor for t in played.trajectories for s in t.steps}
    for traj in played.trajectories:
        if not traj.won:
            assert final[traj.traj_id] in visited
    # ... so the final states change the advantages (the test tells the two rules apart).
    c = default_config("graphgpo", envhub.envs.resolve(ENV))
    assert np.abs(_expected(played, c, _true_next(played)) - _expected(played, c, None)).max() > 0.1


@pytest.mark.parametrize("path", ["records", "columns"])
def test_the_trainers_graphgpo_advantages_use_the_true_final_states(
    played: Group, small_model_dir: Path, tmp_path: Path, path: str
) -> None:
    config = load_config(
        None,
        {
            "env": ENV,
            "algo": "graphgpo",
            "model.path": str(small_model_dir),
            "output.run_dir": str(tmp_path / "run"),
            "rollout.group_size": 4,
            "rollout.batch_tasks": 1,
            "rollout.max_steps": 2,
        },
    )
    trainer = Trainer(config)
    deliveries: list[Delivery | Group] = [played] if path == "records" else list(_deliver(played))
    if path == "columns":
        assert all(isinstance(d, Delivery) and d.columns is not None for d in deliveries)
    rows = asyncio.run(trainer._step_rows(deliveries))[0]
    expected = _expected(played, trainer.advantage_config, _true_next(played))
    assert len(rows) == len(expected)
    np.testing.assert_allclose(rows.advantages.numpy(), expected, rtol=1e-6, atol=1e-6)
