"""Checkpoints restore state, not settings: the resumed recipe's optimizer settings apply."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from envhub.core.records import Group
from envhub.train.checkpoint import TrainerState, full_optimizer_state, load_checkpoint, save_checkpoint
from envhub.train.config import LossConfig, ModelConfig, OptimConfig
from envhub.train.learner import Learner
from envhub.train.rows import build_rows


def _learner(model: torch.nn.Module, model_dir: Path, lr: float) -> Learner:
    return Learner(
        copy.deepcopy(model),
        model_config=ModelConfig(path=str(model_dir)),
        loss=LossConfig(kl_coef=0.0, entropy_coef=0.0),
        optim=OptimConfig(lr=lr, warmup_steps=4, micro_batch_rows=8, shuffle=False),
        temperature=1.0,
    )


def test_a_resumed_warm_up_continues_from_its_step_on_the_new_learning_rate(
    small_model_dir: Path, sampled_groups: list[Group], tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        str(small_model_dir), dtype=torch.float32, local_files_only=True
    )
    rows = build_rows(sampled_groups, pad_token_id=0).rows
    rows.advantages = torch.linspace(-1.0, 1.0, len(rows))
    first = _learner(model, small_model_dir, lr=1e-4)
    first.update(rows, first.logprobs(rows), mini_batches=2)  # two of the four warm-up steps
    assert first.scheduler.get_last_lr() == [pytest.approx(1e-4 * 3 / 4)]
    save_checkpoint(
        tmp_path,
        model=first.model,
        optimizer_state=full_optimizer_state(first.model, first.optimizer),
        scheduler=first.scheduler,
        state=TrainerState(iteration=1, policy_version=1, schedule_position=2),
    )

    resumed = _learner(model, small_model_dir, lr=4e-4)
    load_checkpoint(
        tmp_path / "checkpoints" / "iter_1",
        model=resumed.model,
        optimizer=resumed.optimizer,
        scheduler=resumed.scheduler,
    )
    # The warm-up's third step of four, on the resumed run's 4e-4.
    assert resumed.scheduler.last_epoch == 2
    assert resumed.scheduler.base_lrs == [4e-4]
    assert resumed.optimizer.param_groups[0]["lr"] == pytest.approx(4e-4 * 3 / 4)
    assert resumed.scheduler.get_last_lr() == [pytest.approx(4e-4 * 3 / 4)]
    resumed.update(rows, resumed.logprobs(rows), mini_batches=1)
    assert resumed.scheduler.get_last_lr() == [pytest.approx(4e-4)]  # the warm-up is over
