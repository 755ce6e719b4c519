"""The time-series prompts: the task and series summary stay in every prompt."""

from __future__ import annotations

from envhub.agent.memory import EpisodeMemory
from envhub.agent.prompt import build_messages, family_template
from envhub.envs.timeseries.env import TimeSeriesEnv


def test_first_and_later_prompts_keep_the_series_summary() -> None:
    template = family_template("timeseries")
    env = TimeSeriesEnv(images=False)
    first, _ = env.reset(options={"task_id": "test-0"})
    memory = EpisodeMemory()
    (message,) = build_messages(template, observation=first, memory=memory)
    assert message["role"] == "user" and first in message["content"] and "<action>" in message["content"]
    observation = first
    for action in ["zscore[]", "fft[0:100]"]:
        result = env.step(action)[0]
        memory.store(observation, action)
        observation = result
    (message,) = build_messages(template, observation=observation, memory=memory)
    text = message["content"]
    assert "A univariate time series of length" in text  # the task survives the window
    assert "You have run 2 command(s)" in text and "This is step 3" in text
    assert "zscore[]" in text and observation in text
