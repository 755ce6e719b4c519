"""Run by tests/train/test_distributed.py, alone or under torchrun: per-agent gradient norms of one model.

The rows of fixed groups carry two agents (Dr. MAS roles sharing one model), labelled two ways:
``split`` (rank 0's rows are all ``a``'s, rank 1's all ``b``'s under 2 ranks) and ``mixed``
(every rank holds rows of both). For each labelling a fresh learner runs two updates of one
optimizer step each, with ``row_agents``; every rank writes its ``agent_grad_norm`` of each update
to ``OUT.<rank>.json``. Alone, the process holds every row with the same labels.

    python tests/train/agent_norm_worker.py MODEL_DIR GROUPS.jsonl OUT [STRATEGY]
    python -m torch.distributed.run --nproc_per_node 2 tests/train/agent_norm_worker.py \
        MODEL_DIR GROUPS.jsonl OUT ddp
"""

from __future__ import annotations

import functools
import json
import os
import sys

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM

from envhub.core.records import Group
from envhub.train.config import LossConfig, ModelConfig, OptimConfig
from envhub.train.learner import Learner
from envhub.train.parallel import shard_fsdp2
from envhub.train.rows import build_rows


def _labels(scheme: str, rows_per_group: list[int], first_of_rank_1: int) -> list[str]:
    """Every row's agent, over all groups in order (group g's rows follow group g - 1's)."""
    out: list[str] = []
    for g, n in enumerate(rows_per_group):
        start = len(out)
        if scheme == "split":
            out += ["a" if g < first_of_rank_1 else "b"] * n
        else:
            out += ["b" if (start + i) % 3 == 0 else "a" for i in range(n)]
    return out


def main(model_dir: str, groups_path: str, out: str, strategy: str = "ddp") -> None:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = 0
    if world > 1:
        dist.init_process_group("gloo")
        rank = dist.get_rank()
    with open(groups_path, encoding="utf-8") as f:
        groups = [Group.model_validate_json(line) for line in f if line.strip()]
    half = len(groups) // 2
    share = range(len(groups)) if world == 1 else (range(0, half) if rank == 0 else range(half, len(groups)))
    rows_per_group = [sum(len(t.steps) for t in g.trajectories) for g in groups]
    before = sum(rows_per_group[: share.start])
    mine = [groups[i] for i in share]
    rows = build_rows(mine, pad_token_id=0).rows
    every_advantage = torch.linspace(-1.0, 1.0, sum(rows_per_group))
    rows.advantages = every_advantage[before : before + len(rows)]
    result: dict[str, list[dict[str, float]]] = {}
    held: dict[str, list[str]] = {}
    for scheme in ("split", "mixed"):
        agents = _labels(scheme, rows_per_group, half)[before : before + len(rows)]
        held[scheme] = sorted(set(agents))
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, local_files_only=True)
        ddp, shard = None, None
        if world > 1 and strategy == "fsdp2":
            shard = functools.partial(shard_fsdp2, bf16=False)
        elif world > 1:
            ddp = torch.nn.parallel.DistributedDataParallel(model, forward_sync_buffers=False)
        learner = Learner(
            model,
            model_config=ModelConfig(path=model_dir),
            loss=LossConfig(kl_coef=0.0, entropy_coef=0.0),
            optim=OptimConfig(lr=1e-3, micro_batch_rows=2, shuffle=False),
            temperature=1.0,
            ddp_model=ddp,
            shard=shard,
        )
        norms = []
        for _ in range(2):
            stats = learner.update(rows, learner.logprobs(rows), mini_batches=1, row_agents=agents)
            norms.append(dict(stats.agent_grad_norm))
        result[scheme] = norms
    with open(f"{out}.{rank}.json", "w", encoding="utf-8") as f:
        json.dump({"rows": len(rows), "agents": held, "norms": result}, f)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:5])
