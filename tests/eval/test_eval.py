"""``envhub eval`` end to end: the demo's rates, resume after SIGKILL, breakdowns, the CLI."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envhub.core.errors import ConfigurationError
from envhub.core.wire import SamplingRequest
from envhub.envs.registry import resolve
from envhub.eval.metrics import wilson
from envhub.eval.run import EvalConfig, evaluate, read_episodes
from envhub.rollout.demo import demo_env
from envhub.rollout.engine import EngineEvent

REPO = Path(__file__).resolve().parents[2]
ENVHUB = [sys.executable, "-c", "from envhub.cli import main; main()"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.mark.parametrize(
    ("policy", "spec_field"), [("builtin", "demo_policy"), ("random", "baseline_policy")]
)
def test_timeseries_eval_reproduces_the_demo_within_its_interval(
    tmp_path: Path, policy: str, spec_field: str
) -> None:
    spec = resolve("TimeSeries-v0")
    # The demo: 200 episodes, 2 per task, on the first 100 test tasks (seeded per task and member).
    demo = demo_env(spec, episodes=200, group_size=2, policy_path=getattr(spec, spec_field))
    report = evaluate(EvalConfig(env="TimeSeries-v0", policy=policy, split="test", limit=100, n=2), tmp_path)
    assert report["episodes"] == demo.episodes == 200
    demo_ci = wilson(round(demo.success * demo.episodes), demo.episodes)
    assert demo_ci["lo"] <= report["success"]["value"] <= demo_ci["hi"], (demo.success, report["success"])
    reward = report["mean_reward"]
    assert reward["lo"] <= demo.mean_reward <= reward["hi"], (demo.mean_reward, reward)
    if policy == "builtin":  # a deterministic policy on the same tasks: the same episodes exactly
        assert report["success"]["value"] == demo.success
        assert report["mean_reward"]["value"] == pytest.approx(demo.mean_reward)
    # Every output the docs promise is there, and traceable to episodes.
    for name in ("report.json", "summary.md", "episodes.jsonl", "eval.json"):
        assert (tmp_path / name).is_file()
    assert all((tmp_path / p).is_file() for p in report["plots"])
    assert (tmp_path / "plots" / "success_by_anomaly_kind.png").read_bytes().startswith(b"\x89PNG")
    assert set(report["breakdown"]) == {"anomaly_kind"}
    assert sum(c["episodes"] for c in report["breakdown"]["anomaly_kind"].values()) == 200
    row = read_episodes(tmp_path)[0]
    assert row["trajectory"]["traj_id"] == row["traj_id"] and row["steps"] == len(row["trajectory"]["steps"])


def test_alfworld_report_has_the_six_task_types(tmp_path: Path) -> None:
    report = evaluate(
        EvalConfig(env="ALFWorld-v0", policy="builtin", split="eval_in_distribution", n=1, concurrency=4),
        tmp_path,
        plots=False,
    )
    assert set(report["breakdown"]["task_type"]) == {
        "pick_and_place_simple",
        "look_at_obj_in_light",
        "pick_clean_then_place_in_recep",
        "pick_heat_then_place_in_recep",
        "pick_cool_then_place_in_recep",
        "pick_two_obj_and_place",
    }
    assert report["success"]["value"] == 1.0  # the walkthrough solves every game
    assert "## by task_type" in (tmp_path / "summary.md").read_text()


def test_a_run_killed_halfway_resumes_and_replays_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [
        "eval",
        "--env",
        "TimeSeries-v0",
        "--policy",
        "scripted:tests.eval.policies:slow_heuristic",
        "--split",
        "test",
        "--limit",
        "12",
        "--n",
        "2",
        "--concurrency",
        "1",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen([*ENVHUB, *args], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(read_episodes(out)) < 8:  # 4 of 12 tasks done
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the first run made no progress"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_episodes(out)
    done = {r["slot"] for r in before}
    assert 4 <= len(done) < 12, done

    started: list[int] = []

    def on_event(event: EngineEvent) -> None:
        if event.kind == "group_started":
            started.append(event.slot)

    config = json.loads((out / "eval.json").read_text())
    report = evaluate(EvalConfig(**config), out, on_event=on_event, plots=False)
    assert started and not set(started) & done, (started, done)
    rows = read_episodes(out)
    raw = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert raw == rows, "every line of the file parses: no torn line left between the two runs"
    assert sorted((r["slot"], r["sample"]) for r in rows) == [(s, i) for s in range(12) for i in range(2)]
    assert rows[: len(before)] == before  # what the killed run wrote is kept as it was
    assert report["tasks"] == 12 and report["episodes"] == 24


def test_a_torn_last_line_is_dropped_and_its_task_replayed(tmp_path: Path) -> None:
    config = EvalConfig(env="TimeSeries-v0", policy="builtin", split="test", limit=3, n=2)
    evaluate(config, tmp_path, plots=False)
    path = tmp_path / "episodes.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:20])  # a crash in the middle of a write
    assert len(read_episodes(tmp_path)) == 5
    started: list[int] = []
    report = evaluate(
        config,
        tmp_path,
        plots=False,
        on_event=lambda e: started.append(e.slot) if e.kind == "group_started" else None,
    )
    assert started == [2]
    assert report["episodes"] == 6  # the torn task's first sample was replayed with its group


def test_an_out_folder_of_another_eval_is_refused(tmp_path: Path) -> None:
    evaluate(EvalConfig(env="TimeSeries-v0", policy="builtin", split="test", limit=1), tmp_path, plots=False)
    result = subprocess.run(
        [
            *ENVHUB,
            "eval",
            "--env",
            "TimeSeries-v0",
            "--policy",
            "random",
            "--limit",
            "1",
            "-o",
            str(tmp_path),
        ],
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "differs in policy" in result.stderr and "new --out" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", "2", "--k", "3"], "k=3 exceeds n=2"),
        (["--n", "0"], "--n:"),
        (["--policy", "builtin", "--env", "Remote-v0"], "has no built-in policy"),
        (["--k", "0"], "--k: ks must be positive"),  # the flag's name, not the field's
    ],
)
def test_bad_eval_flags_are_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    base = ["eval", "--env", "TimeSeries-v0", "--policy", "builtin", "-o", str(tmp_path / "o")]
    result = subprocess.run([*ENVHUB, *base, *args], env=_env(), capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists(), "a refused eval leaves no folder behind"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "scripted:no_such_module_here:Policy"], "Cannot load scripted policy"),
        (["--policy", "builtin", "--split", "nosuch"], "has no split 'nosuch'"),
        (["--policy", "builtin", "--task", "nosuch"], "has no task 'nosuch'"),
        (["--policy-url", "http://127.0.0.1:{port}/v1", "--model", "m"], "does not answer"),
        (["--policy", "transformers:{tmp}"], "Cannot load the model at"),  # a folder, not a model
    ],
)
def test_an_eval_that_cannot_play_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "o"
    args = [a.format(port=_closed_port(), tmp=tmp_path) for a in args]
    started = time.monotonic()
    result = subprocess.run(
        [*ENVHUB, "eval", "--env", "TimeSeries-v0", "--limit", "2", "-o", str(out), *args],
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not out.exists(), sorted(p.name for p in out.iterdir())
    assert time.monotonic() - started < 20, "a down policy endpoint is found before playing"
    # The same folder then takes the corrected eval (no stale eval.json refuses it).
    evaluate(EvalConfig(env="TimeSeries-v0", policy="builtin", limit=2), out, plots=False)


def test_compare_shows_both_reports_and_the_difference(tmp_path: Path) -> None:
    for policy in ("builtin", "random"):
        evaluate(
            EvalConfig(env="TimeSeries-v0", policy=policy, split="test", limit=6, n=2, ks=[1, 2]),
            tmp_path / policy,
            plots=False,
        )
    result = subprocess.run(
        [*ENVHUB, "eval", "compare", str(tmp_path / "builtin"), str(tmp_path / "random" / "report.json")],
        env={**_env(), "COLUMNS": "200"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    a = json.loads((tmp_path / "builtin" / "report.json").read_text())
    b = json.loads((tmp_path / "random" / "report.json").read_text())
    diff = 100 * (b["success"]["value"] - a["success"]["value"])
    success_line = next(line for line in result.stdout.splitlines() if "│ success " in line)
    assert f"{diff:+.1f} pts" in success_line
    assert "pass@2" in result.stdout and "success[anomaly_kind=" in result.stdout


def test_an_in_process_transformers_model_is_evaluated_with_its_tokens(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = EvalConfig(
        env="TimeSeries-v0",
        policy=f"transformers:{tiny_model_dir}",  # 4,096 positions: TimeSeries prompts are long
        split="test",
        limit=2,
        n=2,
        ks=[1, 2],
        sampling=SamplingRequest(max_tokens=6, temperature=1.0),
        max_steps=2,
    )
    report = evaluate(config, tmp_path, plots=False)
    assert report["episodes"] == 4
    assert 0 < report["per_episode"]["response_tokens"]["mean"] <= 12
    step = read_episodes(tmp_path)[0]["trajectory"]["steps"][0]
    assert len(step["response_token_ids"]) == len(step["response_logprobs"]) <= 6


def test_an_explicit_task_list_gives_one_slot_per_task_in_list_order(tmp_path: Path) -> None:
    tasks = ["test-9", "test-2", "test-40"]
    report = evaluate(
        EvalConfig(env="TimeSeries-v0", policy="random", tasks=tasks, n=3, ks=[1, 3]), tmp_path, plots=False
    )
    rows = read_episodes(tmp_path)
    assert report["tasks"] == 3 and report["n"] == 3
    assert sorted((r["slot"], r["task_id"]) for r in rows if r["sample"] == 0) == list(enumerate(tasks))
    # One seed per (task, sample): the random policy's samples of a task are not all alike.
    assert len({json.dumps(r["trajectory"]["steps"][0]["action"]) for r in rows}) > 3


def test_compare_warns_when_the_reports_are_not_of_the_same_tasks(tmp_path: Path) -> None:
    evaluate(
        EvalConfig(env="TimeSeries-v0", policy="builtin", split="test", limit=2), tmp_path / "a", plots=False
    )
    evaluate(
        EvalConfig(env="TimeSeries-v0", policy="random", split="train", limit=3), tmp_path / "b", plots=False
    )
    evaluate(
        EvalConfig(env="Sokoban-v0", policy="builtin", limit=1, max_steps=3), tmp_path / "c", plots=False
    )

    def compare(a: str, b: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ENVHUB, "eval", "compare", str(tmp_path / a), str(tmp_path / b)],
            env={**_env(), "COLUMNS": "200"},
            capture_output=True,
            text=True,
        )

    same_tasks = compare("a", "a")
    assert same_tasks.returncode == 0 and "warning" not in same_tasks.stderr
    tasks = compare("a", "b")
    assert tasks.returncode == 0 and "│ success " in tasks.stdout  # still shown side by side
    assert "warning" in tasks.stderr and "split" in tasks.stderr and "limit" in tasks.stderr, tasks.stderr
    envs = compare("a", "c")
    assert "envhub/TimeSeries-v0" in envs.stderr and "envhub/Sokoban-v0" in envs.stderr, envs.stderr


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"env_id": "x"}'])
def test_compare_refuses_a_file_that_is_not_a_report_in_one_line(tmp_path: Path, text: str) -> None:
    evaluate(EvalConfig(env="TimeSeries-v0", policy="builtin", limit=1), tmp_path / "a", plots=False)
    (tmp_path / "bad.json").write_text(text)
    result = subprocess.run(
        [*ENVHUB, "eval", "compare", str(tmp_path / "a"), str(tmp_path / "bad.json")],
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert "bad.json" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_an_unwritable_out_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    result = subprocess.run(
        [
            *ENVHUB,
            "eval",
            "--env",
            "TimeSeries-v0",
            "--policy",
            "builtin",
            "-o",
            str(tmp_path / "file" / "o"),
        ],
        env=_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert "give a writable --out" in result.stderr and "Traceback" not in result.stderr


def test_resuming_with_other_concurrency_or_ks_replays_nothing_and_reports_the_new_k(tmp_path: Path) -> None:
    evaluate(
        EvalConfig(env="TimeSeries-v0", policy="random", limit=3, n=2, concurrency=4), tmp_path, plots=False
    )
    before = (tmp_path / "episodes.jsonl").read_bytes()
    started: list[int] = []
    report = evaluate(
        EvalConfig(env="TimeSeries-v0", policy="random", limit=3, n=2, concurrency=1, ks=[1, 2]),
        tmp_path,
        plots=False,
        on_event=lambda e: started.append(e.slot) if e.kind == "group_started" else None,
    )
    assert started == [] and (tmp_path / "episodes.jsonl").read_bytes() == before
    assert set(report["pass_at_k"]) == {"1", "2"}
    with pytest.raises(ConfigurationError, match="differs in n"):  # other episodes: still refused
        evaluate(EvalConfig(env="TimeSeries-v0", policy="random", limit=3, n=3), tmp_path, plots=False)
