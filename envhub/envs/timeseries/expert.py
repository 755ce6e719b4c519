"""The expert explanation (AnomSeer's ExpCoT) of a series: classical detectors, chosen by rule.

AnomSeer (Zhang et al., ICML 2026, arXiv 2602.08868) grounds its policy's reasoning in an
"expert chain of thought" written from classical anomaly detectors, with their numbers in the
text. Its scripted expert flow, restated in ``shared/reference/seed_methods_and_eval.md`` §3
and ``envs_tau_search_ts.md`` §3.1 (the authors' code has no licence; this is written from those
notes, not from it):

1. the largest global |z| is above 5: a **k-sigma range check** (k = 3);
2. else the task is a trend anomaly: the **Savitzky-Golay gradient** (window 21, polynomial
   order 2) with a 3-sigma rule on the gradient;
3. else the task is a frequency (seasonality) anomaly: the **dominant period of a sliding
   100-point FFT window**, with a 3-sigma rule on the windows' periods;
4. otherwise a **matrix-profile discord** (window 50): subsequences whose profile value has a
   z-score above 3.5.

The text ends with an observation tied to the ground truth (AnomSeer's GT-linked sentence), so
the explanation is a training target, never something to show the policy.

Where the notes leave a choice open, envhub chooses (and the tests pin it): the FFT windows move
by 25 points; the matrix profile is computed here in numpy (z-normalised Euclidean distance,
exclusion zone ``ceil(m / 4)`` as STUMPY's default), because ``stumpy`` (and its numba
dependency) is not an envhub dependency; a window shorter than the series is shrunk to fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FFT_STEP",
    "FFT_WINDOW",
    "GRADIENT_K",
    "MP_WINDOW",
    "MP_Z",
    "PERIOD_K",
    "RANGE_K",
    "SG_ORDER",
    "SG_WINDOW",
    "TRIGGER_Z",
    "ExpertCoT",
    "dominant_periods",
    "expert_cot",
    "flagged_intervals",
    "matrix_profile",
    "savgol_gradient",
]

TRIGGER_Z = 5.0  # max |z| above this: the range check
RANGE_K = 3.0  # the range check's k
SG_WINDOW = 21  # Savitzky-Golay window (polynomial order 2)
SG_ORDER = 2
GRADIENT_K = 3.0
FFT_WINDOW = 100
FFT_STEP = 25  # envhub's choice: the notes give the window, not the stride
PERIOD_K = 3.0
MP_WINDOW = 50
MP_Z = 3.5

#: The task hints of the expert flow (AnomSeer's "trend"/"freq" task names, envhub's class names).
_TREND = "trend_change"
_FREQ = "seasonality_change"


@dataclass(frozen=True)
class ExpertCoT:
    """One expert explanation.

    Attributes:
        detector: ``"k_sigma"``, ``"savgol_gradient"``, ``"fft_period"`` or ``"matrix_profile"``.
        text: the explanation, numbers included (``info["expert_cot"]``).
        evidence: its numbers, JSON-safe (``info["evidence"]``).
    """

    detector: str
    text: str
    evidence: dict[str, Any] = field(default_factory=dict)


def _f(value: float) -> str:
    return f"{value:.4g}"


def _zscore(values: NDArray[np.float64]) -> NDArray[np.float64]:
    std = float(values.std())
    if std == 0.0:
        return np.zeros_like(values)
    return (values - values.mean()) / std


def flagged_intervals(flags: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """The runs of True in ``flags`` as half-open ``(start, end)`` intervals."""
    padded = np.concatenate([[False], flags.astype(bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return [(int(s), int(e)) for s, e in zip(edges[::2], edges[1::2], strict=True)]


def _spans(intervals: list[tuple[int, int]], limit: int = 5) -> str:
    shown = ", ".join(f"[{s}, {e})" for s, e in intervals[:limit])
    more = f" and {len(intervals) - limit} more" if len(intervals) > limit else ""
    return shown + more if intervals else "none"


def savgol_gradient(
    x: NDArray[np.float64], window: int = SG_WINDOW, order: int = SG_ORDER
) -> NDArray[np.float64]:
    """First derivative of ``x`` by a Savitzky-Golay filter (least-squares polynomial per window).

    Inside, each point's derivative is that of the polynomial fitted to the ``window`` points
    centred on it; the first and last half-windows take the polynomial of the first and last
    full window (``scipy.signal.savgol_filter(x, window, order, deriv=1, mode="interp")``).
    """
    n = len(x)
    window = min(window, n if n % 2 else n - 1)
    half = window // 2
    offsets = np.arange(-half, half + 1, dtype=np.float64)
    # Least squares: the fitted polynomial's slope at 0 is row 1 of pinv(V) applied to the window.
    vander = np.vander(offsets, order + 1, increasing=True)
    slope = np.linalg.pinv(vander)[1]
    out = np.empty(n, dtype=np.float64)
    windows = np.lib.stride_tricks.sliding_window_view(x, window)
    out[half : n - half] = windows @ slope
    for lo, positions in ((0, np.arange(half)), (n - window, np.arange(n - half, n))):
        coef = np.polynomial.polynomial.polyfit(
            np.arange(window, dtype=np.float64), x[lo : lo + window], order
        )
        deriv = np.polynomial.polynomial.polyder(coef)
        out[positions] = np.polynomial.polynomial.polyval(positions - lo, deriv)
    return out


def dominant_periods(
    x: NDArray[np.float64], window: int = FFT_WINDOW, step: int = FFT_STEP
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The dominant period of each sliding window (mean removed, DC bin dropped).

    Returns:
        ``(starts, periods)``: each window's first index and its period ``window / k`` for the
        rfft bin ``k >= 1`` of largest power.
    """
    window = min(window, len(x))
    starts = np.arange(0, len(x) - window + 1, step, dtype=np.int64)
    frames = np.lib.stride_tricks.sliding_window_view(x, window)[starts]
    frames = frames - frames.mean(axis=1, keepdims=True)
    power = np.abs(np.fft.rfft(frames, axis=1))[:, 1:] ** 2
    return starts, window / (np.argmax(power, axis=1) + 1.0)


