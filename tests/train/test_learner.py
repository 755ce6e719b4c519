"""The actor update: logprobs aligned with the sampler, verl's token mean, direction, safety."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.records import Group
from envhub.train.config import LoRAConfig, LossConfig, ModelConfig, OptimConfig
from envhub.train.learner import Learner, response_logprobs
from envhub.train.rows import RowBatch, build_rows


def _model(path: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32, local_files_only=True)


def _rows(groups: list[Group], advantages: float | torch.Tensor = 1.0) -> RowBatch:
    rows = build_rows(groups, pad_token_id=0).rows
    rows.advantages = torch.as_tensor(advantages, dtype=torch.float32).expand(len(rows)).clone()
    return rows


def _learner(model: Any, path: Path, **loss: Any) -> Learner:
    optim = loss.pop("optim", OptimConfig(lr=1e-3, micro_batch_rows=4, shuffle=False))
    return Learner(
        model,
        model_config=ModelConfig(path=str(path)),
        loss=LossConfig(kl_coef=0.0, entropy_coef=0.0, **loss),
        optim=optim,
        temperature=1.0,
    )


def _params(model: Any) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def _grads(model: Any) -> torch.Tensor:
    """The last optimizer step's gradient (Adam's first step is sign-like, so compare these)."""
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def test_recomputed_logprobs_equal_the_samplers(small_model_dir: Path, sampled_groups: list[Group]) -> None:
    rows = _rows(sampled_groups)
    recomputed = response_logprobs(_model(small_model_dir), rows, temperature=1.0, micro_batch_rows=3)
    mask = rows.response_mask.bool()
    assert torch.allclose(recomputed[mask], rows.rollout_logprobs[mask], atol=1e-4)


def test_first_pass_ratio_is_one(small_model_dir: Path, sampled_groups: list[Group]) -> None:
    model = _model(small_model_dir)
    learner = _learner(model, small_model_dir)
    rows = _rows(sampled_groups)
    stats = learner.update(rows, learner.logprobs(rows))
    assert stats.optimizer_steps == 1
    assert abs(stats.approx_kl) < 1e-6 and stats.clipfrac == 0.0


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_update_follows_the_advantage(
    small_model_dir: Path, sampled_groups: list[Group], sign: float
) -> None:
    model = _model(small_model_dir)
    learner = _learner(model, small_model_dir)
    rows = _rows(sampled_groups, sign)
    before = learner.logprobs(rows)
    learner.update(rows, before)
    after = learner.logprobs(rows)
    change = float(((after - before) * rows.response_mask).sum())
    assert change * sign > 0  # positive advantages make the sampled responses likelier


def test_micro_batching_does_not_change_the_update(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    rows = _rows(sampled_groups, torch.linspace(-1, 1, len(build_rows(sampled_groups, pad_token_id=0).rows)))
    results = []
    for micro in (1, 3, 64):
        model = _model(small_model_dir)
        learner = _learner(
            model, small_model_dir, optim=OptimConfig(lr=1e-3, micro_batch_rows=micro, shuffle=False)
        )
        learner.update(rows, learner.logprobs(rows))
        results.append(_grads(model))
    scale = float(results[0].abs().max())
    assert scale > 0
    assert torch.allclose(results[0], results[1], atol=1e-5 * scale)
    assert torch.allclose(results[0], results[2], atol=1e-5 * scale)


def test_verl_agents_per_micro_batch_mean_weights_rows_differently(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    rows = _rows(sampled_groups, torch.linspace(-1, 1, len(build_rows(sampled_groups, pad_token_id=0).rows)))
    out = []
    for flag in (False, True):
        model = _model(small_model_dir)
        learner = _learner(
            model,
            small_model_dir,
            micro_batch_mean=flag,
            optim=OptimConfig(lr=1e-3, micro_batch_rows=3, shuffle=False),
        )
        learner.update(rows, learner.logprobs(rows))
        out.append(_grads(model))
    assert not torch.allclose(out[0], out[1], atol=1e-3 * float(out[0].abs().max()))


def test_a_non_finite_step_is_skipped_not_applied(small_model_dir: Path, sampled_groups: list[Group]) -> None:
    model = _model(small_model_dir)
    learner = _learner(model, small_model_dir)
    rows = _rows(sampled_groups)
    rows.advantages[0] = float("nan")
    before = _params(model).clone()
    stats = learner.update(rows, learner.logprobs(rows))
    assert stats.skipped_steps == 1 and stats.optimizer_steps == 0
    assert torch.equal(before, _params(model))


def test_the_kl_reference_stays_frozen(small_model_dir: Path, sampled_groups: list[Group]) -> None:
    model = _model(small_model_dir)
    learner = Learner(
        model,
        model_config=ModelConfig(path=str(small_model_dir)),
        loss=LossConfig(kl_coef=0.1),
        optim=OptimConfig(lr=1e-3, shuffle=False),
        temperature=1.0,
    )
    assert learner.reference is not None
    frozen = _params(learner.reference).clone()
    rows = _rows(sampled_groups)
    for _ in range(2):
        old = learner.logprobs(rows)
        stats = learner.update(rows, old, learner.reference_logprobs(rows))
    assert torch.equal(frozen, _params(learner.reference))
    assert stats.kl > 0  # the second update starts away from the reference


def test_lora_trains_only_the_adapters(small_model_dir: Path, sampled_groups: list[Group]) -> None:
    from peft import LoraConfig, get_peft_model

    lora = LoRAConfig(r=4, alpha=8)
    model = get_peft_model(
        _model(small_model_dir),
        LoraConfig(
            r=lora.r, lora_alpha=lora.alpha, target_modules=lora.target_modules, task_type="CAUSAL_LM"
        ),
    )
    base = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" not in n}
    adapters = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_B" in n}
    learner = _learner(model, small_model_dir)
    rows = _rows(sampled_groups)
    learner.update(rows, learner.logprobs(rows))
    assert all(torch.equal(p, base[n]) for n, p in model.named_parameters() if n in base)
    assert any(not torch.equal(p, adapters[n]) for n, p in model.named_parameters() if n in adapters)


def test_tis_weights_scale_stale_rows(small_model_dir: Path, sampled_groups: list[Group]) -> None:
    rows = _rows(sampled_groups)
    # The first row comes from a much older policy; (gradients are clipped to norm 1, so only a
    # non-uniform weighting shows in their direction).
    rows.rollout_logprobs[0] -= 5.0 * rows.response_mask[0]
    base, capped = copy.deepcopy(_model(small_model_dir)), _model(small_model_dir)
    out = []
    for model, threshold in ((base, None), (capped, 2.0)):
        learner = _learner(model, small_model_dir, tis_threshold=threshold)
        learner.update(rows, learner.logprobs(rows))
        out.append(_grads(model))
    assert not torch.allclose(out[0], out[1], atol=1e-3 * float(out[0].abs().max()))


def _without_logprobs(group: Group) -> Group:
    """``group`` as a backend that records no sampling logprobs would publish it."""
    trajectories = [
        t.model_copy(update={"steps": [s.model_copy(update={"response_logprobs": None}) for s in t.steps]})
        for t in group.trajectories
    ]
    return group.model_copy(update={"trajectories": trajectories})


def test_tis_corrects_each_row_with_logprobs_beside_an_on_policy_group_without_them(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    # The last group has no sampling logprobs (on policy: nothing to correct it against); the
    # first row carries logprobs of a much older policy. Its correction must not be switched off
    # by the other group: its tokens get the capped weight 2, the rows without logprobs 1.
    groups = [*sampled_groups[:-1], _without_logprobs(sampled_groups[-1])]
    rows = _rows(groups)
    assert not rows.has_rollout_logprobs and int(rows.group_index[0]) == 0
    rows.rollout_logprobs[0] -= 5.0 * rows.response_mask[0]
    learner = _learner(_model(small_model_dir), small_model_dir, tis_threshold=2.0)
    stats = learner.update(rows, learner.logprobs(rows))
    # First pass, ratio 1 and advantage 1: the token-mean loss is minus the mean TIS weight.
    weights = torch.ones_like(rows.response_mask)
    weights[0] = 2.0
    mask = rows.response_mask
    expected = -float((weights * mask).sum() / mask.sum())
    assert stats.pg_loss == pytest.approx(expected, abs=1e-3)


def _trajectory_learner(path: Path, chunk_tokens: int) -> tuple[Any, Learner]:
    model = _model(path)
    learner = Learner(
        model,
        model_config=ModelConfig(path=str(path), logprob_chunk_tokens=chunk_tokens),
        loss=LossConfig(kl_coef=0.1, entropy_coef=0.01),
        optim=OptimConfig(lr=1e-3, micro_batch_rows=64, shuffle=False),  # one pass: the hook sees all rows
        temperature=1.0,
    )
    return model, learner


@pytest.mark.parametrize("chunk_tokens", [0, 64])
def test_env_tokens_of_trajectory_rows_change_no_gradient(
    small_model_dir: Path, trajectory_groups: list[Group], chunk_tokens: int
) -> None:
    """Labels, logits, old/reference logprobs and advantages at env tokens are out of every term."""
    from envhub.train.trajectory_rows import build_sequence_rows

    rows = build_sequence_rows(trajectory_groups, pad_token_id=0).rows
    mask = rows.response_mask
    rows.advantages = torch.linspace(-1.0, 1.0, len(rows)).unsqueeze(-1) * mask  # per token
    steps = [s for g in trajectory_groups for t in g.trajectories for s in t.steps]
    assert rows.tokens == sum(len(s.response_token_ids or []) for s in steps)
    env = (mask == 0) & (torch.arange(mask.shape[1]) < (rows.attention_mask.sum(-1, keepdim=True) - 1))
    assert env.any(), "the rollout must hold env tokens between turns"

    model, learner = _trajectory_learner(small_model_dir, chunk_tokens)
    old = learner.logprobs(rows)
    assert (old[mask == 0] == 0).all()  # old logprobs go through the same mask
    ref = old + 0.05 * mask
    stats = learner.update(rows, old, ref)
    assert stats.tokens == rows.tokens  # trained tokens = the generated tokens recorded
    baseline = _grads(model)

    def perturbed(also: torch.Tensor | None = None) -> torch.Tensor:
        noisy = copy.deepcopy(rows)
        g = torch.Generator().manual_seed(1)
        where = env if also is None else env | also
        noisy.response_ids[where] = torch.randint(0, 512, (int(where.sum()),), generator=g)
        noisy.advantages[env] = 100.0
        model2, learner2 = _trajectory_learner(small_model_dir, chunk_tokens)
        # the logits at every position that predicts an env token, scrambled
        r_idx, t_idx = env.nonzero(as_tuple=True)
        p_idx = noisy.response_index[r_idx, t_idx] - 1

        def scramble(_module: Any, _args: Any, output: torch.Tensor) -> torch.Tensor:
            if output.shape[1] < noisy.input_ids.shape[1] - 1:
                return output  # the lean path runs the head only at the model's tokens
            noise = 50.0 * torch.randn((len(r_idx), output.shape[-1]), generator=g)
            return output.index_put((r_idx, p_idx), noise, accumulate=True)

        handle = model2.get_output_embeddings().register_forward_hook(scramble)
        try:
            learner2.update(noisy, old + 3.0 * env, ref - 2.0 * env)
        finally:
            handle.remove()
        return _grads(model2)

    assert torch.allclose(perturbed(), baseline, rtol=1e-5, atol=1e-8)
    one_model_token = torch.zeros_like(env)
    one_model_token[mask.nonzero()[0].tolist()[0], mask.nonzero()[0].tolist()[1]] = True
    assert not torch.allclose(perturbed(one_model_token), baseline, rtol=1e-5, atol=1e-8)  # control
