"""Hostile requests to the rollout service: no token, import paths, URLs off the allow-list.

The service runs in-process (``TestClient``) against a real env server, and once as a real
``envhub serve-rollouts`` process reading ``ENVHUB_TOKEN``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.integration.rollout_service_proc import SCRIPTED, Service, free_port
from tests.rollout.conftest import CollectingQueue

pytestmark = pytest.mark.integration

TOKEN = "rollout-secret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = RolloutServiceSettings(
        scripted_policies=SCRIPTED,
        projections={"mine": "envhub.agent.projection:project_think_action"},
        allowed_hosts=["policy.internal:8001"],
        token=TOKEN,
    )
    with TestClient(create_app(settings, queue=CollectingQueue())) as client:
        yield client


def job(server: RunningServer, **fields: Any) -> dict[str, Any]:
    body = {
        "env_urls": [server.base_url],
        "count": 1,
        "split": "test",
        "group_size": 2,
        "env_kwargs": {"images": False},
        "policy": "scripted:heuristic",
    }
    return {**body, **fields}


def test_every_route_but_health_and_ready_needs_the_token(
    env_server: RunningServer, client: TestClient
) -> None:
    calls = [
        ("POST", "/v1/rollouts", job(env_server)),
        ("GET", "/v1/rollouts", None),
        ("GET", "/v1/rollouts/x", None),
        ("DELETE", "/v1/rollouts/x", None),
        ("POST", "/v1/rollouts/x/retry", None),
        ("GET", "/metrics", None),
    ]
    for method, path, body in calls:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            reply = client.request(method, path, json=body, headers=headers)
            assert reply.status_code == 401 and reply.json()["code"] == "UNAUTHORIZED", (method, path)
    assert client.get("/health").status_code == 200
    # Open for probes (Kubernetes sends no token), and it names no job.
    assert client.get("/ready").status_code == 200 and set(client.get("/ready").json()) == {
        "ready",
        "accepting",
        "redis",
    }
    assert client.get("/v1/rollouts", headers=AUTH).status_code == 200
    assert client.post("/v1/rollouts", json=job(env_server), headers=AUTH).status_code == 201


@pytest.mark.parametrize(
    "policy",
    [
        "scripted:os:system",
        "scripted:subprocess:getoutput",
        "scripted:tests.rollout.scripted_policies:stateless",
    ],
)
def test_an_unregistered_scripted_policy_is_never_imported(
    env_server: RunningServer, client: TestClient, policy: str
) -> None:
    reply = client.post("/v1/rollouts", json=job(env_server, policy=policy), headers=AUTH)
    assert reply.status_code == 422 and reply.json()["code"] == "NOT_REGISTERED", reply.text
    assert client.get("/v1/rollouts", headers=AUTH).json()["count"] == 0


def test_an_import_path_as_projection_is_refused_and_registered_names_work(
    env_server: RunningServer, client: TestClient
) -> None:
    hostile = job(env_server, context={"projection": "os:system"})
    reply = client.post("/v1/rollouts", json=hostile, headers=AUTH)
    assert reply.status_code == 422 and reply.json()["code"] == "NOT_REGISTERED", reply.text
    for rule in ("think_action", "mine"):
        ok = client.post("/v1/rollouts", json=job(env_server, context={"projection": rule}), headers=AUTH)
        assert ok.status_code == 201, ok.text


MARKER = "tests.rollout.import_marker"


@pytest.mark.parametrize("field", ["family", "render_preset"])
def test_an_import_path_as_env_name_in_the_context_is_refused_and_never_imported(
    env_server: RunningServer, client: TestClient, field: str
) -> None:
    # context.family / context.render_preset take an env name, and envhub.envs.resolve also takes
    # a 'module:Class' entry point, which it imports: a request must never get that far.
    sys.modules.pop(MARKER, None)
    context = {field: f"{MARKER}:Marker", "agentocr": field == "render_preset"}
    reply = client.post("/v1/rollouts", json=job(env_server, context=context), headers=AUTH)
    if reply.status_code == 201:  # let the job run into the import, then report it
        job_id = reply.json()["job_id"]
        deadline = time.monotonic() + 10
        while client.get(f"/v1/rollouts/{job_id}", headers=AUTH).json()["status"] in ("starting", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert MARKER not in sys.modules, "a request made the service import a module it named"
    assert reply.status_code == 422 and reply.json()["code"] == "NOT_REGISTERED", reply.text
    ok = client.post("/v1/rollouts", json=job(env_server, context={field: "timeseries"}), headers=AUTH)
    assert ok.status_code == 201, ok.text


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://example.com:8000",
        "http://127.0.0.1.nip.io:8000",
        "http://localhost@evil.example:8000",
        "http://policy.internal:9999",
    ],
)
def test_urls_off_the_allow_list_are_refused(env_server: RunningServer, client: TestClient, url: str) -> None:
    as_env = client.post("/v1/rollouts", json=job(env_server, env_urls=[url]), headers=AUTH)
    assert as_env.status_code == 422 and as_env.json()["code"] == "URL_NOT_ALLOWED", as_env.text
    as_policy = client.post(
        "/v1/rollouts", json=job(env_server, policy={"base_url": url + "/v1", "model": "m"}), headers=AUTH
    )
    # A policy URL with a user part is refused before the allow list: it would be saved with the job.
    expected = "VALIDATION_ERROR" if "@" in url else "URL_NOT_ALLOWED"
    assert as_policy.status_code == 422 and as_policy.json()["code"] == expected, as_policy.text


def test_an_allow_listed_host_passes_the_check(env_server: RunningServer, client: TestClient) -> None:
    body = job(env_server, policy={"base_url": "http://policy.internal:8001/v1", "model": "m"})
    reply = client.post("/v1/rollouts", json=body, headers=AUTH)
    assert reply.json()["code"] == "POLICY_UNAVAILABLE"  # checked, allowed, then not reachable


def test_the_service_process_reads_its_token_from_envhub_token(
    env_server: RunningServer, tmp_path: Path
) -> None:
    service = Service(
        free_port(), redis_url=None, stream="unused", log=tmp_path / "s.log", env={"ENVHUB_TOKEN": TOKEN}
    )
    try:
        assert httpx.get(f"{service.url}/v1/rollouts").status_code == 401
        assert service.get("/v1/rollouts").status_code == 200
        assert httpx.get(f"{service.url}/health").status_code == 200
    finally:
        service.stop()


def test_a_huge_body_is_refused_before_it_is_parsed(env_server: RunningServer, client: TestClient) -> None:
    # 2M task ids (~20 MB of JSON): without a body limit the service parsed it all, then started a
    # job of 2M groups. The env server's limit (413 PAYLOAD_TOO_LARGE) applies here too.
    huge = job(env_server, count=None, task_ids=[f"test-{i % 10}" for i in range(2_000_000)])
    reply = client.post("/v1/rollouts", json=huge, headers=AUTH)
    assert reply.status_code == 413 and reply.json()["code"] == "PAYLOAD_TOO_LARGE", reply.text[:300]
    assert client.get("/v1/rollouts", headers=AUTH).json()["count"] == 0


@pytest.mark.parametrize(
    "stream",
    [
        "envhub:groups:dead",  # the default stream's dead letters
        "envhub:groups:trainers:consumed",  # a trainers group's de-duplication set
        "envhub:groups:trainers:run-1:consumed",
        "envhub:groups:trainers:lease:some-uid",  # a holder's lease on a group
        "envhub:groups:run-1:dead",
    ],
)
def test_a_stream_that_is_another_streams_own_key_is_refused(
    env_server: RunningServer, client: TestClient, stream: str
) -> None:
    # A job publishing there made an XADD stream at a key the queue keeps as a set or a string
    # (a trainer then fails with WRONGTYPE), or fed fake entries to the dead letters.
    reply = client.post("/v1/rollouts", json=job(env_server, stream=stream), headers=AUTH)
    assert reply.status_code == 422 and reply.json()["code"] == "VALIDATION_ERROR", reply.text
    assert "stream" in reply.json()["message"]


def test_a_stream_of_its_own_is_still_taken(env_server: RunningServer, client: TestClient) -> None:
    reply = client.post("/v1/rollouts", json=job(env_server, stream="envhub:groups:run-1"), headers=AUTH)
    assert reply.status_code == 201, reply.text
