"""Reward plumbing: discounted returns, episode returns, the invalid-action penalty."""

from __future__ import annotations

import numpy as np
import pytest

from envhub.algos import discounted_returns, episode_returns
from envhub.algos.layout import BatchLayout
from envhub.algos.returns import episode_score_samples, step_return_samples
from envhub.core.errors import ConfigurationError
from envhub.core.records import StepBatch

from .builders import Row, to_batch, trajectory


def test_discounted_returns_follow_the_backward_recurrence() -> None:
    # rewards [1, 0, 2], gamma 0.5: G2 = 2, G1 = 0 + 0.5*2 = 1, G0 = 1 + 0.5*1 = 1.5
    batch = to_batch(trajectory("u", "t", ["a", "b", "c"], [1, 0, 2]))
    np.testing.assert_array_equal(discounted_returns(batch, gamma=0.5), [1.5, 1.0, 2.0])


def test_discounted_returns_default_gamma_is_095() -> None:
    # rewards [0, 0, 10]: G = [0.95**2 * 10, 0.95 * 10, 10] = [9.025, 9.5, 10]
    batch = to_batch(trajectory("u", "t", ["a", "b", "c"], [0, 0, 10]))
    np.testing.assert_allclose(discounted_returns(batch), [9.025, 9.5, 10.0], rtol=1e-15)


def test_discounted_returns_stay_inside_their_trajectory() -> None:
    # Two trajectories; gamma 1: t1 rewards [1, 1] -> [2, 1]; t2 rewards [5] -> [5].
    rows = trajectory("u", "t1", ["a", "b"], [1, 1]) + trajectory("u", "t2", ["a"], [5])
    np.testing.assert_array_equal(discounted_returns(to_batch(rows), gamma=1.0), [2.0, 1.0, 5.0])


def test_returns_come_back_in_input_row_order_for_shuffled_rows() -> None:
    rows = trajectory("u", "t", ["a", "b", "c"], [1, 0, 2])
    shuffled = [rows[2], rows[0], rows[1]]
    np.testing.assert_array_equal(discounted_returns(to_batch(shuffled), gamma=0.5), [2.0, 1.5, 1.0])


def test_step_idx_gaps_only_order_the_steps() -> None:
    # steps 0, 5, 9 behave as consecutive steps: rewards [1, 0, 2], gamma 0.5 -> [1.5, 1, 2]
    rows = [Row("u", "t", 0, "a", 1.0), Row("u", "t", 5, "b", 0.0), Row("u", "t", 9, "c", 2.0)]
    np.testing.assert_array_equal(discounted_returns(to_batch(rows), gamma=0.5), [1.5, 1.0, 2.0])


def test_trajectory_ids_are_scoped_by_uid() -> None:
    # Same traj id "t" in two uids: two trajectories, returns 1 and 4, not one of 5.
    rows = trajectory("u1", "t", ["a"], [1]) + trajectory("u2", "t", ["a"], [4])
    np.testing.assert_array_equal(episode_returns(to_batch(rows)), [1.0, 4.0])


def test_episode_return_is_the_undiscounted_sum() -> None:
    batch = to_batch(trajectory("u", "t", ["a", "b", "c"], [1, 0, 2]))
    np.testing.assert_array_equal(episode_returns(batch), [3.0, 3.0, 3.0])


def test_invalid_penalty_hits_only_the_invalid_row_and_is_not_discounted() -> None:
    # rewards [0, 0, 10], gamma 0.5 -> G = [2.5, 5, 10]; step 1 invalid, coef 0.1:
    # step samples [2.5, 5 - 0.1, 10] = [2.5, 4.9, 10]; scores [10, 10 - 0.1, 10].
    batch = to_batch(trajectory("u", "t", ["a", "b", "c"], [0, 0, 10], invalid=[1]))
    layout = BatchLayout.from_batch(batch)
    np.testing.assert_allclose(
        step_return_samples(batch, layout, gamma=0.5, invalid_penalty=0.1), [2.5, 4.9, 10.0], rtol=1e-15
    )
    np.testing.assert_allclose(
        episode_score_samples(batch, layout, invalid_penalty=0.1), [10.0, 9.9, 10.0], rtol=1e-15
    )


