"""Operations endpoints: /health, /ready, /metrics, /v1/debug/workers."""

from __future__ import annotations

import os

import httpx

from envhub.core.wire import Health, Readiness, WorkerList
from tests.scrape import scrape

from .conftest import COUNTER, new_session


def test_health_is_healthy_with_all_workers(client: httpx.Client) -> None:
    assert Health.model_validate(client.get("/health").json()).status == "healthy"


def test_ready_reports_capacity_and_workers(client: httpx.Client) -> None:
    response = client.get("/ready")
    ready = Readiness.model_validate(response.json())
    assert response.status_code == 200 and ready.ready
    assert (ready.env_id, ready.workers_alive, ready.workers_total, ready.max_sessions) == (
        COUNTER,
        2,
        2,
        4096,
    )
    new_session(client)
    assert client.get("/ready").json()["active_sessions"] >= 1


def test_debug_workers_lists_live_pids(client: httpx.Client) -> None:
    workers = WorkerList.model_validate(client.get("/v1/debug/workers").json()).workers
    assert [w.index for w in workers] == [0, 1]
    for worker in workers:
        assert worker.alive and worker.pid is not None and worker.pid != os.getpid()
        os.kill(worker.pid, 0)  # raises if there is no such process


def test_metrics_count_steps_resets_and_errors(client: httpx.Client) -> None:
    # The server is shared by the whole session: measure what this traffic adds.
    before = scrape(client)
    first, _ = new_session(client)  # one create, one reset
    second = client.post("/v1/sessions", json={}).json()["session_id"]  # created, never reset
    for action in ("a", "b", "c"):
        assert client.post(f"/v1/sessions/{first}/step", json={"action": action}).status_code == 200
    assert client.post(f"/v1/sessions/{first}/reset", json={}).status_code == 200
    assert client.get("/v1/sessions/missing").status_code == 404
    assert client.post("/v1/sessions/missing/step", json={"action": "x"}).status_code == 404
    assert client.delete(f"/v1/sessions/{second}").status_code in (200, 204)
    after = scrape(client)

    ok, error = {"env": COUNTER, "status": "ok"}, {"env": COUNTER, "status": "error"}
    assert after.delta(before, "envhub_sessions_created_total") == 2
    assert after.delta(before, "envhub_resets_total", **ok) == 2
    assert after.delta(before, "envhub_steps_total", **ok) == 3
    assert after.delta(before, "envhub_steps_total", **error) == 0
    assert after.delta(before, "envhub_step_latency_seconds_count", env=COUNTER) == 3
    assert after.delta(before, "envhub_step_latency_seconds_bucket", env=COUNTER, le="+Inf") == 3
    assert 0 < after.delta(before, "envhub_step_latency_seconds_sum", env=COUNTER) < 30
    assert after.delta(before, "envhub_request_errors_total", code="SESSION_NOT_FOUND") == 2
    assert after.delta(before, "envhub_sessions_active") == 1  # `second` was deleted
    assert after.value("envhub_sessions_active") == client.get("/ready").json()["active_sessions"]
    assert after.value("envhub_workers_alive") == 2
    for untouched in (
        "envhub_worker_restarts_total",
        "envhub_sessions_lost_total",
        "envhub_sessions_reaped_total",
    ):
        assert after.delta(before, untouched) == 0, untouched


def test_openapi_types_every_endpoint_and_docs_are_served(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    operations = {
        (method.upper(), path): op for path, ops in spec["paths"].items() for method, op in ops.items()
    }
    assert set(operations) == {
        ("GET", "/health"),
        ("GET", "/ready"),
        ("GET", "/metrics"),
        ("GET", "/v1/debug/workers"),
        ("POST", "/v1/sessions"),
        ("POST", "/v1/sessions/{session_id}/reset"),
        ("POST", "/v1/sessions/{session_id}/step"),
        ("GET", "/v1/sessions/{session_id}"),
        ("GET", "/v1/sessions/{session_id}/history.png"),
        ("DELETE", "/v1/sessions/{session_id}"),
        ("GET", "/v1/tasks"),
        ("POST", "/v1/groups"),
        ("POST", "/v1/batch/step"),
        ("POST", "/v1/batch/reset"),
        ("POST", "/reset"),
        ("POST", "/step"),
        ("GET", "/state"),
        ("GET", "/schema"),
        ("GET", "/metadata"),
    }
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for (method, path), op in operations.items():
        responses = op["responses"]
        success = [status for status in responses if status.startswith("2")]
        assert len(success) == 1, (method, path)
        content = responses[success[0]]["content"]
        if path == "/metrics":
            assert "text/plain" in content
        elif path.endswith("/history.png"):
            assert "image/png" in content
        else:
            assert "$ref" in content["application/json"]["schema"], (method, path)  # a named model
        if path not in ("/health", "/ready"):
            assert responses["401"]["content"]["application/json"]["schema"] == error_ref, (method, path)
        if "requestBody" in op or op.get("parameters"):
            assert responses["422"]["content"]["application/json"]["schema"] == error_ref, (method, path)
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/openapi.json" in docs.text
