"""``envhub eval`` on tau-bench: the rollout engine plays Tau, and pass^k is tau-bench's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envhub.envs.registry import resolve
from envhub.envs.tau.reward import pass_hat_k as tau_pass_hat_k
from envhub.eval.run import EvalConfig, evaluate
from envhub.rollout.demo import demo_env
from tests.needs import require_data

REPO = Path(__file__).resolve().parents[2]
ENVHUB = [sys.executable, "-c", "from envhub.cli import main; main()"]


@pytest.mark.parametrize("env_id", ["envhub/TauRetail-v0", "envhub/TauAirline-v0"])
def test_envhub_eval_plays_tau_with_its_builtin_policy(tmp_path: Path, env_id: str) -> None:
    spec = resolve(env_id)
    require_data(spec)
    result = subprocess.run(
        [
            *ENVHUB,
            "eval",
            "--env",
            env_id,
            "--policy",
            "builtin",
            *("--limit", "6", "--n", "2"),
            "-o",
            str(tmp_path),
        ],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    demo = demo_env(spec, episodes=12, group_size=2, policy_path=str(spec.demo_policy))
    assert report["episodes"] == demo.episodes == 12
    assert report["success"]["value"] == demo.success > 0  # the gold agent is deterministic
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    first = rows[0]["trajectory"]["steps"][0]
    system = first["prompt_messages"][0]
    assert system["role"] == "system" and "<tool_call>" in system["content"]  # tools for text models
    steps = [s for r in rows for s in r["trajectory"]["steps"]]
    assert any(s["info"].get("source") not in ("user", "error") for s in steps)  # tools were called
    messages = [s["action"] for s in steps if not s["action"].startswith("{")]
    # The customer reads the agent's message, not the scripted backend's <think>/<action> wrapping.
    assert messages and not any("<think>" in m or "<action>" in m for m in messages), messages[:2]


def test_tau_pass_hat_k_is_tau_benchs_on_the_recorded_episodes(tmp_path: Path) -> None:
    require_data(resolve("envhub/TauRetail-v0"))
    config = EvalConfig(
        env="envhub/TauRetail-v0",
        policy="scripted:tests.eval.policies:TauCoinPolicy",
        split="test",
        limit=10,
        n=4,
        ks=[1, 2, 3, 4],
    )
    report = evaluate(config, tmp_path, plots=False)
    by_task: dict[str, list[float]] = {}
    for line in (tmp_path / "episodes.jsonl").read_text().splitlines():  # the raw file
        row = json.loads(line)
        by_task.setdefault(row["task_id"], []).append(float(row["reward"]))
    assert len(by_task) == 10 and all(len(r) == 4 for r in by_task.values())
    assert any(0 < sum(r) < 4 for r in by_task.values()), "samples of a task must differ"
    for k in (1, 2, 3, 4):
        assert report["pass_hat_k"][str(k)]["value"] == pytest.approx(tau_pass_hat_k(by_task, k))
    hat, at = report["pass_hat_k"], report["pass_at_k"]
    assert 0 < hat["2"]["value"] < hat["1"]["value"] == at["1"]["value"] < at["2"]["value"]
