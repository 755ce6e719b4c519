"""GiGPO advantages (episode + anchor-state step level), by hand."""

from __future__ import annotations

import difflib
import math

import numpy as np
import pytest

from envhub.algos import gigpo_advantages, grpo_advantages, step_advantages
from envhub.core.errors import ConfigurationError

from .builders import Row, to_batch, trajectory

EPS = 1e-6


def _example() -> list[Row]:
    # t1: anchors s0 s1 s2, rewards [0, 0, 10]           -> G (gamma .95) = [9.025, 9.5, 10]
    # t2: anchors s0 s1 s3, rewards [0, 0, 0], step 1 bad -> G = [0, 0, 0], samples [0, -0.1, 0]
    return trajectory("u", "t1", ["s0", "s1", "s2"], [0, 0, 10]) + trajectory(
        "u", "t2", ["s0", "s1", "s3"], [0, 0, 0], invalid=[1]
    )


def test_mean_norm_adds_episode_and_step_terms() -> None:
    # Episode scores [10, 10, 10, 0, -0.1, 0]: mean 29.9 / 6 = 4.98333...
    # Step groups: s0 {9.025, 0} mean 4.5125; s1 {9.5, -0.1} mean 4.7; s2 and s3 alone -> 0.
    e = 29.9 / 6
    expected = [
        (10 - e) + (9.025 - 4.5125),
        (10 - e) + (9.5 - 4.7),
        (10 - e) + 0.0,
        (0 - e) + (0 - 4.5125),
        (-0.1 - e) + (-0.1 - 4.7),
        (0 - e) + 0.0,
    ]
    np.testing.assert_allclose(gigpo_advantages(to_batch(_example()), mode="mean_norm"), expected, rtol=1e-13)


def test_mean_std_norm_uses_unbiased_std_at_both_levels() -> None:
    scores = np.array([10, 10, 10, 0, -0.1, 0])
    e_mean, e_std = scores.mean(), math.sqrt(((scores - scores.mean()) ** 2).sum() / 5)
    # s0 {9.025, 0}: unbiased std = |9.025 - 0| / sqrt(2); s1 {9.5, -0.1}: 9.6 / sqrt(2).
    s0_std, s1_std = 9.025 / math.sqrt(2), 9.6 / math.sqrt(2)
    expected = [
        (10 - e_mean) / (e_std + EPS) + 4.5125 / (s0_std + EPS),
        (10 - e_mean) / (e_std + EPS) + 4.8 / (s1_std + EPS),
        (10 - e_mean) / (e_std + EPS),
        (0 - e_mean) / (e_std + EPS) - 4.5125 / (s0_std + EPS),
        (-0.1 - e_mean) / (e_std + EPS) - 4.8 / (s1_std + EPS),
        (0 - e_mean) / (e_std + EPS),
    ]
    np.testing.assert_allclose(
        gigpo_advantages(to_batch(_example()), mode="mean_std_norm"), expected, rtol=1e-12
    )


def test_step_weight_scales_the_step_term_and_zero_gives_grpo() -> None:
    batch = to_batch(_example())
    episode = grpo_advantages(batch, mode="mean_norm")
    step = step_advantages(batch, mode="mean_norm")
    np.testing.assert_allclose(
        gigpo_advantages(batch, mode="mean_norm", step_advantage_w=0.5), episode + 0.5 * step, rtol=1e-14
    )
    np.testing.assert_array_equal(gigpo_advantages(batch, mode="mean_norm", step_advantage_w=0.0), episode)


def test_repeated_anchor_inside_one_trajectory_forms_a_step_group() -> None:
    # anchors [a, b, a], rewards [0, 1, 0], gamma 0.5: G = [0.5, 1, 0].
    # Step group a = {0.5, 0}: mean 0.25 -> [0.25, -0.25]; b alone -> 0.
    batch = to_batch(trajectory("u", "t", ["a", "b", "a"], [0, 1, 0]))
    np.testing.assert_array_equal(step_advantages(batch, mode="mean_norm", gamma=0.5), [0.25, 0.0, -0.25])


def test_equal_anchors_in_different_uids_are_not_merged() -> None:
    # Each uid has one row with anchor "a": both are groups of one -> A^S = 0.
    rows = trajectory("u1", "t", ["a"], [1]) + trajectory("u2", "t", ["a"], [0])
    np.testing.assert_array_equal(step_advantages(to_batch(rows), mode="mean_norm"), [0.0, 0.0])


def test_all_equal_step_group_gets_exactly_zero() -> None:
    # Three rows at anchor "a", each return 10 - 0.1 = 9.9 (last step, invalid).
    rows = [r for t in range(3) for r in trajectory("u", f"t{t}", ["a"], [10], invalid=[0])]
    assert np.all(step_advantages(to_batch(rows), mode="mean_std_norm") == 0.0)


