"""UCR-format loading and the classification env on envhub-generated UCR files."""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.core import DataNotFoundError
from envhub.envs.timeseries.data import UCR_ENV_VAR, find_ucr_dir, load_ucr, read_ts, read_tsv
from envhub.envs.timeseries.fixtures import FIXTURE_CLASSES, write_ucr_dataset
from envhub.envs.timeseries.ucr_env import TimeSeriesUCREnv


@pytest.mark.parametrize("fmt", ["ts", "tsv"])
def test_generated_ucr_files_load_back(tmp_path: Path, fmt: str) -> None:
    write_ucr_dataset(tmp_path, per_class=2, fmt=fmt)
    data = load_ucr(tmp_path, "EnvhubSynthetic", "train")
    assert len(data.series) == 2 * len(FIXTURE_CLASSES)
    assert data.classes == ("0", "1", "2")
    assert all(len(s) == 200 for s in data.series)


def test_read_ts_handles_headers_comments_and_missing_values(tmp_path: Path) -> None:
    file = tmp_path / "X_TRAIN.ts"
    file.write_text("# comment\n@problemName X\n@data\n1,2,?:a\n3,4,5:b\n")
    series, labels = read_ts(file)
    assert labels == ["a", "b"] and series[1].tolist() == [3, 4, 5]
    assert series[0][2] != series[0][2]  # NaN


def test_read_tsv_reads_label_first(tmp_path: Path) -> None:
    file = tmp_path / "X_TRAIN.tsv"
    file.write_text("1\t0.5\t0.25\n2\t1\tNaN\n")
    series, labels = read_tsv(file)
    assert labels == ["1", "2"] and series[0].tolist() == [0.5, 0.25]


def test_missing_dataset_names_the_env_var(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match=UCR_ENV_VAR):
        find_ucr_dir(tmp_path, "NoSuchDataset")


def test_env_var_points_to_the_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_ucr_dataset(tmp_path / "EnvhubSynthetic", per_class=1)
    monkeypatch.setenv(UCR_ENV_VAR, str(tmp_path))
    assert find_ucr_dir(None, "EnvhubSynthetic") == tmp_path / "EnvhubSynthetic"


def test_classification_env_rewards_the_right_label(tmp_path: Path) -> None:
    write_ucr_dataset(tmp_path, per_class=2)
    env = TimeSeriesUCREnv(ucr_path=tmp_path, dataset="EnvhubSynthetic")
    obs, info = env.reset(options={"task_id": "test-3"})
    assert "one of: 0, 1, 2" in obs and info["classes"] == ["0", "1", "2"]
    assert env.step("fft[]")[0].startswith("fft[0:200]")
    bad = env.step("answer[9]")
    assert bad[4]["is_action_valid"] is False and not bad[2]
    obs, reward, terminated, _, info = env.step("<class>1</class>")
    assert terminated and info["true_label"] == "1" and info["won"] and reward == pytest.approx(1.0)
    env.reset(options={"task_id": "test-0"})
    assert env.step("answer[2]")[1] == pytest.approx(0.1)  # wrong label: format credit only


def test_classification_env_passes_check_env_and_is_deterministic(tmp_path: Path) -> None:
    from gymnasium.utils.env_checker import check_env

    write_ucr_dataset(tmp_path, per_class=2)
    check_env(TimeSeriesUCREnv(ucr_path=tmp_path, dataset="EnvhubSynthetic"), skip_render_check=True)
    traces = []
    for _ in range(2):
        env = TimeSeriesUCREnv(ucr_path=tmp_path, dataset="EnvhubSynthetic")
        obs, _ = env.reset(options={"task_id": "train-5"})
        traces.append([obs, env.step("zscore[]")[0], env.step("answer[2]")[:3]])
    assert traces[0] == traces[1]


def test_classification_env_draws_the_plot_only_when_asked(tmp_path: Path) -> None:
    write_ucr_dataset(tmp_path, per_class=1)
    _, info = TimeSeriesUCREnv(ucr_path=tmp_path, dataset="EnvhubSynthetic").reset(seed=0)
    assert "images" not in info
    env = TimeSeriesUCREnv(ucr_path=tmp_path, dataset="EnvhubSynthetic", images=True)
    (png,) = env.reset(seed=0)[1]["images"]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
