"""The envhub error tree.

Every error envhub raises on purpose derives from :class:`EnvhubError`. Each class carries a
stable machine-readable ``code`` (the server puts it in ``{code, message, detail}`` and the
client maps it back to the same class) and structured fields, and builds a message that says
how to fix the problem::

    EnvhubError
    ├── ConfigurationError          bad arguments or settings            (400 INVALID_CONFIG)
    │   ├── UnknownEnvError         no env registered under that id      (404 UNKNOWN_ENV)
    │   └── UnknownTaskError        task id not in the env's task list   (404 UNKNOWN_TASK)
    ├── DataNotFoundError           a dataset path is missing            (503 DATA_NOT_FOUND)
    ├── DependencyMissingError      an optional extra is not installed   (503 DEPENDENCY_MISSING)
    ├── RetrieverUnavailableError   a search retriever service failed    (502 RETRIEVER_UNAVAILABLE)
    ├── UserSimulatorError          an LLM user simulator's endpoint failed (502 USER_SIMULATOR_FAILED)
    ├── ResetNeededError            step() before reset()                (409 RESET_NEEDED)
    └── ServerError                 raised by the env server, rebuilt by the client
        ├── SessionError            something is wrong with one session
        │   ├── SessionNotFoundError    no such session id               (404 SESSION_NOT_FOUND)
        │   ├── SessionExpiredError     idle past its TTL and reaped     (410 SESSION_EXPIRED)
        │   └── SessionLostError        its worker process died          (410 SESSION_LOST)
        ├── CapacityReachedError    max sessions in use; see retry_after (503 CAPACITY_REACHED)
        ├── StepTimeoutError        a step ran past the step timeout     (504 STEP_TIMEOUT)
        ├── ExecutionError          the env raised while running         (500 EXECUTION_ERROR)
        ├── UnauthorizedError       missing or wrong bearer token        (401 UNAUTHORIZED)
        ├── RequestValidationError  the request body/params are invalid  (422 VALIDATION_ERROR)
        ├── PayloadTooLargeError    the request body is over the limit   (413 PAYLOAD_TOO_LARGE)
        ├── RouteNotFoundError      no such endpoint or method   (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED)
        └── InternalServerError     a bug in the server itself           (500 INTERNAL_ERROR)
    ├── ClientError                 raised by envhub's HTTP clients, never sent by a server
    │   ├── ServerUnreachableError  no connection to the server after retries (SERVER_UNREACHABLE)
    │   └── ProtocolError           the reply is not an envhub response  (PROTOCOL_ERROR)
    ├── PolicyError                 a policy backend failed for good     (502 POLICY_ERROR)
    │   └── PolicyUnavailableError  endpoint down/paused/timed out after retries (503 POLICY_UNAVAILABLE)
    ├── QueueError                  the group queue (Redis) failed        (503 QUEUE_UNAVAILABLE)
    └── JobNotFoundError            no rollout job with that id           (404 JOB_NOT_FOUND)

Every code is a member of :class:`ErrorCode`; :func:`error_from_wire` turns a wire body back
into the same class (the client's side of the mapping). Later layers (client, rollout) add
their own subclasses under the same root.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, ClassVar

__all__ = [
    "CapacityReachedError",
    "ClientError",
    "ConfigurationError",
    "DataNotFoundError",
    "DependencyMissingError",
    "EnvhubError",
    "ErrorCode",
    "ExecutionError",
    "InternalServerError",
    "JobNotFoundError",
    "PayloadTooLargeError",
    "PolicyError",
    "PolicyUnavailableError",
    "ProtocolError",
    "QueueError",
    "RequestValidationError",
    "ResetNeededError",
    "RetrieverUnavailableError",
    "RouteNotFoundError",
    "ServerError",
    "ServerUnreachableError",
    "SessionError",
    "SessionExpiredError",
    "SessionLostError",
    "SessionNotFoundError",
    "StepTimeoutError",
    "UnauthorizedError",
    "UnknownEnvError",
    "UnknownTaskError",
    "UserSimulatorError",
    "error_from_wire",
]


class ErrorCode(StrEnum):
    """The stable, machine-readable error codes of ``{code, message, detail}`` bodies.

    Values never change once released; new codes are only added. Each ``EnvhubError``
    subclass's ``code`` is one of these (a ``StrEnum`` member compares equal to its string).
    """

    ENVHUB_ERROR = "ENVHUB_ERROR"
    INVALID_CONFIG = "INVALID_CONFIG"
    UNKNOWN_ENV = "UNKNOWN_ENV"
    UNKNOWN_TASK = "UNKNOWN_TASK"
    DATA_NOT_FOUND = "DATA_NOT_FOUND"
    DEPENDENCY_MISSING = "DEPENDENCY_MISSING"
    RESET_NEEDED = "RESET_NEEDED"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    SESSION_EXPIRED = "SESSION_EXPIRED"
    SESSION_LOST = "SESSION_LOST"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    STEP_TIMEOUT = "STEP_TIMEOUT"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    UNAUTHORIZED = "UNAUTHORIZED"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    CLIENT_ERROR = "CLIENT_ERROR"
    SERVER_UNREACHABLE = "SERVER_UNREACHABLE"
    PROTOCOL_ERROR = "PROTOCOL_ERROR"
    RETRIEVER_UNAVAILABLE = "RETRIEVER_UNAVAILABLE"
    USER_SIMULATOR_FAILED = "USER_SIMULATOR_FAILED"
    POLICY_ERROR = "POLICY_ERROR"
    POLICY_UNAVAILABLE = "POLICY_UNAVAILABLE"
    QUEUE_UNAVAILABLE = "QUEUE_UNAVAILABLE"
    JOB_NOT_FOUND = "JOB_NOT_FOUND"
    HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED"
    JOB_WAIT_TIMEOUT = "JOB_WAIT_TIMEOUT"
    # The rollout service (docs/rollout.md, Errors)
    JOB_NOT_RETRYABLE = "JOB_NOT_RETRYABLE"
    JOB_REJECTED = "JOB_REJECTED"
    SHUTTING_DOWN = "SHUTTING_DOWN"
    ENV_NOT_SERVED = "ENV_NOT_SERVED"
    COUNT_BEYOND_SPLIT = "COUNT_BEYOND_SPLIT"
    MODEL_NOT_SERVED = "MODEL_NOT_SERVED"
    NOT_REGISTERED = "NOT_REGISTERED"
    URL_NOT_ALLOWED = "URL_NOT_ALLOWED"
    # The trainer (envhub.train.lock): another live trainer holds the run label
    RUN_LOCKED = "RUN_LOCKED"
    # The trainer (envhub.train.rollouts): a weight push waited too long for the plays in flight
    PUSH_DRAIN_TIMEOUT = "PUSH_DRAIN_TIMEOUT"


class EnvhubError(Exception):
    """Root of every error envhub raises on purpose.

    Attributes:
        code: stable, machine-readable identifier (upper snake case).
        status_code: the HTTP status the server answers with.
        detail: structured fields, JSON-serialisable.
    """

    code: ClassVar[str] = "ENVHUB_ERROR"
    status_code: ClassVar[int] = 500

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail: dict[str, Any] = detail

    def to_dict(self) -> dict[str, Any]:
        """The error as the wire form ``{code, message, detail}``."""
        return {"code": self.code, "message": self.message, "detail": self.detail}


class ConfigurationError(EnvhubError):
    """An argument or setting has a value envhub cannot use."""

    code = "INVALID_CONFIG"
    status_code = 400


class UnknownEnvError(ConfigurationError):
    """No environment is registered under the requested id."""

    code = "UNKNOWN_ENV"
    status_code = 404

    def __init__(self, env_id: str, known: Sequence[str]) -> None:
        super().__init__(
            f"No envhub environment is registered as {env_id!r}. "
            f"Known ids: {', '.join(sorted(known))}. Run `envhub list` to see them with their data status.",
            env_id=env_id,
            known=sorted(known),
        )
        self.env_id = env_id


class UnknownTaskError(ConfigurationError):
    """The requested task id is not one of the env's tasks."""

    code = "UNKNOWN_TASK"
    status_code = 404

    def __init__(self, task_id: object, *, env: str, splits: Sequence[str], examples: Sequence[str]) -> None:
        shown = ", ".join(repr(e) for e in list(examples)[:3])
        super().__init__(
            f"{env} has no task {task_id!r}. Task ids look like {shown}; "
            f"list them with env.task_ids(split) for split in {list(splits)} "
            "(over HTTP: GET /v1/tasks?split=...).",
            task_id=str(task_id),
            env=env,
            splits=list(splits),
        )
        self.task_id = task_id


