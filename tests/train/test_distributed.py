"""Data parallel over groups: 2 gloo processes under torchrun equal 1 process on the same batch.

Both strategies run on the CPU (gloo): DDP and FSDP2 (``torch.distributed.fsdp.fully_shard``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from envhub.core.records import Group

WORKER = Path(__file__).with_name("ddp_worker.py")
REPO = Path(__file__).resolve().parents[2]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]


def _run(args: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


def _flat(model_dir: Path) -> torch.Tensor:
    """A model directory's safetensors weights, flattened in name order."""
    from safetensors.torch import load_file

    weights = {k: v for f in sorted(model_dir.glob("*.safetensors")) for k, v in load_file(str(f)).items()}
    return torch.cat([weights[k].flatten().float() for k in sorted(weights)])


def _initial_parameters(model_dir: Path) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32, local_files_only=True)
    return torch.cat([p.detach().flatten() for p in model.parameters()])


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["ddp", "fsdp2"])
def test_two_gloo_ranks_give_the_parameters_of_one_process(
    strategy: str, small_model_dir: Path, sampled_groups: list[Group], tmp_path: Path
) -> None:
    groups = tmp_path / "groups.jsonl"
    groups.write_text("".join(g.model_dump_json() + "\n" for g in sampled_groups), encoding="utf-8")
    single, double = tmp_path / "one.pt", tmp_path / "two.pt"
    _run([sys.executable, str(WORKER), str(small_model_dir), str(groups), str(single)])
    _run([*TORCHRUN, str(WORKER), str(small_model_dir), str(groups), str(double), strategy])
    one, two = torch.load(single), torch.load(double)
    assert not torch.allclose(one, _initial_parameters(small_model_dir))  # the updates moved the weights
    assert torch.allclose(one, two, atol=1e-5)


@pytest.mark.slow
def test_envhub_train_runs_under_torchrun(small_model_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "ddp"
    _run(
        [
            *TORCHRUN, "-m", "envhub.train.cli", "--env", "envhub/SearchQA-v0",
            "--model", str(small_model_dir), "--iterations", "2", "--run-dir", str(run),
            "--group-size", "2", "--batch-tasks", "2",
            "--set", "rollout.max_steps=1", "--set", "rollout.max_tokens=4", "--no-progress",
        ]
    )  # fmt: skip
    assert (run / "metrics.jsonl").read_text().count("\n") == 2


@pytest.mark.slow
def test_fsdp2_run_under_torchrun_resumes_in_one_process_and_back(
    small_model_dir: Path, tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    from envhub.train.checkpoint import latest_checkpoint
    from envhub.train.config import load_config
    from envhub.train.trainer import Trainer

    run = tmp_path / "fsdp2"
    options = [
        "--env", "envhub/SearchQA-v0", "--model", str(small_model_dir), "--run-dir", str(run),
        "--group-size", "2", "--batch-tasks", "2", "--lr", "1e-3", "--seed", "1",
    ]  # fmt: skip
    sets = ["rollout.max_steps=2", "rollout.max_tokens=6", "optim.micro_batch_rows=1", "model.strategy=fsdp2"]
    fsdp2_run = [*TORCHRUN, "-m", "envhub.train.cli", *options, "--no-progress"]
    fsdp2_run += [arg for s in sets for arg in ("--set", s)]
    _run([*fsdp2_run, "--iterations", "2"])
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    # Each version's sampler got the gathered weights: its logprobs are the sharded actor's.
    assert all(r["rollout/logprob_diff"] < 1e-4 for r in rows)
    assert all(r["actor/optimizer_steps"] == 1 for r in rows)
    checkpoint = latest_checkpoint(run)
    assert checkpoint is not None and checkpoint.name == "iter_2"
    weights = {k: v for f in checkpoint.glob("*.safetensors") for k, v in load_file(str(f)).items()}
    initial = load_file(str(next(small_model_dir.glob("*.safetensors"))))
    assert weights.keys() == initial.keys()
    assert all(weights[k].shape == initial[k].shape for k in initial)  # full, not shards
    assert any(not torch.equal(weights[k], initial[k]) for k in initial)

    config = load_config(
        None,
        {
            "env": "envhub/SearchQA-v0", "model.path": str(small_model_dir), "output.run_dir": str(run),
            "rollout.group_size": 2, "rollout.batch_tasks": 2, "optim.lr": 1e-3, "seed": 1,
            "iterations": 3, "output.progress": False,
            **dict(s.split("=") for s in sets[:-1]),
        },
    )  # fmt: skip
    trainer = Trainer(config)
    import asyncio

    result = asyncio.run(trainer.run())
    assert [r.iteration for r in result.iterations] == [3]
    assert result.policy_version == 3
    # The optimizer state came back from the FSDP2 checkpoint: AdamW has taken 2 + 1 steps.
    steps = {float(s["step"]) for s in trainer.learner.optimizer.state.values()}
    assert steps == {3.0}

    # And back: FSDP2 ranks take their shards of the 1-process checkpoint and go on.
    _run([*fsdp2_run, "--iterations", "4"])
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4]
    assert rows[-1]["policy/version"] == 4.0 and rows[-1]["rollout/logprob_diff"] < 1e-4
    blob = torch.load(run / "checkpoints" / "iter_4" / "trainer_state.pt", weights_only=False)
    # The shards were loaded from iter_3: one step from it, farther from the initial weights.
    w3, w4 = (_flat(run / "checkpoints" / f"iter_{k}") for k in (3, 4))
    w0 = _flat(small_model_dir)
    assert (w4 - w3).norm() < 0.5 * (w4 - w0).norm()
    assert {float(s["step"]) for s in blob["optimizer"]["state"].values()} == {4.0}


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["ddp", "fsdp2"])
def test_two_ranks_log_each_agent_s_global_gradient_norm_of_a_shared_model(
    strategy: str, small_model_dir: Path, sampled_groups: list[Group], tmp_path: Path
) -> None:
    """Every rank's ``agent_grad_norm`` is the norm of the agent's share of the all-reduced step,
    the number one process holding every row logs: with each rank's rows of one agent only
    (``split``) and with both agents on every rank (``mixed``)."""
    worker = WORKER.with_name("agent_norm_worker.py")
    groups = tmp_path / "groups.jsonl"
    groups.write_text("".join(g.model_dump_json() + "\n" for g in sampled_groups), encoding="utf-8")
    _run([sys.executable, str(worker), str(small_model_dir), str(groups), str(tmp_path / "one")])
    _run([*TORCHRUN, str(worker), str(small_model_dir), str(groups), str(tmp_path / "two"), strategy])
    one = json.loads((tmp_path / "one.0.json").read_text())
    ranks = [json.loads((tmp_path / f"two.{r}.json").read_text()) for r in range(2)]
    assert [r["agents"]["split"] for r in ranks] == [["a"], ["b"]]
    assert all(r["agents"]["mixed"] == ["a", "b"] for r in ranks)
    for scheme in ("split", "mixed"):
        expected = one["norms"][scheme]
        assert all(set(norms) == {"a", "b"} for norms in expected)
        for rank in ranks:
            got = rank["norms"][scheme]
            assert [set(norms) for norms in got] == [{"a", "b"}] * 2, (scheme, got)
            for want, have in zip(expected, got, strict=True):
                for agent in ("a", "b"):
                    assert have[agent] == pytest.approx(want[agent], rel=1e-4), (scheme, agent)


