"""One live trainer per run label: the run lock on the real Redis, and real trainer processes.

The lock (:mod:`envhub.train.lock`) is a Redis key with a TTL its holder renews; a second
trainer on the label is refused, a holder that died (SIGKILL) does not block a resume: on this
host it is seen to be dead at once, elsewhere its TTL runs out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from envhub.train.checkpoint import latest_checkpoint
from envhub.train.lock import RunLock, RunLockedError, run_lock_key
from envhub.train.rollouts import run_label
from tests.integration.rollout_service_proc import redis_up
from tests.needs import require

ROOT = Path(__file__).resolve().parents[2]
REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
def stream() -> Iterator[str]:
    """A stream name of the test's own; every key under it is deleted afterwards."""
    require(redis_up(), "a Redis server on 127.0.0.1:6379", how="redis-server --daemonize yes --port 6379")
    name = f"envhub-test:lock:{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(REDIS)
    try:
        yield name
    finally:
        for key in client.scan_iter(f"{name}*"):
            client.delete(key)
        client.close()


def test_a_second_holder_is_refused_at_once_while_the_first_renews_past_its_ttl(stream: str) -> None:
    key = run_lock_key(stream, "run-a")
    first = RunLock(REDIS, key, ttl_ms=1200, run="run-a")
    first.acquire()
    try:
        time.sleep(2.0)  # past the TTL: the heartbeat kept it
        second = RunLock(REDIS, key, ttl_ms=1200, run="run-a")
        start = time.monotonic()
        with pytest.raises(RunLockedError, match="Another trainer is running on run label 'run-a'") as err:
            second.acquire()
        second.release()
        assert time.monotonic() - start < 1.0  # alive on this host: no waiting
        assert err.value.code == "RUN_LOCKED" and err.value.detail["holder"]["pid"] == os.getpid()
        assert not first.lost
    finally:
        first.release()
    third = RunLock(REDIS, key, ttl_ms=1200)
    third.acquire()  # released: free at once
    third.release()
    assert not redis.Redis.from_url(REDIS).exists(key)


