"""Run by tests/train/test_distributed.py, alone or under torchrun: a model per agent (Dr. MAS).

A real :class:`~envhub.train.trainer.Trainer` for the search orchestra, the verifier on a model
of its own (``agents.verifier``), the search and answer agents on the top-level one, trains two
iterations on fixed groups whose steps are relabelled as the orchestra's roles:

* iteration 1 (``split``): the first half of the groups hold verifier and search rows, the second
  half search and answer rows, so under 2 ranks rank 1 holds no row of the verifier's model;
* iteration 2 (``mixed``): every group holds rows of all three roles.

Rank r of W trains on its contiguous share of the groups (``batch_tasks / W``); alone, the
process holds them all. After the two updates every rank joins the checkpoint (rank 0 writes it
to RUN_DIR); rank 0 saves each model's parameters, flattened, to ``RUN_DIR/params.pt``, and every
rank writes its rows of each model per iteration, and whether a resume from the checkpoint on
the same ranks gives back each model, to ``RUN_DIR/report.<rank>.json`` (with ONE_PROCESS_RUN,
the run directory of a one-process run of this worker, also whether a resume from its
checkpoint gives back the parameters it saved).

    python tests/train/agents_worker.py MODEL_DIR VERIFIER_DIR GROUPS.jsonl RUN_DIR
    python -m torch.distributed.run --nproc_per_node 2 tests/train/agents_worker.py \
        MODEL_DIR VERIFIER_DIR GROUPS.jsonl RUN_DIR [ONE_PROCESS_RUN]
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import torch

from envhub.core.records import Group
from envhub.train.config import TrainConfig, load_config
from envhub.train.trainer import Trainer

ROLES: tuple[str, ...] = ("verifier", "search", "answer")


def config(model_dir: str, verifier_dir: str, run_dir: str, groups: int) -> TrainConfig:
    """The run both the worker and the test (resuming it in one process) build."""
    return load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",
            "algo": "grpo",
            "model.path": model_dir,
            "seed": 1,
            "iterations": 2,
            "output.run_dir": run_dir,
            "output.progress": False,
            "output.save_groups": False,
            "rollout.group_size": 2,
            "rollout.batch_tasks": groups,
            "rollout.agents": {"orchestra": "search"},
            "advantage.group_by_agent": True,
            "loss.kl_coef": 0.0,
            "loss.entropy_coef": 0.0,
            "optim.lr": 1e-3,
            "optim.micro_batch_rows": 2,
            "agents": {
                "verifier": {"model": {"path": verifier_dir}, "optim": {"lr": 2e-3, "micro_batch_rows": 3}}
            },
        },
    )


def relabel(groups: list[Group], scheme: str) -> list[Group]:
    """The groups with every step's ``agent_id`` set to one of the orchestra's roles."""
    half = len(groups) // 2
    out = []
    for g, group in enumerate(groups):
        roles = ROLES
        if scheme == "split":
            roles = ("verifier", "search") if g < half else ("search", "answer")
        trajectories = []
        k = 0
        for traj in group.trajectories:
            steps = []
            for step in traj.steps:
                steps.append(step.model_copy(update={"agent_id": roles[k % len(roles)]}))
                k += 1
            trajectories.append(traj.model_copy(update={"steps": steps}))
        out.append(group.model_copy(update={"trajectories": trajectories}))
    return out


def flat_parameters(model: Any) -> torch.Tensor:
    return torch.cat([p.detach().flatten().float() for p in model.parameters()])


def _resumes(
    trained: dict[str, torch.Tensor], model_dir: str, verifier_dir: str, run_dir: str, groups: int
) -> dict[str, bool]:
    """Whether a trainer resumed from ``run_dir``'s checkpoint holds ``trained``, model by model."""
    resumed = Trainer(config(model_dir, verifier_dir, run_dir, groups))
    resumed._resume()
    return {
        name: bool(torch.equal(trained[name], flat_parameters(p.model))) and resumed.state.iteration == 2
        for name, p in resumed.policies.items()
    }


def main(
    model_dir: str, verifier_dir: str, groups_path: str, run_dir: str, one_process_run: str | None = None
) -> None:
    with open(groups_path, encoding="utf-8") as f:
        groups = [Group.model_validate_json(line) for line in f if line.strip()]
    models = (model_dir, verifier_dir)
    trainer = Trainer(config(*models, run_dir, len(groups)))
    rank, world = trainer.dist.rank, trainer.dist.world
    share = slice(rank * trainer.local_tasks, (rank + 1) * trainer.local_tasks)
    rows: dict[str, list[int]] = {}
    for iteration, scheme in enumerate(("split", "mixed"), start=1):
        mine = relabel(groups, scheme)[share]
        metrics = asyncio.run(trainer._train_on(mine))
        for name in trainer.policies:
            rows.setdefault(name, []).append(int(metrics.get(f"agent/{name}/rows", 0.0)))
        trainer.state.iteration = trainer.state.policy_version = iteration
    trainer._write_checkpoint()  # every rank joins; rank 0 writes
    trained = {name: flat_parameters(p.model) for name, p in trainer.policies.items()}
    # A resume on the same ranks takes every model back as it was trained.
    report: dict[str, Any] = {"rows": rows, "resumed": _resumes(trained, *models, run_dir, len(groups))}
    if one_process_run is not None:  # and so does one of a one-process run's checkpoint
        own = torch.load(Path(one_process_run) / "params.pt")
        report["resumed_one_process"] = _resumes(own, *models, one_process_run, len(groups))
    out = Path(run_dir)
    (out / f"report.{rank}.json").write_text(json.dumps(report), encoding="utf-8")
    if rank == 0:
        torch.save(trained, out / "params.pt")
    if world > 1:
        import torch.distributed as dist

        dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:6])
