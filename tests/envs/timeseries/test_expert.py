"""The expert explanation (AnomSeer's ExpCoT): the detector rules, each detector, and the env's info."""

from __future__ import annotations

import json
import math

import gymnasium
import numpy as np
import pytest

import envhub  # noqa: F401  (registers the envs)
from envhub.core.registry import load_entry_point
from envhub.envs import resolve
from envhub.envs.timeseries.env import series_for, task_expert_cot
from envhub.envs.timeseries.expert import (
    dominant_periods,
    expert_cot,
    flagged_intervals,
    matrix_profile,
    savgol_gradient,
)


def _seasonal(n: int, period: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=np.float64)
    return np.sin(2 * np.pi * t / period) + 0.05 * rng.normal(size=n)


# -- the expert flow -------------------------------------------------------------------------------


def test_a_value_beyond_five_sigma_gets_the_three_sigma_range_check() -> None:
    # 99 zeros and a 10: mean 0.1, std sqrt(1 - 0.01) = 0.99499, z = 9.9 / 0.99499 = 9.950 > 5.
    # The 3-sigma band is 0.1 +- 2.985, so only t = 99 is outside: one interval [99, 100).
    x = np.zeros(100)
    x[99] = 10.0
    found = expert_cot(x, kind="global_point", intervals=((99, 100),))
    assert found.detector == "k_sigma"
    assert found.evidence["max_abs_z"] == pytest.approx(9.9 / math.sqrt(0.99))
    assert found.evidence["band"] == pytest.approx([0.1 - 3 * math.sqrt(0.99), 0.1 + 3 * math.sqrt(0.99)])
    assert found.evidence["flagged_intervals"] == [[99, 100]]
    assert "9.95 at t=99" in found.text
    assert "global point over [99, 100); the detector agrees with it" in found.text


def test_the_task_hint_picks_the_trend_and_the_frequency_detectors() -> None:
    x = _seasonal(400, 25.0)
    assert expert_cot(x, kind="trend_change", intervals=((300, 400),)).detector == "savgol_gradient"
    assert expert_cot(x, kind="seasonality_change", intervals=((100, 200),)).detector == "fft_period"
    for kind in ("normal", "contextual_point", "level_shift", "variance_change", "shapelet"):
        assert expert_cot(x, kind=kind).detector == "matrix_profile"


def test_a_large_spike_wins_over_the_task_hint() -> None:
    # The range check comes first in the flow, whatever the task says.
    x = _seasonal(400, 25.0)
    x[200] += 20.0
    assert expert_cot(x, kind="trend_change", intervals=((300, 400),)).detector == "k_sigma"


def test_the_frequency_detector_finds_a_faster_segment() -> None:
    # Period 20 everywhere except [400, 600), where it is 5: windows inside that segment have
    # dominant period 5 (bin 20 of 100), the others 20 (bin 5).
    t = np.arange(1000, dtype=np.float64)
    x = np.sin(2 * np.pi * t / 20.0)
    x[400:600] = np.sin(2 * np.pi * t[400:600] / 5.0)
    starts, periods = dominant_periods(x)
    assert periods[starts == 0][0] == 20.0
    assert periods[starts == 425][0] == 5.0
    found = expert_cot(x, kind="seasonality_change", intervals=((400, 600),))
    assert found.evidence["median_period"] == 20.0
    assert found.evidence["deviant_period"] == 5.0


def test_the_discord_detector_finds_a_planted_shape() -> None:
    x = _seasonal(600, 25.0, seed=3)
    x[300:325] = -x[300:325]  # one cycle upside down
    found = expert_cot(x, kind="shapelet", intervals=((300, 325),))
    assert found.detector == "matrix_profile"
    assert 250 <= found.evidence["discord_start"] <= 325
    assert found.evidence["discord_z"] > 3.5
    assert "the detector agrees with it" in found.text


def test_a_normal_series_is_explained_as_normal() -> None:
    found = expert_cot(_seasonal(500, 30.0), kind="normal")
    assert found.text.endswith("Conclusion: normal.")
    assert found.evidence["true_intervals"] == []


# -- the detectors -----------------------------------------------------------------------------------


def test_savgol_gradient_of_a_quadratic_is_exact_everywhere() -> None:
    # Order 2 fits t^2 exactly in every window (edges included), so the gradient is 2t.
    t = np.arange(60, dtype=np.float64)
    np.testing.assert_allclose(savgol_gradient(t**2), 2 * t, atol=1e-9)


def test_savgol_gradient_matches_scipy() -> None:
    signal = pytest.importorskip("scipy.signal")
    x = _seasonal(300, 17.0, seed=5)
    expected = signal.savgol_filter(x, 21, 2, deriv=1, mode="interp")
    np.testing.assert_allclose(savgol_gradient(x), expected, atol=1e-10)


def test_matrix_profile_matches_a_brute_force_scan() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=80)
    m = 8
    zone = math.ceil(m / 4)
    frames = [(x[i : i + m] - x[i : i + m].mean()) / x[i : i + m].std() for i in range(len(x) - m + 1)]
    expected = [
        min(float(np.linalg.norm(a - b)) for j, b in enumerate(frames) if abs(i - j) >= zone)
        for i, a in enumerate(frames)
    ]
    np.testing.assert_allclose(matrix_profile(x, m), expected, atol=1e-9)


def test_flagged_intervals_are_the_runs_of_flags() -> None:
    flags = np.array([0, 1, 1, 0, 0, 1, 0, 1], dtype=bool)
    assert flagged_intervals(flags) == [(1, 3), (5, 6), (7, 8)]
    assert flagged_intervals(np.zeros(4, dtype=bool)) == []


# -- the env ---------------------------------------------------------------------------------------------


def test_the_env_puts_the_explanation_in_the_reset_info_only_when_asked() -> None:
    plain = gymnasium.make("envhub/TimeSeries-v0")
    _, info = plain.reset(options={"task_id": "test-3"})
    assert "expert_cot" not in info and "evidence" not in info
    env = gymnasium.make("envhub/TimeSeries-v0", expert_cot=True)
    _, info = env.reset(options={"task_id": "test-3"})
    series = series_for("test", 3)
    assert info["expert_cot"] == task_expert_cot("test-3")
    assert info["evidence"]["true_class"] == series.kind
    assert info["evidence"]["detector"] in {"k_sigma", "savgol_gradient", "fft_period", "matrix_profile"}
    json.dumps(info["evidence"])  # JSON-safe: it travels over HTTP


def test_the_explanation_is_a_function_of_the_task_id() -> None:
    texts = []
    for _ in range(2):
        env = gymnasium.make("envhub/TimeSeries-v0", expert_cot=True)
        texts.append([env.reset(options={"task_id": f"train-{i}"})[1]["expert_cot"] for i in range(6)])
    assert texts[0] == texts[1]
    assert len(set(texts[0])) == 6


def test_the_catalogue_names_the_explanation_for_trainers() -> None:
    spec = resolve("envhub/TimeSeries-v0")
    assert spec.expert_cot is not None
    assert load_entry_point(spec.expert_cot)("test-3") == task_expert_cot("test-3")
    assert resolve("envhub/SearchQA-v0").expert_cot is None