def test_similarity_grouping_merges_near_duplicate_text() -> None:
    # ratio("the cat sat!", "the cat sat") = 2*11/23 = 0.957 >= 0.9: one group {1, 0} -> ±0.5.
    rows = trajectory("u", "t1", ["the cat sat"], [1]) + trajectory("u", "t2", ["the cat sat!"], [0])
    assert difflib.SequenceMatcher(None, "the cat sat!", "the cat sat").ratio() >= 0.9
    batch = to_batch(rows)
    np.testing.assert_array_equal(
        step_advantages(batch, mode="mean_norm", similarity_thresh=0.9), [0.5, -0.5]
    )
    np.testing.assert_array_equal(step_advantages(batch, mode="mean_norm"), [0.0, 0.0])  # exact: 2 groups


def test_similarity_compares_only_with_each_clusters_first_member() -> None:
    # x1 = 10 a's; x2 = x1 + "bb" (ratio to x1 = 20/22 = 0.909) joins x1's cluster;
    # x3 = x1 + "bbbb": ratio to x1 = 20/24 = 0.833 < 0.9, so it opens a new cluster even
    # though ratio(x3, x2) = 24/26 = 0.923 (x2 is not a representative).
    x1, x2, x3 = "a" * 10, "a" * 10 + "bb", "a" * 10 + "bbbb"
    rows = (
        trajectory("u", "t1", [x1], [1]) + trajectory("u", "t2", [x2], [0]) + trajectory("u", "t3", [x3], [5])
    )
    # cluster {x1, x2} = {1, 0} -> ±0.5; x3 alone -> 0
    adv = step_advantages(to_batch(rows), mode="mean_norm", similarity_thresh=0.9)
    np.testing.assert_array_equal(adv, [0.5, -0.5, 0.0])


def test_similarity_grouping_depends_on_row_order_by_design() -> None:
    # Scanning x2 first makes it the representative: then x3 (ratio 0.923) joins it and
    # x1 (ratio to x2 = 0.909) joins too: one group of three.
    x1, x2, x3 = "a" * 10, "a" * 10 + "bb", "a" * 10 + "bbbb"
    rows = (
        trajectory("u", "t2", [x2], [0]) + trajectory("u", "t1", [x1], [1]) + trajectory("u", "t3", [x3], [5])
    )
    # {0, 1, 5}: mean 2 -> [-2, -1, 3]
    adv = step_advantages(to_batch(rows), mode="mean_norm", similarity_thresh=0.9)
    np.testing.assert_array_equal(adv, [-2.0, -1.0, 3.0])


def test_similarity_grouping_refuses_non_text_anchors() -> None:
    rows = trajectory("u", "t", [("arr", 1)], [1])
    with pytest.raises(ConfigurationError, match="text anchors"):
        step_advantages(to_batch(rows), similarity_thresh=0.9)


@pytest.mark.parametrize("thresh", [0.0, 1.0, 1.5])
def test_similarity_threshold_must_be_strictly_inside_unit_interval(thresh: float) -> None:
    with pytest.raises(ConfigurationError, match="strictly between 0 and 1"):
        step_advantages(to_batch(trajectory("u", "t", ["a"], [1])), similarity_thresh=thresh)


def test_agent_grouping_keys_step_groups_by_agent() -> None:
    # Both rows see anchor "a" but belong to different agents: two groups of one -> 0.
    rows = trajectory("u", "t1", ["a"], [1], agents=["x"]) + trajectory("u", "t2", ["a"], [0], agents=["y"])
    batch = to_batch(rows, with_agents=True)
    np.testing.assert_array_equal(step_advantages(batch, mode="mean_norm", group_by_agent=True), [0, 0])
    np.testing.assert_array_equal(step_advantages(batch, mode="mean_norm"), [0.5, -0.5])


def test_population_std_variant_for_hgpo_level_zero() -> None:
    # {1, 0}: population std 0.5 -> ±0.5 / (0.5 + eps); unbiased std 1/sqrt(2).
    rows = trajectory("u", "t1", ["a"], [1]) + trajectory("u", "t2", ["a"], [0])
    batch = to_batch(rows)
    np.testing.assert_allclose(
        step_advantages(batch, mode="mean_std_norm", unbiased=False), [0.5 / (0.5 + EPS), -0.5 / (0.5 + EPS)]
    )
    s = 1 / math.sqrt(2)
    np.testing.assert_allclose(
        step_advantages(batch, mode="mean_std_norm"), [0.5 / (s + EPS), -0.5 / (s + EPS)]
    )


def test_non_finite_step_weight_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="step_advantage_w"):
        gigpo_advantages(to_batch(trajectory("u", "t", ["a"], [1])), step_advantage_w=float("inf"))
