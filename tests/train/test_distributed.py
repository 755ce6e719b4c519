"""Data parallel over groups: 2 gloo processes under torchrun equal 1 process on the same batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from envhub.core.records import Group

WORKER = Path(__file__).with_name("ddp_worker.py")
REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


@pytest.mark.slow
def test_two_gloo_ranks_give_the_parameters_of_one_process(
    small_model_dir: Path, sampled_groups: list[Group], tmp_path: Path
) -> None:
    groups = tmp_path / "groups.jsonl"
    groups.write_text("".join(g.model_dump_json() + "\n" for g in sampled_groups), encoding="utf-8")
    single, double = tmp_path / "one.pt", tmp_path / "two.pt"
    _run([sys.executable, str(WORKER), str(small_model_dir), str(groups), str(single)])
    _run(
        [
            sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
            str(WORKER), str(small_model_dir), str(groups), str(double),
        ]
    )  # fmt: skip
    one, two = torch.load(single), torch.load(double)
    start = torch.cat(
        [p.flatten() for p in __import__("transformers").AutoModelForCausalLM.from_pretrained(
            str(small_model_dir), dtype=torch.float32, local_files_only=True).parameters()]
    )  # fmt: skip
    assert not torch.allclose(one, start)  # the updates moved the weights
    assert torch.allclose(one, two, atol=1e-5)


@pytest.mark.slow
def test_envhub_train_runs_under_torchrun(small_model_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "ddp"
    _run(
        [
            sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
            "-m", "envhub.train.cli", "--env", "envhub/SearchQA-v0", "--model", str(small_model_dir),
            "--iterations", "2", "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "2",
            "--set", "rollout.max_steps=1", "--set", "rollout.max_tokens=4", "--no-progress",
        ]
    )  # fmt: skip
    assert (run / "metrics.jsonl").read_text().count("\n") == 2
