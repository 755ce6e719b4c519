"""``envhub rollout --config job.yaml --set key=value``: one RolloutRequest, loaded, overridden, played."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envhub.cli import app
from envhub.core.wire import RolloutRequest
from envhub.rollout.export import read_jsonl
from envhub.rollout.jobs import load_request

TS = "envhub/TimeSeries-v0"
HEURISTIC = "scripted:envhub.envs.timeseries.policy:HeuristicPolicy"
JOB = {
    "env_id": TS,
    "split": "test",
    "count": 3,
    "group_size": 2,
    "max_steps": 3,
    "policy": HEURISTIC,
    "env_kwargs": {"images": False},
    "sampling": {"temperature": 0.7},
}


def job_file(tmp_path: Path, **fields: object) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({**JOB, **fields}), encoding="utf-8")
    return path


def test_a_job_yaml_with_set_overrides_runs_end_to_end(tmp_path: Path) -> None:
    path, out = job_file(tmp_path), tmp_path / "groups.jsonl"
    args = ["rollout", "--config", str(path), "--set", "group_size=3", "--set", "count=2", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    groups = list(read_jsonl(out))
    assert [g.task_id for g in sorted(groups, key=lambda g: g.uid)] == ["test-0", "test-1"]
    assert all(g.env_id == TS and len(g.trajectories) == 3 for g in groups)
    assert all(1 <= t.length <= 3 for g in groups for t in g.trajectories)


def test_flags_are_shorthands_of_request_fields_and_set_comes_last(tmp_path: Path) -> None:
    path = job_file(tmp_path)
    request = load_request(
        path, ["sampling.top_p=0.5", "group_size=5"], fields={"group_size": 4, "sampling.temperature": 0.2}
    )
    assert request == RolloutRequest.model_validate(
        {**JOB, "group_size": 5, "sampling": {"temperature": 0.2, "top_p": 0.5}}
    )


@pytest.mark.parametrize(
    ("override", "code"),
    [
        ("group_size=0", "VALIDATION_ERROR"),
        ("count=true", "VALIDATION_ERROR"),  # not count=1: a boolean is no number
        ("sampling.top_k=true", "VALIDATION_ERROR"),
        ("no_such_field=1", "VALIDATION_ERROR"),
        ("group_size", "INVALID_CONFIG"),
        ("sampling.temperature.x=1", "INVALID_CONFIG"),
    ],
)
def test_a_bad_set_is_one_line_and_exit_2(override: str, code: str, tmp_path: Path) -> None:
    path, out = job_file(tmp_path), tmp_path / "groups.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envhub.cli",
            "rollout",
            "--config",
            str(path),
            "--set",
            override,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"error ({code})" in lines[0], done.stderr
    assert not out.exists()


def test_a_job_without_policy_or_tasks_is_refused(tmp_path: Path) -> None:
    for missing in ("policy", "count"):
        fields = {k: v for k, v in JOB.items() if k != missing}
        path = tmp_path / "job.yaml"
        path.write_text(yaml.safe_dump(fields), encoding="utf-8")
        result = CliRunner().invoke(app, ["rollout", "--config", str(path), "-o", str(tmp_path / "g.jsonl")])
        assert result.exit_code != 0
        assert "required for a rollout job" in str(result.exception)


def test_a_refused_job_does_not_echo_the_policy_key(tmp_path: Path) -> None:
    from envhub.rollout.jobs import InvalidJobError

    with pytest.raises(InvalidJobError) as caught:
        load_request(
            None,
            [
                "env_id=timeseries",
                "count=1",
                "policy.base_url=http://127.0.0.1:9/v1",
                "policy.api_key=sk-SECRET-42",
            ],
        )
    assert "policy" in str(caught.value) and "sk-SECRET-42" not in str(caught.value)


@pytest.mark.parametrize(
    ("tasks", "code"),
    [
        # Named tasks: every group is opened on an env that cannot be built, and drops; the service
        # ends such a job `failed`. The CLI said "0 groups written", exited 0, left an empty file.
        (["test-0", "test-1"], "ALL_GROUPS_DROPPED"),
        # The split's first tasks: listing them builds the job's env, so it is refused before any
        # group opens.
        (None, "INVALID_CONFIG"),
    ],
)
def test_a_job_whose_env_cannot_be_built_fails_with_one_line_and_no_file(
    tasks: list[str] | None, code: str, tmp_path: Path
) -> None:
    fields: dict[str, object] = {"task_ids": tasks, "count": None} if tasks else {}
    path, out = job_file(tmp_path, **fields), tmp_path / "groups.jsonl"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "envhub.cli", "rollout", "--config", str(path)),
            *("--set", "env_kwargs.no_such_kwarg=1", "-o", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"error ({code})" in lines[0], done.stderr
    assert "no_such_kwarg" in lines[0]  # the first cause, not only its class
    assert not out.exists()