_HOLD = """
import sys, time
from envhub.train.lock import RunLock
RunLock(sys.argv[1], sys.argv[2], ttl_ms=120_000).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_holder_killed_on_this_host_frees_the_lock_at_once(stream: str) -> None:
    key = run_lock_key(stream, "run-b")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, REDIS, key], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError):  # alive
            RunLock(REDIS, key).acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    finally:
        holder.kill()
        holder.wait()
    assert redis.Redis.from_url(REDIS).pttl(key) > 100_000  # its key stays, for two minutes
    lock = RunLock(REDIS, key, ttl_ms=120_000)
    start = time.monotonic()
    lock.acquire()
    lock.release()
    assert time.monotonic() - start < 1.0


def _foreign_holder(client: redis.Redis, key: str, ttl_ms: int) -> str:
    value = json.dumps({"host": "another-host", "ns": "pid:[1]", "pid": 4242, "since": time.time()})
    client.set(key, value, px=ttl_ms)
    return value


def test_a_holder_on_another_host_is_waited_for_until_its_ttl_runs_out(stream: str) -> None:
    key = run_lock_key(stream, "run-c")
    client = redis.Redis.from_url(REDIS)
    _foreign_holder(client, key, 1500)  # it died: nobody renews it
    lock = RunLock(REDIS, key, ttl_ms=1500)
    start = time.monotonic()
    lock.acquire()
    waited = time.monotonic() - start
    lock.release()
    assert 1.0 < waited < 3.5, waited

    # One that renews is alive: refused once its TTL passed without lapsing.
    value = _foreign_holder(client, key, 1500)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(0.3):
            client.set(key, value, px=1500)

    beat = threading.Thread(target=renew)
    beat.start()
    try:
        start = time.monotonic()
        with pytest.raises(RunLockedError, match=r"pid 4242 on host another-host.*kept renewing"):
            RunLock(REDIS, key, ttl_ms=1500).acquire()
        assert 1.0 < time.monotonic() - start < 3.5
    finally:
        stop.set()
        beat.join()
        client.close()


def test_a_holder_that_stops_renewing_past_its_ttl_knows_it_lost_the_lock(stream: str) -> None:
    key = run_lock_key(stream, "run-d")
    lock = RunLock(REDIS, key, ttl_ms=1200)
    lock.acquire()
    client = redis.Redis.from_url(REDIS)
    try:
        client.set(key, "someone else")  # what another trainer does once this one's TTL ran out
        deadline = time.monotonic() + 5
        while not lock.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.lost
    finally:
        lock.release()
    assert client.get(key) == b"someone else"  # a lost lock is not deleted on release
    client.close()


# -- real trainers ------------------------------------------------------------------------------


def _command(model: Path, run: Path, stream: str, iterations: int) -> list[str]:
    return [
        sys.executable, "-m", "envhub.train.cli",
        "--env", "envhub/SearchQA-v0", "--model", str(model), "--iterations", str(iterations),
        "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "2", "--queue", REDIS,
        "--no-progress", "--seed", "3",
        "--set", f"rollout.queue_stream={stream}", "--set", "output.checkpoint_every=1",
        "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=6", "--set", "max_staleness=1",
        "--set", "output.tensorboard=false", "--set", "algo=grpo",
    ]  # fmt: skip


@pytest.mark.slow
def test_a_second_trainer_on_a_run_is_refused_and_a_resume_after_sigkill_is_not(
    small_model_dir: Path, tmp_path: Path, stream: str
) -> None:
    run = tmp_path / "run"
    # A lock TTL of two minutes: a resume that waited for the killed trainer's lock to lapse
    # would take that long.
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
        "ENVHUB_QUEUE_RUN_LOCK_MS": "120000",
    }
    client = redis.Redis.from_url(REDIS)
    key = run_lock_key(stream, run_label(run))
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(
        _command(small_model_dir, run, stream, 100), env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 180
        while first.poll() is None and time.monotonic() < deadline and latest_checkpoint(run) is None:
            time.sleep(0.05)
        assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]

        # The same run directory, while the first trains: refused, one line, exit 2.
        second = subprocess.run(
            _command(small_model_dir, run, stream, 100), env=env, cwd=ROOT, capture_output=True, text=True,
            timeout=180,
        )  # fmt: skip
        assert second.returncode == 2, second.stdout[-3000:] + second.stderr[-3000:]
        errors = [line for line in second.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1 and errors[0].startswith("error (RUN_LOCKED): Another trainer is running")
        assert f"pid {first.pid} on host" in errors[0]
        assert first.poll() is None and client.exists(key)  # the first goes on
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        first.kill()
        first.wait()
        log.close()
    saved = latest_checkpoint(run)
    assert saved is not None and client.exists(key)  # the killed trainer's lock is still there

    start = time.monotonic()
    resumed = subprocess.run(
        _command(small_model_dir, run, stream, int(saved.name[5:]) + 1), env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=100,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert time.monotonic() - start < 100  # not blocked for the killed trainer's TTL
    assert latest_checkpoint(run).name == f"iter_{int(saved.name[5:]) + 1}"  # type: ignore[union-attr]
    assert not client.exists(key)  # released at the end
    client.close()


@pytest.mark.slow
def test_under_torchrun_rank_0_takes_the_lock_and_every_rank_stops_when_it_is_held(
    small_model_dir: Path, tmp_path: Path, stream: str
) -> None:
    run = tmp_path / "run"
    held = RunLock(REDIS, run_lock_key(stream, run_label(run)), run=run_label(run))
    held.acquire()  # a live trainer of this run (this process)
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    try:
        command = [*torchrun, *_command(small_model_dir, run, stream, 2)[1:]]
        command[command.index("--batch-tasks") + 1] = "4"
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    finally:
        held.release()
    out = done.stdout + done.stderr
    # Both ranks stop at start (rank 1 learns it from rank 0, rather than waiting in a collective).
    assert done.returncode != 0, out[-3000:]
    assert out.count("error (RUN_LOCKED): Another trainer is running") == 2, out[-3000:]
    assert latest_checkpoint(run) is None


@pytest.mark.slow
def test_a_second_trainer_in_a_run_directory_is_refused_on_any_queue_and_a_resume_after_sigkill_is_not(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # The in-process queue (the default): no Redis key, the run directory's flock alone.
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable, "-m", "envhub.train.cli", "--env", "envhub/SearchQA-v0",
        "--model", str(small_model_dir), "--run-dir", str(run), "--group-size", "2", "--batch-tasks", "2",
        "--no-progress", "--seed", "3",
        "--set", "output.checkpoint_every=1", "--set", "rollout.max_steps=2", "--set", "rollout.max_tokens=6",
        "--set", "output.tensorboard=false", "--set", "algo=grpo",
    ]  # fmt: skip
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(
        [*command, "--iterations", "100"], env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 180
        while first.poll() is None and time.monotonic() < deadline and latest_checkpoint(run) is None:
            time.sleep(0.05)
        assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
        second = subprocess.run(
            [*command, "--iterations", "100"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=180
        )
        assert second.returncode == 2, second.stdout[-3000:] + second.stderr[-3000:]
        errors = [line for line in second.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1, second.stderr[-3000:]
        assert errors[0].startswith("error (RUN_LOCKED): Another trainer is running in run directory")
        assert f"pid {first.pid} on host" in errors[0]
        assert first.poll() is None  # the first goes on
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        first.kill()
        first.wait()
        log.close()
    saved = latest_checkpoint(run)
    assert saved is not None
    done = int(saved.name[5:]) + 1
    start = time.monotonic()
    resumed = subprocess.run(
        [*command, "--iterations", str(done)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=100
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert time.monotonic() - start < 100
    assert latest_checkpoint(run).name == f"iter_{done}"  # type: ignore[union-attr]
