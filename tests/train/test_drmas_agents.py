"""Dr. MAS with a model per agent: the recipe's ``agents:`` map, per-agent gradient norms, checkpoints.

Two tiny models with different weights (seeds 0 and 1) play the search orchestra: the verifier
has its own, the search and answer agents share the top-level one. A role's calls scored by
the wrong model would show as a large ``logprob_diff`` (the models disagree on every token).
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group
from envhub.train.config import LossConfig, ModelConfig, OptimConfig, TrainConfig, load_config
from envhub.train.learner import Learner
from envhub.train.rows import build_rows
from envhub.train.tracking import read_metrics
from envhub.train.trainer import Trainer


@pytest.fixture(scope="module")
def other_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small model's shape with other weights (seed 1)."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("other-model") / "model", seed=1, hidden_size=64, vocab_size=512
    )


def _config(model: Path, run_dir: Path, **over: Any) -> TrainConfig:
    base = {
        "env": "envhub/SearchQA-v0",
        "algo": "grpo",
        "model.path": str(model),
        "iterations": 1,
        "seed": 1,
        "output.run_dir": str(run_dir),
        "output.progress": False,
        "output.save_groups": False,
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


def _weights(model: Any) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# -- the recipe ------------------------------------------------------------------------------


def test_an_agent_s_sections_are_the_top_level_ones_with_its_own_keys_over_them(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    config = _config(
        small_model_dir,
        tmp_path,
        **{
            "optim.grad_clip": 0.5,
            "agents": {
                "verifier": {
                    "model": {"path": str(other_model_dir)},
                    "optim": {"lr": 3e-4, "micro_batch_rows": 2},
                }
            },
        },
    )
    verifier = config.agents["verifier"]
    assert verifier.model.path == str(other_model_dir)
    assert (verifier.optim.lr, verifier.optim.micro_batch_rows) == (3e-4, 2)
    assert verifier.optim.grad_clip == 0.5  # from the top-level optim
    assert config.optim.lr == 1e-4 and config.model.path == str(small_model_dir)
    assert config.policy_of("verifier") == "verifier"
    assert config.policy_of("answer") == "shared"


@pytest.mark.parametrize(
    ("over", "named"),
    [
        ({"agents": {"judge": {}}}, "agents.judge: not a role of the search orchestra"),
        (
            {"agents": {"verifier": {}}, "rollout.agents": None},
            "agents: a model per agent needs rollout.agents",
        ),
        ({"agents": {"verifier": {"optim": {"lr": -1}}}}, "agents.verifier.optim.lr"),
        ({"agents": {"verifier": {"model": {"colour": 1}}}}, "agents.verifier.model.colour"),
        (
            {
                "agents": {"verifier": {}},
                "rollout.rollout_service": "http://x",
                "rollout.queue": "redis://x",
                "rollout.policy_url": "http://x/v1",
                "rollout.envs": ["http://e"],
                "rollout.generation": "openai",
            },
            "agents: a rollout service samples one served model",
        ),
        ({"agents": {"verifier": {}}, "loss.entropy": "coso", "loss.entropy_coef": 1.0}, "coso"),
        ({"agents": {"verifier": {"model": {"strategy": "fsdp2"}}}}, "agents.verifier.model.strategy"),
        ({"model.strategy": "fsdp2", "agents": {"verifier": {}}}, "use strategy 'ddp'"),
        ({"rollout.agents": {"policies": {"verifier": "scripted:search-team-verifier"}}}, "top-level agents"),
    ],
)
def test_bad_agent_maps_are_refused_when_the_recipe_loads(
    small_model_dir: Path, tmp_path: Path, over: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        _config(small_model_dir, tmp_path, **over)


# -- per-agent gradient norms in the learner -------------------------------------------------


def test_an_agent_s_gradient_norm_is_the_norm_of_its_rows_share_of_the_step(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    """The share of agent a: the step's gradient with every other row's advantage set to 0."""
    from transformers import AutoModelForCausalLM

    rows = build_rows(sampled_groups, pad_token_id=0).rows
    n = len(rows)
    rows.advantages = torch.linspace(-1.0, 1.0, n)
    labels = ["a" if i % 3 else "b" for i in range(n)]
    base = AutoModelForCausalLM.from_pretrained(
        str(small_model_dir), dtype=torch.float32, local_files_only=True
    )

    def learner() -> Learner:
        return Learner(
            copy.deepcopy(base),
            model_config=ModelConfig(path=str(small_model_dir)),
            loss=LossConfig(kl_coef=0.0, entropy_coef=0.0),
            optim=OptimConfig(lr=1e-4, micro_batch_rows=3, shuffle=False, grad_clip=1e9),
            temperature=1.0,
        )

    mixed = learner()
    old = mixed.logprobs(rows)
    stats = mixed.update(rows, old, row_agents=labels)
    assert set(stats.agent_grad_norm) == {"a", "b"}
    for agent in ("a", "b"):
        alone = rows.select(range(n))
        alone.advantages = torch.where(
            torch.tensor([lab == agent for lab in labels]), rows.advantages, torch.zeros(n)
        )
        single = learner().update(alone, old, row_agents=labels)
        assert stats.agent_grad_norm[agent] == pytest.approx(single.grad_norm, rel=1e-4)
    one = learner().update(rows, old, row_agents=["a"] * n)
    assert one.agent_grad_norm == {"a": pytest.approx(one.grad_norm)}
    assert stats.grad_norm == pytest.approx(one.grad_norm, rel=1e-4)  # sorting by agent changes nothing


# -- the trainer -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "advantage",
    [
        {"advantage.group_by_agent": True},
        {
            "advantage.group_by_agent": False,
            "advantage.per_trajectory": True,
            "advantage.trajectory_score": "mean",
        },
    ],
    ids=["agent-wise", "global-baseline"],
)
def test_the_shared_model_records_each_agent_s_gradient_norm(
    small_model_dir: Path, tmp_path: Path, advantage: dict[str, Any]
) -> None:
    run = tmp_path / "run"
    trainer = Trainer(_config(small_model_dir, run, **advantage))
    asyncio.run(trainer.run())
    [metrics] = read_metrics(run)
    norms = {k: v for k, v in metrics.items() if k.startswith("agent/") and k.endswith("/grad_norm")}
    assert "agent/verifier/grad_norm" in norms
    assert all(v >= 0 and v == v for v in norms.values())


def test_each_agent_is_played_and_trained_by_its_own_model(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    config = _config(
        small_model_dir,
        run,
        **{"agents": {"verifier": {"model": {"path": str(other_model_dir)}, "optim": {"lr": 1e-3}}}},
    )
    trainer = Trainer(config)
    assert set(trainer.policies) == {"shared", "verifier"}
    before = {name: _weights(p.model) for name, p in trainer.policies.items()}
    asyncio.run(trainer.run())
    [metrics] = read_metrics(run)
    # Each policy's learner scores the tokens its own sampler drew for its roles' calls.
    assert metrics["agent/verifier/logprob_diff"] < 1e-4
    assert metrics["rollout/logprob_diff"] < 1e-4
    assert metrics["agent/verifier/rows"] > 0
    assert metrics["agent/verifier/lr"] == pytest.approx(1e-3)
    assert metrics["agent/verifier/grad_norm"] > 0
    for name, policy in trainer.policies.items():
        rows = metrics.get(f"agent/{name}/rows", 0.0)
        after = _weights(policy.model)
        moved = any(not torch.equal(before[name][k], after[k]) for k in after)
        assert moved == (rows > 0), name


def test_a_checkpoint_keeps_every_agent_s_model_and_optimizer(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    over = {
        "agents": {
            "verifier": {"model": {"path": str(other_model_dir)}},
            "search": {"model": {"path": str(other_model_dir)}},
            "answer": {"optim": {"lr": 2e-4}, "model": {"lora": {"r": 4, "alpha": 8}}},
        }
    }
    config = _config(small_model_dir, run, **over)
    trainer = Trainer(config)
    assert set(trainer.policies) == {"verifier", "search", "answer"}  # no shared model is loaded
    asyncio.run(trainer.run())
    trained = {n: (_weights(p.model), p.learner.optimizer.state_dict()) for n, p in trainer.policies.items()}
    agents_dir = run / "checkpoints" / "iter_1" / "agents"
    assert (agents_dir / "verifier" / "model.safetensors").is_file()
    assert (agents_dir / "answer" / "adapter_model.safetensors").is_file()  # its LoRA adapter only

    resumed = Trainer(config)
    initial = {n: _weights(p.model) for n, p in resumed.policies.items()}
    resumed._resume()
    for name in ("verifier", "answer"):  # trained (they have rows every step): resume moved them back
        now = _weights(resumed.policies[name].model)
        assert any(not torch.equal(initial[name][k], now[k]) for k in now), name
    assert resumed.state.iteration == 1
    for name, policy in resumed.policies.items():
        weights, optimizer = trained[name]
        assert all(torch.equal(weights[k], v) for k, v in _weights(policy.model).items()), name
        state = policy.learner.optimizer.state_dict()
        assert state["param_groups"][0]["lr"] == optimizer["param_groups"][0]["lr"]
        for key, slot in optimizer["state"].items():
            assert torch.equal(state["state"][key]["exp_avg"], slot["exp_avg"]), name
    # A run with another agent map does not silently take this checkpoint.
    other = _config(
        small_model_dir, run, **{"agents": {"verifier": {"model": {"path": str(other_model_dir)}}}}
    )
    with pytest.raises(ConfigurationError, match="agents"):
        Trainer(other)._resume()


def test_a_resume_trains_every_model_with_the_recipe_s_current_optimizer_settings(
    small_model_dir: Path, other_model_dir: Path, tmp_path: Path
) -> None:
    """The checkpoint gives AdamW's moments and the schedule's step; lr, betas and weight decay
    are the resumed recipe's, for the top-level model and an agent's own alike."""
    run = tmp_path / "run"
    verifier = {"model": {"path": str(other_model_dir)}, "optim": {"lr": 1e-4}}
    asyncio.run(Trainer(_config(small_model_dir, run, agents={"verifier": verifier})).run())
    changed = {
        "iterations": 2,
        "optim.lr": 2e-4,
        "optim.weight_decay": 0.05,
        "agents": {"verifier": {**verifier, "optim": {"lr": 3e-4, "betas": [0.8, 0.95]}}},
    }
    config = _config(small_model_dir, run, **changed)
    resumed = Trainer(config)
    resumed._resume()
    wanted = {"shared": (2e-4, (0.9, 0.999)), "verifier": (3e-4, (0.8, 0.95))}
    for name, (lr, betas) in wanted.items():
        learner = resumed.policies[name].learner
        [group] = learner.optimizer.param_groups
        assert (group["lr"], group["initial_lr"], learner.scheduler.base_lrs) == (lr, lr, [lr]), name
        assert (tuple(group["betas"]), group["weight_decay"]) == (betas, 0.05), name
        assert learner.scheduler.get_last_lr() == [lr], name
        assert all(slot["step"] == 1 for slot in learner.optimizer.state.values()), name  # the moments kept

    trainer = Trainer(config)
    asyncio.run(trainer.run())
    last = read_metrics(run)[-1]
    assert last["iteration"] == 2
    assert last["agent/shared/lr"] == pytest.approx(2e-4)
    assert last["agent/verifier/lr"] == pytest.approx(3e-4)
    for name in wanted:  # one more AdamW step on the restored moments, not a fresh start
        state = trainer.policies[name].learner.optimizer.state
        assert all(slot["step"] == 2 for slot in state.values()), name


# -- a LoRA adapter per agent on one base -----------------------------------------------------


@pytest.mark.parametrize(
    ("over", "named"),
    [
        ({"agents": {"verifier": {"adapter": True}}}, "needs model.lora"),
        (
            {
                "model.lora": {"r": 4},
                "agents": {"verifier": {"adapter": True, "model": {"dtype": "bfloat16"}}},
            },
            "agents.verifier.model.dtype",
        ),
    ],
)
def test_an_adapter_agent_needs_a_lora_top_level_model_and_its_keys(
    small_model_dir: Path, tmp_path: Path, over: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        _config(small_model_dir, tmp_path, **over)


def test_each_agent_can_be_a_lora_adapter_of_its_own_on_one_base(
    small_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    config = _config(
        small_model_dir,
        run,
        **{
            "iterations": 2,
            "model.lora": {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]},
            "agents": {"verifier": {"adapter": True, "optim": {"lr": 3e-2}}},
        },
    )
    trainer = Trainer(config)
    shared, verifier = trainer.policies["shared"], trainer.policies["verifier"]
    assert verifier.model is shared.model  # one base, two adapters
    base = {k: v.clone() for k, v in _weights(shared.model).items() if "lora_" not in k}
    asyncio.run(trainer.run())
    metrics = read_metrics(run)
    # Iteration 2: the adapters differ, and each role's calls were sampled with its own.
    assert metrics[1]["agent/verifier/logprob_diff"] < 1e-4
    assert metrics[1]["agent/shared/logprob_diff"] < 1e-4
    after = _weights(shared.model)
    assert all(torch.equal(v, after[k]) for k, v in base.items())  # the base is frozen
    lora_b = {k: v for k, v in after.items() if "lora_B" in k}
    assert any(v.abs().sum() > 0 for k, v in lora_b.items() if ".verifier." in k)
    assert any(v.abs().sum() > 0 for k, v in lora_b.items() if ".default." in k)
    optimizers = {name: p.learner.optimizer.state_dict() for name, p in trainer.policies.items()}

    resumed = Trainer(config)
    resumed._resume()
    now = _weights(resumed.policies["shared"].model)
    assert all(torch.equal(after[k], v) for k, v in now.items())
    for name, optimizer in optimizers.items():  # the shared adapter's and the verifier's
        state = resumed.policies[name].learner.optimizer.state_dict()
        assert optimizer["state"], name
        for key, slot in optimizer["state"].items():
            assert torch.equal(state["state"][key]["exp_avg"], slot["exp_avg"]), name
