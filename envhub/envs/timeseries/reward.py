"""The time-series answer reward.

``reward = 0.7 * loc + 0.2 * class_acc + 0.1 * format`` (AnomSeer's weights):

* ``format`` is 1 for a well-formed answer (malformed answers are rejected before scoring);
* ``class_acc`` is 1 when the class equals the true class;
* ``loc`` is a tolerant interval F1 over time points: a predicted point counts as correct if it
  lies within ``tolerance`` points of a true interval (precision), a true point counts as found
  if it lies within ``tolerance`` points of a predicted interval (recall). Both empty gives 1;
  exactly one empty gives 0.

``won`` is ``class_acc == 1 and loc >= WIN_LOC`` (0.5). The default tolerance is
``max(3, round(0.01 * length))`` points: localisation read off a plot is coarse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["WEIGHTS", "WIN_LOC", "Score", "default_tolerance", "interval_f1", "score_answer"]

WEIGHTS = {"loc": 0.7, "class": 0.2, "format": 0.1}
WIN_LOC = 0.5


@dataclass(frozen=True)
class Score:
    """The reward and its components."""

    reward: float
    loc: float
    class_acc: float
    format: float
    won: bool


def default_tolerance(length: int) -> int:
    return max(3, round(0.01 * length))


def _mask(intervals: Sequence[tuple[int, int]], length: int, dilate: int = 0) -> NDArray[np.bool_]:
    mask = np.zeros(length, dtype=bool)
    for start, end in intervals:
        mask[max(0, start - dilate) : min(length, end + dilate)] = True
    return mask


def interval_f1(
    predicted: Sequence[tuple[int, int]], truth: Sequence[tuple[int, int]], length: int, tolerance: int
) -> float:
    """Tolerant point-wise F1 between two interval sets (see the module docstring)."""
    pred, true = _mask(predicted, length), _mask(truth, length)
    if not pred.any() and not true.any():
        return 1.0
    if not pred.any() or not true.any():
        return 0.0
    precision = float((pred & _mask(truth, length, tolerance)).sum() / pred.sum())
    recall = float((true & _mask(predicted, length, tolerance)).sum() / true.sum())
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def score_answer(
    kind: str,
    intervals: Sequence[tuple[int, int]],
    *,
    true_kind: str,
    true_intervals: Sequence[tuple[int, int]],
    length: int,
    tolerance: int | None = None,
) -> Score:
    """Score one well-formed answer."""
    tol = default_tolerance(length) if tolerance is None else tolerance
    loc = interval_f1(intervals, true_intervals, length, tol)
    class_acc = float(kind == true_kind)
    reward = WEIGHTS["loc"] * loc + WEIGHTS["class"] * class_acc + WEIGHTS["format"] * 1.0
    return Score(
        reward=reward, loc=loc, class_acc=class_acc, format=1.0, won=class_acc == 1.0 and loc >= WIN_LOC
    )
