"""Spreading row advantages over response tokens (numpy; a torch twin can wrap this)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import ConfigurationError

__all__ = ["broadcast_to_tokens", "response_mask_from_lengths"]


def broadcast_to_tokens(
    advantages: NDArray[np.floating] | Sequence[float], response_mask: NDArray[np.generic]
) -> NDArray[np.float64]:
    """Give every valid response token its row's advantage and every padded token 0.

    Args:
        advantages: shape ``(rows,)``.
        response_mask: shape ``(rows, tokens)``; non-zero/True marks a real response token.

    Returns:
        Token advantages, shape ``(rows, tokens)``, float64.

    Raises:
        ConfigurationError: the shapes do not match.
    """
    adv = np.asarray(advantages, dtype=np.float64)
    mask = np.asarray(response_mask)
    if adv.ndim != 1 or mask.ndim != 2 or mask.shape[0] != adv.shape[0]:
        raise ConfigurationError(
            f"broadcast_to_tokens needs advantages of shape (rows,) and a response mask of shape "
            f"(rows, tokens); got {adv.shape} and {mask.shape}. Build the mask with "
            "response_mask_from_lengths(lengths).",
            advantages_shape=list(adv.shape),
            mask_shape=list(mask.shape),
        )
    # np.where (not a product) makes padded positions exactly +0.0 whatever the advantage.
    return np.where(mask.astype(bool), adv[:, None], 0.0)


def response_mask_from_lengths(
    lengths: NDArray[np.integer] | Sequence[int], max_length: int | None = None
) -> NDArray[np.bool_]:
    """A right-padded response mask: row i has its first ``lengths[i]`` tokens set.

    Args:
        lengths: number of response tokens of each row (>= 0).
        max_length: number of token columns (default: the largest length).

    Returns:
        Boolean mask of shape ``(rows, max_length)``.

    Raises:
        ConfigurationError: a negative length or one longer than ``max_length``.
    """
    lens = np.asarray(lengths, dtype=np.int64).reshape(-1)
    width = int(lens.max(initial=0)) if max_length is None else int(max_length)
    if np.any(lens < 0) or np.any(lens > width):
        raise ConfigurationError(
            f"Response lengths must lie in [0, {width}] (max_length); got min {int(lens.min(initial=0))}, "
            f"max {int(lens.max(initial=0))}. Pass a max_length at least as large as the longest response.",
            max_length=width,
        )
    return np.arange(width)[None, :] < lens[:, None]
