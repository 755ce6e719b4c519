"""``compute_advantages``: one entry point for every estimator."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from envhub.algos.config import (
    AdvantageConfig,
    GiGPOConfig,
    GraphGPOConfig,
    GRPOConfig,
    HGPOConfig,
    default_config,
)
from envhub.algos.gigpo import gigpo_advantages
from envhub.algos.graphgpo import graphgpo_advantages
from envhub.algos.grpo import grpo_advantages
from envhub.algos.hgpo import hgpo_advantages
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

if TYPE_CHECKING:
    from envhub.core.registry import EnvSpec

__all__ = ["compute_advantages"]


def _grpo(batch: StepBatch, c: GRPOConfig) -> NDArray[np.float64]:
    return grpo_advantages(
        batch,
        mode=c.mode,
        per_trajectory=c.per_trajectory,
        invalid_penalty=c.invalid_penalty,
        group_by_agent=c.group_by_agent,
        epsilon=c.epsilon,
        trajectory_score=c.trajectory_score,
    )


def _gigpo(batch: StepBatch, c: GiGPOConfig) -> NDArray[np.float64]:
    return gigpo_advantages(
        batch,
        mode=c.mode,
        gamma=c.gamma,
        step_advantage_w=c.step_advantage_w,
        invalid_penalty=c.invalid_penalty,
        similarity_thresh=c.similarity_thresh if c.enable_similarity else None,
        per_trajectory=c.per_trajectory,
        group_by_agent=c.group_by_agent,
        epsilon=c.epsilon,
    )


def _hgpo(batch: StepBatch, c: HGPOConfig) -> NDArray[np.float64]:
    return hgpo_advantages(
        batch,
        mode=c.mode,
        history_length=c.history_length,
        length_weight_alpha=c.length_weight_alpha,
        base_group=c.base_group,
        gamma=c.gamma,
        invalid_penalty=c.invalid_penalty,
        group_by_agent=c.group_by_agent,
        epsilon=c.epsilon,
    )


def _graphgpo(batch: StepBatch, c: GraphGPOConfig) -> NDArray[np.float64]:
    return graphgpo_advantages(
        batch,
        mode=c.mode,
        gamma=c.gamma,
        step_advantage_w=c.step_advantage_w,
        episode_advantage_w=c.episode_advantage_w,
        normalize_distance=c.normalize_distance,
        invalid_penalty=c.invalid_penalty,
        epsilon=c.epsilon,
    )


_RUNNERS: Mapping[type, Callable[[StepBatch, Any], NDArray[np.float64]]] = {
    GRPOConfig: _grpo,
    GiGPOConfig: _gigpo,
    HGPOConfig: _hgpo,
    GraphGPOConfig: _graphgpo,
}


def compute_advantages(
    batch: StepBatch,
    algo: str = "gigpo",
    *,
    env: EnvSpec | None = None,
    config: AdvantageConfig | None = None,
    **overrides: Any,
) -> NDArray[np.float64]:
    """Row advantages of a batch with one estimator.

    Example::

        adv = compute_advantages(batch, "hgpo", env=envhub.envs.resolve("alfworld"), history_length=4)

    Args:
        batch: the steps, any row order; advantages come back in the same order.
        algo: ``"grpo"``, ``"gigpo"``, ``"hgpo"`` or ``"graphgpo"``.
        env: take the reference defaults of this env's spec (``envhub.envs.resolve(name)``;
            ignored with ``config``).
        config: a ready config dataclass of ``algo``'s type.
        **overrides: config fields to change (e.g. ``mode="mean_norm"``).

    Returns:
        float64 advantages, one per row (the reference uses the same values as returns).

    Raises:
        ConfigurationError: an unknown algorithm or setting, an env given by name instead
            of by spec, a config of the wrong type, or a malformed batch.
    """
    if config is None:
        config = default_config(algo, env, **overrides)
    else:
        expected = type(default_config(algo))
        if not isinstance(config, expected):
            raise ConfigurationError(
                f"algo={algo!r} needs a {expected.__name__}, got a {type(config).__name__}.",
                algo=algo,
            )
        if overrides:
            config = default_config(algo, None, **{**dataclasses.asdict(config), **overrides})
    return _RUNNERS[type(config)](batch, config)
