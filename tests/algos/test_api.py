"""compute_advantages, the config dataclasses and per-env defaults, and the package surface."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import envhub.algos as algos
from envhub.algos import (
    GiGPOConfig,
    GraphGPOConfig,
    GRPOConfig,
    HGPOConfig,
    compute_advantages,
    default_config,
    gigpo_advantages,
    grpo_advantages,
    hgpo_advantages,
)
from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, StepBatch, Trajectory
from envhub.core.registry import EnvSpec
from envhub.envs import resolve, specs

from .builders import random_rows, to_batch


def _batch():
    return to_batch(random_rows(np.random.default_rng(3), anchors=("q1", "q1 ", "q2")))


def test_default_algorithm_is_gigpo_with_reference_config_defaults() -> None:
    batch = _batch()
    np.testing.assert_array_equal(compute_advantages(batch), gigpo_advantages(batch))
    assert GiGPOConfig().mode == "mean_norm" and GiGPOConfig().gamma == 0.95
    assert GiGPOConfig().similarity_thresh == 0.95 and GiGPOConfig().invalid_penalty == 0.1
    assert HGPOConfig().history_length == 2 and HGPOConfig().length_weight_alpha == 1.0
    assert HGPOConfig().base_group is False and GRPOConfig().mode == "mean_std_norm"


@pytest.mark.parametrize(
    ("algo", "direct"),
    [
        ("grpo", lambda b: grpo_advantages(b, mode="mean_norm")),
        ("gigpo", lambda b: gigpo_advantages(b, mode="mean_norm")),
        ("hgpo", lambda b: hgpo_advantages(b, mode="mean_norm")),
    ],
)
def test_overrides_reach_the_estimator(algo: str, direct) -> None:
    batch = _batch()
    np.testing.assert_array_equal(compute_advantages(batch, algo, mode="mean_norm"), direct(batch))


def test_env_defaults_follow_the_reference_scripts() -> None:
    assert default_config("gigpo", resolve("alfworld")).mode == "mean_std_norm"
    assert default_config("gigpo", resolve("webshop")).mode == "mean_norm"
    search = default_config("gigpo", resolve("search"))
    assert isinstance(search, GiGPOConfig)
    assert search.enable_similarity and search.similarity_thresh == 0.9 and search.invalid_penalty == 0.01
    assert default_config("hgpo", resolve("webshop")).mode == "mean_norm"
    hgpo_search = default_config("hgpo", resolve("search"))
    assert isinstance(hgpo_search, HGPOConfig) and hgpo_search.history_length == 4
    assert default_config("grpo", resolve("tau")) == GRPOConfig()
    # GraphGPO: gamma 0.1 (ALFWorld scripts), 0.2 (WebShop), 0.8 (the Sokoban script).
    assert default_config("graphgpo", resolve("alfworld")).gamma == 0.1  # type: ignore[union-attr]
    assert default_config("graphgpo", resolve("webshop")).gamma == 0.2  # type: ignore[union-attr]
    assert default_config("graphgpo", resolve("sokoban")).gamma == 0.8  # type: ignore[union-attr]


def test_env_ids_and_family_names_give_the_same_defaults() -> None:
    assert default_config("gigpo", resolve("envhub/ALFWorld-v0")) == default_config(
        "gigpo", resolve("alfworld")
    )
    assert default_config("gigpo", resolve("SearchQA-v0")) == default_config("gigpo", resolve("search"))
    assert default_config("hgpo", resolve("WebShopHTML-v0")) == default_config("hgpo", resolve("webshop"))


def test_every_catalogue_env_gives_valid_configs_for_every_estimator() -> None:
    for spec in specs():
        assert set(spec.advantage_defaults) <= {"grpo", "gigpo", "hgpo", "graphgpo"}, spec.id
        for algo in ("grpo", "gigpo", "hgpo", "graphgpo"):
            assert default_config(algo, spec) is not None


def test_env_defaults_are_data_on_the_spec() -> None:
    spec = EnvSpec(
        id="x/Toy-v0",
        entry_point="m:C",
        family="toy",
        description="",
        advantage_defaults={"hgpo": {"history_length": 7}},
    )
    assert default_config("hgpo", spec) == HGPOConfig(history_length=7)
    assert default_config("gigpo", spec) == GiGPOConfig()


def test_env_defaults_apply_similarity_grouping() -> None:
    batch = _batch()
    expected = gigpo_advantages(batch, mode="mean_std_norm", similarity_thresh=0.9, invalid_penalty=0.01)
    np.testing.assert_array_equal(compute_advantages(batch, "gigpo", env=resolve("search")), expected)


def test_a_config_object_and_overrides_combine() -> None:
    batch = _batch()
    config = HGPOConfig(history_length=4, base_group=True)
    np.testing.assert_array_equal(
        compute_advantages(batch, "hgpo", config=config, mode="mean_norm"),
        hgpo_advantages(batch, history_length=4, base_group=True, mode="mean_norm"),
    )


def test_unknown_setting_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ConfigurationError, match="history_length"):
        compute_advantages(_batch(), "gigpo", history_length=3)


def test_unknown_algorithm_and_an_env_name_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="grpo, gigpo, hgpo"):
        compute_advantages(_batch(), "ppo")
    with pytest.raises(ConfigurationError, match=r"resolve\('alfworld'\)"):
        default_config("gigpo", "alfworld")  # type: ignore[arg-type]


def test_config_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="HGPOConfig"):
        compute_advantages(_batch(), "hgpo", config=GiGPOConfig())


@pytest.mark.parametrize(
    "bad",
    [
        lambda: GiGPOConfig(mode="z"),  # type: ignore[arg-type]
        lambda: GiGPOConfig(similarity_thresh=1.0),
        lambda: HGPOConfig(history_length=-1),
        lambda: GRPOConfig(epsilon=0.0),
        lambda: GRPOConfig(invalid_penalty=-0.1),
    ],
)
def test_config_values_are_checked_at_construction(bad) -> None:
    with pytest.raises(ConfigurationError):
        bad()


@pytest.mark.parametrize(
    ("config", "field", "value"),
    [
        (GraphGPOConfig, "gamma", "0.5"),  # a quoted YAML number: numpy's TypeError before
        (GraphGPOConfig, "gamma", True),  # was taken as gamma = 1
        (GraphGPOConfig, "step_advantage_w", "1"),
        (GiGPOConfig, "gamma", "0.95"),  # was accepted, and failed in the first update
        (GiGPOConfig, "step_advantage_w", math.inf),
        (HGPOConfig, "length_weight_alpha", math.nan),
        (GRPOConfig, "invalid_penalty", "0.1"),
    ],
)
def test_a_setting_that_is_not_a_finite_number_is_refused_naming_it(config, field, value) -> None:
    # Recipes reach these through TrainConfig's advantage mapping, which does not coerce types.
    with pytest.raises(ConfigurationError, match=f"{field} must be a finite number") as info:
        config(**{field: value})
    assert info.value.detail[field] is value


def test_package_exports_exactly_its_public_names() -> None:
    public = {name for name in vars(algos) if not name.startswith("_")}
    modules = {
        "api",
        "config",
        "gigpo",
        "graphgpo",
        "grouping",
        "grpo",
        "hgpo",
        "layout",
        "returns",
        "timerpo",
        "tokens",
    }
    assert set(algos.__all__) == public - modules
    assert all(hasattr(algos, name) for name in algos.__all__)


@pytest.mark.parametrize("algo", ["grpo", "gigpo", "hgpo", "graphgpo"])
def test_empty_batch_gives_no_advantages(algo: str) -> None:
    assert compute_advantages(to_batch([]), algo).shape == (0,)


def test_records_from_a_rollout_flow_into_the_estimators() -> None:
    # Two trajectories of one task as Group records (what the rollout engine emits): t1 wins
    # (reward 10 at its last step), t2 does not. GiGPO mean_norm, gamma .95, penalty .1:
    # scores [10, 10, 0, 0] -> mean 5 -> A^E = [5, 5, -5, -5]; step group "start" holds
    # G = [9.5, 0] -> mean 4.75 -> A^S = [4.75, -4.75]; "kitchen" rows are alone -> 0.
    def step(traj: str, i: int, anchor: str, reward: float) -> Step:
        return Step(uid="g", traj_id=traj, step_idx=i, anchor=anchor, action="go", reward=reward)

    trajs = [
        Trajectory(
            uid="g",
            traj_id=name,
            env_id="envhub/ALFWorld-v0",
            task_id="task-0",
            steps=[step(name, 0, "start", 0.0), step(name, 1, room, final)],
        )
        for name, room, final in (("t1", "kitchen", 10.0), ("t2", "hall", 0.0))
    ]
    group = Group(uid="g", env_id="envhub/ALFWorld-v0", task_id="task-0", trajectories=trajs)
    adv = compute_advantages(StepBatch.from_groups([group]), "gigpo", mode="mean_norm")
    np.testing.assert_allclose(adv, [5 + 4.75, 5.0, -5 - 4.75, -5.0], rtol=1e-14)


@pytest.mark.parametrize("estimator", [grpo_advantages, gigpo_advantages, hgpo_advantages])
def test_non_positive_epsilon_is_refused_by_every_estimator(estimator: Callable[..., Any]) -> None:
    with pytest.raises(ConfigurationError, match="epsilon"):
        estimator(_batch(), epsilon=0.0)
