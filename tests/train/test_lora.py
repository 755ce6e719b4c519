"""LoRA end to end: resume after SIGKILL, the reference as the base with adapters off, export, sync."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.records import Group
from envhub.train.checkpoint import latest_checkpoint
from envhub.train.config import LoRAConfig, LossConfig, ModelConfig, OptimConfig
from envhub.train.learner import Learner, response_logprobs
from envhub.train.rows import RowBatch, build_rows

ROOT = Path(__file__).resolve().parents[2]
#: What an iteration's training did: each must match between an unbroken and a resumed run.
COMPARED = ("actor/loss", "actor/pg_loss", "actor/kl", "actor/grad_norm", "rollout/reward", "policy/version")


def _model(path: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32, local_files_only=True)


def _peft(path: Path, lora: LoRAConfig | None = None) -> Any:
    from peft import LoraConfig, get_peft_model

    lora = lora or LoRAConfig(r=4, alpha=8)
    return get_peft_model(
        _model(path),
        LoraConfig(
            r=lora.r, lora_alpha=lora.alpha, target_modules=lora.target_modules, task_type="CAUSAL_LM"
        ),
    )


def _rows(groups: list[Group]) -> RowBatch:
    rows = build_rows(groups, pad_token_id=0).rows
    rows.advantages = torch.linspace(-1.0, 1.0, len(rows))
    return rows


def _command(model: Path, run: Path, iterations: int) -> list[str]:
    return [
        sys.executable, "-m", "envhub.train.cli",
        "--env", "envhub/SearchQA-v0", "--model", str(model), "--iterations", str(iterations),
        "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "2", "--seed", "3", "--no-progress",
        "--lr", "1e-2",
        "--set", "model.lora.r=4", "--set", "model.lora.alpha=8", "--set", "loss.kl_coef=0.05",
        "--set", "rollout.sampling_seed=11", "--set", "output.checkpoint_every=1",
        "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=6", "--set", "optim.mini_batch_rows=4",
        "--set", "optim.micro_batch_rows=2", "--set", "output.tensorboard=false",
    ]  # fmt: skip


def _metrics(run: Path) -> list[dict[str, Any]]:
    path = run / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_killed_lora_run_resumes_at_the_same_version_with_the_same_losses(
    small_model_dir: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    iterations = 5
    unbroken = tmp_path / "unbroken"
    done = subprocess.run(_command(small_model_dir, unbroken, iterations), env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=400)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    run = tmp_path / "killed"
    first = subprocess.Popen(_command(small_model_dir, run, iterations), env=env, cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 300
    while first.poll() is None and time.monotonic() < deadline:
        latest = latest_checkpoint(run)
        if latest is not None and int(latest.name[5:]) >= 2:
            break
        time.sleep(0.02)
    assert first.poll() is None, "the first run ended before it could be killed"
    first.send_signal(signal.SIGKILL)  # mid-run, after a checkpoint
    first.wait()
    killed_at = len(_metrics(run))
    assert 2 <= killed_at < iterations
    checkpoint = latest_checkpoint(run)
    assert checkpoint is not None and (checkpoint / "adapter_model.safetensors").is_file()

    second = subprocess.run(_command(small_model_dir, run, iterations), env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=400)  # fmt: skip
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]

    expected = {r["iteration"]: r for r in _metrics(unbroken)}
    rows = _metrics(run)
    assert sorted({r["iteration"] for r in rows}) == list(range(1, iterations + 1))
    # The second run went on after the killed run's last checkpoint (not from 0)...
    assert rows[killed_at]["iteration"] == int(checkpoint.name[5:]) + 1
    # ...with the unbroken run's losses, the killed run's iterations and the resumed ones alike.
    for row in rows:
        want = expected[row["iteration"]]
        for key in COMPARED:
            assert row[key] == pytest.approx(want[key], rel=1e-5, abs=1e-7), (row["iteration"], key)
    state = torch.load(run / "checkpoints" / f"iter_{iterations}" / "trainer_state.pt", weights_only=False)
    assert state["state"]["policy_version"] == iterations


def test_the_lora_reference_is_the_base_with_adapters_off_not_a_copy(
    small_model_dir: Path, sampled_groups: list[Group]
) -> None:
    model = _peft(small_model_dir)
    learner = Learner(
        model,
        model_config=ModelConfig(path=str(small_model_dir)),
        loss=LossConfig(kl_coef=0.1),
        optim=OptimConfig(lr=1e-2, micro_batch_rows=4, shuffle=False),
        temperature=1.0,
    )
    # No second copy of the base weights: every parameter the learner reaches is the model's.
    storages = {p.untyped_storage().data_ptr() for p in model.parameters()}
    for value in vars(learner).values():
        if isinstance(value, torch.nn.Module):
            assert {p.untyped_storage().data_ptr() for p in value.parameters()} <= storages
    rows = _rows(sampled_groups)
    for _ in range(2):  # move the adapters away from their zero start
        learner.update(rows, learner.logprobs(rows), learner.reference_logprobs(rows))
    ref = learner.reference_logprobs(rows)
    assert ref is not None
    base = response_logprobs(_model(small_model_dir), rows, temperature=1.0, micro_batch_rows=4)
    assert torch.allclose(ref, base, atol=1e-6)
    policy = learner.logprobs(rows)  # the adapters are back on afterwards
    assert (policy - base).abs().max() > 1e-3
    assert torch.equal(policy, learner.logprobs(rows))


def _train_lora(model: Path, run: Path, iterations: int = 2) -> Any:
    import asyncio

    from envhub.train.config import load_config
    from envhub.train.trainer import Trainer

    config = load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",
            "model.path": str(model),
            "iterations": iterations,
            "seed": 1,
            "output.run_dir": str(run),
            "output.checkpoint_every": 1,
            "output.tensorboard": False,
            "rollout.group_size": 2,
            "rollout.batch_tasks": 2,
            "rollout.max_steps": 2,
            "rollout.max_tokens": 6,
            "optim.lr": 5e-2,
            "model.lora": {"r": 4, "alpha": 8},
        },
    )
    trainer = Trainer(config)
    asyncio.run(trainer.run())
    return trainer


def _logits(model: Any, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_every_lora_checkpoint_exports_to_a_servable_merged_model(
    small_model_dir: Path, tmp_path: Path
) -> None:
    trainer = _train_lora(small_model_dir, tmp_path / "run")
    ids = torch.tensor([[1, 5, 9, 42, 7, 100, 3]])
    trained = _logits(trainer.model.eval(), ids)
    effect = (trained - _logits(_model(small_model_dir), ids)).abs().max()
    assert effect > 1e-4  # it did train
    for name, expect in (("iter_1", None), ("iter_2", trained)):
        out = tmp_path / f"export-{name}"
        done = subprocess.run(
            [sys.executable, "-m", "envhub.train.cli", "export",
             "--checkpoint", str(tmp_path / "run" / "checkpoints" / name), "--out", str(out)],
            capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert not list(out.glob("adapter_*")) and (out / "config.json").is_file()
        assert (out / "tokenizer.json").is_file()
        served = _model(out)  # a plain HF model directory: what vLLM or transformers serve
        assert not any("lora" in n for n, _ in served.named_parameters())
        if expect is not None:
            # Merged weights compute W x + (B A x) s as (W + B A s) x: equal up to float32
            # rounding (up to ~1e-4 on these logits, which depends on the trained weights), and
            # far closer to the trained model than the base is (an unmerged export is the base).
            error = (_logits(served, ids) - expect).abs().max()
            assert error < 1e-4 and error < effect / 2, (float(error), float(effect))


def test_a_run_directory_exports_its_latest_checkpoint(small_model_dir: Path, tmp_path: Path) -> None:
    from envhub.train.export import export_checkpoint

    trainer = _train_lora(small_model_dir, tmp_path / "run", iterations=1)
    out = export_checkpoint(tmp_path / "run", tmp_path / "out")
    ids = torch.tensor([[2, 4, 6, 8]])
    assert torch.allclose(_logits(_model(out), ids), _logits(trainer.model.eval(), ids), atol=1e-5)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--checkpoint", "/nonexistent/ckpt", "--out", "{tmp}/o"], "not a directory"),
        (["--checkpoint", "{tmp}", "--out", "{tmp}/o"], "no checkpoint"),
        (["--checkpoint", "{run}", "--out", "{run}"], "not empty"),
        (["--checkpoint", "{run}", "--out", "{tmp}/o", "--base", "/nonexistent/base"], "base model"),
    ],
)
def test_export_refuses_bad_input_in_one_line(
    args: list[str], says: str, small_model_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    (run / "checkpoints" / "iter_1").mkdir(parents=True)
    (run / "checkpoints" / "iter_1" / "trainer_state.pt").write_bytes(b"")
    (run / "checkpoints" / "iter_1" / "adapter_config.json").write_text("{}")
    argv = [a.format(tmp=tmp_path, run=run) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "envhub.train.cli", "export", *argv],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr


def test_the_weight_sync_writes_lora_as_merged_plain_weights(
    small_model_dir: Path, sampled_groups: list[Group], tmp_path: Path
) -> None:
    from envhub.train.weight_sync import save_weights

    model = _peft(small_model_dir)
    learner = Learner(
        model,
        model_config=ModelConfig(path=str(small_model_dir)),
        loss=LossConfig(kl_coef=0.0),
        optim=OptimConfig(lr=1e-2, micro_batch_rows=4, shuffle=False),
        temperature=1.0,
    )
    rows = _rows(sampled_groups)
    learner.update(rows, learner.logprobs(rows))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    path = save_weights(model, tmp_path / "weights", 3)
    # The training model is untouched (adapters not merged into it)...
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    assert any("lora_" in n for n, _ in model.named_parameters())
    # ...and the pushed directory is a plain model with the adapters merged in.
    pushed = _model(path)
    assert not any("lora" in n for n in pushed.state_dict())
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    assert torch.allclose(_logits(pushed, ids), _logits(model.eval(), ids), atol=1e-5)


def test_a_lora_checkpoint_does_not_resume_a_full_run_nor_the_reverse(
    small_model_dir: Path, tmp_path: Path
) -> None:
    from envhub.core.errors import ConfigurationError
    from envhub.train.config import load_config
    from envhub.train.trainer import train

    def config(run: Path, lora: bool) -> Any:
        return load_config(None, {
            "env": "envhub/SearchQA-v0", "model.path": str(small_model_dir), "iterations": 2,
            "output.run_dir": str(run), "output.tensorboard": False, "rollout.group_size": 2,
            "rollout.batch_tasks": 2, "rollout.max_steps": 1, "rollout.max_tokens": 4,
            **({"model.lora": {"r": 4}} if lora else {}),
        })  # fmt: skip

    _train_lora(small_model_dir, tmp_path / "lora", iterations=1)
    with pytest.raises(ConfigurationError, match="holds a LoRA adapter"):
        train(config(tmp_path / "lora", lora=False))
    train(config(tmp_path / "full", lora=False).model_copy(update={"iterations": 1}))
    with pytest.raises(ConfigurationError, match="holds full weights"):
        train(config(tmp_path / "full", lora=True))
