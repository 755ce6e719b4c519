"""The demo table: the heuristic beats the baseline on the time-series env."""

from __future__ import annotations

from typer.testing import CliRunner

from envhub.cli import app
from envhub.envs.timeseries.data import ucr_data_status
from envhub.rollout.demo import run_demo


def test_demo_rows_for_time_series_compare_policy_with_baseline() -> None:
    rows = run_demo(episodes=16, group_size=2, env_ids=["envhub/TimeSeries-v0"])
    assert [r.policy for r in rows] == ["HeuristicPolicy", "RandomToolPolicy"]
    heuristic, baseline = rows
    assert heuristic.episodes == 16 and heuristic.steps > 16
    assert heuristic.mean_reward > baseline.mean_reward


def test_cli_demo_prints_the_table() -> None:
    result = CliRunner().invoke(app, ["demo", "--env", "timeseries", "--episodes", "4"])
    assert result.exit_code == 0, result.output
    assert "envhub/TimeSeries-v0" in result.output and "HeuristicPolicy" in result.output


def test_cli_list_prints_every_env_and_how_to_get_missing_data() -> None:
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    assert "envhub/TimeSeries-v0" in result.output
    if not ucr_data_status().available:
        assert "ENVHUB_UCR_DATA" in result.output


def test_demo_accepts_short_names_and_rejects_unknown_envs() -> None:
    import pytest

    from envhub.core.errors import UnknownEnvError

    assert {r.env_id for r in run_demo(episodes=2, env_ids=["TimeSeries-v0"])} == {"envhub/TimeSeries-v0"}
    with pytest.raises(UnknownEnvError, match="envhub/TimeSeries-v0"):
        run_demo(episodes=2, env_ids=["nope"])


def test_cli_prints_envhub_errors_as_one_line_and_exits_2() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "from envhub.cli import main; main()", "demo", "--env", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "UNKNOWN_ENV" in done.stderr and "Traceback" not in done.stderr
