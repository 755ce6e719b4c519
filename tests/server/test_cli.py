"""``envhub serve``: the command starts a real server process that answers and shuts down."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from .conftest import COUNTER


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_command_serves_with_flags_and_token() -> None:
    port = _free_port()
    command = [sys.executable, "-m", "envhub.cli", "serve", COUNTER, "--port", str(port), "--workers", "1"]
    command += ["--token", "tok", "--max-sessions", "7"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # for tests.server.envs
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            try:
                if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "envhub serve did not become ready"
            time.sleep(0.2)
        assert httpx.get(f"{base}/ready").json()["max_sessions"] == 7
        assert httpx.post(f"{base}/v1/sessions", json={}).status_code == 401
        created = httpx.post(f"{base}/v1/sessions", json={}, headers={"Authorization": "Bearer tok"})
        assert created.status_code == 201
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