@pytest.fixture(scope="module")
def verifier_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small model's shape with other weights (seed 1): the verifier's own model."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("verifier-model") / "model", seed=1, hidden_size=64, vocab_size=512
    )


@pytest.mark.slow
def test_two_ranks_train_each_agent_s_own_model_as_one_process_does(
    small_model_dir: Path, verifier_model_dir: Path, sampled_groups: list[Group], tmp_path: Path
) -> None:
    """Dr. MAS with a model per agent under torchrun: after two iterations, the first with no
    verifier row on rank 1, every agent's model holds what one process training on all the rows
    holds; rank 0's checkpoint resumes on the two ranks and in one process, and the one
    process's on the two ranks."""
    from envhub.train.config import SHARED_POLICY
    from envhub.train.trainer import Trainer
    from tests.train.agents_worker import config, flat_parameters, main

    worker = WORKER.with_name("agents_worker.py")
    groups = tmp_path / "groups.jsonl"
    groups.write_text("".join(g.model_dump_json() + "\n" for g in sampled_groups), encoding="utf-8")
    models = [str(small_model_dir), str(verifier_model_dir), str(groups)]
    one, two = tmp_path / "one", tmp_path / "two"
    main(*models, str(one))  # one process: this one
    _run([*TORCHRUN, str(worker), *models, str(two), str(one)])
    reports = [json.loads((two / f"report.{r}.json").read_text()) for r in range(2)]
    verifier_rows = [r["rows"]["verifier"] for r in reports]
    assert verifier_rows[1][0] == 0 and verifier_rows[0][0] > 0  # rank 1: no verifier row at first
    assert all(rows[1] > 0 for rows in verifier_rows)
    # Each rank resumed every model from the two ranks' checkpoint, and from the one process's.
    resumed = {SHARED_POLICY: True, "verifier": True}
    assert all(r["resumed"] == r["resumed_one_process"] == resumed for r in reports)
    single, double = torch.load(one / "params.pt"), torch.load(two / "params.pt")
    initial = {
        SHARED_POLICY: _initial_parameters(small_model_dir),
        "verifier": _initial_parameters(verifier_model_dir),
    }
    assert single.keys() == double.keys() == initial.keys()
    for name in initial:
        assert not torch.allclose(single[name], initial[name])  # the updates moved the weights
        assert torch.allclose(single[name], double[name], atol=1e-5), name
    # The two ranks' checkpoint resumes in one process.
    trainer = Trainer(config(*models[:2], str(two), len(sampled_groups)))
    trainer._resume()
    assert trainer.state.iteration == 2
    for name, policy in trainer.policies.items():
        assert torch.equal(flat_parameters(policy.model), double[name]), name
