"""The estimators of an eval: pass@k, avg@k, pass^k, Wilson intervals, a bootstrap over tasks.

Pure numpy and math; the unit of sampling is the task (each task has ``n`` samples with ``c``
successes), as in Chen et al. (2021) and tau-bench.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "Interval",
    "avg_at_k",
    "bootstrap_tasks",
    "pass_at_k",
    "pass_hat_k",
    "summary_stats",
    "wilson",
]

#: An interval as it appears in report.json: value, lo, hi, method, confidence.
Interval = dict[str, Any]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task: 1 - C(n-c, k) / C(n, k).

    Computed as 1 - prod_{i=n-c+1}^{n} (1 - k/i), which never forms the binomials.

    Raises:
        ValueError: ``k`` outside 1..n or ``c`` outside 0..n.
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k of one task: the chance all k of k trials succeed, C(c, k) / C(n, k).

    Raises:
        ValueError: ``k`` outside 1..n or ``c`` outside 0..n.
    """
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def avg_at_k(n: int, c: int, k: int) -> float:
    """avg@k of one task: the expected success of one of k samples, estimated by c / n.

    Raises:
        ValueError: ``k`` outside 1..n or ``c`` outside 0..n.
    """
    _check(n, c, k)
    return c / n


def _check(n: int, c: int, k: int) -> None:
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be between 1 and n={n}: pass@k needs at least k samples per task.")
    if not 0 <= c <= n:
        raise ValueError(f"c={c} successes must be between 0 and n={n}.")


def wilson(successes: int, total: int, confidence: float = 0.95) -> Interval:
    """The Wilson score interval of a success rate (well-behaved at 0, 1 and small totals)."""
    if total <= 0:
        return {"value": None, "lo": None, "hi": None, "method": "wilson", "confidence": confidence}
    z = _z(confidence)
    p = successes / total
    denom = 1.0 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return {
        "value": p,
        "lo": 0.0 if successes == 0 else max(0.0, centre - half),
        "hi": 1.0 if successes == total else min(1.0, centre + half),
        "method": "wilson",
        "confidence": confidence,
    }


def _z(confidence: float) -> float:
    """The two-sided normal quantile for ``confidence`` (bisection on erf; no scipy needed)."""
    target = 1.0 - (1.0 - confidence) / 2.0
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1.0 + math.erf(mid / math.sqrt(2.0))) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def bootstrap_tasks(
    per_task: Sequence[Sequence[float]],
    statistic: Callable[[Sequence[Sequence[float]]], float],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """A percentile bootstrap of ``statistic`` resampling whole tasks with replacement.

    Args:
        per_task: the values of each task (e.g. its episodes' rewards).
        statistic: maps a list of tasks' values to one number.
        confidence: the interval's coverage.
        resamples: bootstrap replicates.
        seed: the generator seed (the same inputs give the same interval).
    """
    tasks = [list(t) for t in per_task]
    if not tasks:
        return {"value": None, "lo": None, "hi": None, "method": "bootstrap_tasks", "confidence": confidence}
    value = float(statistic(tasks))
    if len(tasks) < 2:
        return {"value": value, "lo": None, "hi": None, "method": "bootstrap_tasks", "confidence": confidence}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(tasks), size=(resamples, len(tasks)))
    stats = np.array([statistic([tasks[i] for i in row]) for row in draws])
    alpha = (1.0 - confidence) / 2.0
    return {
        "value": value,
        "lo": float(np.quantile(stats, alpha)),
        "hi": float(np.quantile(stats, 1.0 - alpha)),
        "method": "bootstrap_tasks",
        "confidence": confidence,
    }


def summary_stats(values: Sequence[float | None]) -> dict[str, float] | None:
    """mean, p50, p90 and max of the values (None when there are none or any is None)."""
    if not values or any(v is None for v in values):
        return None
    arr = np.asarray(values, dtype=float)
    return {
        "mean": float(arr.mean()),
        "p50": float(np.quantile(arr, 0.5)),
        "p90": float(np.quantile(arr, 0.9)),
        "max": float(arr.max()),
    }