def test_zero_penalty_disables_it() -> None:
    batch = to_batch(trajectory("u", "t", ["a", "b"], [0, 1], invalid=[0, 1]))
    layout = BatchLayout.from_batch(batch)
    np.testing.assert_array_equal(episode_score_samples(batch, layout, invalid_penalty=0.0), [1.0, 1.0])


def test_duplicate_step_in_a_trajectory_is_refused_with_the_fix() -> None:
    rows = [*trajectory("u", "t", ["a", "b"], [0, 1]), Row("u", "t", 1, "b", 1.0)]
    with pytest.raises(ConfigurationError, match="un-duplicated batch"):
        discounted_returns(to_batch(rows))


def test_nan_reward_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="non-finite"):
        episode_returns(to_batch(trajectory("u", "t", ["a"], [float("nan")])))


@pytest.mark.parametrize("gamma", [-0.1, 1.5, float("nan")])
def test_gamma_outside_unit_interval_is_refused(gamma: float) -> None:
    with pytest.raises(ConfigurationError, match="gamma"):
        discounted_returns(to_batch(trajectory("u", "t", ["a"], [1])), gamma=gamma)


def test_negative_penalty_is_refused() -> None:
    batch = to_batch(trajectory("u", "t", ["a"], [1]))
    with pytest.raises(ConfigurationError, match="invalid_penalty"):
        episode_score_samples(batch, BatchLayout.from_batch(batch), invalid_penalty=-1.0)


def test_unhashable_anchor_is_refused_with_the_fix() -> None:
    anchors = np.empty(1, dtype=object)
    anchors[0] = np.zeros(3)
    batch = StepBatch(
        uid=np.array(["u"], dtype=object),
        traj_id=np.array(["t"], dtype=object),
        step_idx=np.zeros(1, dtype=np.int64),
        anchor=anchors,
        reward=np.zeros(1),
        is_action_valid=np.ones(1, dtype=bool),
    )
    with pytest.raises(ConfigurationError, match="canonical_anchor"):
        BatchLayout.from_batch(batch)


def test_array_anchors_are_grouped_by_value_after_canonicalisation() -> None:
    # from_columns turns arrays into tuples, so equal arrays share an anchor code.
    batch = StepBatch.from_columns(
        uid=["u", "u", "u"],
        traj_id=["t1", "t2", "t3"],
        step_idx=[0, 0, 0],
        anchor=[np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 5]])],
        reward=[0, 0, 0],
    )
    codes = BatchLayout.from_batch(batch).anchor
    assert codes[0] == codes[1] != codes[2]


def test_empty_batch_gives_empty_results() -> None:
    batch = to_batch([])
    assert discounted_returns(batch).shape == (0,)
    assert episode_returns(batch).shape == (0,)


def _calls(env_steps: list[int], rewards: list[float]) -> StepBatch:
    """One trajectory of agent calls (Dr. MAS), each tagged with its env step."""
    n = len(env_steps)
    return StepBatch.from_columns(
        uid=["u"] * n,
        traj_id=["t"] * n,
        step_idx=list(range(n)),
        anchor=["a"] * n,
        reward=rewards,
        agent_id=["verifier", "search"] * (n // 2) + ["verifier"] * (n % 2),
        env_step=env_steps,
    )


def test_env_steps_discount_per_env_step_not_per_call() -> None:
    # Calls [v s | v a] in env steps [0 0 | 1 1]; the env's reward 1 on the last call of step 1.
    # gamma 0.5: step 1 returns 1, step 0 returns 0 + 0.5 * 1; each call gets its step's return.
    batch = _calls([0, 0, 1, 1], [0, 0, 0, 1])
    np.testing.assert_array_equal(discounted_returns(batch, gamma=0.5), [0.5, 0.5, 1.0, 1.0])
    np.testing.assert_array_equal(episode_returns(batch), [1.0, 1.0, 1.0, 1.0])


def test_env_steps_sum_the_rewards_of_their_calls() -> None:
    batch = _calls([0, 0, 1], [2, 1, 4])
    np.testing.assert_array_equal(discounted_returns(batch, gamma=0.5), [5.0, 5.0, 4.0])


def test_env_steps_that_go_back_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="env_step"):
        discounted_returns(_calls([0, 1, 0], [0, 0, 1]))
