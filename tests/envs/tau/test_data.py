"""Loading tau-bench data by path (never importing tau_trait), TAU_DATA, and envhub's fixture data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.envs.tau.data import TauSettings, data_status, load_domain, parse_task_file, resolve_data_root
from envhub.envs.tau.env import TauAirlineEnv, TauRetailEnv
from envhub.envs.tau.fixtures import write_fixture_data
from envhub.envs.tau.policy import GoldPolicy


def test_shipped_task_counts_and_ids(retail: object, airline: object) -> None:
    r, a = load_domain("retail"), load_domain("airline")
    assert (len(r.tasks["test"]), len(r.tasks["train"]), len(a.tasks["test"])) == (120, 500, 60)
    assert r.tasks["train"][3].task_id == "train-3"
    assert r.task("test-0") is r.tasks["test"][0]
    assert r.task("test-120") is None and r.task("dev-0") is None and r.task("nonsense") is None
    assert (len(r.tables["orders"]), len(r.tables["products"])) == (1000, 50)
    assert (len(a.tables["flights"]), len(a.tables["reservations"])) == (300, 2000)


def test_domain_is_parsed_once_per_process() -> None:
    assert load_domain("retail") is load_domain("retail")


def test_loading_never_imports_the_tau_trait_package() -> None:
    code = (
        "import sys; from envhub.envs.tau.data import load_domain; "
        "[load_domain(d) for d in ('retail', 'airline')]; "
        "print('tau_trait' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_task_file_with_str_join_instruction_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "tasks_test.py"
    path.write_text(
        "from x import Task, Action\nTASKS = [Task(user_id='u', instruction=' '.join(('a', 'b')), "
        "actions=[Action(name='think', kwargs={'thought': 't'})], outputs=['1'])]\n"
    )
    (task,) = parse_task_file(path, "test")
    assert (task.task_id, task.instruction, task.actions[0].name, task.outputs) == (
        "test-0",
        "a b",
        "think",
        ("1",),
    )


def test_task_file_without_tasks_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks_test.py"
    path.write_text("X = 1\n")
    with pytest.raises(DataNotFoundError, match="Task"):
        parse_task_file(path, "test")


def test_missing_data_dir_raises_with_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="TAU_DATA"):
        resolve_data_root(tmp_path / "nowhere")
    with pytest.raises(ConfigurationError, match="Unknown tau-bench domain"):
        load_domain("telecom")


def test_tau_data_environment_variable_points_at_another_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fixture_data(tmp_path)
    monkeypatch.setenv("TAU_DATA", str(tmp_path))
    assert TauSettings().data == tmp_path
    assert resolve_data_root().root == tmp_path
    assert data_status().source == str(tmp_path)


def test_default_data_status_is_available() -> None:
    assert data_status().available


def test_fixture_data_is_deterministic_and_loads(tmp_path: Path) -> None:
    write_fixture_data(tmp_path / "a", seed=3)
    write_fixture_data(tmp_path / "b", seed=3)
    for rel in ("retail/data/orders.json", "retail/tasks_test.py", "airline/data/reservations.json"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    retail = load_domain("retail", tmp_path / "a")
    assert len(retail.tasks["test"]) + len(retail.tasks["train"]) == 6
    assert "fixture" in retail.policy


@pytest.mark.parametrize("env_cls", [TauRetailEnv, TauAirlineEnv])
def test_gold_agent_wins_every_fixture_task(tmp_path: Path, env_cls: type[TauRetailEnv]) -> None:
    root = write_fixture_data(tmp_path, seed=1)
    env = env_cls(data_dir=root)
    policy = GoldPolicy(seed=0, data_dir=root)
    for split in env.splits:
        for task_id in env.task_ids(split):
            obs, info = env.reset(options={"task_id": task_id})
            policy.reset(obs, info)
            terminated = False
            for _ in range(30):
                obs, reward, terminated, _, info = env.step(policy.act(obs, info))
                if terminated:
                    break
            assert terminated and reward == 1.0, (task_id, info.get("reward_info"))
