"""TimeSeriesEnv behaviour through gymnasium.make."""

from __future__ import annotations

import io
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from PIL import Image

import envhub  # noqa: F401  (registers the ids)
from envhub.envs.timeseries.env import TimeSeriesEnv, series_for


@pytest.fixture
def env() -> gymnasium.Env:
    return gymnasium.make("envhub/TimeSeries-v0")


def test_check_env_passes_without_any_warning() -> None:
    # Made through gymnasium.make the env has a spec, so even the render-mode check runs; any
    # warning (text spaces, seeding, determinism, render) fails this test.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gymnasium.make("envhub/TimeSeries-v0").unwrapped)


def test_reset_shows_task_and_summary_and_a_png_plot_when_asked() -> None:
    obs, info = gymnasium.make("envhub/TimeSeries-v0", images=True).reset(options={"task_id": "test-0"})
    assert obs.startswith("Task: find the anomaly")
    assert f"length {info['series_length']}" in obs
    (png,) = info["images"]
    image = Image.open(io.BytesIO(png))
    assert image.size == (600, 250) and image.format == "PNG"
    assert info["anchor"] == obs and info["admissible_actions"] is None and info["task_score"] == 0.0


def test_no_plot_is_drawn_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("the plot was drawn although images=False")

    monkeypatch.setattr("envhub.envs.timeseries.env.plot_png", refuse)
    env = gymnasium.make("envhub/TimeSeries-v0")
    _, info = env.reset(options={"task_id": "test-0"})
    assert "images" not in info
    assert "images" not in env.step("stats[0:10]")[4]
    assert "images" not in gymnasium.make("envhub/TimeSeries-v0", images=False).reset(seed=0)[1]


def test_tool_step_returns_tool_text_as_observation_and_anchor(env: gymnasium.Env) -> None:
    env.reset(options={"task_id": "test-1"})
    obs, reward, terminated, truncated, info = env.step("stats[0:50]")
    assert obs.startswith("stats[0:50]: n=50") and obs == info["anchor"]
    assert (reward, terminated, truncated, info["is_action_valid"]) == (0.0, False, False, True)


def test_oracle_answer_wins_with_reward_one(env: gymnasium.Env) -> None:
    for i in range(16):
        env.reset(options={"task_id": f"test-{i}"})
        series = series_for("test", i)
        spans = ", ".join(f"{a}:{b}" for a, b in series.intervals)
        obs, reward, terminated, _, info = env.step(f"answer[{series.kind}; {spans}]")
        assert terminated and info["won"] and reward == pytest.approx(1.0)
        assert info["true_class"] == series.kind and info["task_score"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "action",
    ["", "x" * 200_000, "🙂" * 1000, "answer[", "stats[-3:5]", "stats[9:2]", "zoom[0:99999]", None, 3.5],
)
def test_malformed_actions_never_raise_and_cost_a_step(env: gymnasium.Env, action: object) -> None:
    obs0, info0 = env.reset(options={"task_id": "test-2"})
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs.startswith("Invalid action:")
    assert (reward, terminated, info["is_action_valid"]) == (0.0, False, False)
    assert info["anchor"] == info0["anchor"], "an invalid action teaches nothing: the anchor stays"
    assert env.unwrapped.step_count == 1


def test_truncates_at_max_steps(env: gymnasium.Env) -> None:
    env.reset(options={"task_id": "test-3"})
    for step in range(1, 9):
        _, _, terminated, truncated, _ = env.step("stats[0:10]")
        assert not terminated
        assert truncated == (step == 8)


def test_max_episode_steps_can_be_changed() -> None:
    env = gymnasium.make("envhub/TimeSeries-v0", max_episode_steps=2)
    env.reset(options={"task_id": "test-3"})
    env.step("fft[]")
    assert env.step("fft[]")[3] is True


def test_determinism_after_other_episodes() -> None:
    a, b = TimeSeriesEnv(images=False), TimeSeriesEnv(images=False)
    b.reset(options={"task_id": "train-77"})
    b.step("zoom[0:10]")
    actions = ["zscore[]", "fft[10:200]", "zoom[5:40]", "answer[level_shift; 10:50]"]
    trace_a = [a.reset(options={"task_id": "test-9"})[0], *(a.step(x)[:3] for x in actions)]
    trace_b = [b.reset(options={"task_id": "test-9"})[0], *(b.step(x)[:3] for x in actions)]
    assert trace_a == trace_b


def test_png_is_byte_identical_for_the_same_task() -> None:
    first = TimeSeriesEnv(images=True).reset(options={"task_id": "test-5"})[1]["images"][0]
    assert TimeSeriesEnv(images=True).reset(options={"task_id": "test-5"})[1]["images"][0] == first


def test_task_ids_splits() -> None:
    env = TimeSeriesEnv(train_size=10)
    assert len(env.task_ids("test")) == 500 and list(env.task_ids("train"))[-1] == "train-9"
    assert env.has_task("test-499") and not env.has_task("train-10")


def test_anchor_is_shared_by_identical_states_across_a_group() -> None:
    anchors = set()
    for _ in range(3):
        env = TimeSeriesEnv(images=False)
        env.reset(options={"task_id": "test-4"})
        anchors.add(env.step("zscore[0:100]")[4]["anchor"])
    assert len(anchors) == 1


def test_series_values_are_not_leaked_in_info_before_the_answer(env: gymnasium.Env) -> None:
    _, info = env.reset(options={"task_id": "test-6"})
    assert not {"true_class", "true_intervals"} & set(info)
    assert np.isfinite(info["series_length"])
