"""Groups to JSONL and parquet, and the `envhub rollout` / `envhub rollouts export` commands."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from envhub.cli import app
from envhub.core.errors import ConfigurationError
from envhub.rollout.export import read_jsonl

HEURISTIC = "scripted:envhub.envs.timeseries.policy:HeuristicPolicy"


def test_rollout_command_writes_groups_and_export_makes_step_rows(tmp_path: Path) -> None:
    groups_file = tmp_path / "groups.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "rollout",
            "--env",
            "TimeSeries-v0",
            "--split",
            "test",
            "--count",
            "2",
            "--group-size",
            "2",
            "--policy",
            HEURISTIC,
            "--env-kwarg",
            "images=false",
            "-o",
            str(groups_file),
        ],
    )
    assert result.exit_code == 0, result.output
    groups = list(read_jsonl(groups_file))
    assert len(groups) == 2 and all(len(g.trajectories) == 2 for g in groups)
    steps = sum(t.length for g in groups for t in g.trajectories)

    parquet = tmp_path / "steps.parquet"
    result = runner.invoke(
        app, ["rollouts", "export", str(groups_file), "-o", str(parquet), "--format", "parquet"]
    )
    assert result.exit_code == 0, result.output
    table = pq.read_table(parquet)
    assert table.num_rows == steps
    assert {"uid", "traj_id", "step_idx", "anchor", "reward", "is_action_valid", "episode_return"} <= set(
        table.column_names
    )
    copy = tmp_path / "copy.jsonl"
    assert runner.invoke(app, ["rollouts", "export", str(groups_file), "-o", str(copy)]).exit_code == 0
    assert [g.uid for g in read_jsonl(copy)] == [g.uid for g in groups]


def test_reading_a_missing_or_broken_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="No groups file"):
        list(read_jsonl(tmp_path / "none.jsonl"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{}\n")
    with pytest.raises(ConfigurationError, match=r"broken\.jsonl:1 is not a Group"):
        list(read_jsonl(broken))


def test_trajectory_mode_needs_a_policy_with_a_tokenizer(tmp_path: Path) -> None:
    args = ["rollout", "--env", "TimeSeries-v0", "--count", "1", "--policy", HEURISTIC, "--trajectory-mode"]
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "g.jsonl")])
    assert result.exit_code != 0
    assert "--trajectory-mode needs a policy endpoint with a local tokenizer" in str(result.exception)
