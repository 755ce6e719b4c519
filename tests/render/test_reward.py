"""The compression-aware reward."""

from __future__ import annotations

import math

import numpy as np
import pytest

from envhub.core.errors import ConfigurationError
from envhub.render import CompressionReward, compression_scores


def test_success_earns_lambda_log_c_and_failure_pays_mu_log_c() -> None:
    scores = compression_scores(
        [10.0, 10.0, 0.0, 0.0],
        [2.0, 1.0, 3.0, 3.0],
        [True, True, False, False],
        call_index=8,
        lam=0.01,
        mu=0.5,
    )
    expected = [10 + 0.01 * math.log(2), 10.0, -0.5 * math.log(3), -0.5 * math.log(3)]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)


def test_bonus_only_on_every_nth_call() -> None:
    for call in range(1, 17):
        scores = compression_scores([10.0], [4.0], [True], call_index=call)
        assert scores[0] == (10 + 0.01 * math.log(4) if call % 8 == 0 else 10.0)


def test_defaults_leave_failures_untouched_and_clean_bad_factors() -> None:
    scores = compression_scores(
        [0.0, 10.0, 10.0], [5.0, float("nan"), 0.1], [False, True, True], call_index=8
    )
    np.testing.assert_array_equal(scores, [0.0, 10.0, 10.0])


def test_stateful_reward_counts_its_calls() -> None:
    shaper = CompressionReward(lam=0.1, every=2)
    assert shaper([1.0], [math.e], [True])[0] == 1.0
    assert shaper([1.0], [math.e], [True])[0] == pytest.approx(1.1)
    assert shaper.calls == 2


def test_mismatched_columns_and_bad_counts_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="one entry per step row"):
        compression_scores([1.0, 2.0], [1.0], [True, False], call_index=1)
    with pytest.raises(ConfigurationError, match="1-based"):
        compression_scores([1.0], [1.0], [True], call_index=0)
