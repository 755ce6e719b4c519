"""envhub-train SIGKILLed mid-run with a Redis queue, then restarted: same version, no group lost or reused.

Real processes and real Redis. The trainer checkpoints every iteration and acknowledges groups
only after the checkpoint that records them as used; the restarted trainer takes back its own
unacknowledged deliveries first and skips those its checkpoint already used; groups of the
killed run's versions after its last checkpoint are dropped and counted (the staleness rule).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
import torch

from tests.integration.test_rollout_crash import REDIS, redis_up
from tests.needs import require

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def _command(model: Path, run: Path, stream: str) -> list[str]:
    return [
        sys.executable, "-m", "envhub.train.cli",
        "--env", "envhub/SearchQA-v0", "--model", str(model), "--iterations", "6", "--run-dir", str(run),
        "--group-size", "2", "--batch-tasks", "2", "--queue", REDIS, "--no-progress",
        "--set", f"rollout.queue_stream={stream}", "--set", "output.checkpoint_every=1",
        "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=6", "--set", "max_staleness=1",
        "--set", "output.keep_checkpoints=10",
    ]  # fmt: skip


def _iterations(run: Path) -> int:
    path = run / "metrics.jsonl"
    return len(path.read_text().splitlines()) if path.is_file() else 0


def test_a_killed_trainer_resumes_without_losing_or_reusing_groups(
    small_model_dir: Path, tmp_path: Path
) -> None:
    require(redis_up(), "a Redis server on 127.0.0.1:6379 (the CI machine runs one)")
    stream = f"test-train-{uuid.uuid4().hex[:8]}"
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    client = redis.Redis.from_url(REDIS)
    try:
        first = subprocess.Popen(_command(small_model_dir, run, stream), env=env, cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 240
        while _iterations(run) < 2 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first.poll() is None, "the first run ended before it could be killed"
        first.send_signal(signal.SIGKILL)
        first.wait()
        done_before = _iterations(run)
        assert 2 <= done_before < 6

        second = subprocess.run(_command(small_model_dir, run, stream), env=env, cwd=ROOT,
                                capture_output=True, text=True, timeout=300)  # fmt: skip
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]

        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        # The second run started at the killed run's last checkpoint: no iteration after it ran twice...
        assert sorted({r["iteration"] for r in rows}) == [1, 2, 3, 4, 5, 6]
        # Each checkpoint lists the uids used since the one before it (every one is kept here).
        states = [
            torch.load(run / "checkpoints" / f"iter_{i}" / "trainer_state.pt", weights_only=False)["state"]
            for i in range(1, 7)
        ]
        final = states[-1]
        assert final["policy_version"] == 6
        used = [uid for state in states for uid in state["consumed_uids"]]
        assert len(used) == len(set(used)) == 6 * 2  # ...no group was used twice...
        info = client.xinfo_stream(stream)
        # ...and none was lost: every group ever published was used, dropped by the staleness
        # rule (counted in the checkpoint: the killed run's versions after its last checkpoint),
        # or still waits in the stream.
        assert info["entries-added"] == len(used) + final["dropped_groups"] + client.xlen(stream)
    finally:
        client.delete(stream, f"{stream}:dedup", f"{stream}:dead")
        for key in client.scan_iter(f"{stream}:*"):
            client.delete(key)
