"""Group keys and group statistics shared by every estimator.

Everything here works on dense integer codes: hashable columns (uid, trajectory id, anchor)
are turned into codes once, composite keys are built by combining code arrays, and group
statistics are ``np.bincount`` reductions. The only per-row Python work is hashing the
object columns, done by ``dict`` and ``map`` in C; the optional similarity grouping (a greedy
``difflib`` scan the reference defines row by row) is the one deliberate exception.

Group statistics are made independent of row order *bit for bit*: members are summed in
ascending order of their values, so permuting rows or relabelling groups cannot flip an
advantage between exactly 0 and a tiny non-zero value (HGPO drops exact zeros, so such a
flip would change its weighting).
"""

from __future__ import annotations

import difflib
import operator
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import ConfigurationError

__all__ = [
    "Mode",
    "check_mode",
    "combine_codes",
    "factorize",
    "normalize_in_groups",
    "similarity_clusters",
]

Mode = Literal["mean_norm", "mean_std_norm"]
_MODES: tuple[str, ...] = ("mean_norm", "mean_std_norm")


def factorize(values: NDArray[Any] | list[Any], *, column: str = "column") -> tuple[NDArray[np.int64], int]:
    """Dense integer codes for a column of hashables, numbered in order of first appearance.

    Args:
        values: any 1-D sequence of hashable values (str, bytes, tuples, numbers).
        column: the column's name, used in the error message.

    Returns:
        ``(codes, n_distinct)``: ``codes[i] == codes[j]`` exactly when ``values[i] == values[j]``.

    Raises:
        ConfigurationError: a value is unhashable (e.g. a raw numpy array or list anchor).
    """
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    try:
        # dict.fromkeys and itemgetter iterate in C: no Python-level loop over rows.
        distinct = dict.fromkeys(items)
        index = dict(zip(distinct, range(len(distinct)), strict=True))
    except TypeError as exc:
        raise ConfigurationError(
            f"StepBatch.{column} holds an unhashable value ({exc}). Build the batch with "
            "StepBatch.from_columns(...) or pass each value through envhub.core.canonical_anchor(), "
            "which turns arrays and lists into tuples.",
            column=column,
        ) from exc
    if len(items) < 2:  # itemgetter with one key returns the value, not a tuple
        return np.array([index[key] for key in items], dtype=np.int64), len(index)
    codes = np.array(operator.itemgetter(*items)(index), dtype=np.int64)
    return codes, len(index)


def combine_codes(a: NDArray[np.int64], b: NDArray[np.int64]) -> tuple[NDArray[np.int64], int]:
    """Dense codes for the pair ``(a[i], b[i])``.

    Args:
        a: non-negative integer codes.
        b: non-negative integer codes, same length as ``a``.

    Returns:
        ``(codes, n_distinct)``: equal codes exactly for equal pairs.
    """
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64), 0
    width = int(b.max()) + 1
    # Codes are < number of rows, so the product stays far below 2**63 for any real batch.
    unique, inverse = np.unique(a * width + b, return_inverse=True)
    return inverse.astype(np.int64, copy=False).reshape(-1), len(unique)


