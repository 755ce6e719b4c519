"""Bad rollout requests are refused up front: 422 with a machine-readable code, and no job.

A real env server and a loopback OpenAI-compatible ``/v1/models`` endpoint; the service runs
in-process (``TestClient``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient

from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import SCRIPTED
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration


class Models(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that serves the model ``tiny`` (lists it at /v1/models)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def policy_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = RolloutServiceSettings(scripted_policies=SCRIPTED)
    with TestClient(create_app(settings, queue=CollectingQueue())) as client:
        yield client


def job(server: RunningServer, **fields: Any) -> dict[str, Any]:
    body = {
        "env_urls": [server.base_url],
        "count": 2,
        "split": "test",
        "group_size": 2,
        "env_kwargs": {"images": False},
        "policy": "scripted:heuristic",
    }
    return {**body, **fields}


def refused(client: TestClient, body: dict[str, Any]) -> str:
    reply = client.post("/v1/rollouts", json=body)
    assert reply.status_code == 422, reply.text
    assert reply.json()["message"]  # says how to fix it
    assert client.get("/v1/rollouts").json()["count"] == 0  # no job was created
    return str(reply.json()["code"])


def test_an_env_id_the_servers_do_not_serve_is_refused(env_server: RunningServer, client: TestClient) -> None:
    assert refused(client, job(env_server, env_id="envhub/Sokoban-v0")) == "ENV_NOT_SERVED"


@pytest.mark.parametrize(
    "sampling",
    [
        {"top_k": -7},
        {"temperature": -0.5},
        {"top_p": 0},
        {"top_p": 1.5},
        {"max_tokens": 0},
        {"max_tokens": True},
        {"top_k": False},
        {"seed": True},
    ],
)
def test_out_of_range_sampling_is_refused(
    env_server: RunningServer, client: TestClient, sampling: dict[str, Any]
) -> None:
    assert refused(client, job(env_server, sampling=sampling)) == "VALIDATION_ERROR"


@pytest.mark.parametrize("fields", [{"count": True}, {"group_size": True}, {"max_steps": True}])
def test_a_boolean_for_a_number_is_refused(
    env_server: RunningServer, client: TestClient, fields: dict[str, Any]
) -> None:
    # Lax pydantic would read true as 1: a one-task job, or groups of one, nobody asked for.
    assert refused(client, job(env_server, **fields)) == "VALIDATION_ERROR"


def test_an_empty_task_list_is_refused(env_server: RunningServer, client: TestClient) -> None:
    assert refused(client, job(env_server, count=None, task_ids=[])) == "VALIDATION_ERROR"


def test_a_count_beyond_the_split_is_refused(env_server: RunningServer, client: TestClient) -> None:
    reply = client.post("/v1/rollouts", json=job(env_server, count=10**6))
    assert reply.status_code == 422 and reply.json()["code"] == "COUNT_BEYOND_SPLIT"
    assert reply.json()["detail"]["total"] < 10**6


def test_a_model_the_policy_server_does_not_list_is_refused(
    env_server: RunningServer, client: TestClient, policy_url: str
) -> None:
    body = job(env_server, policy={"base_url": policy_url, "model": "no-such-model"})
    assert refused(client, body) == "MODEL_NOT_SERVED"


def test_a_served_model_and_valid_request_are_accepted(
    env_server: RunningServer, client: TestClient, policy_url: str
) -> None:
    reply = client.post("/v1/rollouts", json=job(env_server))
    assert reply.status_code == 201, reply.text


@pytest.mark.parametrize("name", ["timeseries", "TimeSeries-v0", "envhub/TimeSeries-v0"])
def test_env_id_takes_every_catalogue_name_of_the_served_env(
    env_server: RunningServer, client: TestClient, name: str
) -> None:
    # The same names `envhub rollout --env` and the trainer's `env:` take; the CLI used to drop a
    # name without '/' before submitting (so a wrong one went through), the service refused it.
    assert refused(client, job(env_server, env_id="webshop")) == "ENV_NOT_SERVED"
    reply = client.post("/v1/rollouts", json=job(env_server, env_id=name))
    assert reply.status_code == 201, reply.text


def test_the_cli_refuses_an_env_its_env_servers_do_not_serve(
    env_server: RunningServer, tmp_path: Any
) -> None:
    import subprocess
    import sys

    out = tmp_path / "groups.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "envhub.cli", "rollout", "--env", "sokoban", "--env-url", env_server.base_url,
         "--count", "1", "--split", "test", "--group-size", "1", "--max-steps", "2",
         "--env-kwarg", "images=false", "--policy", f"scripted:{SCRIPTED['heuristic']}", "-o", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, (done.stdout[-1000:], done.stderr[-2000:])
    assert "ENV_NOT_SERVED" in done.stderr and not out.exists()


def test_a_refused_request_does_not_echo_its_keys(env_server: RunningServer, client: TestClient) -> None:
    body = job(env_server, policy={"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-SVC-SECRET"})
    body["env_token"] = "ENV-SVC-SECRET"
    reply = client.post("/v1/rollouts", json=body)
    assert reply.status_code == 422 and reply.json()["code"] == "VALIDATION_ERROR"
    assert "sk-SVC-SECRET" not in reply.text and "ENV-SVC-SECRET" not in reply.text