class DataNotFoundError(EnvhubError):
    """The dataset an env needs is not where envhub looked."""

    code = "DATA_NOT_FOUND"
    status_code = 503

    def __init__(self, what: str, *, path: object | None, env_var: str | None, how_to_get: str) -> None:
        where = f" at {str(path)!r}" if path is not None else ""
        var = (
            f" Set {env_var} to the directory that holds it, or pass the path explicitly." if env_var else ""
        )
        super().__init__(
            f"{what} was not found{where}.{var} To get it: {how_to_get}",
            path=None if path is None else str(path),
            env_var=env_var,
            how_to_get=how_to_get,
        )


class DependencyMissingError(EnvhubError):
    """An optional dependency (an envhub extra) is not installed."""

    code = "DEPENDENCY_MISSING"
    status_code = 503

    def __init__(self, package: str, *, extra: str) -> None:
        super().__init__(
            f"This feature needs the {package!r} package. Install it with: pip install 'envhub-rl[{extra}]'",
            package=package,
            extra=extra,
        )


class RetrieverUnavailableError(EnvhubError):
    """A remote search retriever (Search-R1's ``POST /retrieve``) could not answer."""

    code = "RETRIEVER_UNAVAILABLE"
    status_code = 502

    def __init__(self, url: str, *, reason: str, attempts: int = 1) -> None:
        super().__init__(
            f"The retriever at {url} did not answer ({reason}) after {attempts} attempt(s). Check that it "
            "runs (`envhub serve-retriever --corpus ...` starts one) and that the URL ends in /retrieve.",
            url=url,
            reason=reason,
            attempts=attempts,
        )


