"""Each tool's exact output on a known series."""

from __future__ import annotations

import numpy as np

from envhub.envs.timeseries.tools import fft, stats, summary, zoom, zscore

X = np.array([0.0, 1.0, 2.0, 3.0, 100.0, 5.0, 6.0, 7.0])


def test_stats_reports_moments_extremes_and_quantiles() -> None:
    assert stats(X, 0, 4) == (
        "stats[0:4]: n=4 mean=1.5 std=1.118 min=0 (t=0) max=3 (t=3) "
        "q05=0.15 q25=0.75 median=1.5 q75=2.25 q95=2.85"
    )
    assert "max=100 (t=4)" in stats(X, 2, 8)


def test_zscore_lists_top_points_by_absolute_z() -> None:
    text = zscore(X, 0, 8, k=2)
    # population std: sqrt(8202 / 8) = 32.02; z(100) = 84.5 / 32.02 = 2.64
    assert text.startswith("zscore[0:8] (mean=15.5 std=32.02) top 2 |z|: t=4 z=+2.64 value=100; t=0 z=-0.48")


def test_zscore_of_a_flat_window_is_zero_not_nan() -> None:
    assert "z=+0.00" in zscore(np.ones(10), 0, 10, k=1)


def test_fft_finds_the_period_of_a_sine() -> None:
    t = np.arange(240)
    text = fft(np.sin(2 * np.pi * t / 24) + 0.01 * t, 0, 240)
    assert text.startswith("fft[0:240]: dominant period 24 (")


def test_fft_handles_short_and_flat_windows() -> None:
    assert "too short" in fft(X, 0, 3)
    assert "flat window" in fft(np.zeros(10), 0, 10)


def test_zoom_shows_values_and_strides_long_windows() -> None:
    assert zoom(X, 3, 6) == "zoom[3:6] stride=1: 3, 100, 5"
    long = zoom(np.arange(1000.0), 0, 1000)
    assert long.startswith("zoom[0:1000] stride=5: 0, 5, 10,")
    assert len(long.split(": ")[1].split(", ")) == 200


def test_summary_states_length_and_samples() -> None:
    text = summary(np.arange(300.0))
    assert "length 300 (indices 0..299)" in text and "Every 3th value from t=0: 0, 3, 6" in text
