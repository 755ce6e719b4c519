"""``envhub rollout`` with bad input: one line on stderr, exit 2, no traceback, no output file."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import ROOT, Service, free_port

pytestmark = pytest.mark.integration

BASE = [
    "--env",
    "envhub/TimeSeries-v0",
    "--split",
    "test",
    "--group-size",
    "2",
    "--env-kwarg",
    "images=false",
]
HEURISTIC = ["--policy", "scripted:envhub.envs.timeseries.policy:HeuristicPolicy"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ([*HEURISTIC, "--count", "2", "--temperature", "-1"], "VALIDATION_ERROR"),
        ([*HEURISTIC, "--count", "2", "--max-tokens", "0"], "VALIDATION_ERROR"),
        (["--policy-url", "http://127.0.0.1:9/v1", "--model", "tiny", "--count", "2"], "POLICY_UNAVAILABLE"),
        ([*HEURISTIC, "--count", "1000000"], "COUNT_BEYOND_SPLIT"),
        ([*HEURISTIC, "--count", "2", "--on-failure", "explode"], "INVALID_CONFIG"),
        ([*HEURISTIC, "--count", "2", "--env-kwarg", "images=[not json"], "INVALID_CONFIG"),
        ([*HEURISTIC, "--count", "2", "--group-size", "0"], "VALIDATION_ERROR"),
        ([*HEURISTIC, "--count", "2", "--concurrency", "0"], "VALIDATION_ERROR"),
        ([*HEURISTIC, "--count", "2", "--max-steps", "0"], "VALIDATION_ERROR"),
        ([*HEURISTIC, "--count", "2", "--step-timeout", "-1"], "VALIDATION_ERROR"),
    ],
    ids=[
        "temperature",
        "max-tokens",
        "policy-down",
        "count",
        "on-failure",
        "env-kwarg",
        "group-size",
        "concurrency",
        "max-steps",
        "step-timeout",
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_output_file(args: list[str], code: str, tmp_path: Path) -> None:
    out = tmp_path / "groups.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "envhub.cli", "rollout", *BASE, *args, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"error ({code})" in lines[0], done.stderr
    assert not out.exists()


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


def test_service_url_submits_through_the_client_and_errors_are_one_line(
    env_server: RunningServer, tmp_path: Path
) -> None:
    service = Service(
        free_port(), redis_url=None, stream="unused", log=tmp_path / "s.log", env={"ENVHUB_TOKEN": "t"}
    )
    common = [
        "--env",
        "envhub/TimeSeries-v0",
        "--env-url",
        env_server.base_url,
        "--split",
        "test",
        "--group-size",
        "2",
        "--env-kwarg",
        "images=false",
        "--service-url",
        service.url,
        "--count",
        "2",
    ]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ENVHUB_TOKEN": "t"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "envhub.cli", "rollout", *common, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=ROOT,
            env=env,
        )

    try:
        ok = run("--policy", "scripted:timeseries-heuristic")
        assert ok.returncode == 0, ok.stderr[-2000:]
        assert "2 groups published" in ok.stdout
        for args, code in [
            (["--policy", "scripted:os:system"], "NOT_REGISTERED"),
            (["--policy", "scripted:timeseries-heuristic", "--temperature", "-1"], "VALIDATION_ERROR"),
        ]:
            bad = run(*args)
            lines = [line for line in bad.stderr.splitlines() if line.strip()]
            assert bad.returncode == 2 and len(lines) == 1 and f"error ({code})" in lines[0], bad.stderr
        env["ENVHUB_TOKEN"] = "wrong"
        denied = run("--policy", "scripted:timeseries-heuristic")
        assert denied.returncode == 2 and "error (UNAUTHORIZED)" in denied.stderr
    finally:
        service.stop()
