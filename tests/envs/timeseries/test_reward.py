"""Reward cases computed by hand."""

from __future__ import annotations

import pytest

from envhub.envs.timeseries.reward import default_tolerance, interval_f1, score_answer


def test_exact_answer_scores_one_and_wins() -> None:
    score = score_answer(
        "level_shift", [(100, 150)], true_kind="level_shift", true_intervals=[(100, 150)], length=300
    )
    assert score.reward == pytest.approx(1.0) and score.won


def test_normal_with_no_interval_scores_one() -> None:
    score = score_answer("normal", [], true_kind="normal", true_intervals=[], length=300)
    assert (score.loc, score.class_acc, score.reward, score.won) == (1.0, 1.0, pytest.approx(1.0), True)


def test_right_class_without_interval_gets_class_and_format_only() -> None:
    # loc = 0 (only the truth has an interval): 0.7*0 + 0.2*1 + 0.1*1 = 0.3
    score = score_answer("shapelet", [], true_kind="shapelet", true_intervals=[(10, 40)], length=300)
    assert score.reward == pytest.approx(0.3) and not score.won


def test_wrong_class_right_interval() -> None:
    # 0.7*1 + 0.2*0 + 0.1 = 0.8, not won (class wrong)
    score = score_answer(
        "trend_change", [(10, 40)], true_kind="shapelet", true_intervals=[(10, 40)], length=300
    )
    assert score.reward == pytest.approx(0.8) and not score.won


def test_half_overlap_by_hand() -> None:
    # length 1000 -> tolerance 10. truth [100, 200), prediction [150, 300).
    # precision: predicted points within 10 of the truth = [150, 210) -> 60 of 150 = 0.4
    # recall: truth points within 10 of the prediction = [140, 200) -> 60 of 100 = 0.6
    # F1 = 2*0.4*0.6/(1.0) = 0.48; reward = 0.7*0.48 + 0.2 + 0.1 = 0.636; loc < 0.5 -> not won
    assert default_tolerance(1000) == 10
    score = score_answer(
        "level_shift", [(150, 300)], true_kind="level_shift", true_intervals=[(100, 200)], length=1000
    )
    assert score.loc == pytest.approx(0.48)
    assert score.reward == pytest.approx(0.636)
    assert not score.won


def test_tolerance_forgives_a_near_miss_on_a_point() -> None:
    # truth [50, 51); prediction [52, 54) is within the tolerance of 3 -> precision 1, recall 1
    assert interval_f1([(52, 54)], [(50, 51)], 300, tolerance=3) == 1.0
    assert interval_f1([(60, 62)], [(50, 51)], 300, tolerance=3) == 0.0


def test_prediction_on_a_normal_series_scores_zero_localisation() -> None:
    assert interval_f1([(1, 2)], [], 300, tolerance=3) == 0.0
