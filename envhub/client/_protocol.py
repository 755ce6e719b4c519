"""The sans-I/O core of the envhub clients: build requests, parse replies, map errors.

Nothing here touches a socket. Every client method is one :class:`ApiCall`, built by
:class:`Protocol` and carried out by a driver (the sync :class:`~envhub.client.EnvClient`
over ``httpx.Client``, the async :class:`~envhub.client.AsyncEnvClient` over aiohttp or
httpx). The driver hands the raw status, headers and body back to :meth:`ApiCall.parse`,
which returns the wire model (``model_validate_json``, never a hand-written parser) or raises
the same :mod:`envhub.core.errors` class the server raised.

Steps and resets carry a ``request_id`` generated here, once per call, so that every retry
of the call sends the same id and the server's idempotency store answers a retry with the
stored result instead of stepping again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Generic, TypeVar
from urllib.parse import quote, urlencode

from pydantic import BaseModel, ValidationError

from envhub.core.errors import (
    CapacityReachedError,
    EnvhubError,
    ProtocolError,
    RequestValidationError,
    error_from_wire,
)
from envhub.core.wire import (
    BatchResetItem,
    BatchResetResponse,
    BatchResetSlot,
    BatchStepItem,
    BatchStepResponse,
    BatchStepSlot,
    ErrorBody,
    GroupCreate,
    GroupCreated,
    Health,
    HistoryOptions,
    Readiness,
    ResetRequest,
    ResetResponse,
    SessionClosed,
    SessionCreate,
    SessionCreated,
    SessionState,
    StepRequest,
    StepResponse,
    TaskList,
)

__all__ = ["ApiCall", "HistoryArg", "Protocol", "StepItem", "new_request_id", "slot_error"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: A batch step item: the wire model, or ``(session_id, action)`` / ``(session_id, action,
#: request_id)`` for brevity (and speed: a tuple is encoded without building the model).
StepItem = BatchStepItem | tuple[str, str] | tuple[str, str, str | None]

#: The ``history`` option: the wire model, or its fields as a mapping (validated before sending).
HistoryArg = HistoryOptions | Mapping[str, Any]

#: How much of an unexpected body a ProtocolError quotes.
_SNIPPET_CHARS = 200


def new_request_id() -> str:
    """A fresh idempotency key: 128 random bits, so two clients never collide."""
    # os.urandom directly: same randomness as uuid4, a fifth of its cost on every step.
    return os.urandom(16).hex()


@dataclass(frozen=True)
class ApiCall(Generic[T]):
    """One request to the env server and how to read its reply.

    Attributes:
        method: HTTP method.
        path: path and query string, relative to the server's base URL.
        body: the JSON body, already encoded (``None`` for GET/DELETE).
        parse_ok: turns a 2xx body into the result.
        replay_safe: sending the call twice has the effect of sending it once (GET, DELETE,
            and steps/resets carrying a ``request_id``), so a retry after a connection that
            broke mid-request cannot apply it twice. Calls that are not replay-safe are
            retried only when the server provably did not act (503, or no connection made).
        also_ok: non-2xx statuses whose body is still the result (``/ready`` answers 503
            with a :class:`Readiness` body when it is not ready).
    """

    method: str
    path: str
    body: bytes | None
    parse_ok: Callable[[bytes], T]
    replay_safe: bool = False
    also_ok: frozenset[int] = frozenset()

    def parse(self, status: int, headers: Mapping[str, str], body: bytes) -> T:
        """The result of a reply, or the error it carries.

        Args:
            status: HTTP status code.
            headers: response headers (case-insensitive mapping preferred; keys are looked up
                as ``retry-after`` and ``Retry-After``).
            body: raw response body.

        Returns:
            The parsed wire model.

        Raises:
            EnvhubError: the subclass named by the body's ``code`` (e.g. SessionNotFoundError).
            ProtocolError: the reply is not an envhub response (wrong server, proxy page).
        """
        if 200 <= status < 300 or status in self.also_ok:
            try:
                return self.parse_ok(body)
            except ValidationError as exc:
                if 200 <= status < 300:
                    why = f"the body does not match the schema ({exc})"
                    raise _protocol_error(self, status, body, why) from exc
        raise error_from_reply(self, status, headers, body)


def error_from_reply(call: ApiCall[Any], status: int, headers: Mapping[str, str], body: bytes) -> EnvhubError:
    """The :mod:`envhub.core.errors` instance an error reply stands for.

    A 503 ``CAPACITY_REACHED`` gets ``retry_after_s`` from the ``Retry-After`` header when the
    body does not carry it, so the retry policy can honour it.
    """
    try:
        wire = ErrorBody.model_validate_json(body)
    except ValidationError:
        return _protocol_error(call, status, body, "the error body is not {code, message, detail}")
    error = error_from_wire(wire.code, wire.message, wire.detail, status_code=status)
    if isinstance(error, CapacityReachedError) and "retry_after_s" not in error.detail:
        retry_after = _retry_after(headers)
        if retry_after is not None:
            error.retry_after_s = retry_after  # type: ignore[assignment]
            error.detail["retry_after_s"] = retry_after
    return error


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` in seconds (the delta-seconds form envhub's server sends), if present."""
    raw = headers.get("retry-after") or headers.get("Retry-After")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None  # an HTTP-date: the policy's own backoff applies instead


