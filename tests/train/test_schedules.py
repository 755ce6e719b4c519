"""Schedules and guards: cosine learning rate with a floor, overlong rows, metrics over ranks."""

from __future__ import annotations

import math
import os
import socket
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step, Trajectory
from envhub.train.config import LossConfig, ModelConfig, OptimConfig, load_config
from envhub.train.learner import Learner
from envhub.train.rows import build_rows


def _learner(path: Path, optim: OptimConfig) -> Learner:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32, local_files_only=True)
    return Learner(
        model,
        model_config=ModelConfig(path=str(path)),
        loss=LossConfig(kl_coef=0.0, entropy_coef=0.0),
        optim=optim,
        temperature=1.0,
    )


def test_cosine_schedule_runs_from_lr_to_the_floor_over_the_iterations(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    learner = _learner(
        small_model_dir, OptimConfig(lr=1e-3, lr_schedule="cosine", min_lr_ratio=0.1, shuffle=False)
    )
    rows = build_rows(sampled_groups, pad_token_id=0).rows
    rows.advantages = torch.ones(len(rows))
    seen = []
    for done in (0, 5, 10):
        learner.set_progress(done, 10)
        seen.append(learner.optimizer.param_groups[0]["lr"])
        stats = learner.update(rows, learner.logprobs(rows))
        assert stats.lr == pytest.approx(seen[-1])  # the step used the scheduled rate
    assert seen == pytest.approx([1e-3, 1e-3 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi / 2))), 1e-4])


def test_schedule_keys_are_validated_at_load_time() -> None:
    base = {"env": "x", "model.path": "m"}
    config = load_config(overrides={**base, "optim.lr_schedule": "cosine", "optim.min_lr_ratio": 0.05})
    assert config.optim.lr_schedule == "cosine"
    with pytest.raises(ConfigurationError, match="min_lr_ratio"):
        load_config(overrides={**base, "optim.min_lr_ratio": 1.5})
    with pytest.raises(ConfigurationError, match="lr_schedule"):
        load_config(overrides={**base, "optim.lr_schedule": "linear-ish"})
    with pytest.raises(ConfigurationError, match="overlong"):
        load_config(overrides={**base, "rollout.overlong": "drop-it"})


def _step(idx: int, prompt: int, response: int, reward: float = 1.0) -> Step:
    return Step(
        uid="g",
        traj_id="g-0",
        step_idx=idx,
        anchor=f"s{idx}",
        action="a",
        reward=reward,
        prompt_token_ids=list(range(1, prompt + 1)),
        response_token_ids=list(range(100, 100 + response)),
        response_logprobs=[-0.5] * response,
        policy_version=0,
    )


def _group() -> list[Group]:
    steps = [_step(0, 3, 2), _step(1, 8, 2), _step(2, 3, 6)]
    traj = Trajectory(uid="g", traj_id="g-0", env_id="e", task_id="t", steps=steps)
    return [Group(uid="g", env_id="e", task_id="t", trajectories=[traj])]


def test_overlong_mask_leaves_rows_out_but_keeps_them_in_the_advantage_batch() -> None:
    built = build_rows(_group(), pad_token_id=0, max_prompt_tokens=4, max_response_tokens=4)
    assert built.kept.tolist() == [0] and built.dropped_long == 2 and built.truncated == 0
    assert len(built.steps) == 3


def test_overlong_truncate_keeps_the_prompts_end_and_the_responses_start() -> None:
    built = build_rows(
        _group(), pad_token_id=0, max_prompt_tokens=4, max_response_tokens=4, overlong="truncate"
    )
    rows = built.rows
    assert built.kept.tolist() == [0, 1, 2] and built.truncated == 2 and built.dropped_long == 0
    assert rows.input_ids[1, :6].tolist() == [5, 6, 7, 8, 100, 101]  # the prompt's last 4
    assert rows.response_ids[2].tolist() == [100, 101, 102, 103]  # the response's first 4
    assert rows.response_mask.sum(-1).tolist() == [2, 2, 4]
    assert rows.has_rollout_logprobs
    assert built.steps.reward.tolist() == [1.0, 1.0, 1.0]


def test_overlong_penalise_truncates_and_lowers_the_steps_reward() -> None:
    built = build_rows(
        _group(),
        pad_token_id=0,
        max_response_tokens=4,
        overlong="penalise",
        overlong_penalty=0.5,
    )
    assert built.truncated == 1 and built.rows.response_mask.sum(-1).tolist() == [2, 2, 4]
    assert built.steps.reward.tolist() == [1.0, 1.0, 0.5]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rank(rank: int, port: int, out: Any) -> None:
    import torch.distributed as dist

    from envhub.train.parallel import reduce_metrics

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        metrics = {
            "rollout/success": [0.25, 0.75][rank],
            "rows/count": [10.0, 14.0][rank],
            "staleness/max": [1.0, 3.0][rank],
            "agent/verifier/grad_norm_max": [0.5, 0.2][rank],
            "time/update_s": [2.0, 5.0][rank],
        }
        if rank == 1:
            metrics["rollout/success/pick"] = 1.0  # a key only one rank has
        out.put((rank, reduce_metrics(metrics)))
    finally:
        dist.destroy_process_group()


def test_metrics_are_reduced_over_ranks() -> None:
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank, args=(r, port, out)) for r in range(2)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert results[0] == results[1]
    assert results[0] == {
        "rollout/success": 0.5,
        "rows/count": 24.0,
        "staleness/max": 3.0,
        "agent/verifier/grad_norm_max": 0.5,
        "time/update_s": 5.0,
        "rollout/success/pick": 1.0,
    }
