"""The trainer's credentials: env token, rollout-service token and policy key, from its environment.

Real servers started with secrets: an env server with a token, the rollout service (its own
process) with ``ENVHUB_TOKEN``, and an OpenAI-style ``/v1/models`` endpoint that wants a key.
Without the setting the trainer stops with one line naming it (exit 2); with it, it works.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from envhub.core.errors import EnvhubError
from envhub.core.wire import PolicyEndpoint, SamplingRequest
from envhub.rollout.engine import GroupTask
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from envhub.train.config import RolloutSettings, TrainerCredentials
from envhub.train.rollouts import ServiceRollouts
from tests.integration.rollout_service_proc import Service, free_port

pytestmark = pytest.mark.integration

KEY = "policy-key"


class KeyedModels(BaseHTTPRequestHandler):
    """``/v1/models`` listing ``tiny`` to a caller with ``Bearer policy-key``; 401 otherwise."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def policy_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeyedModels)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def ts_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1, token="env-t")) as running:
        yield running


def train_cli(
    model: Path, env_url: str, run_dir: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENVHUB_")}
    full.update(env)
    return subprocess.run(
        [
            sys.executable, "-m", "envhub.train.cli",
            "--env", "envhub/SearchQA-v0", "--model", str(model), "--iterations", "1",
            "--run-dir", str(run_dir), "--group-size", "2", "--batch-tasks", "2",
            "--set", f"rollout.envs=[\"{env_url}\"]",
            "--set", "rollout.max_steps=1", "--set", "rollout.max_tokens=4", "--no-progress",
        ],
        capture_output=True, text=True, timeout=300, env=full,
    )  # fmt: skip


def test_envhub_train_sends_the_env_token_from_its_environment(small_model_dir: Path, tmp_path: Path) -> None:
    with serve_in_thread(ServerSettings(env_id="envhub/SearchQA-v0", workers=1, token="env-t")) as server:
        refused = train_cli(small_model_dir, server.base_url, tmp_path / "a", {})
        assert refused.returncode == 2, refused.stderr + refused.stdout
        # transformers' weight-loading bar aside, the trainer writes one line.
        lines = [
            line for line in refused.stderr.splitlines() if line.strip() and "Loading weights" not in line
        ]
        assert len(lines) == 1 and lines[0].startswith("error (UNAUTHORIZED)"), refused.stderr
        assert "ENVHUB_ENV_TOKEN" in lines[0]
        assert "Traceback" not in refused.stderr

        ok = train_cli(small_model_dir, server.base_url, tmp_path / "b", {"ENVHUB_ENV_TOKEN": "env-t"})
        assert ok.returncode == 0, ok.stderr + ok.stdout
        assert "learning curve" in ok.stdout


def play(service: Service, env: RunningServer, policy_url: str, credentials: TrainerCredentials) -> int:
    async def run() -> int:
        rollouts = ServiceRollouts(
            service_url=service.url,
            env_id="envhub/TimeSeries-v0",
            settings=RolloutSettings(env_urls=[env.base_url], env_kwargs={"images": False}, split="test"),
            policy=PolicyEndpoint(
                base_url=policy_url,
                model="tiny",
                tokenizer="/no/such/tokenizer",
                api_key=SecretStr(credentials.policy_api_key) if credentials.policy_api_key else None,
            ),
            poll_s=0.05,
            service_token=credentials.rollout_token,
            env_token=credentials.env_token,
        )
        try:
            return await rollouts.play([GroupTask(0, "test-0", 0)], version=1, sampling=SamplingRequest())
        finally:
            await rollouts.aclose()

    return asyncio.run(run())


def test_service_rollouts_send_the_rollout_token_the_env_token_and_the_policy_key(
    ts_server: RunningServer, policy_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = Service(
        free_port(),
        redis_url=None,
        stream="envhub:creds",
        log=tmp_path / "s.log",
        env={"ENVHUB_TOKEN": "svc-t"},
    )
    try:
        for name in ("ENVHUB_ENV_TOKEN", "ENVHUB_ROLLOUT_TOKEN", "ENVHUB_POLICY_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        with pytest.raises(EnvhubError, match="ENVHUB_ROLLOUT_TOKEN") as no_token:
            play(service, ts_server, policy_url, TrainerCredentials())
        assert no_token.value.code == "UNAUTHORIZED"

        monkeypatch.setenv("ENVHUB_ROLLOUT_TOKEN", "svc-t")
        with pytest.raises(EnvhubError) as no_key:  # the policy server refuses the job's check
            play(service, ts_server, policy_url, TrainerCredentials())
        assert no_key.value.code == "POLICY_UNAVAILABLE", no_key.value

        monkeypatch.setenv("ENVHUB_POLICY_API_KEY", KEY)
        with pytest.raises(EnvhubError) as no_env_token:  # the env server refuses the job's check
            play(service, ts_server, policy_url, TrainerCredentials())
        assert "ENVHUB_ROLLOUT_TOKEN" not in str(no_env_token.value), no_env_token.value

        monkeypatch.setenv("ENVHUB_ENV_TOKEN", "env-t")
        # Every check passes and the job is created: it then fails on the stand-in's missing
        # completions route, which is past every credential.
        with pytest.raises(EnvhubError, match="ended failed"):
            play(service, ts_server, policy_url, TrainerCredentials())
    finally:
        service.stop()
