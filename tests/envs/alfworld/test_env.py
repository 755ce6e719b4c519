"""ALFWorldEnv on the real ALFWorld engine, played on envhub's shipped games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envhub.core.errors import DataNotFoundError, UnknownTaskError
from tests.needs import requires_modules

pytestmark = requires_modules("alfworld", "textworld", extra="alfworld")

from envhub.envs.alfworld.data import embedded_data_dir  # noqa: E402
from envhub.envs.alfworld.env import ALFWorldEnv  # noqa: E402

DATA_DIR = embedded_data_dir().parent
SHIPPED = sorted(p.relative_to(embedded_data_dir()).as_posix() for p in embedded_data_dir().glob("*/*/*"))
# The two shipped games with the fewest receptacles: cheap to reset many times.
SMALL = sorted(SHIPPED, key=lambda t: (embedded_data_dir() / t / "game.tw-pddl").stat().st_size)[:2]


def walkthrough(env: ALFWorldEnv, task_id: str) -> list[str]:
    game = env.unwrapped if hasattr(env, "unwrapped") else env
    path = Path(game._root.json_dir) / task_id / "game.tw-pddl"
    return list(json.loads(path.read_text())["walkthrough"])


def make_env(**kwargs: object) -> ALFWorldEnv:
    return ALFWorldEnv(data_dir=DATA_DIR, **kwargs)  # type: ignore[arg-type]


def test_shipped_data_has_two_games_of_each_task_type() -> None:
    types = sorted(t.split("/")[1].split("-")[0] for t in SHIPPED)
    assert len(SHIPPED) == 12
    assert len(set(types)) == 6 and all(types.count(t) == 2 for t in set(types))


@pytest.mark.parametrize("task_id", SHIPPED)
def test_replaying_each_shipped_walkthrough_wins_with_reward_10(task_id: str) -> None:
    env = make_env()
    obs, info = env.reset(options={"task_id": task_id})
    assert "Your task is to:" in obs and info["won"] is False
    rewards, terminated = [], False
    for command in walkthrough(env, task_id):
        assert command in info["admissible_actions"]
        obs, reward, terminated, truncated, info = env.step(command)
        rewards.append(reward)
        assert truncated is False and info["is_action_valid"] is True
    assert terminated and info["won"] is True and info["task_score"] == 1.0
    assert rewards[-1] == 10.0 and sum(rewards[:-1]) == 0.0
    env.close()


def test_inadmissible_command_answers_nothing_happens_and_does_not_end_the_episode() -> None:
    env = make_env()
    obs0, info0 = env.reset(options={"task_id": SHIPPED[0]})
    for action in ("fly to the moon", "take the universe", "", "go to  nowhere 99", 12345):
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs == "Nothing happens."
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert info["is_action_valid"] is False and info["won"] is False
        assert info["admissible_actions"] == info0["admissible_actions"]
    env.close()


def test_info_carries_contract_keys_task_type_and_raw_observation_anchor() -> None:
    env = make_env()
    task_id = next(t for t in SHIPPED if "pick_heat" in t)
    obs, info = env.reset(options={"task_id": task_id})
    assert info["task_id"] == task_id and info["task_type"] == "pick_heat_then_place_in_recep"
    assert info["anchor"] == obs
    assert "help" in info["admissible_actions"] and "look" in info["admissible_actions"]
    assert info["admissible_actions"] == sorted(info["admissible_actions"])
    assert info["gamefile"].endswith("game.tw-pddl")
    obs, _, _, _, info = env.step("look")
    assert info["anchor"] == obs and info["is_action_valid"] is True
    env.close()


def test_won_reward_is_configurable() -> None:
    env = make_env(won_reward=1.0)
    task_id = SHIPPED[0]
    env.reset(options={"task_id": task_id})
    for command in walkthrough(env, task_id):
        _, reward, terminated, _, _ = env.step(command)
    assert terminated and reward == 1.0
    env.close()


def test_step_after_win_repeats_final_observation_without_reward() -> None:
    env = make_env()
    task_id = SHIPPED[1]
    env.reset(options={"task_id": task_id})
    for command in walkthrough(env, task_id):
        final, *_ = env.step(command)
    obs, reward, terminated, _, info = env.step("look")
    assert (obs, reward, terminated) == (final, 0.0, True)
    assert info["is_action_valid"] is False and "reset" in info["error"]
    env.close()


def test_resetting_the_same_task_again_restarts_from_the_initial_state() -> None:
    env = make_env()
    task_id = SHIPPED[2]
    first = env.reset(options={"task_id": task_id})
    for command in walkthrough(env, task_id)[:2]:
        env.step(command)
    again = env.reset(options={"task_id": task_id})
    assert again == first
    env.close()


def test_two_interleaved_instances_stay_independent() -> None:
    a_id, b_id = SMALL

    def solo(task_id: str) -> list[tuple[str, float, bool]]:
        env = make_env()
        env.reset(options={"task_id": task_id})
        out = [env.step(c)[:3] for c in walkthrough(env, task_id)]
        env.close()
        return out

    expected_a, expected_b = solo(a_id), solo(b_id)
    env_a, env_b = make_env(), make_env()
    env_a.reset(options={"task_id": a_id})
    env_b.reset(options={"task_id": b_id})
    plan_a, plan_b = walkthrough(env_a, a_id), walkthrough(env_b, b_id)
    got_a, got_b = [], []
    for i in range(max(len(plan_a), len(plan_b))):
        if i < len(plan_b):
            got_b.append(env_b.step(plan_b[i])[:3])
        if i < len(plan_a):
            got_a.append(env_a.step(plan_a[i])[:3])
    assert got_a == expected_a and got_b == expected_b
    assert got_a[-1][1] == 10.0 and got_b[-1][1] == 10.0
    env_a.close()
    env_b.close()


def test_group_of_8_on_one_task_sees_identical_observations_under_identical_actions() -> None:
    task_id = SMALL[0]
    group = [make_env() for _ in range(8)]
    starts = [env.reset(options={"task_id": task_id}) for env in group]
    assert all(s == starts[0] for s in starts)
    plan = walkthrough(group[0], task_id)
    # Off-plan and invalid actions too: the group must agree on every transition.
    actions = ["inventory", "open nothing", "look", *plan]
    for action in actions:
        results = [env.step(action) for env in group]
        assert all(r == results[0] for r in results)
    assert results[0][2] is True and results[0][4]["won"] is True
    for env in group:
        env.close()


def test_reset_without_task_id_draws_reproducibly_from_the_seed() -> None:
    one, two = make_env(), make_env()
    assert one.reset(seed=3) == two.reset(seed=3)
    assert one.task_id in SHIPPED
    one.close()
    two.close()


def test_unknown_task_id_raises_unknown_task_error() -> None:
    env = make_env()
    for bad in ("train/no-such-task/trial_T0", "../../etc", SHIPPED[0] + "/.."):
        with pytest.raises(UnknownTaskError):
            env.reset(options={"task_id": bad})
    env.close()


def test_missing_data_raises_data_not_found_naming_alfworld_data_and_download(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError) as caught:
        ALFWorldEnv(data_dir=tmp_path / "nowhere")
    assert "ALFWORLD_DATA" in caught.value.message and "alfworld-download" in caught.value.message


_RAW_ENGINE = """
import json, sys
import textworld
from textworld.envs import PddlEnv
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
gamefile, actions = sys.argv[1], json.loads(sys.argv[2])
infos = textworld.EnvInfos(won=True, admissible_commands=True)
env = AlfredInfos(AlfredDemangler(PddlEnv(infos), shuffle=False))
env.load(gamefile)
state = env.reset()
out = [[state["feedback"], state["admissible_commands"], state["won"]]]
for action in actions:
    state, _, _ = env.step(action)
    out.append([state["feedback"], state["admissible_commands"], state["won"]])
