"""Built-in policies for the time-series env: a tool-using heuristic and a random baseline.

:class:`HeuristicPolicy` uses only what an agent sees. It reads the whole series through
``zoom`` calls (at most 200 values each, so up to 5 calls), then decides with classical
detectors: a global z-score for spikes; the seasonal period (the FFT peak that best folds the
series); a one-period moving average (which cancels the seasonality) for level shifts and trend
changes; the residual after removing that average and a per-phase seasonal template for
contextual points, and its local energy for variance changes, shapelets and seasonality
changes. It is evidence that the task is solvable with the tools (about 80% success on the
``test`` split, 5% for :class:`RandomToolPolicy`), not a strong detector.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

from envhub.envs.timeseries.generator import KINDS
from envhub.envs.timeseries.tools import MAX_ZOOM_POINTS

__all__ = ["HeuristicPolicy", "RandomToolPolicy", "detect"]

_LENGTH = re.compile(r"length (\d+)")
_ZOOM = re.compile(r"zoom\[(\d+):(\d+)\] stride=1: (.*)")


class HeuristicPolicy:
    """Read the series with ``zoom``, then answer with :func:`detect`."""

    def __init__(self, seed: int = 0) -> None:
        self._length = 0
        self._values: dict[int, float] = {}
        self._next = 0

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        found = _LENGTH.search(observation)
        self._length = int(found.group(1)) if found else int(info.get("series_length", 0))
        self._values = {}
        self._next = 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        zoomed = _ZOOM.match(observation)
        if zoomed:
            start = int(zoomed.group(1))
            for offset, value in enumerate(zoomed.group(3).split(", ")):
                self._values[start + offset] = float(value)
        if self._next < self._length:
            start, self._next = self._next, min(self._length, self._next + MAX_ZOOM_POINTS)
            return f"zoom[{start}:{self._next}]"
        x = np.array([self._values[i] for i in range(self._length)], dtype=np.float64)
        kind, intervals = detect(x)
        spans = ", ".join(f"{a}:{b}" for a, b in intervals)
        return f"answer[{kind}; {spans}]" if spans else f"answer[{kind}]"


class RandomToolPolicy:
    """A random agent that knows the grammar: random tools and ranges, then a random answer."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)
        self._length = 0

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        found = _LENGTH.search(observation)
        self._length = int(found.group(1)) if found else 200

    def act(self, observation: str, info: dict[str, Any]) -> str:
        a, b = sorted(int(v) for v in self._rng.choice(self._length + 1, size=2, replace=False))
        if self._rng.random() < 0.3:
            kind = KINDS[int(self._rng.integers(len(KINDS)))]
            return f"answer[{kind}]" if kind == "normal" else f"answer[{kind}; {a}:{b}]"
        tool = ("stats", "zscore", "fft", "zoom")[int(self._rng.integers(4))]
        return f"{tool}[{a}:{b}]"


