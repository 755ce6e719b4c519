"""Estimator settings as frozen dataclasses, with an env's reference defaults layered on top.

The class defaults are the reference trainers' config defaults. The per-env values of the
reference run scripts live on each env's catalogue entry
(:attr:`envhub.core.registry.EnvSpec.advantage_defaults`, filled in
:mod:`envhub.envs.catalog`); :func:`default_config` takes that spec as data, so this package
never imports the catalogue::

    from envhub.envs import resolve
    config = default_config("gigpo", resolve("alfworld"))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from envhub.algos.grouping import Mode, check_mode
from envhub.algos.grpo import TrajectoryScore, check_trajectory_score
from envhub.core.errors import ConfigurationError

if TYPE_CHECKING:  # a type only: the catalogue's record, never the catalogue itself
    from envhub.core.registry import EnvSpec

__all__ = [
    "AdvantageConfig",
    "GRPOConfig",
    "GiGPOConfig",
    "GraphGPOConfig",
    "HGPOConfig",
    "config_type_of",
    "default_config",
]


def _check_numbers(config: Any) -> None:
    # Recipes reach these dataclasses through TrainConfig's ``advantage`` mapping, which does not
    # coerce types: a quoted "0.5" would fail deep inside numpy, and ``true`` would pass as 1.
    for field in dataclasses.fields(config):
        if field.type not in ("float", float):
            continue
        value = getattr(config, field.name)
        number = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_
        )
        if not (number and np.isfinite(value)):
            raise ConfigurationError(
                f"{field.name} must be a finite number, got {value!r}.", **{field.name: value}
            )


def _check_common(config: Any) -> None:
    _check_numbers(config)
    check_mode(config.mode)
    for name in ("group_by_agent", "per_trajectory", "base_group", "enable_similarity"):
        value = getattr(config, name, False)
        if not isinstance(value, bool):  # a YAML string "false" would be truthy
            raise ConfigurationError(f"{name} must be true or false, got {value!r}.")
    if not (np.isfinite(config.epsilon) and config.epsilon > 0):
        raise ConfigurationError(f"epsilon must be a small positive number, got {config.epsilon!r}.")
    if not (np.isfinite(config.invalid_penalty) and config.invalid_penalty >= 0):
        raise ConfigurationError(
            f"invalid_penalty must be >= 0 (0 disables it), got {config.invalid_penalty!r}."
        )


@dataclass(frozen=True)
class GRPOConfig:
    """GRPO settings.

    Attributes:
        mode: ``mean_std_norm`` (the reference's ``norm_adv_by_std_in_grpo=True``) or ``mean_norm``.
        per_trajectory: one sample per trajectory instead of one per row.
        trajectory_score: with ``per_trajectory``, the trajectory's sample: ``first`` (its first
            row's score, verl-agent) or ``mean`` (the mean of its rows' scores, which every row
            then takes: Dr. MAS's global baseline).
        invalid_penalty: subtracted from each invalid row's score.
        group_by_agent: normalise within (uid, agent_id) (Dr. MAS's agent-wise baseline).
        epsilon: added to the std.
    """

    mode: Mode = "mean_std_norm"
    per_trajectory: bool = False
    trajectory_score: TrajectoryScore = "first"
    invalid_penalty: float = 0.1
    group_by_agent: bool = False
    epsilon: float = 1e-6

    def __post_init__(self) -> None:
        _check_common(self)
        check_trajectory_score(self.trajectory_score, self.per_trajectory)


@dataclass(frozen=True)
class GiGPOConfig:
    """GiGPO settings (reference config ``algorithm.gigpo``).

    Attributes:
        mode: ``mean_norm`` (config default) or ``mean_std_norm``.
        gamma: discount of the step returns.
        step_advantage_w: weight of the step-level term.
        invalid_penalty: subtracted from each invalid row's score and step return.
        enable_similarity: group text anchors by ``difflib`` similarity instead of equality.
        similarity_thresh: the similarity threshold, in (0, 1).
        per_trajectory: one episode-level sample per trajectory instead of one per row.
        group_by_agent: key groups by (uid, agent_id) too (Dr. MAS).
        epsilon: added to the std.
    """

    mode: Mode = "mean_norm"
    gamma: float = 0.95
    step_advantage_w: float = 1.0
    invalid_penalty: float = 0.1
    enable_similarity: bool = False
    similarity_thresh: float = 0.95
    per_trajectory: bool = False
    group_by_agent: bool = False
    epsilon: float = 1e-6

    def __post_init__(self) -> None:
        _check_common(self)
        if not 0.0 < self.similarity_thresh < 1.0:
            raise ConfigurationError(
                f"similarity_thresh must lie strictly between 0 and 1, got {self.similarity_thresh!r}."
            )


@dataclass(frozen=True)
class HGPOConfig:
    """HGPO settings (reference config ``algorithm.hgpo``).

    Attributes:
        mode: ``mean_std_norm`` or ``mean_norm`` (population std at every level).
        history_length: K, the deepest level; the reference ties it to the memory window.
        length_weight_alpha: alpha in the level weight ``(l + 2) ** alpha``.
        base_group: add the episode-level advantage as an item of weight 1.
        gamma: discount of the step returns.
        invalid_penalty: subtracted from each invalid row's step return and score.
        group_by_agent: key groups by (uid, agent_id) too (Dr. MAS).
        epsilon: added to the std and to the weight sum.
    """

    mode: Mode = "mean_std_norm"
    history_length: int = 2
    length_weight_alpha: float = 1.0
    base_group: bool = False
    gamma: float = 0.95
    invalid_penalty: float = 0.1
    group_by_agent: bool = False
    epsilon: float = 1e-6

    def __post_init__(self) -> None:
        _check_common(self)
        if (
            isinstance(self.history_length, bool)
            or not isinstance(self.history_length, int)
            or (self.history_length < 0)
        ):
            raise ConfigurationError(f"history_length must be an integer >= 0, got {self.history_length!r}.")


@dataclass(frozen=True)
class GraphGPOConfig:
    """GraphGPO settings (the authors' config ``algorithm.graphgpo`` plus ``algorithm.gamma``).

    Attributes:
        mode: ``mean_std_norm`` (the authors' default) or ``mean_norm``.
        gamma: base of the graph step return ``10 * gamma ** d``, in (0, 1]; the authors use
            0.1 for ALFWorld, 0.2 for WebShop, 0.8 for Sokoban.
        step_advantage_w: weight of the graph step term.
        episode_advantage_w: weight of the episode term (0: the graph signal alone).
        normalize_distance: ``False``: return from the next state's distance; ``True``: from
            the distance change ``d(next) - d(anchor) + 1`` (the progress variant).
        invalid_penalty: subtracted from each invalid row's step return and episode score.
        epsilon: added to the std.
    """

    mode: Mode = "mean_std_norm"
    gamma: float = 0.1
    step_advantage_w: float = 1.0
    episode_advantage_w: float = 1.0
    normalize_distance: bool = False
    invalid_penalty: float = 0.1
    epsilon: float = 1e-6

    def __post_init__(self) -> None:
        _check_common(self)
        if not (np.isfinite(self.gamma) and 0.0 < self.gamma <= 1.0):
            raise ConfigurationError(f"gamma must lie in (0, 1] for graphgpo, got {self.gamma!r}.")
        for name in ("step_advantage_w", "episode_advantage_w"):
            if not np.isfinite(getattr(self, name)):
                raise ConfigurationError(f"{name} must be a finite number, got {getattr(self, name)!r}.")
        if not isinstance(self.normalize_distance, bool):
            raise ConfigurationError(
                f"normalize_distance must be true or false, got {self.normalize_distance!r}."
            )


AdvantageConfig = GRPOConfig | GiGPOConfig | HGPOConfig | GraphGPOConfig

_ConfigType = type[GRPOConfig] | type[GiGPOConfig] | type[HGPOConfig] | type[GraphGPOConfig]

_CONFIG_TYPES: Mapping[str, _ConfigType] = {
    "grpo": GRPOConfig,
    "gigpo": GiGPOConfig,
    "hgpo": HGPOConfig,
    "graphgpo": GraphGPOConfig,
}


def default_config(algo: str, env: EnvSpec | None = None, **overrides: Any) -> AdvantageConfig:
    """The settings for ``algo``, with ``env``'s reference defaults and then ``overrides``.

    Args:
        algo: ``"grpo"``, ``"gigpo"``, ``"hgpo"`` or ``"graphgpo"``.
        env: the env's spec (``envhub.envs.resolve("alfworld")``), whose
            ``advantage_defaults[algo]`` apply; None for the algorithm's own defaults.
        **overrides: field values that win over both.

    Returns:
        A frozen config dataclass.

    Raises:
        ConfigurationError: unknown algorithm or field, an invalid value, or an env given by
            name instead of by spec.
    """
    config_type = config_type_of(algo)
    values: dict[str, Any] = {}
    if env is not None:
        values.update(_env_values(env, algo.lower()))
    values.update(overrides)
    fields = {f.name for f in dataclasses.fields(config_type)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ConfigurationError(
            f"{config_type.__name__} has no setting {', '.join(unknown)}; its settings are "
            f"{', '.join(sorted(fields))}.",
            unknown=unknown,
        )
    return config_type(**values)


def _env_values(env: EnvSpec, algo: str) -> Mapping[str, Any]:
    defaults = getattr(env, "advantage_defaults", None)
    if not isinstance(defaults, Mapping):
        # The estimators are pure functions over data: they never look a name up in the catalogue.
        raise ConfigurationError(
            f"env must be an env's spec, not {env!r}; pass env=envhub.envs.resolve({str(env)!r}).",
            env=str(env),
        )
    return defaults.get(algo, {})


def config_type_of(algo: str) -> _ConfigType:
    """The config dataclass of an algorithm name.

    Raises:
        ConfigurationError: an unknown algorithm.
    """
    try:
        return _CONFIG_TYPES[algo.lower()]
    except KeyError:
        raise ConfigurationError(
            f"Unknown advantage estimator {algo!r}; choose one of {', '.join(_CONFIG_TYPES)}.",
            algo=algo,
        ) from None