def matrix_profile(x: NDArray[np.float64], window: int = MP_WINDOW) -> NDArray[np.float64]:
    """The self-join matrix profile of ``x``: each subsequence's z-normalised Euclidean distance
    to its nearest neighbour outside the exclusion zone ``|i - j| < ceil(window / 4)``.

    A constant subsequence is at distance 0 from another constant one and ``sqrt(window)``
    from any other (STUMPY's convention). O(n^2) memory: meant for series of a few thousand points.
    """
    m = window
    frames = np.lib.stride_tricks.sliding_window_view(np.asarray(x, dtype=np.float64), m)
    mu = frames.mean(axis=1)
    sigma = frames.std(axis=1)
    flat = sigma < 1e-12
    z = np.where(flat[:, None], 0.0, (frames - mu[:, None]) / np.where(flat, 1.0, sigma)[:, None])
    corr = np.clip(z @ z.T / m, -1.0, 1.0)
    dist = np.sqrt(np.maximum(2.0 * m * (1.0 - corr), 0.0))
    dist[flat[:, None] & flat[None, :]] = 0.0
    dist[flat[:, None] ^ flat[None, :]] = math.sqrt(m)
    count = len(frames)
    zone = math.ceil(m / 4)
    idx = np.arange(count)
    dist[np.abs(idx[:, None] - idx[None, :]) < zone] = np.inf
    return np.asarray(dist.min(axis=1), dtype=np.float64)


def _range_check(x: NDArray[np.float64], z: NDArray[np.float64]) -> ExpertCoT:
    mean, std = float(x.mean()), float(x.std())
    peak = int(np.argmax(np.abs(z)))
    flags = np.abs(z) > RANGE_K
    spans = flagged_intervals(flags)
    text = (
        f"Step 1 (global check): the largest |z| is {_f(abs(float(z[peak])))} at t={peak}, above "
        f"{_f(TRIGGER_Z)}, so a k-sigma range check applies. Step 2 (range rule, k={_f(RANGE_K)}): "
        f"mean={_f(mean)}, std={_f(std)}, normal band [{_f(mean - RANGE_K * std)}, "
        f"{_f(mean + RANGE_K * std)}]; {int(flags.sum())} points fall outside it, in {_spans(spans)}."
    )
    evidence = {
        "max_abs_z": abs(float(z[peak])),
        "argmax_abs_z": peak,
        "mean": mean,
        "std": std,
        "k": RANGE_K,
        "band": [mean - RANGE_K * std, mean + RANGE_K * std],
        "flagged_points": int(flags.sum()),
    }
    return ExpertCoT("k_sigma", text, {**evidence, "flagged_intervals": [list(s) for s in spans]})


def _gradient_check(x: NDArray[np.float64], z_max: float) -> ExpertCoT:
    grad = savgol_gradient(x)
    gz = _zscore(grad)
    peak = int(np.argmax(np.abs(gz)))
    flags = np.abs(gz) > GRADIENT_K
    spans = flagged_intervals(flags)
    text = (
        f"Step 1 (global check): the largest |z| is {_f(z_max)}, not above {_f(TRIGGER_Z)}; the task "
        f"concerns the trend, so the gradient is examined. Step 2 (Savitzky-Golay gradient, window "
        f"{SG_WINDOW}, order {SG_ORDER}): mean slope {_f(float(grad.mean()))}, std {_f(float(grad.std()))}; "
        f"the largest gradient |z| is {_f(abs(float(gz[peak])))} at t={peak}; {int(flags.sum())} points "
        f"exceed {_f(GRADIENT_K)} sigma, in {_spans(spans)}."
    )
    evidence = {
        "max_abs_z": z_max,
        "gradient_mean": float(grad.mean()),
        "gradient_std": float(grad.std()),
        "max_abs_gradient_z": abs(float(gz[peak])),
        "argmax_gradient_z": peak,
        "k": GRADIENT_K,
        "flagged_points": int(flags.sum()),
        "flagged_intervals": [list(s) for s in spans],
    }
    return ExpertCoT("savgol_gradient", text, evidence)


