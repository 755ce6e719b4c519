"""The messages between the server and its worker processes.

The server sends a worker frames of :class:`Call` (a message id and a list of operations);
the worker answers with :class:`Answer` lists, one result per operation, after a first
:class:`Hello` and with :class:`Progress` beats during long calls. Each message is a
``NamedTuple``: named fields in the code, a tuple on the pipe (pickled with the class name
once per frame, so a batch of thousands of steps stays small).

Operations (handled by :class:`envhub.server.host.EnvHost`):

============== ===============================================================
operation      what the worker does
============== ===============================================================
:class:`CreateOp`  build an env for a new session
:class:`ResetOp`   reset a session (``style`` picks the REST or OpenEnv body)
:class:`StepOp`    step a session
:class:`StateOp`   describe a session
:class:`CloseOp`   close a session's env
:class:`TasksOp`   list task ids with a scratch env
:class:`PingOp`    answer the worker's pid
============== ===============================================================

``extra`` carries the server-side facts a response body needs (``expires_at``,
``created_at``, an OpenEnv ``session_id``/``episode_id``); the worker only copies them.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

__all__ = [
    "Answer",
    "Call",
    "CloseOp",
    "CreateOp",
    "Hello",
    "Op",
    "OpResult",
    "PingOp",
    "Progress",
    "ResetOp",
    "SessionOp",
    "StateOp",
    "StepOp",
    "Style",
    "TasksOp",
]

#: Which response body the worker renders: envhub's REST models or OpenEnv's.
Style = Literal["rest", "openenv"]


class OpResult(NamedTuple):
    """One operation's outcome: JSON bytes (or a small value) when ``ok``, else an error dict
    (``{code, message, detail}``, as :meth:`envhub.core.errors.EnvhubError.to_dict` gives)."""

    ok: bool
    payload: Any


class CreateOp(NamedTuple):
    """Build a session's env with ``env_kwargs``."""

    session_id: str
    env_kwargs: dict[str, Any]


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


#: The operations that address one session (their first field is ``session_id``).
SessionOp = CreateOp | ResetOp | StepOp | StateOp | CloseOp
Op = SessionOp | TasksOp | PingOp


class Call(NamedTuple):
    """Server -> worker: run ``ops`` in order and answer under ``message_id``."""

    message_id: int
    ops: list[Op]


class Answer(NamedTuple):
    """Worker -> server: the results of the call ``message_id``, one per op, in order."""

    message_id: int
    results: list[OpResult]


class Hello(NamedTuple):
    """Worker -> server, first: imports are done and the worker is ready."""

    pid: int


class Progress(NamedTuple):
    """Worker -> server: a long call is still running (keeps the step watchdog off)."""