def _moving_average(x: NDArray[np.float64], window: int) -> NDArray[np.float64]:
    padded = np.pad(x, (window // 2, window - 1 - window // 2), mode="edge")
    return np.convolve(padded, np.ones(window) / window, mode="valid")


def _period(x: NDArray[np.float64]) -> float:
    """The seasonal period: of the strongest FFT peaks, the (fractional) period that best folds the series.

    Each candidate is refined around its FFT bin and scored by how much of the detrended
    series a 12-bin phase profile explains, so a step or a trend (power at the lowest
    frequencies, but no repeating shape) loses to the real seasonality.
    """
    n = len(x)
    t = np.arange(n, dtype=np.float64)
    detrended = x - np.polyval(np.polyfit(t, x, 1), t)
    power = np.abs(np.fft.rfft(detrended))[1:] ** 2
    best, best_cost = n / (int(np.argmax(power)) + 1), np.inf
    for k in np.argsort(-power)[:5] + 1:
        for period in np.linspace(n / (k + 0.5), n / max(k - 0.5, 0.5), 30):
            if not 4 <= period <= n / 3:
                continue
            bins = (np.floor((t % period) / period * 12).astype(np.int64)) % 12
            means = np.bincount(bins, weights=detrended, minlength=12) / np.maximum(
                np.bincount(bins, minlength=12), 1
            )
            cost = float(np.mean((detrended - means[bins]) ** 2))
            if cost < best_cost:
                best, best_cost = float(period), cost
    return float(np.clip(best, 4, n / 3))


def _phase_bins(t: NDArray[np.float64], period: float) -> NDArray[np.int64]:
    """Fold time onto ``round(period)`` phase bins of a possibly fractional period."""
    bins = max(4, round(period))
    return (np.floor((t % period) / period * bins).astype(np.int64)) % bins


def _robust_std(x: NDArray[np.float64]) -> float:
    return float(1.4826 * np.median(np.abs(x - np.median(x)))) or 1e-9


def _runs(mask: NDArray[np.bool_]) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _longest(mask: NDArray[np.bool_]) -> tuple[int, int] | None:
    runs = _runs(mask)
    return max(runs, key=lambda r: r[1] - r[0]) if runs else None


def _hinge(smooth: NDArray[np.float64]) -> tuple[int, float]:
    """The best single slope change point of ``smooth`` and the rise it adds by the end."""
    n = len(smooth)
    t = np.arange(n, dtype=np.float64)
    best, best_sse, rise = 0, np.inf, 0.0
    for s in range(int(0.1 * n), int(0.9 * n), max(1, n // 60)):
        design = np.stack([np.ones(n), t, np.maximum(0.0, t - s)], axis=1)
        coef, *_ = np.linalg.lstsq(design, smooth, rcond=None)
        sse = float(np.sum((design @ coef - smooth) ** 2))
        if sse < best_sse:
            best, best_sse, rise = s, sse, float(coef[2] * (n - s))
    return best, rise


def detect(x: NDArray[np.float64]) -> tuple[str, list[tuple[int, int]]]:
    """Classify and localise the anomaly of ``x`` with classical detectors."""
    n = len(x)
    z = (x - x.mean()) / (x.std() or 1.0)
    spikes = np.flatnonzero(np.abs(z) > 4.5)
    if 0 < len(spikes) <= 6:
        return "global_point", [(int(spikes.min()), int(spikes.max()) + 1)]
    exact_period = _period(x)
    period = round(exact_period)
    smooth = _moving_average(x, period)
    t = np.arange(n, dtype=np.float64)
    detrended = x - smooth
    phase = _phase_bins(t, exact_period)
    template = np.array(
        [np.median(detrended[phase == p]) if np.any(phase == p) else 0.0 for p in range(int(phase.max()) + 1)]
    )
    amplitude = float(np.ptp(template) / 2) or 1.0
    residual = detrended - template[phase]
    noise = _robust_std(residual)
    # Contextual point: one short, isolated residual spike (the rest of the series fits).
    peak = float(np.max(np.abs(residual)))
    big = np.flatnonzero(np.abs(residual) > max(4 * noise, 0.5 * peak))
    if peak > 6 * noise and big.max() - big.min() <= 5:
        return "contextual_point", [(int(big.min()), int(big.max()) + 1)]
    # Level shift: two opposite jumps of the de-seasonalised level, well over a period apart.
    jump = np.zeros(n)
    jump[: n - period] = smooth[period:] - smooth[:-period]
    jump -= np.median(jump[: n - period])
    up, down = int(np.argmax(jump)), int(np.argmin(jump))
    if min(jump[up], -jump[down]) > amplitude and abs(up - down) > 1.5 * period:
        a, b = sorted((up, down))
        return "level_shift", [(a + period // 2, b + period // 2)]
    local_std = np.sqrt(_moving_average(residual**2, max(5, period)))
    loud = _longest(local_std > 3 * noise)
    if loud is not None and loud[1] - loud[0] > max(10, period // 2):
        inside = residual[loud[0] : loud[1]]
        if np.mean(np.abs(np.diff(inside))) > 2.5 * np.mean(np.abs(np.diff(residual))):
            return "variance_change", [loud]
        if loud[1] - loud[0] <= 2.5 * period:
            return "shapelet", [loud]
        return "seasonality_change", [loud]
    change, rise = _hinge(smooth)
    if abs(rise) > 2.5 * amplitude:
        return "trend_change", [(change, n)]
    return "normal", []
