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
