"""scripts/install-docker.sh never starts a second daemon: a user the running engine does not
answer is told why and what to do, and no dockerd is started (real engine, real unprivileged user)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dockerds() -> list[str]:
    return subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True).stdout.split()


@pytest.mark.integration
def test_a_user_the_engine_does_not_answer_gets_a_reason_not_a_second_daemon(tmp_path: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs root and runuser to run the script as an unprivileged user")
    if not _dockerds() or subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("needs a running Docker engine (make docker-engine)")
    before = _dockerds()
    done = subprocess.run(
        ["runuser", "-u", "nobody", "--", "env", "CI=true", f"HOME={tmp_path}",
         "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "bash", str(ROOT / "scripts/install-docker.sh")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # CI=true: the fleet test must run, so this fails
    assert "does not answer user nobody" in done.stderr and "Not starting another one" in done.stderr
    assert "permission denied" in done.stderr  # docker's own reason, passed on
    assert _dockerds() == before
