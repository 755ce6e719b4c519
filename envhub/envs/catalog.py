"""The catalogue of envhub environments: one :class:`EnvSpec` per registered id.

Adding an env means adding one entry here (strings only; nothing is imported until the env
is made). Keep entries sorted by family.
"""

from __future__ import annotations

from envhub.core.registry import EnvSpec

__all__ = ["CATALOG"]

CATALOG: tuple[EnvSpec, ...] = (
    EnvSpec(
        id="envhub/ALFWorld-v0",
        entry_point="envhub.envs.alfworld.env:ALFWorldEnv",
        family="alfworld",
        description="ALFWorld household tasks (6 types) on the real ALFWorld/TextWorld engine; reward 10*won.",
        splits=("train", "eval_in_distribution", "eval_out_of_distribution"),
        max_episode_steps=50,
        data_status="envhub.envs.alfworld.data:data_status",
        demo_policy="envhub.envs.alfworld.policy:WalkthroughPolicy",
    ),
    EnvSpec(
        id="envhub/TimeSeries-v0",
        entry_point="envhub.envs.timeseries.env:TimeSeriesEnv",
        family="timeseries",
        description="Find and classify the anomaly in a univariate series with stats/zscore/fft/zoom tools.",
        splits=("train", "test"),
        max_episode_steps=8,
        data_status="envhub.envs.timeseries.data:data_status",
        demo_policy="envhub.envs.timeseries.policy:HeuristicPolicy",
        baseline_policy="envhub.envs.timeseries.policy:RandomToolPolicy",
    ),
    EnvSpec(
        id="envhub/TimeSeriesUCR-v0",
        entry_point="envhub.envs.timeseries.ucr_env:TimeSeriesUCREnv",
        family="timeseries-ucr",
        description="Classify a real UCR series (TimeMaster-style) with the same tools; data from a path.",
        splits=("train", "test"),
        max_episode_steps=8,
        data_status="envhub.envs.timeseries.data:ucr_data_status",
    ),
)
