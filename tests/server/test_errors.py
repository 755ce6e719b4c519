"""Every error leaves the server as ``{code, message, detail}`` and maps back to its class."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import httpx
import pytest

from envhub.core import errors
from envhub.core.errors import ErrorCode, error_from_wire
from envhub.server import ServerSettings, create_app

from .conftest import error_code, new_session

# Every test here runs on both request paths (the hot path and FastAPI's routes).
pytestmark = pytest.mark.usefixtures("both_paths")


def test_unknown_path_is_404_not_found(client: httpx.Client) -> None:
    response = client.get("/v2/nothing")
    assert response.status_code == 404
    assert error_code(response) == "NOT_FOUND"


def test_wrong_method_is_405_method_not_allowed(client: httpx.Client) -> None:
    response = client.put("/v1/sessions")
    assert response.status_code == 405
    assert error_code(response) == "METHOD_NOT_ALLOWED"


def test_invalid_json_is_422(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    response = client.post(
        f"/v1/sessions/{sid}/step", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert error_code(response) == "VALIDATION_ERROR"


def test_body_over_the_limit_is_413(client: httpx.Client) -> None:
    sid, _ = new_session(client)
    response = client.post(f"/v1/sessions/{sid}/step", json={"action": "x" * 70_000})
    assert response.status_code == 413
    assert error_code(response) == "PAYLOAD_TOO_LARGE"
    assert response.json()["detail"]["limit"] == 64 * 1024


def test_chunked_body_over_the_limit_is_413(client: httpx.Client) -> None:
    sid, _ = new_session(client)

    def chunks() -> Iterator[bytes]:
        yield b'{"action": "'
        for _ in range(20):
            yield b"y" * 4096
        yield b'"}'

    response = client.post(
        f"/v1/sessions/{sid}/step", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert error_code(response) == "PAYLOAD_TOO_LARGE"


def test_chunked_body_under_the_limit_is_served(client: httpx.Client) -> None:
    sid, _ = new_session(client)

    def chunks() -> Iterator[bytes]:
        yield b'{"action": '
        yield b'"chunked"}'

    response = client.post(
        f"/v1/sessions/{sid}/step", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200
    assert response.json()["observation"] == "echo chunked #1"


def test_create_app_refuses_an_unknown_env_id() -> None:
    with pytest.raises(errors.UnknownEnvError, match="envhub list"):
        create_app(ServerSettings(env_id="no.such.module:Env"))
    with pytest.raises(errors.UnknownEnvError):
        create_app(ServerSettings(env_id="envhub/Nope-v9"))


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.SessionNotFoundError("s-1"), 404),
        (errors.SessionExpiredError("s-1", ttl_s=5), 410),
        (errors.SessionLostError("s-1", reason="killed"), 410),
        (errors.CapacityReachedError(active=3, max_sessions=3, retry_after_s=4), 503),
        (errors.StepTimeoutError("s-1", timeout_s=2), 504),
        (errors.ExecutionError("boom", exception_type="ValueError"), 500),
        (errors.UnauthorizedError(), 401),
        (errors.RequestValidationError([{"loc": ["body"], "msg": "bad"}]), 422),
        (errors.PayloadTooLargeError(size=10, limit=5), 413),
        (errors.RouteNotFoundError(path="/x", method="PUT", status_code=405), 405),
        (errors.InternalServerError("KeyError", "k"), 500),
        (errors.UnknownTaskError("t", env="E", splits=["train"], examples=["a"]), 404),
    ],
)
def test_wire_form_maps_back_to_the_same_class(error: errors.EnvhubError, status: int) -> None:
    assert error.status_code == status
    body = error.to_dict()
    assert body["code"] in set(ErrorCode)
    rebuilt = error_from_wire(body["code"], body["message"], body["detail"], status_code=status)
    assert type(rebuilt) is type(error)
    assert (rebuilt.code, rebuilt.message, rebuilt.detail, rebuilt.status_code) == (
        error.code,
        error.message,
        error.detail,
        status,
    )


def test_unknown_code_from_a_newer_server_is_a_plain_envhub_error() -> None:
    rebuilt = error_from_wire("SOMETHING_NEW", "msg", {"a": 1})
    assert type(rebuilt) is errors.EnvhubError
    assert (rebuilt.code, rebuilt.message, rebuilt.detail) == ("SOMETHING_NEW", "msg", {"a": 1})


def test_every_error_class_code_is_in_the_enum() -> None:
    # Every module that defines error classes, so the answer does not depend on test order.
    for module in (
        "envhub.client",
        "envhub.rollout.jobs",
        "envhub.rollout.service",
        "envhub.train.rollouts",
        "envhub.train.lock",
        "envhub.eval",
        "envhub.view",
    ):
        importlib.import_module(module)
    pending: list[type[errors.EnvhubError]] = [errors.EnvhubError]
    while pending:
        cls = pending.pop()
        assert cls.code in set(ErrorCode), cls
        pending.extend(cls.__subclasses__())