class UserSimulatorError(EnvhubError):
    """An LLM user simulator (an OpenAI-compatible endpoint) gave no usable reply."""

    code = "USER_SIMULATOR_FAILED"
    status_code = 502

    def __init__(self, url: str, *, reason: str) -> None:
        super().__init__(
            f"The user simulator at {url} gave no usable reply ({reason}). Check that the OpenAI-compatible "
            "server runs and serves the configured model, or use the offline rule-based user (user='rule').",
            url=url,
            reason=reason,
        )


class ResetNeededError(EnvhubError):
    """``step()`` was called before the first ``reset()``."""

    code = "RESET_NEEDED"
    status_code = 409

    def __init__(self, env: str) -> None:
        super().__init__(f"{env}: call reset() before step().", env=env)


class ServerError(EnvhubError):
    """Raised by the env server (and rebuilt by the client from the wire body)."""

    code = "INTERNAL_ERROR"
    status_code = 500


class SessionError(ServerError):
    """Something is wrong with one session; other sessions are unaffected."""

    code = "SESSION_NOT_FOUND"
    status_code = 404


class SessionNotFoundError(SessionError):
    """No session has this id (never created, or deleted)."""

    code = "SESSION_NOT_FOUND"
    status_code = 404

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"No session {session_id!r} on this server. Create one with POST /v1/sessions "
            "(or POST /v1/groups) and use the session_id it returns.",
            session_id=session_id,
        )
        self.session_id = session_id


class SessionExpiredError(SessionError):
    """The session sat idle past its TTL and was reaped."""

    code = "SESSION_EXPIRED"
    status_code = 410

    def __init__(self, session_id: str, *, ttl_s: float) -> None:
        super().__init__(
            f"Session {session_id!r} was idle for more than {ttl_s:g} s and was closed. Create a new "
            "session; raise --session-ttl (ENVHUB_SESSION_TTL) if episodes pause that long.",
            session_id=session_id,
            ttl_s=ttl_s,
        )
        self.session_id = session_id


class SessionLostError(SessionError):
    """The worker process that hosted the session died; its env state is gone."""

    code = "SESSION_LOST"
    status_code = 410

    def __init__(self, session_id: str, *, reason: str) -> None:
        super().__init__(
            f"Session {session_id!r} was lost: {reason}. The server replaced the worker; create a new "
            "session and replay the episode (sessions on the server's other workers were not affected).",
            session_id=session_id,
            reason=reason,
        )
        self.session_id = session_id


