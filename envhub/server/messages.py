"""The messages between the server and its worker processes.

The server sends a worker frames of :class:`Call` (a message id and a list of operations);
the worker answers with :class:`Answer` lists, one :data:`OpResult` per operation, after a
first :class:`Hello` and with :class:`Progress` beats during long calls. Every message is a
``NamedTuple`` with named fields. Operations cross the pipe in their wire form
(:func:`to_wire` / :func:`from_wire`: a type tag, then the fields), because pickling a
``NamedTuple`` instance costs about 1 µs on the server's event loop against 0.1-0.3 µs for a
plain tuple, which a batch of thousands of steps would feel.

Operations (handled by :class:`envhub.server.host.EnvHost`):

* :class:`CreateOp` builds the env of a new session;
* :class:`ResetOp` resets a session (``style`` picks the REST or the OpenEnv body);
* :class:`StepOp` steps a session;
* :class:`StateOp` describes a session;
* :class:`CloseOp` closes a session's env;
* :class:`TasksOp` lists task ids with a scratch env;
* :class:`PingOp` answers the worker's pid;
* :class:`HistoryPngOp` answers a history session's latest AgentOCR page (PNG, step);
* :class:`RenderStatsOp` answers the worker's history-render counters.

``extra`` carries the server-side facts a response body needs (``expires_at``,
``created_at``, an OpenEnv ``session_id``/``episode_id``); the worker only copies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

__all__ = [
    "Answer",
    "Call",
    "CloseOp",
    "CreateOp",
    "Hello",
    "HistoryPngOp",
    "Op",
    "OpResult",
    "PingOp",
    "Progress",
    "RenderStatsOp",
    "ResetOp",
    "SessionOp",
    "StateOp",
    "StepOp",
    "Style",
    "TasksOp",
    "WireOp",
    "from_wire",
    "to_wire",
]

#: Which response body the worker renders: envhub's REST models or OpenEnv's.
Style = Literal["rest", "openenv"]


#: One operation's outcome, ``(ok, payload)``: JSON bytes (or a small value) when ok, else an
#: error dict (``{code, message, detail}``, as :meth:`envhub.core.errors.EnvhubError.to_dict`
#: gives). A plain pair, not a NamedTuple: thousands cross the pipe per batch (see above).
OpResult = tuple[bool, Any]


class CreateOp(NamedTuple):
    """Build a session's env with ``env_kwargs``; ``history`` (HistoryOptions as a dict) turns on
    server-side AgentOCR history for the session."""

    session_id: str
    env_kwargs: dict[str, Any]
    history: dict[str, Any] | None = None


class ResetOp(NamedTuple):
    """Reset a session (``task_id`` joins ``options``); ``request_id`` makes a retry safe."""

    session_id: str
    seed: int | None
    task_id: str | None
    options: dict[str, Any]
    request_id: str | None
    style: Style
    extra: dict[str, Any]


class StepOp(NamedTuple):
    """Step a session with ``action``; ``request_id`` makes a retry safe."""

    session_id: str
    action: str
    request_id: str | None
    style: Style
    extra: dict[str, Any]


class StateOp(NamedTuple):
    """Describe a session."""

    session_id: str
    style: Style
    extra: dict[str, Any]


class CloseOp(NamedTuple):
    """Close a session's env (closing an unknown session is not an error)."""

    session_id: str


class TasksOp(NamedTuple):
    """One page of the task ids of ``split`` (``None``: the env's default split)."""

    split: str | None
    offset: int
    limit: int


class PingOp(NamedTuple):
    """Answer the worker's pid."""


class HistoryPngOp(NamedTuple):
    """The latest rendered history page of a history session: ``(png_bytes, step)``."""

    session_id: str


class RenderStatsOp(NamedTuple):
    """The worker's history-render counters (cache hits/misses, renders, encode time)."""


#: The operations that address one session (their first field is ``session_id``).
SessionOp = CreateOp | ResetOp | StepOp | StateOp | CloseOp | HistoryPngOp
Op = SessionOp | TasksOp | PingOp | RenderStatsOp

#: An operation on the pipe: ``(tag, *fields)``.
WireOp = tuple[Any, ...]

_OP_TYPES: tuple[type[Any], ...] = (
    CreateOp,
    ResetOp,
    StepOp,
    StateOp,
    CloseOp,
    TasksOp,
    PingOp,
    HistoryPngOp,
    RenderStatsOp,
)
_TAGS: Mapping[type[Any], int] = MappingProxyType({cls: tag for tag, cls in enumerate(_OP_TYPES)})


def to_wire(ops: Sequence[Op]) -> list[WireOp]:
    """The wire form of ``ops`` (server side)."""
    return [(_TAGS[type(op)], *op) for op in ops]


def from_wire(wire: WireOp) -> Op:
    """The operation a wire tuple stands for (worker side).

    Raises:
        IndexError, TypeError: not the wire form of an operation.
    """
    op: Op = _OP_TYPES[wire[0]](*wire[1:])
    return op


class Call(NamedTuple):
    """Server -> worker: run ``ops`` (in wire form) in order and answer under ``message_id``."""

    message_id: int
    ops: list[WireOp]


class Answer(NamedTuple):
    """Worker -> server: the results of the call ``message_id``, one per op, in order."""

    message_id: int
    results: list[OpResult]


class Hello(NamedTuple):
    """Worker -> server, first: imports are done and the worker is ready."""

    pid: int


class Progress(NamedTuple):
    """Worker -> server: a long call is still running (keeps the step watchdog off)."""
