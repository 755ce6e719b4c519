"""Dr. MAS in the trainer: the orchestra's rows train one shared model; the settings are checked at load.

The math orchestra's recipe (``trainers/drmas_math.yaml``) runs two iterations with a tiny model
per agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envhub.core.errors import ConfigurationError
from envhub.train.config import TrainConfig, load_config
from envhub.train.tracking import group_files, read_groups, read_metrics
from envhub.train.trainer import train


def _config(model: Path, run_dir: Path, **over: Any) -> TrainConfig:
    base = {
        "env": "envhub/SearchQA-v0",
        "algo": "grpo",
        "model.path": str(model),
        "iterations": 1,
        "seed": 1,
        "output.run_dir": str(run_dir),
        "output.progress": False,
        "rollout.group_size": 2,
        "rollout.batch_tasks": 2,
        "rollout.max_steps": 2,
        "rollout.max_tokens": 8,
        "rollout.agents": {"orchestra": "search"},
        "advantage.group_by_agent": True,
        "optim.lr": 1e-4,
        "optim.micro_batch_rows": 8,
    }
    base.update(over)
    return load_config(None, base)


def test_one_model_plays_every_role_and_trains_on_one_row_per_call(
    small_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    train(_config(small_model_dir, run))
    [groups_file] = group_files(run)
    groups = read_groups(groups_file)
    calls = [s for g in groups for t in g.trajectories for s in t.steps]
    assert {s.agent_id for s in calls} >= {"verifier"}
    assert all(s.env_step is not None and s.response_token_ids for s in calls)
    [metrics] = read_metrics(run)
    assert metrics["rows/count"] == len(calls)
    assert metrics["rollout/logprob_diff"] < 1e-4  # the actor scores the tokens each role call drew
    # Each role's calls per episode: where the verifier routed the team.
    episodes = sum(len(g.trajectories) for g in groups)
    for role in ("verifier", "search", "answer"):
        made = sum(s.agent_id == role for s in calls)
        assert metrics[f"rollout/calls/{role}"] == pytest.approx(made / episodes)  # 0.0 when never called
    assert sum(
        metrics.get(f"rollout/calls/{r}", 0.0) for r in ("verifier", "search", "answer")
    ) * episodes == (pytest.approx(len(calls)))


@pytest.mark.parametrize(
    ("over", "named"),
    [
        ({"rollout.agents": None}, "rollout.agents declares no orchestra"),
        ({"algo": "hgpo"}, "algo 'hgpo'"),
        ({"rollout.agents": {"policies": {"verifier": "scripted:search-team-verifier"}}}, "agents.policies"),
        ({"advantage.trajectory_score": "mean"}, "per_trajectory"),
        ({"advantage.trajectory_score": "last", "advantage.per_trajectory": True}, "'first' or 'mean'"),
        # One agent per micro-batch gives ranks different numbers of FSDP2 passes (a hang).
        ({"model.strategy": "fsdp2"}, "model.strategy='fsdp2'"),
        # An orchestra plays one env family: refused at load, not when the first job starts.
        ({"env": "envhub/Math-v0"}, "search orchestra plays search envs, not the math family"),
        ({"rollout.agents": {"orchestra": "math"}}, "math orchestra plays math envs, not the search family"),
        ({"rollout.agents": {"orchestra": "search", "max_rounds": 2}}, "max_rounds"),
    ],
)
def test_multi_agent_settings_are_checked_when_the_recipe_loads(
    small_model_dir: Path, tmp_path: Path, over: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        _config(small_model_dir, tmp_path, **over)


def test_the_global_baseline_of_the_authors_loads(small_model_dir: Path, tmp_path: Path) -> None:
    config = _config(
        small_model_dir,
        tmp_path,
        **{
            "advantage.group_by_agent": False,
            "advantage.per_trajectory": True,
            "advantage.trajectory_score": "mean",
        },
    )
    assert config.advantage == {"group_by_agent": False, "per_trajectory": True, "trajectory_score": "mean"}


RECIPES = Path(__file__).resolve().parents[2] / "trainers"


def _two_small_iterations(recipe: str, model: Path, run: Path, **over: Any) -> TrainConfig:
    """A shipped recipe on the small model, sized to two quick CPU iterations."""
    sizes = {"iterations": 2, "rollout.group_size": 2, "rollout.batch_tasks": 2, "rollout.max_tokens": 8}
    paths = {"model.path": str(model), "output.run_dir": str(run), "output.progress": False}
    return load_config(RECIPES / f"{recipe}.yaml", {**paths, **sizes, **over})


def test_the_math_recipe_trains_a_model_per_agent_on_one_row_per_call(
    small_model_dir: Path, tmp_path: Path
) -> None:
    from envhub.policy.tiny import build_tiny_model

    verifier = build_tiny_model(tmp_path / "verifier-model", seed=1, hidden_size=64, vocab_size=512)
    run = tmp_path / "run"
    config = _two_small_iterations(
        "drmas_math", small_model_dir, run, **{"agents.verifier.model.path": str(verifier)}
    )
    assert config.rollout.agents is not None and config.rollout.agents.max_rounds == 2
    train(config)
    calls = [s for f in group_files(run) for g in read_groups(f) for t in g.trajectories for s in t.steps]
    # Random tiny models write no verdict block: every verifier call approves, one round each.
    assert [s.agent_id for s in calls] == ["solver", "verifier"] * (len(calls) // 2)
    assert all(s.env_step == 0 and s.response_token_ids for s in calls)
    metrics = read_metrics(run)
    assert [m["iteration"] for m in metrics] == [1, 2]
    for m in metrics:
        assert m["agent/verifier/rows"] == m["agent/shared/rows"] == m["rows/count"] / 2
        assert m["agent/verifier/logprob_diff"] < 1e-4 and m["rollout/logprob_diff"] < 1e-4
        assert "agent/solver/grad_norm" in m and "agent/verifier/grad_norm" in m


def test_the_gigpo_recipe_groups_by_agent_and_trains_an_adapter_per_agent(
    small_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    config = _two_small_iterations("drmas_search_gigpo", small_model_dir, run, **{"model.lora.r": 4})
    assert config.algo == "gigpo" and config.advantage["group_by_agent"] and config.agents["verifier"].adapter
    train(config)
    metrics = read_metrics(run)
    assert [m["iteration"] for m in metrics] == [1, 2]
    for m in metrics:
        # The verifier's adapter and the shared one are updated apart, on one row per call each.
        assert m["agent/verifier/rows"] + m["agent/shared/rows"] == m["rows/count"]
        assert m["agent/verifier/lr"] == 5e-5 and m["agent/shared/lr"] == 1e-4
        # A random verifier writes no block, which routes every step to the answer agent.
        assert "agent/answer/grad_norm" in m and "agent/verifier/grad_norm" in m