def _protocol_error(call: ApiCall[Any], status: int, body: bytes, why: str) -> ProtocolError:
    snippet = body[:_SNIPPET_CHARS].decode("utf-8", errors="replace")
    return ProtocolError(method=call.method, path=call.path, status=status, reason=why, body=snippet)


def slot_error(slot: BatchStepSlot | BatchResetSlot) -> EnvhubError | None:
    """The error of one batch slot as its :mod:`envhub.core.errors` class (None for an ok slot).

    Batch replies report a failed item in its slot instead of failing the request; this turns
    that slot's ``{code, message, detail}`` into the exception a single call would have raised.
    """
    if slot.error is None:
        return None
    return error_from_wire(slot.error.code, slot.error.message, slot.error.detail)


def _build(cls: type[M], **fields: Any) -> M:
    """A request model, or the same typed error the server would answer (checked before sending)."""
    try:
        return cls(**fields)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from exc


def _model(cls: type[M]) -> Callable[[bytes], M]:
    return cls.model_validate_json


_parse_step = StepResponse.model_validate_json


def _encode(model: BaseModel) -> bytes:
    # exclude_none keeps bodies small and lets the server apply its own defaults.
    return model.model_dump_json(exclude_none=True).encode()


def _encode_list(items: Sequence[BaseModel]) -> bytes:
    return b"[" + b",".join(_encode(item) for item in items) + b"]"


def _history(history: HistoryArg | None) -> HistoryOptions | None:
    if history is None or isinstance(history, HistoryOptions):
        return history
    return _build(HistoryOptions, **dict(history))


@functools.lru_cache(maxsize=8192)
def _sid(session_id: str) -> str:
    # Cached: a rollout addresses the same few thousand sessions on every step.
    return quote(session_id, safe="")


#: StepRequest's and BatchStepItem's limits, checked inline on the per-step path (the models
#: judge whatever falls outside them; a session id has the request id's limit).
_MAX_ACTION_CHARS = 1 << 20
_MAX_REQUEST_ID_CHARS = 255


def _step_body(action: str, request_id: str) -> bytes | None:
    """``StepRequest(action, request_id)`` as JSON, without building the model (None: let it judge).

    The body a step sends is two strings; when both are plain ``str`` within the model's
    limits the model would accept them unchanged, so they are encoded directly (a third of
    the cost of validating and dumping the model, on every step).
    """
    if (
        type(action) is str
        and type(request_id) is str
        and len(action) <= _MAX_ACTION_CHARS
        and len(request_id) <= _MAX_REQUEST_ID_CHARS
    ):
        return b'{"action":%s,"request_id":%s}' % (_json_str(action), _json_str(request_id))
    return None


def _json_str(text: str) -> bytes:
    # The json module's own string escaper (C), without json.dumps's per-call encoder set-up.
    return encode_basestring(text).encode()


