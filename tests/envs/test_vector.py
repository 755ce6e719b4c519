"""Every registered env works with Gymnasium's vector API (``gymnasium.make_vec``).

Gymnasium 1.x ships no ``check_vector_env``, so these tests state the checks it would make:
batched spaces, reset/step shapes and types, info batching, seeding determinism, and
autoreset as Gymnasium's vector API defines it (``AutoresetMode.NEXT_STEP`` by default).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import envhub
from envhub.envs.catalog import CATALOG
from tests.needs import require_data

NUM_ENVS = 2


def _local_specs() -> list[Any]:
    return [s for s in CATALOG if "Remote" not in s.id]


def _available(spec: Any) -> None:
    require_data(spec)


def _make_vec(env_id: str, **kwargs: Any) -> gymnasium.vector.VectorEnv[Any, Any, Any]:
    envhub.register_all()
    return gymnasium.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode="sync", **kwargs)


def _actions(step: int) -> tuple[str, ...]:
    # A text no env understands: every env answers it without raising, so it is a valid probe.
    return tuple(f"probe {step} {i}" for i in range(NUM_ENVS))


@pytest.mark.parametrize("spec", _local_specs(), ids=lambda s: s.id)
def test_make_vec_batches_spaces_and_shapes(spec: Any) -> None:
    _available(spec)
    envs = _make_vec(spec.id)
    try:
        single = envhub.make(spec.id)
        assert envs.single_observation_space == single.observation_space
        assert envs.single_action_space == single.action_space
        single.close()
        assert envs.observation_space == batch_space(envs.single_observation_space, NUM_ENVS)
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        obs, info = envs.reset(seed=0)
        assert envs.observation_space.contains(obs)
        assert info["_anchor"].shape == (NUM_ENVS,) and info["_anchor"].all()
        obs, rewards, terminations, truncations, info = envs.step(_actions(0))
        assert envs.observation_space.contains(obs)
        assert rewards.shape == terminations.shape == truncations.shape == (NUM_ENVS,)
        assert rewards.dtype == np.float64
        assert terminations.dtype == truncations.dtype == np.bool_
        assert len(info["anchor"]) == NUM_ENVS
    finally:
        envs.close()


def _trace(envs: gymnasium.vector.VectorEnv[Any, Any, Any], steps: int) -> list[Any]:
    obs, info = envs.reset(seed=7)
    trace: list[Any] = [obs, list(info["anchor"])]
    for step in range(steps):
        obs, rewards, terminations, truncations, info = envs.step(_actions(step))
        trace.append(
            (obs, rewards.tolist(), terminations.tolist(), truncations.tolist(), list(info["anchor"]))
        )
    return trace


@pytest.mark.parametrize("spec", _local_specs(), ids=lambda s: s.id)
def test_make_vec_same_seed_same_rollout(spec: Any) -> None:
    _available(spec)
    first, second = _make_vec(spec.id, max_episode_steps=2), _make_vec(spec.id, max_episode_steps=2)
    try:
        assert _trace(first, 3) == _trace(second, 3)
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("spec", _local_specs(), ids=lambda s: s.id)
def test_make_vec_autoresets_on_the_next_step(spec: Any) -> None:
    """A 2-step limit truncates every sub-env at step 2; step 3 resets them (action ignored)."""
    _available(spec)
    envs = _make_vec(spec.id, max_episode_steps=2)
    singles = [envhub.make(spec.id, max_episode_steps=2) for _ in range(NUM_ENVS)]
    try:
        envs.reset(seed=3)
        for i, env in enumerate(singles):
            env.reset(seed=3 + i)
        envs.step(_actions(0))
        _, _, terminations, truncations, _ = envs.step(_actions(1))
        assert (terminations | truncations).all()
        obs, rewards, terminations, truncations, info = envs.step(_actions(2))
        assert rewards.tolist() == [0.0] * NUM_ENVS
        assert not terminations.any() and not truncations.any()
        # The autoreset passes no seed: each sub-env goes on with its own generator, as a
        # single env reset twice does.
        assert list(obs) == [env.reset()[0] for env in singles]
        assert info["_anchor"].all()
    finally:
        envs.close()
        for env in singles:
            env.close()


def test_async_make_vec_matches_sync_without_shared_memory() -> None:
    envhub.register_all()
    sync = gymnasium.make_vec("envhub/TimeSeries-v0", num_envs=NUM_ENVS, vectorization_mode="sync")
    async_envs = gymnasium.make_vec(
        "envhub/TimeSeries-v0",
        num_envs=NUM_ENVS,
        vectorization_mode="async",
        vector_kwargs={"shared_memory": False},
    )
    try:
        assert _trace(sync, 3) == _trace(async_envs, 3)
    finally:
        sync.close()
        async_envs.close()


def test_async_make_vec_with_shared_memory_says_how_to_fix() -> None:
    envhub.register_all()
    with pytest.raises(TypeError, match='shared_memory": False'):
        gymnasium.make_vec("envhub/TimeSeries-v0", num_envs=NUM_ENVS, vectorization_mode="async")
