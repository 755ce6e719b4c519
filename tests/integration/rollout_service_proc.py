"""``envhub serve-rollouts`` in its own process, and a Redis of the test's own (helpers)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]

#: Scripted policies the tests register on the service (requests may name only registered ones).
SCRIPTED = {
    "heuristic": "envhub.envs.timeseries.policy:HeuristicPolicy",
    "slow_heuristic": "tests.rollout.scripted_policies:slow_heuristic",
    "stateless_slow": "tests.rollout.scripted_policies:stateless_slow",
    "dies_after_a_while": "tests.rollout.scripted_policies:dies_after_a_while",
    "seed_echo": "tests.rollout.scripted_policies:seed_echo",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_up(port: int = 6379) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class OwnRedis:
    """A ``redis-server`` on a free port that the test may kill and restart (AOF keeps the data)."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not redis_up(self.port):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None


class Service:
    """``envhub serve-rollouts`` in its own process (``python -m envhub.cli``)."""

    def __init__(
        self, port: int, *, redis_url: str | None, stream: str, log: Path, env: dict[str, str] | None = None
    ) -> None:
        full = {
            **os.environ,
            "ENVHUB_STREAM": stream,
            "PYTHONPATH": str(ROOT),
            "ENVHUB_SCRIPTED_POLICIES": json.dumps(SCRIPTED),
            **(env or {}),
        }
        full.pop("REDIS_URL", None)
        if redis_url is not None:
            full["REDIS_URL"] = redis_url
        self.url = f"http://127.0.0.1:{port}"
        self.headers: dict[str, str] = {}
        if "ENVHUB_TOKEN" in full:
            self.headers["Authorization"] = f"Bearer {full['ENVHUB_TOKEN']}"
        self.logpath = log
        self.log = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "envhub.cli", "serve-rollouts", "--port", str(port)],
            env=full,
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
            assert self.proc.poll() is None, f"the rollout service exited; see {log}"
        self.stop()
        raise RuntimeError(f"the rollout service did not start; see {log}")

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=self.headers, timeout=10)

    def post(self, path: str, body: Any = None) -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, headers=self.headers, timeout=30)

    def progress(self, job_id: str) -> dict[str, Any]:
        return self.get(f"/v1/rollouts/{job_id}").json()  # type: ignore[no-any-return]

    def wait(self, job_id: str, until: set[str], timeout_s: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while (progress := self.progress(job_id)).get("status") not in until:
            assert time.monotonic() < deadline, progress
            time.sleep(0.1)
        return progress

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait_exit(self, timeout_s: float = 30) -> int:
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def raw_stream(url: str, stream: str) -> list[dict[bytes, bytes]]:
    """Every entry of the raw stream (XRANGE), not through a consumer."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        return [fields for _, fields in client.xrange(stream, "-", "+")]
    finally:
        client.close()


def delete_keys(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