print(json.dumps(out))
"""


def test_transcript_matches_an_unshared_textworld_engine_in_a_fresh_process() -> None:
    import subprocess
    import sys

    # envhub shares translations and parses between engines; the text must be exactly
    # what ALFWorld's plain engine says. Mix the plan with off-plan and invalid commands.
    env = make_env()
    task_id = next(t for t in SHIPPED if "pick_clean" in t)
    obs, info = env.reset(options={"task_id": task_id})
    plan, actions = walkthrough(env, task_id), []
    got = [[obs, info["admissible_actions"], info["won"]]]
    for i in range(len(plan) * 2):
        admissible = info["admissible_actions"]
        action = plan[i // 2] if i % 2 == 0 else admissible[(i * 7) % len(admissible)]
        action = "xyzzy" if i == 3 else action
        obs, _, terminated, _, info = env.step(action)
        actions.append(action)
        got.append([obs, info["admissible_actions"], info["won"]])
        if terminated:
            break
    env.close()
    raw = subprocess.run(
        [sys.executable, "-c", _RAW_ENGINE, info["gamefile"], json.dumps(actions)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert json.loads(raw.stdout.strip().splitlines()[-1]) == got


def test_a_damaged_game_file_raises_configuration_error_naming_the_fix(tmp_path: Path) -> None:
    import shutil

    from envhub.core.errors import ConfigurationError

    trial = embedded_data_dir() / SHIPPED[0]
    copy = tmp_path / "json_2.1.1" / SHIPPED[0]
    shutil.copytree(trial, copy)
    game = json.loads((copy / "game.tw-pddl").read_text())
    game["pddl_problem"] = "(define (problem broken"
    (copy / "game.tw-pddl").write_text(json.dumps(game))
    env = ALFWorldEnv(data_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="envhub data alfworld generate"):
        env.reset(options={"task_id": SHIPPED[0]})
    env.close()