def normalize_in_groups(
    codes: NDArray[np.int64],
    values: NDArray[np.float64],
    n_groups: int,
    *,
    mode: Mode,
    ddof: int,
    epsilon: float,
    singleton: Literal["identity", "zero"],
    sample_mask: NDArray[np.bool_] | None = None,
    order: NDArray[np.intp] | None = None,
) -> NDArray[np.float64]:
    """Normalise every row's value by the mean (and std) of its group's samples.

    ``mean_norm`` gives ``x - mean``; ``mean_std_norm`` gives ``(x - mean) / (std + epsilon)``.
    A group whose samples are all equal has mean exactly that value and std exactly 0, so
    its equal rows get exactly 0 (float rounding of ``sum / n`` cannot leak a tiny non-zero
    deviation that the ε would blow up).

    Args:
        codes: group code of each row, in ``[0, n_groups)``.
        values: the value of each row (float64).
        n_groups: number of group codes.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        ddof: 1 for the unbiased (n-1) std, 0 for the population std.
        epsilon: added to the std in ``mean_std_norm``.
        singleton: what a group with one sample does: ``"identity"`` uses mean 0 and std 1
            (the reference's episode-level rule), ``"zero"`` gives 0 (its step-level rule).
        sample_mask: rows that are samples of their group's statistics (default: all rows);
            every row is normalised, sample or not.
        order: ``np.argsort(values, kind="stable")`` when the caller already has it (HGPO
            reuses one sort for all its levels).

    Returns:
        The normalised value of every row (float64, input order).

    Raises:
        ConfigurationError: ``mode`` is not one of the two modes, or ``epsilon`` is not > 0.
    """
    check_mode(mode)
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ConfigurationError(
            f"epsilon must be a small positive number (the reference uses 1e-6), got {epsilon!r}.",
            epsilon=epsilon,
        )
    if order is None:
        # Timsort: returns hold long runs of ties (0, -penalty), where it beats quicksort.
        order = np.argsort(values, kind="stable")
    if sample_mask is not None:
        order = order[sample_mask[order]]
    # bincount accumulates in input order, so feeding members in ascending value order makes
    # every group's sum independent of row order and of group labels.
    g = codes[order]
    x = values[order]
    count = np.bincount(g, minlength=n_groups)
    mean = np.bincount(g, weights=x, minlength=n_groups) / np.maximum(count, 1)
    # All members equal <=> none differs from one representative (whichever member wins here).
    representative = np.zeros(n_groups, dtype=np.float64)
    representative[g] = x
    differing = np.bincount(g, weights=(x != representative[g]).astype(np.float64), minlength=n_groups)
    all_equal = (count > 0) & (differing == 0)
    mean[all_equal] = representative[all_equal]
    deviation = x - mean[g]
    squares = np.bincount(g, weights=deviation * deviation, minlength=n_groups)
    std = np.sqrt(squares / np.maximum(count - ddof, 1))
    std[all_equal] = 0.0
    single = count == 1
    if singleton == "identity":
        mean[single] = 0.0
        std[single] = 1.0
    centred = values - mean[codes]
    out = centred if mode == "mean_norm" else centred / (std[codes] + epsilon)
    if singleton == "zero":
        out = np.where(single[codes], 0.0, out)
    return out


def similarity_clusters(
    group_codes: NDArray[np.int64], anchors: NDArray[Any], *, threshold: float
) -> tuple[NDArray[np.int64], int]:
    """Greedy text-similarity clusters of anchors inside each group (the search-QA rule).

    The rows of each group are scanned in batch order; a row joins the first cluster whose
    representative (its first member) has ``difflib.SequenceMatcher(None, anchor,
    representative).ratio() >= threshold``, else it opens a new cluster. Identical strings
    always land where their first occurrence did, so each distinct string is compared once.

    Args:
        group_codes: the group (uid, or uid and agent) of each row.
        anchors: the anchor of each row; every one must be a ``str``.
        threshold: similarity threshold in (0, 1).

    Returns:
        ``(codes, n_clusters)``: cluster codes, unique across groups.

    Raises:
        ConfigurationError: the threshold is outside (0, 1) or an anchor is not a string.
    """
    if not 0.0 < threshold < 1.0:
        raise ConfigurationError(
            f"similarity_thresh must lie strictly between 0 and 1, got {threshold!r} "
            "(the reference uses 0.9 for search QA and 0.95 as its default).",
            similarity_thresh=threshold,
        )
    items = anchors.tolist()
    bad = next((a for a in items if not isinstance(a, str)), None)
    if bad is not None:
        raise ConfigurationError(
            f"Similarity grouping compares text anchors, but one anchor is a {type(bad).__name__} "
            f"({bad!r:.60}). Use exact-anchor grouping (similarity=False) for non-text anchors.",
            anchor_type=type(bad).__name__,
        )
    representatives: dict[int, list[tuple[str, int]]] = {}
    seen: dict[tuple[int, str], int] = {}
    codes = np.empty(len(items), dtype=np.int64)
    n_clusters = 0
    # A row-by-row scan is the definition of this greedy clustering (order decides membership).
    for row, (group, anchor) in enumerate(zip(group_codes.tolist(), items, strict=True)):
        cluster = seen.get((group, anchor))
        if cluster is None:
            reps = representatives.setdefault(group, [])
            cluster = next(
                (c for rep, c in reps if difflib.SequenceMatcher(None, anchor, rep).ratio() >= threshold),
                None,
            )
            if cluster is None:
                cluster = n_clusters
                n_clusters += 1
                reps.append((anchor, cluster))
            seen[(group, anchor)] = cluster
        codes[row] = cluster
    return codes, n_clusters


def check_mode(mode: str) -> None:
    """Raise unless ``mode`` is ``mean_norm`` or ``mean_std_norm``.

    Raises:
        ConfigurationError: an unknown mode.
    """
    if mode not in _MODES:
        raise ConfigurationError(
            f"Unknown normalisation mode {mode!r}; use 'mean_norm' (x - mean) or "
            "'mean_std_norm' ((x - mean) / (std + eps)).",
            mode=mode,
        )
