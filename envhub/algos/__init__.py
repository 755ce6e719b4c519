"""Advantage estimators: GRPO, GiGPO, HGPO, GraphGPO, agent-wise (Dr. MAS) grouping, TimerPO.

TimerPO's grounded advantage (:mod:`envhub.algos.timerpo`) works on per-sample scores rather
than a StepBatch; the trainer mixes it into GRPO's (``envhub.train.grounded``).

Pure numpy float64 functions over a :class:`~envhub.core.records.StepBatch`: no torch, no
I/O, no Python loop over rows (group statistics are ``np.bincount`` reductions over dense
codes). Rows may come in any order and results return in input row order. The semantics
are the reference implementations' (verl-agent ``gigpo/core_gigpo.py`` and
``recipe/hgpo/core_hgpo.py``, Dr. MAS), restated in ``shared/reference/algorithms.md``.

One deliberate numeric difference: the reference computes in float32, where a group of
identical samples (e.g. six rows of 10 - 0.1 = 9.9) can get a mean one ulp off the value
and, divided by a tiny std + 1e-6, spurious advantages of about ±0.47. envhub computes in
float64 and gives a group whose samples are all equal a mean of exactly that value and a
std of exactly 0, so its members get **exactly 0** (and HGPO then drops those items, as it
drops every exact zero). Everything else matches the reference up to float32 rounding.

Group statistics sum members in ascending value order, so results are bit-for-bit
independent of row order and of how uids are labelled. Two loops remain, neither over rows:
discounted returns take one vectorised step per trajectory depth, and the optional
similarity grouping is the reference's greedy ``difflib`` scan (order-dependent by design).

Where the reference is silent envhub chooses: trajectories are keyed by (uid, traj_id);
a step index may appear once per trajectory (the reference's duplicated padding rows are
refused: compute advantages before padding); with ``per_trajectory`` and agent grouping
each agent's first step in a trajectory is its sample.
"""

from envhub.algos.api import compute_advantages
from envhub.algos.config import (
    AdvantageConfig,
    GiGPOConfig,
    GraphGPOConfig,
    GRPOConfig,
    HGPOConfig,
    default_config,
)
from envhub.algos.gigpo import gigpo_advantages, step_advantages
from envhub.algos.graphgpo import (
    GraphEdge,
    GraphNode,
    TransitionGraph,
    graph_step_returns,
    graphgpo_advantages,
    state_distances,
    transition_graphs,
)
from envhub.algos.grpo import grpo_advantages
from envhub.algos.hgpo import HGPOLevel, hgpo_advantages, hgpo_levels
from envhub.algos.returns import discounted_returns, episode_returns
from envhub.algos.timerpo import (
    GroundedAdvantage,
    clip_similarity,
    grounded_advantages,
    orthogonal_residual,
    ot_distance,
    semantic_score,
    sinkhorn_plan,
)
from envhub.algos.tokens import broadcast_to_tokens, response_mask_from_lengths

__all__ = [
    "AdvantageConfig",
    "GRPOConfig",
    "GiGPOConfig",
    "GraphEdge",
    "GraphGPOConfig",
    "GraphNode",
    "GroundedAdvantage",
    "HGPOConfig",
    "HGPOLevel",
    "TransitionGraph",
    "broadcast_to_tokens",
    "clip_similarity",
    "compute_advantages",
    "default_config",
    "discounted_returns",
    "episode_returns",
    "gigpo_advantages",
    "graph_step_returns",
    "graphgpo_advantages",
    "grounded_advantages",
    "grpo_advantages",
    "hgpo_advantages",
    "hgpo_levels",
    "orthogonal_residual",
    "ot_distance",
    "response_mask_from_lengths",
    "semantic_score",
    "sinkhorn_plan",
    "state_distances",
    "step_advantages",
    "transition_graphs",
]