def _period_check(x: NDArray[np.float64], z_max: float) -> ExpertCoT:
    starts, periods = dominant_periods(x)
    window = min(FFT_WINDOW, len(x))
    pz = _zscore(periods)
    peak = int(np.argmax(np.abs(pz)))
    flags = np.abs(pz) > PERIOD_K
    covered = np.zeros(len(x), dtype=bool)
    for s in starts[flags]:
        covered[s : s + window] = True
    spans = flagged_intervals(covered)
    median = float(np.median(periods))
    text = (
        f"Step 1 (global check): the largest |z| is {_f(z_max)}, not above {_f(TRIGGER_Z)}; the task "
        f"concerns the frequency, so the local period is examined. Step 2 (FFT over {len(starts)} "
        f"windows of {window} points, step {FFT_STEP}): the median dominant period is {_f(median)} "
        f"(mean {_f(float(periods.mean()))}, std {_f(float(periods.std()))}); the most deviant window "
        f"starts at t={int(starts[peak])} with period {_f(float(periods[peak]))} (|z|="
        f"{_f(abs(float(pz[peak])))}); {int(flags.sum())} windows exceed {_f(PERIOD_K)} sigma, "
        f"covering {_spans(spans)}."
    )
    evidence = {
        "max_abs_z": z_max,
        "window": window,
        "step": FFT_STEP,
        "median_period": median,
        "period_mean": float(periods.mean()),
        "period_std": float(periods.std()),
        "deviant_window_start": int(starts[peak]),
        "deviant_period": float(periods[peak]),
        "deviant_period_abs_z": abs(float(pz[peak])),
        "k": PERIOD_K,
        "flagged_windows": int(flags.sum()),
        "flagged_intervals": [list(s) for s in spans],
    }
    return ExpertCoT("fft_period", text, evidence)


def _discord_check(x: NDArray[np.float64], z_max: float) -> ExpertCoT:
    window = min(MP_WINDOW, max(len(x) // 4, 4))
    profile = matrix_profile(x, window)
    mz = _zscore(profile)
    peak = int(np.argmax(profile))
    flags = mz > MP_Z
    covered = np.zeros(len(x), dtype=bool)
    for s in np.flatnonzero(flags):
        covered[s : s + window] = True
    spans = flagged_intervals(covered)
    text = (
        f"Step 1 (global check): the largest |z| is {_f(z_max)}, not above {_f(TRIGGER_Z)}, so no "
        f"value is out of range; the shape is examined. Step 2 (matrix profile, window {window}): "
        f"profile mean {_f(float(profile.mean()))}, std {_f(float(profile.std()))}; the top discord "
        f"starts at t={peak} with distance {_f(float(profile[peak]))} (z={_f(float(mz[peak]))}); "
        f"{int(flags.sum())} subsequences exceed z={_f(MP_Z)}, covering {_spans(spans)}."
    )
    evidence = {
        "max_abs_z": z_max,
        "window": window,
        "profile_mean": float(profile.mean()),
        "profile_std": float(profile.std()),
        "discord_start": peak,
        "discord_distance": float(profile[peak]),
        "discord_z": float(mz[peak]),
        "threshold_z": MP_Z,
        "flagged_subsequences": int(flags.sum()),
        "flagged_intervals": [list(s) for s in spans],
    }
    return ExpertCoT("matrix_profile", text, evidence)


def _observation(kind: str, intervals: tuple[tuple[int, int], ...], found: list[list[int]]) -> str:
    if not intervals:
        verdict = "no flagged region" if not found else "the flagged regions are normal variation"
        return f"Observation: the series is labelled normal; {verdict}. Conclusion: normal."
    overlap = any(s < e2 and s2 < e for s, e in intervals for s2, e2 in found)
    agrees = "agrees with" if overlap else "does not locate"
    truth = ", ".join(f"[{s}, {e})" for s, e in intervals)
    return (
        f"Observation: the labelled anomaly is {kind.replace('_', ' ')} over {truth}; the detector "
        f"{agrees} it. Conclusion: {kind} at {truth}."
    )


def expert_cot(
    values: NDArray[np.float64], *, kind: str, intervals: tuple[tuple[int, int], ...] = ()
) -> ExpertCoT:
    """The expert explanation of a series with its ground truth (the module docstring's flow).

    Args:
        values: the series.
        kind: its anomaly class (the flow's task hint, and the GT-linked sentence).
        intervals: its anomalous half-open intervals.
    """
    x = np.asarray(values, dtype=np.float64)
    z = _zscore(x)
    z_max = float(np.abs(z).max())
    if z_max > TRIGGER_Z:
        found = _range_check(x, z)
    elif kind == _TREND:
        found = _gradient_check(x, z_max)
    elif kind == _FREQ:
        found = _period_check(x, z_max)
    else:
        found = _discord_check(x, z_max)
    flagged = found.evidence["flagged_intervals"]
    observation = _observation(kind, intervals, flagged)
    evidence = {
        "detector": found.detector,
        **found.evidence,
        "true_class": kind,
        "true_intervals": [list(i) for i in intervals],
    }
    return ExpertCoT(found.detector, f"{found.text} {observation}", evidence)