class CapacityReachedError(ServerError):
    """Every session slot is in use."""

    code = "CAPACITY_REACHED"
    status_code = 503

    def __init__(self, *, active: int, max_sessions: int, retry_after_s: int = 1) -> None:
        super().__init__(
            f"The server holds {active} of at most {max_sessions} sessions. Retry after "
            f"{retry_after_s} s, DELETE sessions you no longer need, or start it with a larger "
            "--max-sessions (ENVHUB_MAX_SESSIONS).",
            active=active,
            max_sessions=max_sessions,
            retry_after_s=retry_after_s,
        )
        self.retry_after_s = retry_after_s


class StepTimeoutError(ServerError):
    """A step (or reset) ran longer than the server's step timeout."""

    code = "STEP_TIMEOUT"
    status_code = 504

    def __init__(self, session_id: str, *, timeout_s: float) -> None:
        super().__init__(
            f"Session {session_id!r}: the env did not answer within {timeout_s:g} s, so its worker was "
            "restarted and the session is lost. Raise --step-timeout (ENVHUB_STEP_TIMEOUT) if the env "
            "is legitimately that slow.",
            session_id=session_id,
            timeout_s=timeout_s,
        )
        self.session_id = session_id


class ExecutionError(ServerError):
    """The env raised an exception while resetting or stepping."""

    code = "EXECUTION_ERROR"
    status_code = 500

    def __init__(self, env_message: str, *, exception_type: str, session_id: str | None = None) -> None:
        super().__init__(
            f"The env raised {exception_type}: {env_message}. This is a bug in the env (or its "
            "configuration); the session is still usable.",
            env_message=env_message,
            exception_type=exception_type,
            session_id=session_id,
        )


class UnauthorizedError(ServerError):
    """The server needs a bearer token and the request had none or a wrong one."""

    code = "UNAUTHORIZED"
    status_code = 401

    def __init__(self) -> None:
        super().__init__(
            "This server requires a bearer token: send 'Authorization: Bearer <token>' with the token the "
            "server was started with (--token / ENVHUB_TOKEN)."
        )


class RequestValidationError(ServerError):
    """The request body or parameters do not match the endpoint's schema."""

    code = "VALIDATION_ERROR"
    status_code = 422

    def __init__(self, errors: Sequence[Mapping[str, Any]]) -> None:
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ())) or "request"
        super().__init__(
            f"Invalid request at {where}: {first.get('msg', 'invalid value')}. See detail.errors for every "
            "problem and GET /docs for the schema.",
            errors=[dict(e) for e in errors],
        )


class PayloadTooLargeError(ServerError):
    """The request body is larger than the server accepts."""

    code = "PAYLOAD_TOO_LARGE"
    status_code = 413

    def __init__(self, *, size: int | None, limit: int) -> None:
        super().__init__(
            f"The request body ({'unknown' if size is None else size} bytes) exceeds the limit of "
            f"{limit} bytes. Split batches into smaller requests or raise ENVHUB_MAX_BODY_BYTES.",
            size=size,
            limit=limit,
        )


class RouteNotFoundError(ServerError):
    """No endpoint matches the path (404) or the method (405)."""

    code = "NOT_FOUND"
    status_code = 404

    def __init__(self, *, path: str, method: str, status_code: int = 404) -> None:
        what = "path" if status_code == 404 else "method"
        super().__init__(
            f"No endpoint for {method} {path} (unknown {what}). GET /docs lists the endpoints.",
            path=path,
            method=method,
        )
        self.status_code = status_code  # type: ignore[misc]
        self.code = "NOT_FOUND" if status_code == 404 else "METHOD_NOT_ALLOWED"  # type: ignore[misc]


class InternalServerError(ServerError):
    """A bug in the server itself (not in the env); the message names the exception."""

    code = "INTERNAL_ERROR"
    status_code = 500

    def __init__(self, exception_type: str, message: str) -> None:
        super().__init__(
            f"Internal server error ({exception_type}: {message}). Please report it with the server log.",
            exception_type=exception_type,
        )


class ClientError(EnvhubError):
    """Raised by envhub's HTTP clients themselves (the server never sends these codes)."""

    code = "CLIENT_ERROR"
    status_code = 502


