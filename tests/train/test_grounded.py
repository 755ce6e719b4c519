"""TimerPO in the trainer: the recipe, its load-time checks, the hidden states, one CPU iteration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.envs import resolve
from envhub.train.config import GroundedSettings, load_config
from envhub.train.grounded import RowScores, expert_texts, mix_into_rows
from envhub.train.rows import RowBatch
from envhub.train.tracking import read_metrics
from envhub.train.trainer import train

TRAINERS = Path(__file__).resolve().parents[2] / "trainers"
RECIPE = TRAINERS / "timerpo_timeseries.yaml"
#: The shipped recipe of each similarity.
RECIPES = {"ot": RECIPE, "clip": TRAINERS / "timerpo_timeseries_clip.yaml"}


def _recipe(model: Path, run_dir: Path, recipe: Path = RECIPE, **over: Any) -> Any:
    overrides = {
        "model.path": str(model),
        "iterations": 1,
        "output.run_dir": str(run_dir),
        "output.progress": False,
        "rollout.group_size": 2,
        "rollout.batch_tasks": 2,
        "rollout.max_steps": 1,
        "rollout.max_tokens": 8,
        "rollout.max_prompt_tokens": None,
        "optim.lr": 1e-4,
        "optim.mini_batch_rows": None,
        "optim.micro_batch_rows": 4,
        "validation.every": 0,
        "model.gradient_checkpointing": False,
        **over,
    }
    return load_config(recipe, overrides=overrides)


def test_the_recipe_carries_the_authors_settings(tmp_path: Path) -> None:
    config = load_config(RECIPE, overrides={"model.path": str(tmp_path)})
    assert config.algo == "grpo" and config.advantage["mode"] == "mean_norm"
    assert config.grounded == GroundedSettings(
        method="ot", adv_mix=0.3, orth=True, ot_eps=0.08, ot_n_iter=50, tau=0.5
    )
    assert (config.rollout.group_size, config.loss.kl_coef, config.optim.lr) == (5, 0.001, 1e-6)


def test_the_clip_recipe_is_the_authors_with_the_cosine_in_place_of_transport(tmp_path: Path) -> None:
    ot = load_config(RECIPE, overrides={"model.path": str(tmp_path)}).model_dump()
    clip = load_config(RECIPES["clip"], overrides={"model.path": str(tmp_path)}).model_dump()
    transport = ("ot_eps", "ot_n_iter", "tau")  # the Sinkhorn score's keys: clip reads none
    clip_grounded = {k: v for k, v in clip.pop("grounded").items() if k not in transport}
    ot_grounded = {k: v for k, v in ot.pop("grounded").items() if k not in transport}
    assert clip_grounded == {**ot_grounded, "method": "clip", "clip_temperature": 1.0}
    assert clip == ot


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"algo": "gigpo"}, "set algo: grpo"),
        ({"env": "envhub/SearchQA-v0"}, "gives no expert explanation"),
        ({"loss.old_logprobs": "rollout"}, "loss.old_logprobs: recompute"),
        ({"model.strategy": "fsdp2"}, "model.strategy: ddp"),
        ({"grounded.ot_eps": 0.0}, "grounded.ot_eps"),
        ({"grounded.method": "cosine"}, "grounded.method"),
    ],
)
def test_settings_that_cannot_work_are_refused_at_load(
    override: dict[str, Any], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        load_config(RECIPE, overrides={"model.path": str(tmp_path), **override})


def test_grounded_none_leaves_any_env_and_estimator_alone(tmp_path: Path) -> None:
    config = load_config(
        RECIPE, overrides={"model.path": str(tmp_path), "algo": "gigpo", "grounded.method": "none"}
    )
    assert not config.grounded.enabled


def test_rows_are_scored_and_mixed_per_group() -> None:
    # Two groups of two rows. Group 0's expert state is (1, 0): row 0 answers with (1, 0), so
    # W = 0 and s = 1; row 1 with (0, 1), cost 1 on its single token pair, W = 1, s = e^-2.
    # Group 1 has one row, (0, 1) against (0, 2): same direction, W = 0, s = 1; alone, A_sem = 0.
    # Mean W = (0 + 1 + 0) / 3. A_main = [0.5, -0.5, 0] (R - mean R).
    # A_sem = [(1 - e^-2)/2, -(1 - e^-2)/2, 0] is collinear with A_main, so A_perp = 0 and the
    # mix leaves A_main as it was; without orth it adds 0.3 A_sem.
    rows = RowBatch(
        input_ids=torch.zeros((3, 2), dtype=torch.long),
        attention_mask=torch.ones((3, 2), dtype=torch.long),
        response_index=torch.ones((3, 1), dtype=torch.long),
        response_ids=torch.zeros((3, 1), dtype=torch.long),
        response_mask=torch.ones((3, 1)),
        rollout_logprobs=torch.zeros((3, 1)),
        advantages=torch.tensor([0.5, -0.5, 0.0]),
        policy_version=torch.zeros(3, dtype=torch.long),
        group_index=torch.tensor([0, 0, 1]),
        has_rollout_logprobs=False,
    )
    expert = [torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 2.0]])]
    for orth, added in ((True, 0.0), (False, 0.3 * (1 - np.exp(-2.0)) / 2)):
        scores = RowScores(GroundedSettings(method="ot", orth=orth), expert, rows.group_index)
        for row, state in enumerate(([[1.0, 0.0]], [[0.0, 1.0]], [[0.0, 1.0]])):
            scores(row, torch.tensor(state))
        np.testing.assert_allclose(scores.score, [1.0, np.exp(-2.0), 1.0])
        rows.advantages = torch.tensor([0.5, -0.5, 0.0])
        metrics = mix_into_rows(rows, scores)
        np.testing.assert_allclose(rows.advantages.numpy(), [0.5 + added, -0.5 - added, 0.0], atol=1e-6)
        assert metrics["grounded/ot_distance_mean"] == pytest.approx(1 / 3)


def test_the_old_logprob_pass_hands_over_the_response_states(small_model_dir: Path, tmp_path: Path) -> None:
    """The sink gets, per row, the model's last hidden states at the response positions."""
    from transformers import AutoModelForCausalLM

    from envhub.train.config import LossConfig, ModelConfig, OptimConfig
    from envhub.train.learner import Learner

    model = AutoModelForCausalLM.from_pretrained(str(small_model_dir), dtype=torch.float32)
    rows = RowBatch(
        input_ids=torch.tensor([[5, 6, 7, 8, 0], [9, 10, 11, 0, 0]]),
        attention_mask=torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]]),
        response_index=torch.tensor([[2, 3], [2, 0]]),
        response_ids=torch.tensor([[7, 8], [11, 0]]),
        response_mask=torch.tensor([[1.0, 1.0], [1.0, 0.0]]),
        rollout_logprobs=torch.zeros((2, 2)),
        advantages=torch.zeros(2),
        policy_version=torch.zeros(2, dtype=torch.long),
        group_index=torch.tensor([0, 0]),
        has_rollout_logprobs=False,
    )
    with torch.no_grad():
        full = model(input_ids=torch.tensor([[5, 6, 7, 8]]), output_hidden_states=True).hidden_states[-1][0]
    for chunk in (0, 512):  # the whole-logits path and the lean one
        learner = Learner(
            model,
            model_config=ModelConfig(path=str(tmp_path), logprob_chunk_tokens=chunk),
            loss=LossConfig(kl_coef=0.0),
            optim=OptimConfig(micro_batch_rows=1),
            temperature=1.0,
        )
        got: dict[int, torch.Tensor] = {}
        learner.logprobs(rows, hidden_sink=got.__setitem__)
        assert got[0].shape == (2, 64) and got[1].shape == (1, 64)
        torch.testing.assert_close(got[0], full[2:4], atol=1e-5, rtol=1e-5)
        expert = learner.text_hidden_states([[5, 6, 7, 8], [9]])
        torch.testing.assert_close(expert[0], full, atol=1e-5, rtol=1e-5)
        assert expert[1].shape == (1, 64)


def test_the_catalogue_gives_one_explanation_per_task() -> None:
    texts = expert_texts(resolve("envhub/TimeSeries-v0"), ["test-1", "test-2", "test-1"])
    assert texts[0] == texts[2] != texts[1]
    with pytest.raises(ConfigurationError, match="no expert explanation"):
        expert_texts(resolve("envhub/SearchQA-v0"), ["x"])


@pytest.mark.parametrize("method", ["ot", "clip"])
def test_one_cpu_iteration_trains_with_the_grounded_advantage(
    method: str, small_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / method
    result = train(_recipe(small_model_dir, run, RECIPES[method]))
    assert result.policy_version == 1
    (metrics,) = read_metrics(run)
    assert metrics["rows/count"] == 4
    assert 0.0 <= metrics["grounded/score_mean"] <= 1.0
    assert np.isfinite(metrics["actor/loss"])
    assert ("grounded/ot_distance_mean" in metrics) == (method == "ot")
