"""Every recipe in ``trainers/`` loads, validates, and carries its reference's defaults.

The expected values are verl-agent's run scripts as restated in
``shared/reference/algorithms.md`` §2.5 and §3 (GiGPO: ``examples/gigpo_trainer/run_*.sh``; HGPO:
``recipe/hgpo/run_qwen2.5_1.5b_*_train.sh``; Sokoban: ``examples/gigpo_trainer/run_sokoban.sh``).
A recipe that drifts from them fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import envhub.envs
from envhub.algos import default_config
from envhub.core.errors import ConfigurationError
from envhub.train.config import load_config

RECIPES = Path(__file__).resolve().parents[2] / "trainers"
SHIPPED = sorted(p.stem for p in RECIPES.glob("*.yaml"))

# recipe: (group size, tasks per batch, max steps, history length, estimator settings)
REFERENCE: dict[str, tuple[int, int, int, int, dict[str, Any]]] = {
    "gigpo_alfworld": (8, 16, 50, 2, {"mode": "mean_std_norm", "gamma": 0.95, "invalid_penalty": 0.1}),
    "hgpo_alfworld": (8, 16, 50, 2, {"mode": "mean_std_norm", "history_length": 2, "invalid_penalty": 0.1}),
    "gigpo_webshop": (8, 16, 15, 2, {"mode": "mean_norm", "gamma": 0.95, "invalid_penalty": 0.1}),
    "hgpo_webshop": (8, 16, 30, 2, {"mode": "mean_norm", "history_length": 2, "invalid_penalty": 0.1}),
    "gigpo_sokoban": (8, 32, 15, 2, {"mode": "mean_norm", "gamma": 0.95, "invalid_penalty": 0.1}),
    "grpo_search": (5, 256, 4, 4, {"mode": "mean_std_norm", "invalid_penalty": 0.01}),
}
# Recipes without a reference run: they must exist and validate, nothing more is claimed.
NO_REFERENCE = {
    "gigpo_timeseries",
    "grpo_tau",
    "gigpo_sokoban_easy",
    "gigpo_sokoban_onepush",
    "graphgpo_sokoban_onepush",
    "timerpo_timeseries",  # the authors' settings on envhub's env; no reference run for it
    "timerpo_timeseries_clip",  # the same with the clip similarity (tests/train/test_grounded.py)
    "coso_sokoban_onepush",
    "grpo_search_trajectory",  # a CPU-sized smoke recipe of trajectory mode
    "drmas_search",  # the multi-agent run that learns on a CPU: a warm start, two tiny models
    "drmas_search_global",  # the same with the authors' global baseline
    "drmas_search_scratch",  # the multi-agent layout from scratch (a model per agent)
    "drmas_search_gigpo",  # GiGPO's agent-wise variant, a LoRA adapter per agent
    "drmas_math",  # the math orchestra, CPU-sized (a tiny model per agent)
}


def _load(name: str, tmp_path: Path) -> Any:
    return load_config(RECIPES / f"{name}.yaml", overrides={"model.path": str(tmp_path)})


def test_the_issue_s_recipes_are_all_shipped() -> None:
    assert set(REFERENCE) | {"gigpo_timeseries", "grpo_tau"} <= set(SHIPPED)
    assert set(SHIPPED) <= set(REFERENCE) | NO_REFERENCE, "a new recipe needs a row in REFERENCE"


@pytest.mark.parametrize("name", SHIPPED)
def test_recipe_validates_and_its_env_and_estimator_accept_it(name: str, tmp_path: Path) -> None:
    config = _load(name, tmp_path)
    spec = envhub.envs.resolve(config.env)  # a registered env
    estimator = default_config(config.algo, spec, **config.advantage)
    assert estimator is not None
    if config.rollout.env_kwargs:  # the env takes the recipe's constructor arguments
        kwargs = dict(config.rollout.env_kwargs)
        if spec.family == "search" and "data_dir" in kwargs:
            # A world the recipe's header generates (envhub data search generate): a small one
            # here, never whatever a checkout holds at that path.
            from envhub.envs.search.fixtures import write_world

            write_world(tmp_path / "world", n_passages=60, n_train=4, n_test=2, seed=9)
            kwargs["data_dir"] = str(tmp_path / "world")
        env = gym.make(spec.id, **kwargs)
        try:
            env.reset(seed=0)
        finally:
            env.close()


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_recipe_carries_the_reference_defaults(name: str, tmp_path: Path) -> None:
    group, batch, max_steps, history, advantage = REFERENCE[name]
    config = _load(name, tmp_path)
    assert (config.rollout.group_size, config.rollout.batch_tasks) == (group, batch)
    assert (config.rollout.max_steps, config.rollout.context.history_length) == (max_steps, history)
    estimator = default_config(config.algo, envhub.envs.resolve(config.env), **config.advantage)
    for key, value in advantage.items():
        assert getattr(estimator, key) == value, key
    # verl-agent's actor settings, common to every script.
    assert config.optim.lr == 1e-6 and config.optim.grad_clip == 1.0
    assert (config.loss.clip_low, config.loss.clip_high, config.loss.clip_c) == (0.2, 0.2, 3.0)
    assert (config.loss.kl_coef, config.loss.kl_kind, config.loss.entropy_coef) == (0.01, "low_var_kl", 0.001)
    assert config.loss.agg == "token-mean" and config.rollout.sampling.temperature == 1.0
    assert config.validation.temperature == 0.4 and config.validation.group_size == 1


def test_a_recipe_needs_a_model(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"model\.path: required"):
        load_config(RECIPES / "gigpo_alfworld.yaml")


def test_a_misspelt_key_in_a_recipe_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = (RECIPES / "gigpo_alfworld.yaml").read_text().replace("group_size:", "group_sise:")
    bad.write_text(text)
    with pytest.raises(ConfigurationError, match=r"rollout\.group_sise: unknown key"):
        load_config(bad, overrides={"model.path": str(tmp_path)})


SHARED_JOB: dict[str, Any] = {
    "env_urls": ["http://127.0.0.1:8000"],
    "split": "train",
    "count": 4,
    "group_size": 4,
    "max_steps": 7,
    "sampling": {"temperature": 0.7, "top_p": 0.9, "max_tokens": 64},
    "context": {"history_length": 2, "projection": "think_action"},
    "max_concurrent_groups": 16,
    "step_timeout_s": 60.0,
    "on_failure": "drop",
    "policy": {"base_url": "http://127.0.0.1:8001/v1", "model": "policy", "tokenizer": "/models/q"},
    "stream": "envhub:groups:run1",
}


def test_the_trainer_rollout_section_and_the_service_take_the_same_document(tmp_path: Path) -> None:
    from envhub.core.wire import RolloutRequest

    service = RolloutRequest.model_validate(SHARED_JOB)
    config = load_config(
        None, overrides={"env": "timeseries", "model.path": str(tmp_path), "rollout": dict(SHARED_JOB)}
    )
    assert config.rollout.job() == service
    # The endpoint names the generation server; the trainer plays its own model there.
    assert (config.rollout.generation, config.rollout.policy_url) == ("openai", "http://127.0.0.1:8001/v1")
    assert config.rollout.queue_stream == "envhub:groups:run1"


def test_flat_rollout_keys_are_shorthands_of_the_request_fields(tmp_path: Path) -> None:
    config = load_config(
        None,
        overrides={
            "env": "timeseries",
            "model.path": str(tmp_path),
            "rollout.temperature": 0.5,
            "rollout.envs": ["http://127.0.0.1:8000"],
            "rollout.history_length": 3,
            "rollout.queue_stream": "envhub:groups:x",
        },
    )
    rollout = config.rollout
    assert (rollout.sampling.temperature, rollout.sampling.max_tokens) == (0.5, 512)  # trainer default
    assert rollout.env_urls == ["http://127.0.0.1:8000"] and rollout.context.history_length == 3
    assert rollout.stream == "envhub:groups:x" and rollout.split == "train"
    with pytest.raises(ConfigurationError, match="scripted policy"):
        load_config(
            None, overrides={"env": "timeseries", "model.path": str(tmp_path), "rollout.policy": "scripted:x"}
        )


def test_a_command_line_override_beats_a_recipe_s_flat_shorthand(tmp_path: Path) -> None:
    # A recipe in the old flat shape, a nested override on the command line: the override is the
    # later layer and must win (it used to be dropped silently: the recipe's shorthand won).
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        "env: timeseries\nrollout:\n  temperature: 0.7\n  envs: ['http://127.0.0.1:8000']\n", encoding="utf-8"
    )
    config = load_config(
        recipe,
        overrides={
            "model.path": str(tmp_path),
            "rollout.sampling.temperature": 0.3,
            "rollout.env_urls": ["http://127.0.0.1:9000"],
        },
    )
    assert config.rollout.sampling.temperature == 0.3
    assert config.rollout.env_urls == ["http://127.0.0.1:9000"]
    # A flat override over a nested recipe wins too.
    recipe.write_text("env: timeseries\nrollout:\n  sampling: {temperature: 0.7}\n", encoding="utf-8")
    config = load_config(recipe, overrides={"model.path": str(tmp_path), "rollout.temperature": 0.2})
    assert config.rollout.sampling.temperature == 0.2


def test_a_shorthand_and_its_nested_field_that_disagree_in_one_recipe_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="temperature"):
        load_config(
            None,
            overrides={
                "env": "timeseries",
                "model.path": str(tmp_path),
                "rollout": {"temperature": 0.7, "sampling": {"temperature": 0.9}},
            },
        )
    # The same value twice is not a conflict.
    config = load_config(
        None,
        overrides={
            "env": "timeseries",
            "model.path": str(tmp_path),
            "rollout": {"envs": ["http://a:1"], "env_urls": ["http://a:1"]},
        },
    )
    assert config.rollout.env_urls == ["http://a:1"]


@pytest.mark.parametrize(
    "section",
    [
        {"env_token": "ENV-SECRET-1"},
        {"policy": {"base_url": "http://127.0.0.1:8001/v1", "model": "m", "api_key": "ENV-SECRET-1"}},
    ],
)
def test_a_recipe_may_not_carry_secrets(section: dict[str, Any], tmp_path: Path) -> None:
    # The trainer takes its tokens from ENVHUB_ENV_TOKEN / ENVHUB_POLICY_API_KEY only; a token in
    # the recipe was ignored and env_token was written in clear to the run's config.json.
    with pytest.raises(ConfigurationError, match="ENVHUB_") as caught:
        load_config(None, overrides={"env": "timeseries", "model.path": str(tmp_path), "rollout": section})
    assert "ENV-SECRET-1" not in str(caught.value)


def test_sampling_seed_is_the_request_s_sampling_seed_drawn_afresh_each_step(tmp_path: Path) -> None:
    base = {"env": "timeseries", "model.path": str(tmp_path)}
    rollout = load_config(None, overrides={**base, "rollout.sampling_seed": 11}).rollout
    assert (rollout.sampling.seed, rollout.seed_each_step) == (11, True)
    assert "sampling_seed" not in rollout.model_dump()  # one declaration: the request's fields
    # A rollout service plays the same request, so it takes the key too (it was refused before).
    served = load_config(
        None,
        overrides={
            **base,
            "rollout.sampling_seed": 11,
            "rollout.rollout_service": "http://127.0.0.1:8002",
            "rollout.queue": "redis://127.0.0.1:6379/0",
            "rollout.policy_url": "http://127.0.0.1:8001/v1",
            "rollout.generation": "openai",
        },
    ).rollout
    job = served.job()
    assert (job.sampling.seed, job.seed_each_step) == (11, True)
    with pytest.raises(ConfigurationError, match="sampling_seed: an integer >= 0"):
        load_config(None, overrides={**base, "rollout.sampling_seed": -1})
    with pytest.raises(ConfigurationError, match=r"set sampling\.seed"):
        load_config(None, overrides={**base, "rollout.seed_each_step": True})


def test_the_trajectory_recipe_selects_trajectory_mode(tmp_path: Path) -> None:
    config = _load("grpo_search_trajectory", tmp_path)
    assert config.rollout.trajectory_mode and config.algo == "grpo"
    assert config.env == "envhub/SearchQA-v0"
    assert not _load("grpo_search", tmp_path).rollout.trajectory_mode  # step rows stay the default


def test_the_dr_mas_recipe_trains_a_model_per_agent(tmp_path: Path) -> None:
    """trainers/drmas_search_scratch.yaml: the search orchestra, agent-wise advantages, models of
    their own, each with its own optimizer settings."""
    config = _load("drmas_search_scratch", tmp_path)
    assert config.rollout.agents is not None and config.rollout.agents.orchestra == "search"
    assert config.advantage.get("group_by_agent") is True
    roles = config.rollout.agents.roles
    models = {config.agents[r].model.path if r in config.agents else config.model.path for r in roles}
    assert len(models) >= 2  # at least two separate models
    assert all(config.agents[r].optim.micro_batch_rows >= 1 for r in config.agents)


def test_the_dr_mas_learning_recipe_is_agent_wise_with_two_models_and_a_warm_start(tmp_path: Path) -> None:
    """trainers/drmas_search.yaml, the run that learns on a CPU: the search orchestra, the authors'
    group_by_agent_id=True, the verifier on a model of its own, a warm start for both models."""
    config = _load("drmas_search", tmp_path)
    assert config.rollout.agents is not None and config.rollout.agents.orchestra == "search"
    assert config.advantage.get("group_by_agent") is True
    assert not config.advantage.get("per_trajectory", False)
    assert set(config.agents) == {"verifier"} and config.agents["verifier"].model.path != config.model.path
    assert config.warm_start is not None and set(config.warm_start.policies) == {
        "verifier",
        "search",
        "answer",
    }
    # The verifier starts blind (a coin's words) and learns its routing by RL, faster than the
    # shared model, which holds the warm start's copying.
    assert config.warm_start.labels == {"verifier": "scripted:envhub.envs.search.policy:coin_verifier"}
    assert config.agents["verifier"].optim.lr > config.optim.lr


def test_the_dr_mas_global_baseline_recipe_is_the_learning_run_with_the_authors_global_keys(
    tmp_path: Path,
) -> None:
    """trainers/drmas_search_global.yaml: trainers/drmas_search.yaml with the authors'
    group_by_agent_id=False (one group per task over every agent's calls, each trajectory's mean
    score), nothing else."""
    agent_wise = _load("drmas_search", tmp_path).model_dump()
    global_ = _load("drmas_search_global", tmp_path).model_dump()
    global_keys = {"group_by_agent": False, "per_trajectory": True, "trajectory_score": "mean"}
    assert global_.pop("advantage") == {**agent_wise.pop("advantage"), **global_keys}
    assert global_["output"].pop("run_dir") != agent_wise["output"].pop("run_dir")
    assert global_ == agent_wise


def test_graphgpo_s_distance_variant_is_written_out_in_its_recipe(tmp_path: Path) -> None:
    config = _load("graphgpo_sokoban_onepush", tmp_path)
    assert config.advantage["normalize_distance"] is False  # the authors' Sokoban script's


@pytest.mark.parametrize("key", ["group_by_agent", "per_trajectory"])
def test_a_baseline_switch_that_is_not_a_boolean_is_refused_at_load(key: str, tmp_path: Path) -> None:
    """``"false"`` from a YAML string or a ``--set`` typo would be truthy: agent-wise by mistake."""
    with pytest.raises(ConfigurationError, match=f"{key} must be true or false"):
        load_config(
            RECIPES / "drmas_search_global.yaml", {"model.path": str(tmp_path), f"advantage.{key}": "false"}
        )
