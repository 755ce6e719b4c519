"""The policy's API key is used, never persisted: not in Redis, not in job progress, not in logs.

A real rollout service on a real Redis journal submits a job to a loopback OpenAI-compatible
endpoint that insists on a bearer key (it refuses completions, so the job fails fast and stays
in the journal to be resumed). Then every key the service wrote to Redis is read back, and a
restarted service resumes the job with the key from ``$ENVHUB_POLICY_API_KEY``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
import redis
from fastapi.testclient import TestClient

from envhub.core.wire import POLICY_API_KEY_ENV
from envhub.rollout.service import RolloutServiceSettings, create_app
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread

pytestmark = pytest.mark.integration

REDIS_URL = "redis://127.0.0.1:6379/0"
KEY = "sk-envhub-" + uuid.uuid4().hex


class KeyedPolicy(BaseHTTPRequestHandler):
    """``/v1/models`` for the right key only; every completion refused (401) after noting its key."""

    seen: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        ok = self.headers.get("Authorization") == f"Bearer {KEY}"
        self._reply(200 if ok else 401, {"data": [{"id": "tiny"}]} if ok else {"error": "bad key"})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        KeyedPolicy.seen.append(self.headers.get("Authorization", ""))
        self._reply(401, {"error": {"message": "completions are closed in this test"}})


@pytest.fixture(scope="module")
def policy_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeyedPolicy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def env_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0", workers=1)) as running:
        yield running


def wait(client: TestClient, job_id: str, timeout_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        progress: dict[str, Any] = client.get(f"/v1/rollouts/{job_id}").json()
        if progress["status"] in ("done", "failed"):
            return progress
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end")


def everything_under(client: redis.Redis, prefix: str) -> bytes:
    """Every value of every key under ``prefix``, whatever its type, as one blob."""
    parts: list[bytes] = []
    for key in client.scan_iter(match=f"{prefix}*"):
        parts.append(key)
        kind = client.type(key)
        if kind == b"string":
            parts.append(client.get(key) or b"")
        elif kind == b"hash":
            parts.extend(b for kv in client.hgetall(key).items() for b in kv)
        elif kind == b"list":
            parts.extend(client.lrange(key, 0, -1))
        elif kind == b"set":
            parts.extend(client.smembers(key))
        elif kind == b"zset":
            parts.extend(client.zrange(key, 0, -1))
        elif kind == b"stream":
            for _, fields in client.xrange(key):
                parts.extend(b for kv in fields.items() for b in kv)
    return b"\n".join(parts)


def test_the_policy_key_is_never_persisted_and_resume_takes_it_from_the_env(
    policy_url: str,
    env_server: RunningServer,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream = f"envhub:test-secrets:{uuid.uuid4().hex[:8]}"
    settings = RolloutServiceSettings(redis_url=REDIS_URL, stream=stream)
    body = {
        "env_urls": [env_server.base_url],
        "count": 1,
        "split": "test",
        "group_size": 2,
        "env_kwargs": {"images": False},
        "policy": {"base_url": policy_url, "model": "tiny", "api_key": KEY},
    }
    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv(POLICY_API_KEY_ENV, raising=False)
    db = redis.Redis.from_url(REDIS_URL)
    try:
        with TestClient(create_app(settings)) as client:
            created = client.post("/v1/rollouts", json=body)
            assert created.status_code == 201, created.text
            job_id = created.json()["job_id"]
            progress = wait(client, job_id)
            assert progress["status"] == "failed"  # the endpoint refused: the job can be retried
            assert KEY not in json.dumps(progress) and KEY not in client.get("/v1/rollouts").text
        assert KeyedPolicy.seen and all(h == f"Bearer {KEY}" for h in KeyedPolicy.seen)  # used...
        saved = everything_under(db, stream)
        assert job_id.encode() in saved and b"tiny" in saved  # the job spec is there...
        assert KEY.encode() not in saved and b"api_key" not in saved  # ...without the key

        # After a restart, a retry runs the job again; the key comes from the environment.
        KeyedPolicy.seen.clear()
        monkeypatch.setenv(POLICY_API_KEY_ENV, KEY)
        with TestClient(create_app(settings)) as client:
            assert client.get(f"/v1/rollouts/{job_id}").json()["status"] == "failed"
            assert client.post(f"/v1/rollouts/{job_id}/retry").status_code == 200
            assert wait(client, job_id)["status"] == "failed"
        assert KeyedPolicy.seen and all(h == f"Bearer {KEY}" for h in KeyedPolicy.seen)
        assert KEY.encode() not in everything_under(db, stream)
        assert KEY not in caplog.text
    finally:
        for key in db.scan_iter(match=f"{stream}*"):
            db.delete(key)
        db.close()
