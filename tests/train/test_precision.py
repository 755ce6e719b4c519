"""Mixed precision: float32 master weights under bf16 compute, and one precision for every logprob.

Two failures of a real-model run that a float32 CPU test never shows (issue 23, Why 1 and 2):
AdamW stepping bf16 weights at lr 1e-6 rounds every update away, and old logprobs in float32
against new ones under bf16 autocast make the on-policy ratio differ from 1, so a tight clip
(KPO's 3e-4) clips nearly every token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group
from envhub.train.config import LossConfig, ModelConfig, OptimConfig, load_config
from envhub.train.learner import Learner
from envhub.train.rows import RowBatch, build_rows
from envhub.train.trainer import _load_model


def _rows(groups: list[Group]) -> RowBatch:
    rows = build_rows(groups, pad_token_id=0).rows
    rows.advantages = torch.linspace(-1.0, 1.0, len(rows))
    return rows


def _learner(model: Any, config: ModelConfig, **loss: Any) -> Learner:
    return Learner(
        model,
        model_config=config,
        loss=LossConfig(kl_coef=0.0, entropy_coef=0.0, **loss),
        optim=OptimConfig(lr=1e-6, micro_batch_rows=4, shuffle=False),
        temperature=1.0,
    )


def test_bf16_run_keeps_float32_master_weights_that_move_at_lr_1e_6(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    config = ModelConfig(path=str(small_model_dir), device="cpu", dtype="bfloat16")
    model = _load_model(
        load_config(overrides={"env": "envhub/SearchQA-v0", "model": config.model_dump()}),
        torch.device("cpu"),
    )
    learner = _learner(model, config)
    weights = {n: p for n, p in model.named_parameters() if n.endswith("q_proj.weight")}
    assert weights
    before = {n: p.detach().clone() for n, p in weights.items()}
    rows = _rows(sampled_groups)
    stats = learner.update(rows, learner.logprobs(rows))
    assert stats.optimizer_steps == 1
    for name, p in weights.items():
        moved = float((p.detach() != before[name]).float().mean())
        assert moved > 0.9, f"{name}: only {moved:.1%} of the weights moved at lr 1e-6"
    assert all(p.dtype == torch.float32 for p in weights.values())


def test_on_policy_ratio_is_exactly_one_under_bf16_autocast(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        str(small_model_dir), dtype=torch.float32, local_files_only=True
    )
    # (autocast_bf16 is the key that turned autocast on before model.dtype did)
    config = ModelConfig(path=str(small_model_dir), dtype="bfloat16", autocast_bf16=True)
    # KPO's recommended clip: with mismatched precisions nearly every token would be clipped
    learner = _learner(model, config, clip_low=3e-4, clip_high=3e-4)
    rows = _rows(sampled_groups)
    old = learner.logprobs(rows)
    stats = learner.update(rows, old)
    assert stats.approx_kl == 0.0
    assert stats.clipfrac == 0.0


@pytest.mark.parametrize("chunk", [0, 5])
def test_old_and_new_logprobs_share_one_path_in_both_head_modes(
    small_model_dir: Path, sampled_groups: list[Group], chunk: int
) -> None:
    from transformers import AutoModelForCausalLM

    from envhub.train.learner import _forward_response

    model = AutoModelForCausalLM.from_pretrained(
        str(small_model_dir), dtype=torch.float32, local_files_only=True
    )
    config = ModelConfig(path=str(small_model_dir), dtype="bfloat16", logprob_chunk_tokens=chunk)
    learner = _learner(model, config)
    rows = _rows(sampled_groups).select(range(4))
    old = learner.logprobs(rows)
    model.train()
    new, _ = _forward_response(model, rows, 1.0, with_entropy=False, chunk_tokens=chunk, dtype=torch.bfloat16)
    assert torch.equal((new.detach() * rows.response_mask), old)
    full = torch.zeros_like(old)
    mask = rows.response_mask.bool()
    fp32 = _learner(model, ModelConfig(path=str(small_model_dir))).logprobs(rows)
    full[mask] = fp32[mask]
    assert not torch.equal(full, old)  # bf16 compute really differs from float32


def test_pure_bf16_needs_the_flag_and_warns(small_model_dir: Path) -> None:
    with pytest.raises(ConfigurationError, match="pure_bf16"):
        load_config(overrides={"env": "x", "model.path": "m", "model.pure_bf16": True})
    config = ModelConfig(path=str(small_model_dir), dtype="bfloat16", pure_bf16=True)
    model = _load_model(
        load_config(overrides={"env": "envhub/SearchQA-v0", "model": config.model_dump()}),
        torch.device("cpu"),
    )
    assert next(model.parameters()).dtype == torch.bfloat16
    with pytest.warns(UserWarning, match="pure_bf16"):
        _learner(model, config)
    with pytest.raises(ValueError, match="float32 master weights"):
        _learner(model, ModelConfig(path=str(small_model_dir), dtype="bfloat16"))


def test_float16_compute_uses_loss_scaling_and_still_moves_the_weights(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        str(small_model_dir), dtype=torch.float32, local_files_only=True
    )
    learner = _learner(model, ModelConfig(path=str(small_model_dir), dtype="float16"))
    assert learner.scaler is not None
    before = [p.detach().clone() for p in model.parameters()]
    rows = _rows(sampled_groups)
    stats = learner.update(rows, learner.logprobs(rows))
    assert stats.optimizer_steps + stats.skipped_steps == 1
    if stats.optimizer_steps:
        assert any(not torch.equal(a, p.detach()) for a, p in zip(before, model.parameters(), strict=True))


def test_gradient_checkpointing_is_a_recipe_key_and_gives_the_same_gradient(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    grads = []
    for flag in (False, True):
        cfg = load_config(
            overrides={
                "env": "envhub/SearchQA-v0",
                "model.path": str(small_model_dir),
                "model.gradient_checkpointing": flag,
            }
        )
        model = _load_model(cfg, torch.device("cpu"))
        learner = Learner(
            model,
            model_config=cfg.model,
            loss=LossConfig(kl_coef=0.0, entropy_coef=0.0),
            optim=OptimConfig(lr=1e-3, micro_batch_rows=4, shuffle=False),
            temperature=1.0,
        )
        rows = _rows(sampled_groups)
        learner.update(rows, learner.logprobs(rows))
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
    assert torch.allclose(grads[0], grads[1], atol=1e-6 * float(grads[0].abs().max()))
