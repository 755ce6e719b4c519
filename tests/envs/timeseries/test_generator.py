"""The series generator: every kind is produced, reproducibly, and measurably injected."""

from __future__ import annotations

import numpy as np
import pytest

from envhub.envs.timeseries.env import TEST_SIZE, series_for
from envhub.envs.timeseries.generator import KINDS, generate, task_rng


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_generated_with_length_in_range(kind: str) -> None:
    for seed in range(5):
        series = generate(np.random.default_rng(seed), kind)
        assert series.kind == kind
        assert 200 <= len(series.values) <= 1000
        assert np.isfinite(series.values).all()
        assert (series.intervals == ()) == (kind == "normal")


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "normal"])
def test_injected_interval_differs_measurably_and_only_there(kind: str) -> None:
    for seed in range(10):
        series = generate(np.random.default_rng(seed), kind)
        ((start, end),) = series.intervals
        diff = np.abs(series.values - series.clean)
        outside = np.ones(len(diff), dtype=bool)
        outside[start:end] = False
        assert np.all(diff[outside] == 0.0), "the anomaly leaked outside its interval"
        # Inside, the change is several noise standard deviations on average.
        assert diff[start:end].mean() > 2 * series.noise, (kind, seed)


def test_global_point_is_outside_the_normal_range_and_contextual_point_inside() -> None:
    for seed in range(10):
        spike = generate(np.random.default_rng(seed), "global_point")
        ((s, e),) = spike.intervals
        z = np.abs(spike.values - spike.values.mean()) / spike.values.std()
        assert z[s:e].max() > 4.0
        ctx = generate(np.random.default_rng(seed), "contextual_point")
        ((s, e),) = ctx.intervals
        assert ctx.clean.min() - ctx.noise * 4 <= ctx.values[s:e].min()
        assert ctx.values[s:e].max() <= ctx.clean.max() + ctx.noise * 4


def test_task_rng_is_reproducible_and_splits_are_disjoint() -> None:
    assert task_rng("test", 3).integers(1 << 30) == task_rng("test", 3).integers(1 << 30)
    assert task_rng("test", 3).integers(1 << 30) != task_rng("train", 3).integers(1 << 30)


def test_same_task_gives_identical_series() -> None:
    a, b = series_for("train", 123), series_for("train", 123)
    assert np.array_equal(a.values, b.values) and a.kind == b.kind and a.intervals == b.intervals


def test_test_split_classes_are_balanced() -> None:
    counts = {k: 0 for k in KINDS}
    for i in range(TEST_SIZE):
        counts[series_for("test", i).kind] += 1
    assert max(counts.values()) - min(counts.values()) <= 1


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown anomaly kind"):
        generate(np.random.default_rng(0), "bogus")
