"""Seeded generator of univariate series with one injected anomaly (or none).

A series is ``level + trend + seasonality + noise`` (length 200-1000, a sinusoid with an
optional second harmonic, Gaussian noise) with one anomaly of a known kind injected into a
known half-open interval ``[start, end)``. The classes follow AnomSeer/AnomLLM and add the
kinds TimeMaster-style tasks need; :data:`ALIASES` maps the AnomSeer names onto them.

Every draw comes from a :class:`numpy.random.Generator` built from the task's seed, so a task
id names one series exactly, on every machine (numpy's PCG64 stream is stable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["ALIASES", "KINDS", "Series", "generate", "task_rng"]

#: Anomaly classes, ``normal`` first. ``answer[...]`` takes these names (or an alias).
KINDS: tuple[str, ...] = (
    "normal",
    "global_point",
    "contextual_point",
    "level_shift",
    "trend_change",
    "seasonality_change",
    "variance_change",
    "shapelet",
)

#: Other spellings accepted in answers (AnomSeer/AnomLLM names, spaces and hyphens).
ALIASES: dict[str, str] = {
    "global": "global_point",
    "global point": "global_point",
    "point": "contextual_point",
    "contextual": "contextual_point",
    "contextual point": "contextual_point",
    "level shift": "level_shift",
    "shift": "level_shift",
    "trend": "trend_change",
    "trend change": "trend_change",
    "seasonal": "seasonality_change",
    "seasonality": "seasonality_change",
    "frequency": "seasonality_change",
    "freq": "seasonality_change",
    "frequency change": "seasonality_change",
    "variance": "variance_change",
    "variance change": "variance_change",
    "noise": "variance_change",
    "subsequence": "shapelet",
    "none": "normal",
    "no anomaly": "normal",
}

_SALT = 20261122  # fixed project salt: changing it renumbers every task (a new env version)


@dataclass(frozen=True)
class Series:
    """A generated series and its ground truth.

    Attributes:
        values: the observed series (float64).
        clean: the same series without the anomaly (for tests and diagnostics).
        kind: one of :data:`KINDS`.
        intervals: anomalous half-open intervals ``[(start, end), ...]``; empty for ``normal``.
        period: the seasonal period used to build the series.
        noise: the noise standard deviation.
    """

    values: NDArray[np.float64]
    clean: NDArray[np.float64]
    kind: str
    intervals: tuple[tuple[int, int], ...]
    period: float
    noise: float


def task_rng(split: str, index: int) -> np.random.Generator:
    """The generator of task ``index`` of ``split`` (train/test never share a stream)."""
    split_code = {"train": 0, "test": 1}.get(split, 2 + sum(map(ord, split)))
    return np.random.default_rng([_SALT, split_code, index])


def generate(rng: np.random.Generator, kind: str) -> Series:
    """Draw one series and inject an anomaly of ``kind`` (``normal``: none)."""
    length = int(rng.integers(200, 1001))
    t = np.arange(length, dtype=np.float64)
    amplitude = float(rng.uniform(1.0, 3.0))
    period = float(rng.uniform(12.0, 60.0))
    phase = float(rng.uniform(0.0, 2 * np.pi))
    harmonic = float(rng.uniform(0.0, 0.3)) * amplitude
    noise = float(rng.uniform(0.05, 0.2)) * amplitude
    level = float(rng.uniform(-10.0, 10.0))
    slope = float(rng.uniform(-2.0, 2.0)) * amplitude / length

    def season(times: NDArray[np.float64], p: float) -> NDArray[np.float64]:
        angle = 2 * np.pi * times / p + phase
        return amplitude * np.sin(angle) + harmonic * np.sin(2 * angle)

    base = level + slope * t
    seasonal = season(t, period)
    eps = rng.normal(0.0, noise, size=length)
    clean = base + seasonal + eps
    if kind == "normal":
        return Series(clean, clean.copy(), kind, (), period, noise)
    inject = _INJECTORS.get(kind)
    if inject is None:
        raise ValueError(f"unknown anomaly kind {kind!r}; use one of {KINDS}")
    values = clean.copy()
    start, end = inject(values, rng, _Context(t, base, seasonal, season, amplitude, period, noise))
    return Series(values, clean, kind, ((start, end),), period, noise)


@dataclass(frozen=True)
class _Context:
    t: NDArray[np.float64]
    base: NDArray[np.float64]
    seasonal: NDArray[np.float64]
    season: Callable[[NDArray[np.float64], float], NDArray[np.float64]]
    amplitude: float
    period: float
    noise: float


def _start(rng: np.random.Generator, length: int, width: int) -> int:
    lo = int(0.15 * length)
    hi = max(lo + 1, min(int(0.75 * length), length - width))
    return int(rng.integers(lo, hi))


def _global_point(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    width = int(rng.integers(1, 4))
    s = _start(rng, len(x), width)
    sign = rng.choice([-1.0, 1.0])
    x[s : s + width] += sign * float(rng.uniform(6.0, 9.0)) * float(np.std(x))
    return s, s + width


def _contextual_point(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    # A value that is normal for the series as a whole but wrong for its phase: at a seasonal
    # extreme, the season is mirrored, so the point sits inside the global range.
    width = int(rng.integers(1, 4))
    lo, hi = int(0.15 * len(x)), int(0.75 * len(x))
    window = np.abs(c.seasonal[lo:hi])
    s = lo + int(rng.choice(np.flatnonzero(window >= 0.9 * window.max())))
    x[s : s + width] -= 2.0 * c.seasonal[s : s + width]
    return s, s + width


def _level_shift(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    width = int(rng.integers(int(0.1 * len(x)), int(0.3 * len(x))))
    s = _start(rng, len(x), width)
    x[s : s + width] += rng.choice([-1.0, 1.0]) * float(rng.uniform(2.0, 4.0)) * c.amplitude
    return s, s + width


def _trend_change(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    s = _start(rng, len(x), int(0.2 * len(x)))
    rise = rng.choice([-1.0, 1.0]) * float(rng.uniform(3.0, 5.0)) * c.amplitude
    x[s:] += rise * (c.t[s:] - s) / (len(x) - s)
    return s, len(x)


def _seasonality_change(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    width = int(rng.integers(int(0.15 * len(x)), int(0.3 * len(x))))
    s = _start(rng, len(x), width)
    factor = float(rng.choice([0.3, 0.4, 0.5]))
    span = slice(s, s + width)
    x[span] += c.season(c.t[span], c.period * factor) - c.seasonal[span]
    return s, s + width


def _variance_change(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    width = int(rng.integers(int(0.1 * len(x)), int(0.25 * len(x))))
    s = _start(rng, len(x), width)
    extra = max(4.0 * c.noise, 0.8 * c.amplitude)
    x[s : s + width] += rng.normal(0.0, extra, size=width)
    return s, s + width


def _shapelet(x: NDArray[np.float64], rng: np.random.Generator, c: _Context) -> tuple[int, int]:
    # One or two cycles replaced by another waveform of comparable amplitude.
    width = round(c.period * float(rng.choice([1.0, 2.0])))
    s = _start(rng, len(x), width)
    span = slice(s, s + width)
    local = (c.t[span] - s) / c.period
    shape = str(rng.choice(["square", "sawtooth", "flat"]))
    if shape == "square":
        replacement = 1.6 * c.amplitude * np.sign(np.sin(2 * np.pi * local))
    elif shape == "sawtooth":
        replacement = 2.0 * c.amplitude * (2.0 * (local % 1.0) - 1.0)
    else:
        replacement = np.full(width, 1.5 * c.amplitude * float(rng.choice([-1.0, 1.0])))
    x[span] += replacement - c.seasonal[span]
    return s, s + width


_INJECTORS: dict[str, Callable[[NDArray[np.float64], np.random.Generator, _Context], tuple[int, int]]] = {
    "global_point": _global_point,
    "contextual_point": _contextual_point,
    "level_shift": _level_shift,
    "trend_change": _trend_change,
    "seasonality_change": _seasonality_change,
    "variance_change": _variance_change,
    "shapelet": _shapelet,
}