class Protocol:
    """Builds every :class:`ApiCall` of the envhub REST API (``/v1``) and its ops endpoints.

    Every builder validates its arguments with the request model before anything is sent,
    and raises :class:`~envhub.core.errors.RequestValidationError` (the server's 422 class)
    when they do not fit (a negative seed, a group of 0).

    Args:
        token: bearer token sent as ``Authorization: Bearer <token>`` (None: no header).
        user_agent: the ``User-Agent`` header.
    """

    def __init__(self, *, token: str | None = None, user_agent: str = "envhub-client") -> None:
        headers = {"content-type": "application/json", "user-agent": user_agent}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self.headers: dict[str, str] = headers

    # -- sessions ---------------------------------------------------------------------------

    def create_session(
        self, env_kwargs: Mapping[str, Any] | None = None, *, history: HistoryArg | None = None
    ) -> ApiCall[SessionCreated]:
        """``POST /v1/sessions``; ``history`` turns on server-side AgentOCR rendering."""
        body = _encode(_build(SessionCreate, env_kwargs=dict(env_kwargs or {}), history=_history(history)))
        return ApiCall("POST", "/v1/sessions", body, _model(SessionCreated))

    def reset(
        self,
        session_id: str,
        *,
        seed: int | None = None,
        task_id: str | None = None,
        options: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> ApiCall[ResetResponse]:
        """``POST /v1/sessions/{id}/reset`` with an idempotency key (generated when not given)."""
        request = _build(
            ResetRequest,
            seed=seed,
            task_id=task_id,
            options=dict(options or {}),
            request_id=request_id or new_request_id(),
        )
        path = f"/v1/sessions/{_sid(session_id)}/reset"
        return ApiCall("POST", path, _encode(request), _model(ResetResponse), replay_safe=True)

    def step(self, session_id: str, action: str, *, request_id: str | None = None) -> ApiCall[StepResponse]:
        """``POST /v1/sessions/{id}/step`` with an idempotency key (generated when not given)."""
        key = request_id or new_request_id()
        body = _step_body(action, key)
        if body is None:
            body = _encode(_build(StepRequest, action=action, request_id=key))
        path = f"/v1/sessions/{_sid(session_id)}/step"
        return ApiCall("POST", path, body, _parse_step, replay_safe=True)

    def state(self, session_id: str) -> ApiCall[SessionState]:
        """``GET /v1/sessions/{id}``."""
        return ApiCall(
            "GET", f"/v1/sessions/{_sid(session_id)}", None, _model(SessionState), replay_safe=True
        )

    def delete_session(self, session_id: str) -> ApiCall[SessionClosed]:
        """``DELETE /v1/sessions/{id}``."""
        path = f"/v1/sessions/{_sid(session_id)}"
        return ApiCall("DELETE", path, None, _model(SessionClosed), replay_safe=True)

    def history_png(self, session_id: str) -> ApiCall[bytes]:
        """``GET /v1/sessions/{id}/history.png``: the latest history image's PNG bytes."""
        path = f"/v1/sessions/{_sid(session_id)}/history.png"
        return ApiCall("GET", path, None, bytes, replay_safe=True)

    def tasks(self, split: str | None = None, *, offset: int = 0, limit: int = 100) -> ApiCall[TaskList]:
        """``GET /v1/tasks?split=&offset=&limit=``."""
        query: dict[str, str | int] = {"offset": offset, "limit": limit}
        if split is not None:
            query["split"] = split
        return ApiCall("GET", f"/v1/tasks?{urlencode(query)}", None, _model(TaskList), replay_safe=True)

    # -- groups and batches -----------------------------------------------------------------

    def create_group(
        self,
        group_size: int,
        *,
        task_id: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        history: HistoryArg | None = None,
    ) -> ApiCall[GroupCreated]:
        """``POST /v1/groups``: ``group_size`` sessions reset to one identical initial state."""
        request = _build(
            GroupCreate,
            group_size=group_size,
            task_id=task_id,
            seed=seed,
            split=split,
            env_kwargs=dict(env_kwargs or {}),
            history=_history(history),
        )
        return ApiCall("POST", "/v1/groups", _encode(request), _model(GroupCreated))

    def batch_step(self, items: Sequence[StepItem]) -> ApiCall[BatchStepResponse]:
        """``POST /v1/batch/step``; items without a ``request_id`` get one, so the batch is replay-safe.

        Args:
            items: :class:`BatchStepItem`, ``(session_id, action)`` pairs or
                ``(session_id, action, request_id)`` triples (``request_id`` may be None).
        """
        parts = []
        for item in items:
            if isinstance(item, BatchStepItem):
                sid, action, key = item.session_id, item.action, item.request_id
            else:
                sid, action, key = item[0], item[1], item[2] if len(item) > 2 else None  # type: ignore[misc]
            key = key or new_request_id()
            body = _step_body(action, key)
            if body is None or type(sid) is not str or len(sid) > _MAX_REQUEST_ID_CHARS:
                body = _encode(_build(BatchStepItem, session_id=sid, action=action, request_id=key))
            else:
                # {"action":..,"request_id":..} with the session id in front: BatchStepItem's JSON.
                body = b'{"session_id":%s,%s' % (_json_str(sid), body[1:])
            parts.append(body)
        return ApiCall(
            "POST",
            "/v1/batch/step",
            b"[" + b",".join(parts) + b"]",
            _model(BatchStepResponse),
            replay_safe=True,
        )

    def batch_reset(self, items: Sequence[BatchResetItem]) -> ApiCall[BatchResetResponse]:
        """``POST /v1/batch/reset``; items without a ``request_id`` get one, so the batch is replay-safe."""
        keyed = [
            item if item.request_id else item.model_copy(update={"request_id": new_request_id()})
            for item in items
        ]
        return ApiCall(
            "POST", "/v1/batch/reset", _encode_list(keyed), _model(BatchResetResponse), replay_safe=True
        )

    # -- operations -------------------------------------------------------------------------

    def health(self) -> ApiCall[Health]:
        """``GET /health`` (liveness)."""
        return ApiCall("GET", "/health", None, _model(Health), replay_safe=True)

    def ready(self) -> ApiCall[Readiness]:
        """``GET /ready``: its 503 reply still carries a :class:`Readiness` body, so it is parsed."""
        return ApiCall("GET", "/ready", None, _model(Readiness), replay_safe=True, also_ok=frozenset({503}))
