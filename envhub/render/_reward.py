"""AgentOCR's compression-aware reward (``EpisodeRewardManager_Compression`` in the reference).

Every step row of a trajectory scores ``episode_reward + r_comp`` where

* ``r_comp = lam * ln(c_t)`` when the trajectory succeeded (compress more, earn more),
* ``r_comp = -mu * ln(c_t)`` otherwise (``mu = 0``: failures are not punished for it),

``c_t`` being the factor the agent emitted at that step (1.0 for inactive rows). The bonus is
only paid on every ``every``-th call of the reward manager (1-based count), and is 0 on the
others. Defaults are the reference training scripts': ``lam = 0.01``, ``mu = 0``, ``every = 8``
(``shared/reference/algorithms.md`` §5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import ConfigurationError
from envhub.render._compression import clean_factor

__all__ = ["CompressionReward", "compression_scores"]


def compression_scores(
    episode_rewards: Sequence[float] | NDArray[np.float64],
    factors: Sequence[float] | NDArray[np.float64],
    won: Sequence[bool] | NDArray[np.bool_],
    *,
    call_index: int,
    lam: float = 0.01,
    mu: float = 0.0,
    every: int = 8,
) -> NDArray[np.float64]:
    """Per-row scores with the compression bonus.

    Args:
        episode_rewards: the episode reward of each row's trajectory.
        factors: the compression factor c_t emitted at each row (invalid values count as 1).
        won: whether each row's trajectory succeeded.
        call_index: 1-based count of reward-manager calls; the bonus applies when it is a
            multiple of ``every``.
        lam: bonus weight for successful trajectories.
        mu: penalty weight for the others.
        every: apply the bonus every N-th call.

    Returns:
        ``episode_reward + r_comp`` per row, float64.

    Raises:
        ConfigurationError: the columns differ in length, or ``every``/``call_index`` < 1.
    """
    rewards = np.asarray(episode_rewards, dtype=np.float64)
    c = np.asarray([clean_factor(float(f)) for f in factors], dtype=np.float64)
    success = np.asarray(won, dtype=bool)
    if not (len(rewards) == len(c) == len(success)):
        raise ConfigurationError(
            "episode_rewards, factors and won must have one entry per step row; got lengths "
            f"{len(rewards)}, {len(c)}, {len(success)}.",
        )
    if every < 1 or call_index < 1:
        raise ConfigurationError(
            f"every and call_index are 1-based counts (>= 1); got every={every}, call_index={call_index}.",
        )
    if call_index % every:
        return rewards.copy()
    log_c = np.log(c)
    return rewards + np.where(success, lam * log_c, -mu * log_c)


@dataclass
class CompressionReward:
    """Stateful twin of :func:`compression_scores` that counts its own calls.

    Example:
        >>> shaper = CompressionReward(lam=0.01, every=2)
        >>> shaper([10.0], [2.0], [True]).tolist()  # call 1: no bonus
        [10.0]
        >>> round(float(shaper([10.0], [2.0], [True])[0]), 6)  # call 2: 10 + 0.01 ln 2
        10.006931
    """

    lam: float = 0.01
    mu: float = 0.0
    every: int = 8
    calls: int = field(default=0)

    def __call__(
        self,
        episode_rewards: Sequence[float] | NDArray[np.float64],
        factors: Sequence[float] | NDArray[np.float64],
        won: Sequence[bool] | NDArray[np.bool_],
    ) -> NDArray[np.float64]:
        """Score one batch of rows and advance the call counter."""
        self.calls += 1
        return compression_scores(
            episode_rewards, factors, won, call_index=self.calls, lam=self.lam, mu=self.mu, every=self.every
        )
