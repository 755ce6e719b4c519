"""Broadcasting row advantages over response tokens."""

from __future__ import annotations

import numpy as np
import pytest

from envhub.algos import broadcast_to_tokens, response_mask_from_lengths
from envhub.core.errors import ConfigurationError


def test_each_valid_token_gets_its_rows_advantage_and_padding_gets_zero() -> None:
    mask = response_mask_from_lengths([2, 0, 3], max_length=4)
    out = broadcast_to_tokens([1.5, -2.0, 0.25], mask)
    np.testing.assert_array_equal(
        out,
        [[1.5, 1.5, 0, 0], [0, 0, 0, 0], [0.25, 0.25, 0.25, 0]],
    )
    assert out.dtype == np.float64


def test_any_mask_pattern_is_respected() -> None:
    mask = np.array([[0, 1, 1, 0]])
    np.testing.assert_array_equal(broadcast_to_tokens(np.array([3.0]), mask), [[0, 3, 3, 0]])


def test_mask_width_defaults_to_the_longest_response() -> None:
    assert response_mask_from_lengths([1, 3]).shape == (2, 3)


def test_mismatched_shapes_are_refused_with_the_fix() -> None:
    with pytest.raises(ConfigurationError, match="response_mask_from_lengths"):
        broadcast_to_tokens([1.0, 2.0], np.ones((3, 4)))


def test_length_over_max_length_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="max_length"):
        response_mask_from_lengths([5], max_length=4)
