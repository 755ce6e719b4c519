"""verl-agent: ALFWorld groups played through the manager over HTTP, as verl-agent's loop drives it.

``_verl_agent_rollout`` restates, in our own words, the calls verl-agent's
``vanilla_multi_turn_loop`` (``agent_system/multi_turn_rollout/rollout_loop.py``) makes on an
environment manager: ``reset(kwargs=...)`` once; a uid per ``group_n`` consecutive envs and a
traj_uid per env; then each step: ``active_masks = not is_done``, a model turns ``obs['text']``
into text actions, ``step(text_actions)``, ``is_action_valid`` read from the infos, rewards
added to the active envs' returns, the step row kept with ``anchor_obs``/``rewards``/
``active_masks``, ``is_done |= dones``, stop when all are done; and last
``success_evaluator(total_infos=..., total_batch_list=..., episode_rewards=..., episode_lengths=...)``.
The "model" is scripted: the walkthrough, or text that breaks the format.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from envhub.core.errors import ConfigurationError, ResetNeededError
from envhub.envs.alfworld.policy import WalkthroughPolicy
from envhub.integrations.verl_agent import EnvhubEnvironmentManager
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

pytestmark = pytest.mark.integration

MAX_STEPS = 50  # verl-agent's env.max_steps for ALFWorld

# A scripted model: env index, its prompt and its latest info -> the text it "generates".
Model = Callable[[int, str, dict[str, Any]], str]


@dataclass
class Rollout:
    total_batch_list: list[list[dict[str, Any]]]
    total_infos: list[list[dict[str, Any]]]
    episode_rewards: np.ndarray
    episode_lengths: np.ndarray
    success: dict[str, np.ndarray]
    first_obs: dict[str, Any]
    uid: np.ndarray


def _verl_agent_rollout(
    manager: EnvhubEnvironmentManager, model: Model, group_n: int, kwargs: Any = None
) -> Rollout:
    obs, infos = manager.reset(kwargs=kwargs)
    batch_size = len(obs["text"])
    first_obs = obs
    uids: list[str] = []
    for i in range(batch_size):
        if i % group_n == 0:
            uid = str(uuid.uuid4())
        uids.append(uid)
    traj_uid = np.array([str(uuid.uuid4()) for _ in range(batch_size)], dtype=object)
    is_done = np.zeros(batch_size, dtype=bool)
    total_batch_list: list[list[dict[str, Any]]] = [[] for _ in range(batch_size)]
    total_infos: list[list[dict[str, Any]]] = [[] for _ in range(batch_size)]
    episode_rewards = np.zeros(batch_size, dtype=np.float32)
    episode_lengths = np.zeros(batch_size, dtype=np.float32)
    for _ in range(MAX_STEPS):
        active_masks = np.logical_not(is_done)
        text_actions = [model(i, obs["text"][i], infos[i]) for i in range(batch_size)]
        next_obs, rewards, dones, infos = manager.step(text_actions)
        is_action_valid = np.array([info["is_action_valid"] for info in infos], dtype=bool)
        episode_rewards[active_masks] += rewards[active_masks]
        episode_lengths[active_masks] += 1
        for i in range(batch_size):
            total_batch_list[i].append(
                {
                    "uid": uids[i],
                    "traj_uid": traj_uid[i],
                    "anchor_obs": obs["anchor"][i],
                    "prompt": obs["text"][i],
                    "is_action_valid": is_action_valid[i],
                    "rewards": rewards[i],
                    "active_masks": active_masks[i],
                }
            )
            total_infos[i].append(infos[i])
        is_done = np.logical_or(is_done, dones)
        obs = next_obs
        if is_done.all():
            break
    success = manager.success_evaluator(
        total_infos=total_infos,
        total_batch_list=total_batch_list,
        episode_rewards=episode_rewards,
        episode_lengths=episode_lengths,
    )
    return Rollout(
        total_batch_list, total_infos, episode_rewards, episode_lengths, success, first_obs, np.array(uids)
    )


@pytest.fixture(scope="module")
def alfworld_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/ALFWorld-v0", workers=2)) as running:
        yield running


class _ScriptedModel:
    """Env i follows the walkthrough in the family's format, except the ``broken`` envs, whose
    text has no tags at all (projection marks it invalid)."""

    def __init__(self, broken: set[int]) -> None:
        self.broken = broken
        self.plans: dict[int, WalkthroughPolicy] = {}
        self.sent: dict[int, list[str]] = {}

    def __call__(self, i: int, prompt: str, info: dict[str, Any]) -> str:
        if i in self.broken:
            return "I am not sure what to do here."
        if i not in self.plans:
            self.plans[i] = WalkthroughPolicy(i)
            self.plans[i].reset("", info)
        action = self.plans[i].act("", info)
        self.sent.setdefault(i, []).append(action)
        return f"<think>Following the plan.</think><action>{action}</action>"


def test_a_group_of_alfworld_episodes_through_the_manager(alfworld_server: RunningServer) -> None:
    group_n = 4
    manager = EnvhubEnvironmentManager(
        alfworld_server.base_url, env_id="envhub/ALFWorld-v0", env_num=1, group_n=group_n, seed=3
    )
    model = _ScriptedModel(broken={1})
    try:
        rollout = _verl_agent_rollout(manager, model, group_n)
    finally:
        manager.close()
    first = rollout.first_obs
    assert first["image"] is None
    assert len(set(first["anchor"])) == 1  # one group: identical starts
    assert all(anchor in text for anchor, text in zip(first["anchor"], first["text"], strict=True))
    # The walkthrough envs win and act validly at every step; the broken one never is valid.
    assert rollout.success["success_rate"].tolist() == [1.0, 0.0, 1.0, 1.0]
    for i in (0, 2, 3):
        kept = [row for row in rollout.total_batch_list[i] if row["active_masks"]]
        assert all(row["is_action_valid"] for row in kept)
        assert rollout.episode_rewards[i] == pytest.approx(10.0)  # ALFWorld: 10 * won
        assert rollout.total_infos[i][len(kept) - 1]["won"] is True
    broken = [row for row in rollout.total_batch_list[1] if row["active_masks"]]
    assert broken and not any(row["is_action_valid"] for row in broken)
    assert rollout.episode_lengths[1] == MAX_STEPS  # played until ALFWorld's 50-step limit
    # Same state, same anchor: the walkthrough envs share every anchor step by step (GiGPO's
    # step groups), and the anchor is the raw observation, not the prompt.
    for t in range(int(rollout.episode_lengths[0])):
        anchors = {rollout.total_batch_list[i][t]["anchor_obs"] for i in (0, 2, 3)}
        assert len(anchors) == 1
    second = rollout.total_batch_list[0][1]
    assert second["anchor_obs"] in second["prompt"] and second["prompt"] != second["anchor_obs"]
    # Memory: the second prompt shows the first action taken.
    assert model.sent[0][0] in second["prompt"]
    assert all(
        set(info) >= {"anchor", "won", "is_action_valid", "admissible_actions"}
        for info in rollout.total_infos[0]
    )


def test_groups_are_interleaved_and_kwargs_pick_their_tasks(alfworld_server: RunningServer) -> None:
    manager = EnvhubEnvironmentManager(
        alfworld_server.base_url, env_id="envhub/ALFWorld-v0", env_num=2, group_n=2
    )
    try:
        tasks = manager.client.tasks(limit=2).task_ids
        kwargs = [{"task_id": tasks[0]}, {"task_id": tasks[0]}, {"task_id": tasks[1]}, {"task_id": tasks[1]}]
        obs, infos = manager.reset(kwargs=kwargs)
        assert [info["task_id"] for info in infos] == [tasks[0], tasks[0], tasks[1], tasks[1]]
        assert obs["anchor"][0] == obs["anchor"][1] and obs["anchor"][2] == obs["anchor"][3]
        sessions = list(manager.session_ids)
        # A second reset reuses the sessions (one batch reset) and starts new episodes.
        obs, infos = manager.reset()
        assert manager.session_ids == sessions
        assert obs["anchor"][0] == obs["anchor"][1] and obs["anchor"][2] == obs["anchor"][3]
        # A finished env is not stepped again: it keeps answering done with reward 0.
        _, rewards, dones, _ = manager.step(["<think>x</think><action>look</action>"] * 4)
        assert dones.dtype == np.bool_ and rewards.dtype == np.float64 and rewards.shape == (4,)
    finally:
        manager.close()


def test_misuse_raises_typed_errors(alfworld_server: RunningServer) -> None:
    with pytest.raises(ConfigurationError):
        EnvhubEnvironmentManager(alfworld_server.base_url, env_id="envhub/ALFWorld-v0", env_num=0)
    with pytest.raises(ConfigurationError, match="no text prompt template"):
        EnvhubEnvironmentManager(alfworld_server.base_url, env_id="envhub/TimeSeriesUCR-v0", env_num=1)
    manager = EnvhubEnvironmentManager(
        alfworld_server.base_url, env_id="envhub/ALFWorld-v0", env_num=1, group_n=2
    )
    try:
        with pytest.raises(ResetNeededError):
            manager.step(["a", "b"])
        manager.reset()
        with pytest.raises(ConfigurationError, match="one per env"):
            manager.step(["a"])
    finally:
        manager.close()