class ServerUnreachableError(ClientError):
    """No connection to the env server could be made, or it kept breaking, after every retry."""

    code = "SERVER_UNREACHABLE"
    status_code = 503

    def __init__(self, *, url: str, attempts: int, reason: str) -> None:
        super().__init__(
            f"Could not reach the env server at {url} after {attempts} attempt(s): {reason}. Check that "
            "`envhub serve` is running there (GET /health answers), or raise the client's retry limit.",
            url=url,
            attempts=attempts,
            reason=reason,
        )


class ProtocolError(ClientError):
    """The reply is not an envhub response (another service on that port, a proxy's error page)."""

    code = "PROTOCOL_ERROR"
    status_code = 502

    def __init__(self, *, method: str, path: str, status: int, reason: str, body: str) -> None:
        super().__init__(
            f"{method} {path} got an HTTP {status} reply that is not an envhub response: {reason}. "
            f"Check that base_url points at `envhub serve` (body starts: {body!r}).",
            method=method,
            path=path,
            status=status,
            reason=reason,
            body=body,
        )


class PolicyError(EnvhubError):
    """A policy backend (vLLM, any OpenAI-compatible server, in-process model) failed for good.

    ``retryable`` is False: the request itself is wrong (4xx from the endpoint, a prompt over the
    model's context, a malformed reply). Retrying the same call will fail again.
    """

    code = "POLICY_ERROR"
    status_code = 502
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, endpoint: str = "", **detail: Any) -> None:
        super().__init__(message, endpoint=endpoint, **detail)


class PolicyUnavailableError(PolicyError):
    """The policy endpoint could not answer in time (down, paused for a weight update, overloaded).

    ``retryable`` is True: the same call may succeed later (the rollout engine re-runs the group).
    """

    code = "POLICY_UNAVAILABLE"
    status_code = 503
    retryable: ClassVar[bool] = True


class QueueError(EnvhubError):
    """The finished-group queue could not be reached or answered an error (e.g. Redis is down)."""

    code = "QUEUE_UNAVAILABLE"
    status_code = 503

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message, **detail)


class JobNotFoundError(EnvhubError):
    """The rollout service has no job with this id (never submitted, or from another service)."""

    code = "JOB_NOT_FOUND"
    status_code = 404

    def __init__(self, job_id: str) -> None:
        super().__init__(
            f"No rollout job {job_id!r}. Submit one with POST /v1/rollouts and use the job_id it returns "
            "(GET /v1/rollouts lists the jobs).",
            job_id=job_id,
        )
        self.job_id = job_id


def _error_classes() -> dict[str, type[EnvhubError]]:
    """Map each code to its most specific class (walks the tree, so new subclasses join)."""
    found: dict[str, type[EnvhubError]] = {}
    pending: list[type[EnvhubError]] = [EnvhubError]
    while pending:
        cls = pending.pop()
        if cls.__module__ == __name__:
            found[str(cls.code)] = cls
        pending.extend(cls.__subclasses__())
    # Abstract bases share a code with a concrete leaf; the leaf must win.
    found["SESSION_NOT_FOUND"] = SessionNotFoundError
    found["INTERNAL_ERROR"] = InternalServerError
    found["METHOD_NOT_ALLOWED"] = RouteNotFoundError
    return found


def error_from_wire(
    code: str, message: str, detail: Mapping[str, Any] | None = None, *, status_code: int | None = None
) -> EnvhubError:
    """Rebuild the error a server sent as ``{code, message, detail}``.

    The server's message is kept verbatim (it was already built from the fields) and ``detail``
    becomes the instance's ``detail``; an unknown code gives a plain :class:`EnvhubError` with
    ``code`` set, so a newer server never breaks an older client.

    Args:
        code: the body's ``code``.
        message: the body's ``message``.
        detail: the body's ``detail``.
        status_code: the HTTP status, kept on the instance when given.

    Returns:
        An instance of the class registered for ``code``.
    """
    cls = _error_classes().get(code, EnvhubError)
    error = cls.__new__(cls)
    EnvhubError.__init__(error, message, **dict(detail or {}))
    if cls is EnvhubError or cls is RouteNotFoundError:
        error.code = code  # type: ignore[misc]
    if status_code is not None:
        error.status_code = status_code  # type: ignore[misc]
    for key in ("session_id", "retry_after_s", "task_id", "env_id"):
        if key in error.detail:
            setattr(error, key, error.detail[key])
    return error
