"""Run by tests/train/test_distributed.py, alone or under torchrun: three updates on fixed groups.

Rank r of W takes every W-th group (data parallel over groups); the final parameters (rank 0)
are saved to the output path.

    python tests/train/ddp_worker.py MODEL_DIR GROUPS.jsonl OUT.pt
    python -m torch.distributed.run --nproc_per_node 2 tests/train/ddp_worker.py MODEL_DIR GROUPS.jsonl OUT.pt
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM

from envhub.core.records import Group
from envhub.train.config import LossConfig, ModelConfig, OptimConfig
from envhub.train.learner import Learner
from envhub.train.rows import build_rows


def main(model_dir: str, groups_path: str, out: str) -> None:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = 0
    if world > 1:
        dist.init_process_group("gloo")
        rank = dist.get_rank()
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, local_files_only=True)
    ddp = torch.nn.parallel.DistributedDataParallel(model, forward_sync_buffers=False) if world > 1 else None
    with open(groups_path, encoding="utf-8") as f:
        groups = [Group.model_validate_json(line) for line in f if line.strip()]
    mine = groups[rank::world]
    rows = build_rows(mine, pad_token_id=0).rows
    rows.advantages = torch.linspace(-1.0, 1.0, len(groups))[rank::world].repeat_interleave(
        torch.tensor([sum(len(t.steps) for t in g.trajectories) for g in mine])
    )
    learner = Learner(
        model,
        model_config=ModelConfig(path=model_dir),
        loss=LossConfig(kl_coef=0.01, entropy_coef=0.001),
        optim=OptimConfig(lr=1e-3, micro_batch_rows=2, shuffle=False),
        temperature=1.0,
        ddp_model=ddp,
    )
    for _ in range(3):
        old = learner.logprobs(rows)
        learner.update(rows, old, learner.reference_logprobs(rows), mini_batches=1)
    if rank == 0:
        torch.save(torch.cat([p.detach().flatten() for p in model.parameters()]), out)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:4])
