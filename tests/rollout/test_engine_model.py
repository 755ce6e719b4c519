"""The engine with a real (tiny) model: token-exact step rows, and trajectory-mode sequences."""

from __future__ import annotations

from pathlib import Path

import pytest

import envhub
from envhub.core.wire import RolloutRequest, SamplingRequest
from envhub.policy.tiny import build_tiny_model
from envhub.policy.tokenizer import ChatTokenizer
from envhub.policy.transformers_backend import TransformersBackend
from envhub.rollout.engine import GroupTask, RolloutEngine
from envhub.rollout.envpool import InProcessEnvPool
from envhub.rollout.sequences import SequenceBuilder
from tests.rollout.conftest import CollectingQueue

TS = "envhub/TimeSeries-v0"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # TimeSeries prompts (a summary of the series) run past the default 2048 positions.
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0, max_position_embeddings=8192)


def config(**fields: object) -> RolloutRequest:
    return RolloutRequest(
        group_size=2,
        env_kwargs={"images": False},
        sampling=SamplingRequest(temperature=1.0, max_tokens=12, seed=0),
        max_steps=2,
        **fields,  # type: ignore[arg-type]
    )


async def test_step_rows_hold_the_sampled_ids_and_logprobs(tiny: Path) -> None:
    backend = TransformersBackend(tiny, policy_version=5)
    tokenizer = ChatTokenizer(tiny)
    queue = CollectingQueue()
    engine = RolloutEngine(
        envs=InProcessEnvPool(lambda **kw: envhub.make(TS, **kw), env_id=TS),
        backend=backend,
        config=config(),
        queue=queue,
    )
    report = await engine.run([GroupTask(0, "test-0", 0)])
    await engine.envs.aclose()
    [group] = queue.groups
    for traj in group.trajectories:
        assert traj.length == 2 and traj.steps[-1].truncated  # random text never answers
        for step in traj.steps:
            assert step.token_exact and step.policy_version == 5 and step.response_token_ids
            assert len(step.response_logprobs or []) == len(step.response_token_ids)
            assert step.prompt_token_ids == tokenizer.render(step.prompt_messages or [])
            assert tokenizer.decode(step.response_token_ids) == step.response_text
    assert report.tokens == sum(
        len(s.prompt_token_ids or []) + len(s.response_token_ids or [])
        for t in group.trajectories
        for s in t.steps
    )
    assert engine.metrics.tokens.labels("response")._value.get() > 0


async def test_trajectory_mode_builds_one_masked_sequence_per_episode(tiny: Path) -> None:
    tokenizer = ChatTokenizer(tiny)
    queue = CollectingQueue()
    engine = RolloutEngine(
        envs=InProcessEnvPool(lambda **kw: envhub.make(TS, **kw), env_id=TS),
        backend=TransformersBackend(tiny),
        config=config(trajectory_mode=True),
        queue=queue,
        sequence_builder=lambda uid, traj_id: SequenceBuilder(tokenizer, uid=uid, traj_id=traj_id),
    )
    await engine.run([GroupTask(0, "test-0", 0)])
    await engine.envs.aclose()
    [group] = queue.groups
    for traj in group.trajectories:
        assert traj.sequences, "trajectory mode must emit token sequences"
        sampled = [
            i for seq in traj.sequences for i, m in zip(seq.token_ids, seq.loss_mask, strict=True) if m
        ]
        assert sampled == [i for s in traj.steps for i in s.response_token_ids or []]
        last = traj.steps[-1]
        # The last turn was sampled from exactly the sequence's tokens before it.
        seq = traj.sequences[-1]
        assert seq.token_ids[: len(last.prompt_token_ids or [])] == last.prompt_token_ids
    splits = sum(len(t.sequences) - 1 for t in group.trajectories)
    assert engine.metrics.retokenization_splits._value.get() == splits
