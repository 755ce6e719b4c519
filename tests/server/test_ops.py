"""Operations endpoints: /health, /ready, /metrics, /v1/debug/workers."""

from __future__ import annotations

import os

import httpx

from envhub.core.wire import Health, Readiness, WorkerList

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
    sid, _ = new_session(client)
    client.post(f"/v1/sessions/{sid}/step", json={"action": "x"})
    client.get("/v1/sessions/missing")
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    text = response.text
    for name in (
        "envhub_sessions_active",
        "envhub_workers_alive 2.0",
        "envhub_sessions_created_total",
        f'envhub_steps_total{{env="{COUNTER}",status="ok"}}',
        f'envhub_resets_total{{env="{COUNTER}",status="ok"}}',
        "envhub_step_latency_seconds_bucket",
        'envhub_request_errors_total{code="SESSION_NOT_FOUND"}',
        "envhub_worker_restarts_total",
        "envhub_sessions_lost_total",
        "envhub_sessions_reaped_total",
    ):
        assert name in text, name


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
