"""Fixtures of the trainer tests: fixed groups sampled by the small tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.core.records import Group
from envhub.train.blind import BlindCeiling
from tests.train.onepush import blind_ceiling, build_model


@pytest.fixture(scope="session")
def sampled_groups(small_model_dir: Path) -> list[Group]:
    """Four real groups of two SearchQA episodes each, sampled by the small model in process."""
    import asyncio

    import envhub
    from envhub.core.wire import RolloutRequest, SamplingRequest
    from envhub.policy.transformers_backend import TransformersBackend
    from envhub.rollout.engine import GroupTask, RolloutEngine
    from envhub.rollout.envpool import InProcessEnvPool
    from envhub.rollout.queue.memory import MemoryQueue

    async def play() -> list[Group]:
        queue = MemoryQueue()
        envs = InProcessEnvPool(
            lambda **kw: envhub.make("envhub/SearchQA-v0", **kw), env_id="envhub/SearchQA-v0"
        )
        backend = TransformersBackend(small_model_dir)
        engine = RolloutEngine(
            envs=envs,
            backend=backend,
            config=RolloutRequest(
                group_size=2,
                sampling=SamplingRequest(temperature=1.0, max_tokens=12, seed=3),
                max_steps=2,
                split="train",
            ),
            queue=queue,
        )
        ids = await envs.task_ids("train", 4)
        await engine.run([GroupTask(i, t, i) for i, t in enumerate(ids)])
        out = [d.group for d in await queue.get(4, timeout_s=1)]
        await backend.aclose()
        await envs.aclose()
        return sorted(out, key=lambda g: g.uid)

    return asyncio.run(play())


@pytest.fixture(scope="session")
def trajectory_groups(small_model_dir: Path) -> list[Group]:
    """Four real SearchQA groups of two episodes, played in trajectory mode by the small model.

    Up to three turns each (search, search, answer), so the sequences hold env observation
    tokens between the model's turns.
    """
    import asyncio

    import envhub
    from envhub.core.wire import RolloutRequest, SamplingRequest
    from envhub.policy.tokenizer import ChatTokenizer
    from envhub.policy.transformers_backend import TransformersBackend
    from envhub.rollout.engine import GroupTask, RolloutEngine
    from envhub.rollout.envpool import InProcessEnvPool
    from envhub.rollout.queue.memory import MemoryQueue
    from envhub.rollout.sequences import SequenceBuilder

    async def play() -> list[Group]:
        queue = MemoryQueue()
        envs = InProcessEnvPool(
            lambda **kw: envhub.make("envhub/SearchQA-v0", **kw), env_id="envhub/SearchQA-v0"
        )
        backend = TransformersBackend(small_model_dir)
        tokenizer = ChatTokenizer(small_model_dir)
        engine = RolloutEngine(
            envs=envs,
            backend=backend,
            config=RolloutRequest(
                group_size=2,
                sampling=SamplingRequest(temperature=1.0, max_tokens=10, seed=5),
                max_steps=3,
                split="train",
                trajectory_mode=True,
            ),
            queue=queue,
            sequence_builder=lambda uid, traj_id: SequenceBuilder(tokenizer, uid=uid, traj_id=traj_id),
        )
        ids = await envs.task_ids("train", 4)
        await engine.run([GroupTask(i, t, i) for i, t in enumerate(ids)])
        out = [d.group for d in await queue.get(4, timeout_s=1)]
        await backend.aclose()
        await envs.aclose()
        return sorted(out, key=lambda g: g.uid)

    return asyncio.run(play())


@pytest.fixture(scope="module")
def onepush_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one-push learning runs' model (``tests/train/onepush.py``)."""
    return build_model(tmp_path_factory.mktemp("model128"))


@pytest.fixture(scope="module")
def onepush_ceiling(tmp_path_factory: pytest.TempPathFactory) -> BlindCeiling:
    """The one-push recipe's observation-blind ceiling over its validation rooms."""
    return blind_ceiling(tmp_path_factory.mktemp("blind"))
