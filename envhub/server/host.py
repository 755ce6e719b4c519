"""What runs inside one worker process: many env sessions behind one pipe.

The server sends a worker one message per request (or one per batch), each a list of
operations (the typed messages of :mod:`envhub.server.messages`); the worker runs them in
order and answers with one list of results. Running in
order is what serializes a session's steps, and answering a whole batch in one message is
what makes ``/v1/batch/step`` cheap. Results that go straight to a client are rendered to
JSON bytes here, in the worker, so the server process only concatenates bytes.

An operation's result is ``(True, payload)`` or ``(False, {code, message, detail})``; an env
exception never escapes, so one bad item never fails the rest of a batch.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from envhub.core.errors import (
    ConfigurationError,
    EnvhubError,
    ExecutionError,
    ResetNeededError,
    SessionNotFoundError,
)
from envhub.core.wire import HistoryOptions, json_default
from envhub.server.history import HistoryRuntime, SessionHistory
from envhub.server.messages import (
    Answer,
    CloseOp,
    CreateOp,
    Hello,
    HistoryPngOp,
    Op,
    OpResult,
    PingOp,
    Progress,
    RenderStatsOp,
    ResetOp,
    StateOp,
    StepOp,
    TasksOp,
    from_wire,
)

__all__ = ["EnvHost", "serve_worker"]

#: Idempotency results kept per session (older request ids are forgotten first). A retry
#: repeats one of the last few requests, and 2,000 sessions x 16 answers stays small.
_REQUEST_MEMORY = 16

#: A worker running a frame of many calls sends the answers ready so far at least this often.
_ANSWER_EVERY_S = 0.002

#: A worker running one long call (a big batch) tells the server it is still moving this often;
#: the server's step-timeout watchdog measures a step from the worker's last sign of progress.
_PROGRESS_EVERY_S = 0.25

#: Answers kept per session with server-side history: each holds an image (tens of KB inline),
#: and a retry repeats the last request or the one before it.
_HISTORY_REQUEST_MEMORY = 2


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=json_default).encode()


@dataclass
class _Session:
    """One env instance and what the server asks about it."""

    env: Any
    reset_done: bool = False
    task_id: str | None = None
    episode_id: str | None = None
    step_count: int = 0
    done: bool = False
    last_observation: str | None = None
    history: SessionHistory | None = None
    answered: OrderedDict[str, OpResult] = field(default_factory=OrderedDict)

    def remember(self, request_id: str | None, result: OpResult) -> OpResult:
        if request_id is not None:
            self.answered[request_id] = result
            if len(self.answered) > (_REQUEST_MEMORY if self.history is None else _HISTORY_REQUEST_MEMORY):
                self.answered.popitem(last=False)
        return result


def _error(exc: BaseException, session_id: str | None = None) -> dict[str, Any]:
    if isinstance(exc, EnvhubError):
        body = exc.to_dict()
    else:
        body = ExecutionError(str(exc), exception_type=type(exc).__name__, session_id=session_id).to_dict()
    # The error crosses the pipe as a pickle and leaves the server as JSON: an env error whose
    # detail holds something neither can carry (a lock, a set) would otherwise kill the worker
    # and every session on it, or break the reply. Errors are rare, so the round trip is cheap.
    body["detail"] = json.loads(_dumps(body["detail"]))
    return body


class EnvHost:
    """The sessions of one worker, addressed by session id.

    Args:
        make_env: builds one env from keyword arguments (``envhub.make`` bound to the env id).
        env_id: the served env's id, echoed in responses.
    """

    def __init__(self, make_env: Callable[..., Any], env_id: str) -> None:
        self._make_env = make_env
        self._env_id = env_id
        self._sessions: dict[str, _Session] = {}
        self._scratch: Any = None
        self.history_runtime = HistoryRuntime()
        self._ops: dict[type, Callable[[Any], OpResult]] = {
            CreateOp: self._create,
            ResetOp: self._reset,
            StepOp: self._step,
            StateOp: self._state,
            CloseOp: lambda op: self._close(op.session_id),
            TasksOp: self._tasks,
            PingOp: self._ping,
            HistoryPngOp: lambda op: self._history_png(op.session_id),
            RenderStatsOp: lambda op: self._render_stats(),
        }

    def run(self, ops: list[Op], progress: Callable[[], None] | None = None) -> list[OpResult]:
        """Run ``ops`` in order; each answers for itself.

        Args:
            ops: the operations.
            progress: called after each op (the worker loop reports progress through it).

        Returns:
            One result per op, in order.
        """
        results: list[OpResult] = []
        for op in ops:
            try:
                results.append(self._ops[type(op)](op))
            except Exception as exc:  # the env's bug becomes this item's EXECUTION_ERROR
                results.append((False, _error(exc, getattr(op, "session_id", None))))
            if progress is not None:
                progress()
        return results

    def close_all(self) -> None:
        for sid in list(self._sessions):
            self._close(sid)

    # -- operations ---------------------------------------------------------------------------

    def _get(self, sid: str) -> _Session:
        session = self._sessions.get(sid)
        if session is None:
            raise SessionNotFoundError(sid)
        return session

    def _ping(self, op: PingOp) -> OpResult:
        return (True, os.getpid())

    def _create(self, op: CreateOp) -> OpResult:
        sid, env_kwargs, history = op.session_id, op.env_kwargs, op.history
        try:
            env = self._make_env(**env_kwargs)
        except TypeError as exc:
            # A keyword the constructor does not take is the caller's mistake, not an env bug.
            raise ConfigurationError(
                f"{self._env_id} cannot be built with env_kwargs {sorted(env_kwargs)}: {exc}. "
                "GET /metadata shows the env's documented arguments.",
                env_kwargs=sorted(env_kwargs),
            ) from exc
        session = _Session(env=env)
        if history is not None:
            session.history = self.history_runtime.open(HistoryOptions.model_validate(history))
        self._sessions[sid] = session
        return (True, None)

    def _close(self, sid: str) -> OpResult:
        session = self._sessions.pop(sid, None)
        if session is not None:
            if session.history is not None:
                session.history.close()
            try:
                session.env.close()
            except Exception as exc:  # closing must always free the slot
                return (False, _error(exc, sid))
        return (True, None)

    def _reset(self, op: ResetOp) -> OpResult:
        sid, request_id, extra = op.session_id, op.request_id, op.extra
        session = self._get(sid)
        if request_id is not None and request_id in session.answered:
            return session.answered[request_id]
        options = dict(op.options)
        if op.task_id is not None:
            options["task_id"] = op.task_id
        try:
            observation, info = session.env.reset(seed=op.seed, options=options or None)
        except Exception as exc:
            return session.remember(request_id, (False, _error(exc, sid)))
        observation = str(observation)
        session.reset_done, session.done, session.step_count = True, False, 0
        session.task_id = info.get("task_id") if isinstance(info, dict) else None
        session.episode_id = extra.get("episode_id")
        session.last_observation = observation
        if session.history is not None:
            session.history.reset()
        body: dict[str, Any]
        if op.style == "openenv":
            body = {
                "observation": {
                    "text": observation,
                    "terminated": False,
                    "truncated": False,
                    "info": info,
                    "session_id": extra.get("session_id"),
                },
                "reward": None,
                "done": False,
            }
        else:
            body = {
                "session_id": sid,
                "observation": observation,
                "info": info,
                "expires_at": extra["expires_at"],
            }
        return session.remember(request_id, (True, _dumps(body)))

    def _step(self, op: StepOp) -> OpResult:
        sid, request_id, extra = op.session_id, op.request_id, op.extra
        session = self._get(sid)
        if request_id is not None and request_id in session.answered:
            return session.answered[request_id]
        if not session.reset_done:
            return (False, ResetNeededError(self._env_id).to_dict())
        action = op.action
        history = session.history
        seen = session.last_observation or ""
        factor, tag_valid = 1.0, None
        if history is not None:
            action, factor, tag_valid = history.env_action(action)
        try:
            observation, reward, terminated, truncated, info = session.env.step(action)
        except Exception as exc:
            return session.remember(request_id, (False, _error(exc, sid)))
        observation, reward = str(observation), float(reward)
        terminated, truncated = bool(terminated), bool(truncated)
        session.step_count += 1
        session.done = terminated or truncated
        session.last_observation = observation
        frame = None
        if history is not None:
            won = bool(info.get("won", False)) if isinstance(info, dict) else False
            frame = history.after_step(
                session_id=sid,
                observation=seen,
                action=action,
                factor=factor,
                tag_valid=tag_valid,
                reward=reward,
                done=session.done,
                won=won,
            )
        if op.style == "openenv":
            body: dict[str, Any] = {
                "observation": {
                    "text": observation,
                    "terminated": terminated,
                    "truncated": truncated,
                    "info": info,
                    "session_id": extra.get("session_id"),
                },
                "reward": reward,
                "done": session.done,
            }
        else:
            body = {
                "session_id": sid,
                "observation": observation,
                "reward": reward,
                "terminated": terminated,
                "truncated": truncated,
                "done": session.done,
                "info": info,
                "step_count": session.step_count,
                "expires_at": extra["expires_at"],
            }
            if frame is not None:  # sessions without history carry no history field at all
                body["history"] = frame
        return session.remember(request_id, (True, _dumps(body)))

    def _state(self, op: StateOp) -> OpResult:
        sid, extra = op.session_id, op.extra
        session = self._get(sid)
        if op.style == "openenv":
            body = {
                "episode_id": session.episode_id,
                "step_count": session.step_count,
                "session_id": sid,
                "task_id": session.task_id,
                "done": session.done,
            }
        else:
            body = {
                "session_id": sid,
                "env_id": self._env_id,
                "task_id": session.task_id,
                "step_count": session.step_count,
                "done": session.done,
                "last_observation": session.last_observation,
                "created_at": extra["created_at"],
                "expires_at": extra["expires_at"],
            }
        return (True, _dumps(body))

    def _history_png(self, sid: str) -> OpResult:
        session = self._get(sid)
        if session.history is None:
            raise ConfigurationError(
                f"Session {sid!r} was created without history; create it with "
                '{"history": {"style": "ocr", "window": 50, "preset": "alfworld"}} to get history images.',
                session_id=sid,
            )
        return (True, (session.history.png(), len(session.history.optical.memory)))

    def _render_stats(self) -> OpResult:
        return (True, self.history_runtime.counters)

    def _tasks(self, op: TasksOp) -> OpResult:
        split, offset, limit = op.split, op.offset, op.limit
        if self._scratch is None:
            self._scratch = self._make_env()
        env = self._scratch.unwrapped
        if not hasattr(env, "task_ids"):
            raise ExecutionError(
                f"{type(env).__name__} does not list tasks (it is not an envhub AgentEnv)",
                exception_type="AttributeError",
            )
        split = split if split is not None else getattr(env, "default_split", "train")
        ids = [str(t) for t in env.task_ids(split)]
        body = {
            "split": split,
            "offset": offset,
            "limit": limit,
            "total": len(ids),
            "task_ids": ids[offset : offset + limit],
        }
        return (True, _dumps(body))


def serve_worker(sock: socket.socket, env_id: str) -> None:
    """Entry point of a worker process: answer messages on ``sock`` until it closes.

    A frame is a pickled list of :class:`~envhub.server.messages.Call` (the server coalesces
    the calls of one event-loop turn); the answer is a list of
    :class:`~envhub.server.messages.Answer`. The first message the worker sends is
    :class:`~envhub.server.messages.Hello`, once its imports are done, which is what
    ``/ready`` waits for; :class:`~envhub.server.messages.Progress` beats keep a long call
    from looking stuck.

    Args:
        sock: this worker's end of the socket pair (framed as multiprocessing connections).
        env_id: a registered id, family name or ``module:Class`` entry point.
    """
    from envhub.envs.registry import make

    conn = Connection(sock.detach())
    host = EnvHost(lambda **kwargs: make(env_id, **kwargs), env_id)
    conn.send_bytes(pickle.dumps(Hello(os.getpid()), protocol=pickle.HIGHEST_PROTOCOL))
    progress_frame = pickle.dumps(Progress(), protocol=pickle.HIGHEST_PROTOCOL)
    reported_at = time.perf_counter()

    def report_progress() -> None:
        # Inside one long call (a batch of slow steps) nothing else reaches the server; this
        # keeps its watchdog from taking a busy worker for a stuck one.
        nonlocal reported_at
        if time.perf_counter() - reported_at > _PROGRESS_EVERY_S:
            conn.send_bytes(progress_frame)
            reported_at = time.perf_counter()

    try:
        while True:
            try:
                raw = conn.recv_bytes()
            except (EOFError, OSError):
                break  # the server went away: nothing left to answer
            answers: list[Answer] = []
            sent_at = reported_at = time.perf_counter()
            for call in pickle.loads(raw):
                ops = [from_wire(op) for op in call.ops]
                answers.append(Answer(call.message_id, host.run(ops, report_progress)))
                # Slow envs: answer what is done every few ms rather than at the end of the frame.
                if time.perf_counter() - sent_at > _ANSWER_EVERY_S:
                    conn.send_bytes(pickle.dumps(answers, protocol=pickle.HIGHEST_PROTOCOL))
                    answers, sent_at = [], time.perf_counter()
                    reported_at = sent_at
            if answers:
                conn.send_bytes(pickle.dumps(answers, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        host.close_all()
