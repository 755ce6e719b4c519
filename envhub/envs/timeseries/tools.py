"""The analysis tools an agent calls on a window ``[start, end)`` of the series.

Each tool returns the exact text the agent sees. Numbers are printed with 4 significant
digits, so the text (and therefore GiGPO's anchor) is identical for identical states.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_ZOOM_POINTS",
    "SUMMARY_POINTS",
    "ZSCORE_TOP_K",
    "fft",
    "run_tool",
    "stats",
    "summary",
    "zoom",
    "zscore",
]

MAX_ZOOM_POINTS = 200
ZSCORE_TOP_K = 5
SUMMARY_POINTS = 100


def _f(value: float) -> str:
    return f"{value:.4g}"


def stats(x: NDArray[np.float64], start: int, end: int) -> str:
    """Mean, std, min/max with their positions, and quantiles of ``x[start:end]``."""
    w = x[start:end]
    q05, q25, q50, q75, q95 = np.quantile(w, [0.05, 0.25, 0.5, 0.75, 0.95])
    lo, hi = int(np.argmin(w)), int(np.argmax(w))
    return (
        f"stats[{start}:{end}]: n={len(w)} mean={_f(w.mean())} std={_f(w.std())} "
        f"min={_f(w[lo])} (t={start + lo}) max={_f(w[hi])} (t={start + hi}) "
        f"q05={_f(q05)} q25={_f(q25)} median={_f(q50)} q75={_f(q75)} q95={_f(q95)}"
    )


def zscore(x: NDArray[np.float64], start: int, end: int, k: int = ZSCORE_TOP_K) -> str:
    """The ``k`` points of the window with the largest |z| (z against the window's mean/std)."""
    w = x[start:end]
    mean, std = float(w.mean()), float(w.std())
    z = (w - mean) / std if std > 0 else np.zeros_like(w)
    top = np.argsort(-np.abs(z), kind="stable")[: min(k, len(w))]
    points = "; ".join(f"t={start + int(i)} z={z[i]:+.2f} value={_f(w[i])}" for i in top)
    return f"zscore[{start}:{end}] (mean={_f(mean)} std={_f(std)}) top {len(top)} |z|: {points}"


def fft(x: NDArray[np.float64], start: int, end: int, k: int = 3) -> str:
    """The ``k`` dominant periods of the linearly detrended window and their power share."""
    w = x[start:end]
    n = len(w)
    if n < 4:
        return f"fft[{start}:{end}]: window too short (need at least 4 points)."
    t = np.arange(n, dtype=np.float64)
    detrended = w - np.polyval(np.polyfit(t, w, 1), t)
    power = np.abs(np.fft.rfft(detrended))[1:] ** 2  # drop the DC bin
    total = float(power.sum())
    if total <= 0:
        return f"fft[{start}:{end}]: flat window, no periodic component."
    top = np.argsort(-power, kind="stable")[:k]
    parts = ", ".join(f"period {_f(n / (int(i) + 1))} ({100 * power[i] / total:.0f}% power)" for i in top)
    return f"fft[{start}:{end}]: dominant {parts}"


def zoom(x: NDArray[np.float64], start: int, end: int) -> str:
    """The values of the window, every ``stride``-th point so at most 200 are shown."""
    stride = max(1, -(-(end - start) // MAX_ZOOM_POINTS))
    values = ", ".join(_f(v) for v in x[start:end:stride])
    return f"zoom[{start}:{end}] stride={stride}: {values}"


def summary(x: NDArray[np.float64]) -> str:
    """The reset observation's compact description of the whole series."""
    stride = max(1, -(-len(x) // SUMMARY_POINTS))
    values = ", ".join(_f(v) for v in x[::stride])
    return (
        f"A univariate time series of length {len(x)} (indices 0..{len(x) - 1}). "
        f"Overall: mean={_f(x.mean())} std={_f(x.std())} min={_f(x.min())} max={_f(x.max())}. "
        f"Every {stride}th value from t=0: {values}"
    )


_TOOLS = {"stats": stats, "zscore": zscore, "fft": fft, "zoom": zoom}


def run_tool(name: str, x: NDArray[np.float64], start: int, end: int) -> str:
    """Dispatch a parsed tool call."""
    return _TOOLS[name](x, start, end)
