"""HGPO advantages, by hand.

The running example, gamma = 1 and no invalid rows, one uid:

    t1: anchors a b c, rewards [0, 0, 1]    -> returns [1, 1, 1]
    t2: anchors a d c, rewards [0, 0, 0]    -> returns [0, 0, 0]
    t3: anchors a b c, rewards [0, 0, 0.5]  -> returns [0.5, 0.5, 0.5]

Level 0 (anchor) groups: a {1, 0, .5} mean .5; b {1, .5} mean .75; c {1, 0, .5} mean .5; d alone.
Level 1 groups: (a,b) {t1 1, t3 .5} mean .75; (b,c) likewise; (a,d), (d,c) alone.
Level 2 groups: (a,b,c) {t1 1, t3 .5} mean .75; (a,d,c) alone.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from envhub.algos import hgpo_advantages
from envhub.core.errors import ConfigurationError

from .builders import to_batch, trajectory

EPS = 1e-6


def _batch():
    rows = (
        trajectory("u", "t1", ["a", "b", "c"], [0, 0, 1])
        + trajectory("u", "t2", ["a", "d", "c"], [0, 0, 0])
        + trajectory("u", "t3", ["a", "b", "c"], [0, 0, 0.5])
    )
    return to_batch(rows)


def _hgpo(**kw):
    return hgpo_advantages(_batch(), mode="mean_norm", gamma=1.0, **kw)


def test_mean_norm_k2_weights_levels_by_l_plus_2() -> None:
    expected = [
        0.5 * 2 / (2 + EPS),  # t1 s0: level 0 only (too early for deeper levels): a +.5, w 2
        (0.25 * 2 + 0.25 * 3) / (5 + EPS),  # t1 s1: b +.25 (w 2), (a,b) +.25 (w 3)
        (0.5 * 2 + 0.25 * 3 + 0.25 * 4) / (9 + EPS),  # t1 s2: c +.5, (b,c) +.25, (a,b,c) +.25
        -0.5 * 2 / (2 + EPS),  # t2 s0: a -.5
        0.0,  # t2 s1: d alone, (a,d) alone: no item -> 0
        -0.5 * 2 / (2 + EPS),  # t2 s2: c -.5; (d,c) and (a,d,c) alone
        0.0,  # t3 s0: a gives exactly 0 -> dropped -> no item
        (-0.25 * 2 - 0.25 * 3) / (5 + EPS),  # t3 s1: b -.25, (a,b) -.25
        (-0.25 * 3 - 0.25 * 4) / (7 + EPS),  # t3 s2: c gives exactly 0 (dropped), weights 3 + 4
    ]
    np.testing.assert_allclose(_hgpo(history_length=2), expected, rtol=1e-14, atol=0)


def test_exact_zero_items_are_dropped_with_their_weight() -> None:
    # t3 s2 keeps only levels 1 and 2: -1.75 / 7, not -1.75 / 9.
    assert _hgpo(history_length=2)[8] == pytest.approx(-1.75 / (7 + EPS), rel=1e-14)


def test_alpha_zero_is_the_plain_mean_of_nonzero_items() -> None:
    adv = _hgpo(history_length=2, length_weight_alpha=0.0)
    assert adv[2] == pytest.approx((0.5 + 0.25 + 0.25) / (3 + EPS), rel=1e-14)  # t1 s2
    assert adv[8] == pytest.approx((-0.25 - 0.25) / (2 + EPS), rel=1e-14)  # t3 s2


def test_alpha_two_squares_the_level_weights() -> None:
    # t1 s2 with weights 2^2, 3^2, 4^2 = 4, 9, 16
    assert _hgpo(history_length=2, length_weight_alpha=2.0)[2] == pytest.approx(
        (0.5 * 4 + 0.25 * 9 + 0.25 * 16) / (29 + EPS), rel=1e-14
    )


def test_k_limits_the_deepest_level() -> None:
    assert _hgpo(history_length=0)[2] == pytest.approx(0.5 * 2 / (2 + EPS), rel=1e-14)
    assert _hgpo(history_length=1)[2] == pytest.approx((0.5 * 2 + 0.25 * 3) / (5 + EPS), rel=1e-14)
    # K beyond the trajectory length adds nothing.
    np.testing.assert_array_equal(_hgpo(history_length=9), _hgpo(history_length=2))


def test_base_group_adds_the_episode_advantage_with_weight_1() -> None:
    # Episode returns per row [1,1,1, 0,0,0, .5,.5,.5]: mean 4.5 / 9 = .5 ->
    # base items t1 +.5, t2 -.5, t3 exactly 0 (dropped).
    adv = _hgpo(history_length=2, base_group=True)
    assert adv[2] == pytest.approx((0.5 * 1 + 0.5 * 2 + 0.25 * 3 + 0.25 * 4) / (10 + EPS), rel=1e-14)
    assert adv[4] == pytest.approx(-0.5 / (1 + EPS), rel=1e-14)  # t2 s1: only the base item
    assert adv[8] == pytest.approx(-1.75 / (7 + EPS), rel=1e-14)  # base 0 dropped


def test_mean_std_norm_uses_the_population_std() -> None:
    # Level-0 group a {1, 0, .5}: population std sqrt((.25 + .25 + 0) / 3) = sqrt(1/6).
    adv = hgpo_advantages(_batch(), mode="mean_std_norm", gamma=1.0, history_length=0)
    a = 0.5 / (math.sqrt(1 / 6) + EPS)
    assert adv[0] == pytest.approx(a * 2 / (2 + EPS), rel=1e-12)


def test_actions_are_not_part_of_the_key_but_whole_anchor_windows_are() -> None:
    # Two trajectories share the window (x, y) at step 1 even though nothing about their
    # actions is compared: level 1 group {1, 0} -> +-.5 at weight 3 next to level 0 (w 2).
    rows = trajectory("u", "t1", ["x", "y"], [0, 1]) + trajectory("u", "t2", ["x", "y"], [0, 0])
    adv = hgpo_advantages(to_batch(rows), mode="mean_norm", gamma=1.0, history_length=1)
    assert adv[1] == pytest.approx((0.5 * 2 + 0.5 * 3) / (5 + EPS), rel=1e-14)


def test_repeats_inside_one_trajectory_are_group_members() -> None:
    # anchors [a, a, a], rewards [0, 0, 3], gamma 1: returns [3, 3, 3] -> every group
    # all-equal -> exactly 0. With rewards [1, 0, 0] returns [1, 0, 0]: level-0 group a
    # {1, 0, 0} mean 1/3; level 1 windows (a,a) at s1 and s2: {0, 0} -> 0 (dropped).
    flat = to_batch(trajectory("u", "t", ["a", "a", "a"], [0, 0, 3]))
    assert np.all(hgpo_advantages(flat, mode="mean_std_norm", gamma=1.0) == 0.0)
    loop = to_batch(trajectory("u", "t", ["a", "a", "a"], [1, 0, 0]))
    adv = hgpo_advantages(loop, mode="mean_norm", gamma=1.0, history_length=1)
    expected = [(2 / 3) * 2 / (2 + EPS), (-1 / 3) * 2 / (2 + EPS), (-1 / 3) * 2 / (2 + EPS)]
    np.testing.assert_allclose(adv, expected, rtol=1e-14)


def test_invalid_rows_are_penalised_only_at_that_row() -> None:
    # Two one-step trajectories at anchor a, reward 0; t2 invalid: returns [0, -0.1]
    # -> mean -0.05 -> ±0.05 at weight 2.
    rows = trajectory("u", "t1", ["a"], [0]) + trajectory("u", "t2", ["a"], [0], invalid=[0])
    adv = hgpo_advantages(to_batch(rows), mode="mean_norm")
    np.testing.assert_allclose(adv, [0.05 * 2 / (2 + EPS), -0.05 * 2 / (2 + EPS)], rtol=1e-12)


def test_single_row_batch_gets_zero() -> None:
    assert hgpo_advantages(to_batch(trajectory("u", "t", ["a"], [7])))[0] == 0.0


def test_agent_grouping_splits_every_level_by_agent() -> None:
    rows = trajectory("u", "t1", ["a", "b"], [0, 1], agents=["x", "x"]) + trajectory(
        "u", "t2", ["a", "b"], [0, 0], agents=["x", "y"]
    )
    batch = to_batch(rows, with_agents=True)
    adv = hgpo_advantages(batch, mode="mean_norm", gamma=1.0, history_length=1, group_by_agent=True)
    # step 0: both agent x at a: {1, 0} -> ±.5 (w 2). step 1: agents differ -> groups of one.
    np.testing.assert_allclose(adv, [0.5 * 2 / (2 + EPS), 0.0, -0.5 * 2 / (2 + EPS), 0.0], rtol=1e-14)


@pytest.mark.parametrize("k", [-1, 1.5, True])
def test_bad_history_length_is_refused(k) -> None:
    with pytest.raises(ConfigurationError, match="history_length"):
        hgpo_advantages(_batch(), history_length=k)


def test_non_finite_alpha_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="length_weight_alpha"):
        hgpo_advantages(_batch(), length_weight_alpha=float("nan"))


def test_levels_show_the_items_the_advantage_averages() -> None:
    from envhub.algos import hgpo_levels

    levels = hgpo_levels(_batch(), mode="mean_norm", gamma=1.0, history_length=2)
    assert [lv.level for lv in levels] == [0, 1, 2]
    assert [lv.weight for lv in levels] == [2.0, 3.0, 4.0]
    # t1's last step (row 2): level 0 group c {1, 0, .5} -> +.5; level 1 (b,c) -> +.25; level 2 -> +.25.
    assert [lv.advantage[2] for lv in levels] == pytest.approx([0.5, 0.25, 0.25])
    # t2's middle step (d) is alone at every level: no item is used.
    assert not any(lv.used[4] for lv in levels)
    assert levels[0].group[2] == levels[0].group[5] == levels[0].group[8]  # the three 'c' steps
    assert levels[2].group[2] == levels[2].group[8] != levels[2].group[5]


def test_levels_reproduce_the_advantage_on_random_batches() -> None:
    from envhub.algos import hgpo_levels

    from .builders import random_rows

    for seed in range(5):
        batch = to_batch(random_rows(np.random.default_rng(seed)))
        levels = hgpo_levels(batch, history_length=3, length_weight_alpha=0.5)
        num = sum(np.where(lv.used, lv.weight * lv.advantage, 0.0) for lv in levels)
        den = sum(np.where(lv.used, lv.weight, 0.0) for lv in levels)
        expected = hgpo_advantages(batch, history_length=3, length_weight_alpha=0.5)
        np.testing.assert_allclose(num / (den + EPS), expected, rtol=1e-12, atol=1e-12)
