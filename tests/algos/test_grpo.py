"""GRPO (episode-level) advantages, by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from envhub.algos import GRPOConfig, grpo_advantages
from envhub.core.errors import ConfigurationError

from .builders import to_batch, trajectory

EPS = 1e-6


def _two_trajectories() -> list:
    # t1: rewards [0, 1] -> return 1 (2 rows); t2: rewards [0] -> return 0 (1 row).
    return trajectory("u", "t1", ["a", "b"], [0, 1]) + trajectory("u", "t2", ["a"], [0])


def test_mean_norm_uses_every_row_as_a_sample() -> None:
    # row scores [1, 1, 0]: mean 2/3, so A = [1/3, 1/3, -2/3] (t1 weighs twice).
    adv = grpo_advantages(to_batch(_two_trajectories()), mode="mean_norm")
    np.testing.assert_allclose(adv, [1 / 3, 1 / 3, -2 / 3], rtol=1e-14)


def test_mean_std_norm_uses_the_unbiased_std() -> None:
    # scores [1, 1, 0], mean 2/3; unbiased var = ((1/3)^2 + (1/3)^2 + (2/3)^2) / 2 = 1/3.
    std = math.sqrt(1 / 3)
    adv = grpo_advantages(to_batch(_two_trajectories()), mode="mean_std_norm")
    np.testing.assert_allclose(adv, [(1 / 3) / (std + EPS)] * 2 + [(-2 / 3) / (std + EPS)], rtol=1e-14)


def test_per_trajectory_variant_uses_one_sample_per_trajectory() -> None:
    # samples [1 (t1), 0 (t2)]: mean 0.5, unbiased std sqrt((0.25 + 0.25) / 1) = sqrt(0.5).
    std = math.sqrt(0.5)
    adv = grpo_advantages(to_batch(_two_trajectories()), mode="mean_std_norm", per_trajectory=True)
    np.testing.assert_allclose(adv, [0.5 / (std + EPS)] * 2 + [-0.5 / (std + EPS)], rtol=1e-14)


def test_per_trajectory_variant_still_normalises_each_row_with_its_own_score() -> None:
    # t1 rewards [0, 1], step 1 invalid: scores [1, 0.9]; t2 score 0. Samples are the first
    # steps [1, 0]: mean 0.5. mean_norm: t1 rows [0.5, 0.4], t2 row -0.5.
    rows = trajectory("u", "t1", ["a", "b"], [0, 1], invalid=[1]) + trajectory("u", "t2", ["a"], [0])
    adv = grpo_advantages(to_batch(rows), mode="mean_norm", per_trajectory=True)
    np.testing.assert_allclose(adv, [0.5, 0.4, -0.5], rtol=1e-14)


def test_group_of_one_row_uses_mean_0_and_std_1() -> None:
    batch = to_batch(trajectory("u", "t", ["a"], [3]))
    assert grpo_advantages(batch, mode="mean_norm")[0] == 3.0  # 3 - 0
    assert grpo_advantages(batch, mode="mean_std_norm")[0] == 3.0 / (1.0 + EPS)  # 3 / (1 + eps)


def test_one_trajectory_of_equal_scores_gets_exactly_zero() -> None:
    batch = to_batch(trajectory("u", "t", ["a", "b", "c"], [0, 0, 1]))
    assert np.all(grpo_advantages(batch, mode="mean_std_norm") == 0.0)


def test_one_trajectory_with_a_penalised_row_is_not_zero() -> None:
    # scores [1, 0.9]: mean 0.95, unbiased std sqrt(2 * 0.05^2 / 1) = 0.05 * sqrt(2).
    batch = to_batch(trajectory("u", "t", ["a", "b"], [0, 1], invalid=[1]))
    std = 0.05 * math.sqrt(2)
    np.testing.assert_allclose(
        grpo_advantages(batch, mode="mean_std_norm"), [0.05 / (std + EPS), -0.05 / (std + EPS)], rtol=1e-9
    )


def test_all_equal_group_gets_exact_zero_where_float32_gives_spurious_values() -> None:
    # Six rows scoring 10 - 0.1 = 9.9 (every action invalid). In float32 the mean can sit one
    # ulp off 9.9 and (x - mean) / (std + 1e-6) gives about -0.47; envhub gives exactly 0.
    rows = [r for t in range(3) for r in trajectory("u", f"t{t}", ["a", "b"], [0, 10], invalid=[0, 1])]
    adv = grpo_advantages(to_batch(rows), mode="mean_std_norm")
    assert np.all(adv == 0.0)
    # The pitfall itself, in explicit float32 arithmetic: 6 x 9.9f summed one by one is
    # 59.400005f, / 6 = 9.900001f; deviation -9.5e-7, unbiased std 1.04e-6 -> about -0.47.
    f32 = np.float32
    value = f32(10.0) - f32(0.1)
    total = f32(0.0)
    for _ in range(6):
        total = f32(total + value)
    mean32 = f32(total / f32(6))
    deviation = f32(value - mean32)
    std32 = f32(np.sqrt(f32(f32(deviation * deviation) * f32(6) / f32(5))))
    assert abs(deviation / (std32 + f32(EPS)) - (-0.47)) < 0.01


def test_groups_are_separate_per_uid() -> None:
    # u1 scores [1, 0] -> mean_norm [0.5, -0.5]; u2 scores [5, 5] -> [0, 0].
    rows = (
        trajectory("u1", "t1", ["a"], [1])
        + trajectory("u1", "t2", ["a"], [0])
        + trajectory("u2", "t1", ["a"], [5])
        + trajectory("u2", "t2", ["a"], [5])
    )
    np.testing.assert_array_equal(grpo_advantages(to_batch(rows), mode="mean_norm"), [0.5, -0.5, 0, 0])


def test_agent_grouping_normalises_within_uid_and_agent() -> None:
    # Agent x rows: scores [2 (t1), 0 (t2)] -> mean 1 -> [1, -1]. Agent y rows: t1 score 2 and
    # t2 score 0, but penalised 0.1 at t2 -> [2, -0.1] -> mean 0.95 -> [1.05, -1.05].
    rows = trajectory("u", "t1", ["a", "b"], [1, 1], agents=["x", "y"]) + trajectory(
        "u", "t2", ["a", "b"], [0, 0], invalid=[1], agents=["x", "y"]
    )
    adv = grpo_advantages(to_batch(rows, with_agents=True), mode="mean_norm", group_by_agent=True)
    np.testing.assert_allclose(adv, [1.0, 1.05, -1.0, -1.05], rtol=1e-14)
    # Without agent grouping all four rows share one group: scores [2, 2, 0, -0.1], mean 0.975.
    plain = grpo_advantages(to_batch(rows, with_agents=True), mode="mean_norm")
    np.testing.assert_allclose(plain, [1.025, 1.025, -0.975, -1.075], rtol=1e-14)


def test_unknown_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigurationError, match="mean_std_norm"):
        grpo_advantages(to_batch(trajectory("u", "t", ["a"], [1])), mode="zscore")  # type: ignore[arg-type]


def test_trajectory_mean_score_gives_every_row_the_trajectory_advantage() -> None:
    # Dr. MAS's global baseline: t1 rows score 1 - 0.5 (invalid) and 1 -> mean 0.75; t2 scores 0.
    # mean_norm over the two samples (0.75, 0): mean 0.375, so t1 -> 0.375, t2 -> -0.375.
    rows = trajectory("u", "t1", ["a", "b"], [0, 1], invalid=[0]) + trajectory("u", "t2", ["a"], [0])
    got = grpo_advantages(
        to_batch(rows), mode="mean_norm", per_trajectory=True, trajectory_score="mean", invalid_penalty=0.5
    )
    np.testing.assert_allclose(got, [0.375, 0.375, -0.375], rtol=1e-15)


def test_trajectory_mean_score_without_per_trajectory_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="per_trajectory"):
        grpo_advantages(to_batch(trajectory("u", "t", ["a"], [1])), trajectory_score="mean")
    with pytest.raises(ConfigurationError, match="per_trajectory"):
        GRPOConfig(trajectory_score="mean")
