"""The training loop end to end, in process: metrics, TensorBoard, checkpoints, resume, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envhub.train.checkpoint import latest_checkpoint
from envhub.train.config import load_config
from envhub.train.tracking import read_metrics
from envhub.train.trainer import train


def _config(model: Path, run_dir: Path, **over: Any) -> Any:
    base = {
        "env": "envhub/SearchQA-v0",
        "algo": "gigpo",
        "model.path": str(model),
        "iterations": 2,
        "seed": 1,
        "output.run_dir": str(run_dir),
        "rollout.group_size": 2,
        "rollout.batch_tasks": 2,
        "rollout.max_steps": 2,
        "rollout.max_tokens": 8,
        "optim.lr": 1e-4,
        "optim.micro_batch_rows": 8,
    }
    base.update(over)
    return load_config(None, base)


def test_a_run_logs_checkpoints_and_plots(small_model_dir: Path, tmp_path: Path) -> None:
    result = train(_config(small_model_dir, tmp_path / "run", **{"loss.kl_coef": 0.01}))
    assert [r.iteration for r in result.iterations] == [1, 2]
    assert result.policy_version == 2
    rows = read_metrics(tmp_path / "run")
    assert [r["iteration"] for r in rows] == [1, 2]
    for key in (
        "rollout/success",
        "rollout/reward",
        "actor/pg_loss",
        "actor/kl",
        "actor/entropy",
        "actor/clipfrac",
        "actor/grad_norm",
        "perf/tokens_per_s",
        "time/rollout_wait_s",
        "time/old_logprobs_s",
        "time/update_s",
        "time/sync_s",
        "staleness/max",
    ):
        assert key in rows[-1], key
    # The sampler's logprobs and the actor's recomputation agree (same weights, same temperature).
    assert rows[0]["rollout/logprob_diff"] < 1e-4
    assert list((tmp_path / "run" / "tensorboard").glob("events.out.tfevents.*"))
    assert latest_checkpoint(tmp_path / "run") is not None
    from envhub.train.plot import plot_run

    png = plot_run(tmp_path / "run")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_resumed_run_continues_at_the_same_version(small_model_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(_config(small_model_dir, run, **{"output.checkpoint_every": 1}))
    result = train(_config(small_model_dir, run, iterations=3))
    assert [r.iteration for r in result.iterations] == [3]  # iterations 1 and 2 were not redone
    assert result.policy_version == 3
    state = json.loads((run / "config.json").read_text())
    assert state["iterations"] == 3
    assert [r["iteration"] for r in read_metrics(run)] == [1, 2, 3]


def test_grpo_and_hgpo_run_too(small_model_dir: Path, tmp_path: Path) -> None:
    for algo in ("grpo", "hgpo"):
        result = train(_config(small_model_dir, tmp_path / algo, algo=algo, iterations=1))
        assert result.policy_version == 1


def test_async_rollouts_stay_within_the_staleness_bound(small_model_dir: Path, tmp_path: Path) -> None:
    result = train(_config(small_model_dir, tmp_path / "async", iterations=3, max_staleness=1))
    lags = result.series("staleness/max")
    assert lags and max(lags) <= 1


def test_the_cli_trains_and_prints_the_curve(small_model_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "cli"
    out = subprocess.run(
        [
            sys.executable, "-m", "envhub.train.cli",
            "--env", "envhub/SearchQA-v0", "--model", str(small_model_dir), "--iterations", "1",
            "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "2",
            "--set", "rollout.max_steps=1", "--set", "rollout.max_tokens=4", "--no-progress",
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr + out.stdout
    assert "learning curve" in out.stdout and (run / "curves.png").is_file()


def test_the_cli_names_a_wrong_key(small_model_dir: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "envhub.train.cli", "--env", "envhub/SearchQA-v0",
         "--model", str(small_model_dir), "--set", "loss.kl_coeff=0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    assert "loss.kl_coeff: unknown key" in out.stderr  # errors go to stderr, the curve to stdout


@pytest.mark.parametrize(
    "bad",
    [
        {"rollout.group_size": 0},
        {"algo": "ppo"},
        {"advantage": {"gama": 0.9}},
        {"model.strategy": "fsdp"},
        {"model.strategy": "fsdp2", "model.lora": {"r": 4}},
    ],
)
def test_bad_settings_are_refused_naming_the_key(
    small_model_dir: Path, tmp_path: Path, bad: dict[str, Any]
) -> None:
    from envhub.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as info:
        _config(small_model_dir, tmp_path, **bad)
    key = next(iter(bad)).split(".")[-1]
    assert key in str(info.value) or "gama" in str(info.value)


def test_the_strategy_is_a_model_key_and_a_cli_option(small_model_dir: Path, tmp_path: Path) -> None:
    assert _config(small_model_dir, tmp_path).model.strategy == "ddp"
    assert _config(small_model_dir, tmp_path, **{"model.strategy": "fsdp2"}).model.strategy == "fsdp2"
    out = subprocess.run(
        [sys.executable, "-m", "envhub.train.cli", "--help"], capture_output=True, text=True, timeout=120
    )
    assert "--strategy" in out.stdout


def test_validation_runs_every_k_iterations_at_temperature_0_4(small_model_dir: Path, tmp_path: Path) -> None:
    config = _config(
        small_model_dir,
        tmp_path / "val",
        iterations=2,
        **{"validation.every": 2, "validation.tasks": 2, "validation.split": "test"},
    )
    assert config.validation.temperature == 0.4 and config.validation.group_size == 1
    result = train(config)
    assert "val/success" not in result.iterations[0].metrics
    assert result.iterations[1].metrics["val/episodes"] == 2.0
    # The same numbers `envhub eval` reports (envhub.eval), logged with the run's metrics.
    logged = read_metrics(tmp_path / "val")[-1]
    for key in ("val/success_lo", "val/success_hi", "val/pass@1", "val/pass^1"):
        assert key in logged, sorted(logged)
    assert logged["val/success_lo"] <= logged["val/success"] <= logged["val/success_hi"]
    assert any(key.startswith("val/success/hops/") for key in logged)  # SearchQA's declared breakdown


def test_a_run_ends_at_the_first_validation_that_reaches_stop_at(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # stop_at 0: the first validation (iteration 1) reaches it, so the run ends there, checkpointed,
    # and running the same recipe again trains no further.
    over = {"validation.every": 1, "validation.tasks": 2, "validation.stop_at": 0.0}
    result = train(_config(small_model_dir, tmp_path / "stop", iterations=3, **over))
    assert [r.iteration for r in result.iterations] == [1]
    assert latest_checkpoint(tmp_path / "stop") is not None
    again = train(_config(small_model_dir, tmp_path / "stop", iterations=3, **over))
    assert again.iterations == [] and again.policy_version == result.policy_version
    # A target no validation reaches: every iteration runs.
    over["validation.stop_at"] = 1.0
    longer = train(_config(small_model_dir, tmp_path / "full", iterations=2, **over))
    assert [r.iteration for r in longer.iterations] == [1, 2] or longer.validation[-1].metrics[
        "val/success"
    ] == 1.0


def test_stop_at_without_validation_is_refused(small_model_dir: Path, tmp_path: Path) -> None:
    from envhub.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"validation\.every"):
        _config(small_model_dir, tmp_path, **{"validation.stop_at": 0.5})


def test_envhub_plot_draws_a_run(small_model_dir: Path, tmp_path: Path) -> None:
    train(_config(small_model_dir, tmp_path / "p", iterations=1))
    out = subprocess.run(
        [sys.executable, "-m", "envhub.cli", "plot", str(tmp_path / "p"), "--out", str(tmp_path / "c.png")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_a_run_records_each_iterations_groups_for_the_viewer(small_model_dir: Path, tmp_path: Path) -> None:
    from envhub.train.tracking import group_files, read_groups

    run = tmp_path / "run"
    train(_config(small_model_dir, run, iterations=1))
    files = group_files(run)
    assert [f.name for f in files] == ["iter_000001.jsonl"]
    groups = read_groups(files[0])
    assert len(groups) == 2 and all(len(g.trajectories) == 2 for g in groups)
    step = groups[0].trajectories[0].steps[0]
    # What the per-token log-prob shading needs: the sampled ids and their logprobs.
    assert step.response_token_ids and step.response_logprobs
    assert len(step.response_token_ids) == len(step.response_logprobs)


def test_recording_groups_can_be_switched_off(small_model_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(_config(small_model_dir, run, iterations=1, **{"output.save_groups": False}))
    assert not (run / "rollouts").exists()


def test_graphgpo_recipe_trains_two_iterations(small_model_dir: Path, tmp_path: Path) -> None:
    recipe = Path(__file__).resolve().parents[2] / "trainers" / "graphgpo_sokoban_onepush.yaml"
    config = load_config(
        recipe,
        overrides={
            "model.path": str(small_model_dir),
            "iterations": 2,
            "output.run_dir": str(tmp_path / "graphgpo"),
            "output.progress": False,
            "rollout.group_size": 4,
            "rollout.batch_tasks": 4,
            "validation.every": 0,
            "validation.before_training": False,
            "validation.blind_ceiling": False,
        },
    )
    assert config.algo == "graphgpo"
    result = train(config)
    assert result.policy_version == 2
    rows = read_metrics(tmp_path / "graphgpo")
    assert [r["iteration"] for r in rows] == [1, 2]
    assert all(r["rows/count"] == 16 for r in rows)


def test_coso_recipe_trains_an_iteration_with_the_causal_entropy(
    small_model_dir: Path, tmp_path: Path
) -> None:
    recipe = Path(__file__).resolve().parents[2] / "trainers" / "coso_sokoban_onepush.yaml"
    config = load_config(
        recipe,
        overrides={
            "model.path": str(small_model_dir),
            "iterations": 1,
            "output.run_dir": str(tmp_path / "coso"),
            "output.progress": False,
            "rollout.group_size": 4,
            "rollout.batch_tasks": 4,
            "loss.coso.pretrain": 2,  # the authors' 500 take minutes on a CPU
            "loss.coso.samples": 64,
            "rollout.sampling_seed": 3,  # replies that start with a move, so some rows have a label
            "validation.every": 0,
            "validation.before_training": False,
            "validation.blind_ceiling": False,
        },
    )
    assert config.loss.entropy == "coso" and config.loss.coso.window == 4
    result = train(config)
    assert result.policy_version == 1
    (row,) = read_metrics(tmp_path / "coso")
    assert row["rows/count"] == 16 and row["coso/rows"] > 0
    assert row["coso/steps"] == 4  # pretrain 2 updates x 2 epochs
    assert 0.0 <= row["coso/accuracy"] <= 1.0 and row["coso/loss"] > 0
    assert 0.0 <= row["coso/weight_mean"] <= 1.0
    assert row["actor/entropy"] >= 0.0


def test_graphgpo_progress_variant_runs_and_bad_settings_are_refused(
    small_model_dir: Path, tmp_path: Path
) -> None:
    from envhub.core.errors import ConfigurationError

    # The progress variant on a multi-step env (search: up to two turns here).
    config = _config(
        small_model_dir,
        tmp_path / "progress",
        algo="graphgpo",
        iterations=1,
        advantage={"normalize_distance": True},
    )
    assert train(config).policy_version == 1
    for bad in ({"gamma": 0.0}, {"history_length": 2}, {"normalize_distance": "yes"}):
        with pytest.raises(ConfigurationError, match="advantage"):
            _config(small_model_dir, tmp_path, algo="graphgpo", advantage=bad)


def test_the_trajectory_recipe_trains_through_the_cli(small_model_dir: Path, tmp_path: Path) -> None:
    """GRPO on Search-QA in trajectory mode: 2 iterations end to end, metrics written."""
    run = tmp_path / "trajectory"
    recipe = Path(__file__).resolve().parents[2] / "trainers" / "grpo_search_trajectory.yaml"
    out = subprocess.run(
        [
            sys.executable, "-m", "envhub.train.cli", "--config", str(recipe),
            "--model", str(small_model_dir), "--run-dir", str(run), "--no-progress",
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr + out.stdout
    rows = read_metrics(run)
    assert [r["iteration"] for r in rows] == [1, 2]
    for row in rows:
        # one row per episode (2 tasks x 2), plus one per split where the template rewrote history
        assert row["rows/count"] == 4 + row["rows/segments"]
        assert row["rows/model_tokens"] == row["actor/tokens"] > 0
        assert row["rows/env_tokens"] >= 0 and "actor/pg_loss" in row
    assert any(r["rows/env_tokens"] > 0 for r in rows)  # the retrieved text, out of the loss
    assert rows[0]["rollout/logprob_diff"] < 1e-4  # the actor scores the tokens the sampler drew
    assert json.loads((run / "config.json").read_text())["rollout"]["trajectory_mode"] is True


@pytest.mark.parametrize("algo", ["gigpo", "hgpo"])
def test_per_step_estimators_train_in_trajectory_mode(
    small_model_dir: Path, tmp_path: Path, algo: str
) -> None:
    """GiGPO and HGPO map each turn's step advantage onto that turn's tokens."""
    config = _config(
        small_model_dir, tmp_path / algo, algo=algo, iterations=1, **{"rollout.trajectory_mode": True}
    )
    result = train(config)
    [it] = result.iterations
    assert it.metrics["rows/count"] == 4 + it.metrics["rows/segments"]
    assert it.metrics["actor/tokens"] == it.metrics["rows/model_tokens"] > 0


def test_the_checkpointed_state_holds_one_interval_of_uids_not_the_whole_run(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # A group can come back from the queue only if it was unacknowledged at a crash, that is,
    # used since the last checkpoint (the groups are acknowledged right after it): each
    # checkpoint keeps the uids and per-rank assignments of its own interval, so the state does
    # not grow with the run.
    import torch

    run = tmp_path / "run"
    every, iterations, batch = 2, 6, 2
    over = {
        "output.checkpoint_every": every,
        "output.keep_checkpoints": 10,
        "algo": "grpo",
        "max_staleness": 0,
    }
    train(_config(small_model_dir, run, iterations=4, **over))
    train(_config(small_model_dir, run, iterations=iterations, **over))  # a resume from iteration 4
    records = {
        i: [
            json.loads(line)["uid"]
            for line in (run / "rollouts" / f"iter_{i:06d}.jsonl").read_text().splitlines()
        ]
        for i in range(1, iterations + 1)
    }
    for end in range(every, iterations + 1, every):
        state = torch.load(run / "checkpoints" / f"iter_{end}" / "trainer_state.pt", weights_only=False)[
            "state"
        ]
        interval = range(end - every + 1, end + 1)
        assert sorted(state["assignments"]) == list(interval), end
        assert state["assignments"] == {i: [records[i]] for i in interval}
        assert state["consumed_uids"] == [uid for i in interval for uid in records[i]]
        assert len(state["consumed_uids"]) == every * batch
        assert state["consumed_groups"] == end * batch  # the run's count goes on
