"""The walkthrough-replaying demo policy."""

from __future__ import annotations

from envhub.core.policy import Policy
from envhub.envs.alfworld.data import embedded_data_dir
from envhub.envs.alfworld.policy import WalkthroughPolicy
from tests.needs import requires_modules


def test_walkthrough_policy_is_a_policy() -> None:
    assert isinstance(WalkthroughPolicy(seed=0), Policy)


def test_without_a_game_file_the_policy_plays_admissible_commands_but_not_help() -> None:
    policy = WalkthroughPolicy(seed=1)
    info = {"gamefile": "/no/such/file", "admissible_actions": ["help", "look", "inventory"]}
    policy.reset("obs", info)
    assert {policy.act("obs", info) for _ in range(20)} <= {"look", "inventory"}
    assert policy.act("obs", {}) == "look"


@requires_modules("alfworld", extra="alfworld")
def test_walkthrough_policy_wins_a_shipped_game() -> None:
    from envhub.envs.alfworld.env import ALFWorldEnv

    env = ALFWorldEnv(data_dir=embedded_data_dir().parent)
    policy = WalkthroughPolicy(seed=0)
    obs, info = env.reset(seed=0)
    policy.reset(obs, info)
    for _ in range(50):
        obs, reward, terminated, _, info = env.step(policy.act(obs, info))
        if terminated:
            break
    assert info["won"] and reward == 10.0
    env.close()
