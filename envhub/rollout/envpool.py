"""Where a rollout's envs live: replicas of an env server, or in-process envs in threads.

Both pools speak the same small async surface, so the engine never knows which it has:

* :meth:`open_group` — ``n`` members reset to one identical start (``POST /v1/groups``);
* :meth:`step` — one action per live member, one request (``POST /v1/batch/step``); each slot
  answers for itself (a result or an :mod:`envhub.core.errors` instance);
* :meth:`step_count` — where a session stands (resume after a crash), None when it is gone;
* :meth:`close_group` — free the members' sessions.

:class:`RemoteEnvPool` keeps a group on the replica it was opened on and opens new groups on
the replica with the fewest live sessions (ties: the lowest index). :class:`InProcessEnvPool`
runs each env call in a worker thread and passes ``info`` through the same JSON round trip the
server applies, so in-process and remote runs record identical trajectories.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from envhub.client import AsyncEnvClient, RetryPolicy, slot_error
from envhub.core.errors import (
    ConfigurationError,
    EnvhubError,
    ExecutionError,
    ServerUnreachableError,
    SessionNotFoundError,
)
from envhub.core.wire import HistoryFrame, HistoryOptions, json_default

__all__ = [
    "EnvPool",
    "InProcessEnvPool",
    "MemberStart",
    "OpenGroup",
    "RemoteEnvPool",
    "StepItem",
    "StepOutcome",
    "wire_info",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MemberStart:
    """One member's session and first observation."""

    session_id: str
    observation: str
    info: dict[str, Any]


@dataclass(frozen=True)
class OpenGroup:
    """A group of sessions on one replica."""

    replica: int
    members: tuple[MemberStart, ...]

    @property
    def session_ids(self) -> list[str]:
        return [m.session_id for m in self.members]


@dataclass(frozen=True)
class StepItem:
    """One action for one session; ``request_id`` makes a retried step idempotent."""

    session_id: str
    action: str
    request_id: str | None = None


@dataclass(frozen=True)
class StepOutcome:
    """One slot's answer: the transition, or the error that slot raised."""

    observation: str = ""
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] | None = None
    step_count: int = 0
    error: EnvhubError | None = None
    #: The env server's history image after this step (sessions opened with ``history``).
    history: HistoryFrame | None = None
    #: Its PNG (decoded from the frame, or fetched from the frame's link).
    history_png: bytes | None = None


class EnvPool(Protocol):
    """What the engine needs from wherever the envs run."""

    env_id: str

    @property
    def replicas(self) -> int: ...

    def load(self) -> list[int]:
        """Live sessions per replica, as this pool counts them."""
        ...

    async def open_group(
        self,
        *,
        group_size: int,
        task_id: str | None,
        seed: int,
        split: str | None,
        env_kwargs: Mapping[str, Any],
        replica: int | None = None,
        history: HistoryOptions | None = None,
    ) -> OpenGroup:
        """Open ``group_size`` sessions on one task; ``history`` asks the server to render AgentOCR."""
        ...

    async def history_png(self, replica: int, session_id: str) -> bytes:
        """The PNG of a session's latest server-rendered history image (the blank first page
        before the first step)."""
        ...

    async def step(self, group: OpenGroup, items: Sequence[StepItem]) -> list[StepOutcome]: ...

    async def step_count(self, replica: int, session_id: str) -> int | None: ...

    async def adopt(self, replica: int, session_ids: Sequence[str]) -> None:
        """Count sessions opened by an earlier process (resume) as live on ``replica``."""
        ...

    async def close_group(self, group: OpenGroup) -> None: ...

    async def task_ids(
        self, split: str | None, count: int | None, env_kwargs: Mapping[str, Any] | None = None
    ) -> list[str]:
        """The first ``count`` task ids of ``split`` (all when None) of the env built with
        ``env_kwargs`` (a job's: its dataset may not be the default one)."""
        ...

    async def aclose(self) -> None: ...


def _least_loaded(load: Sequence[int], down: Sequence[bool] | None = None) -> int:
    """The replica with the fewest live sessions, preferring replicas not marked down."""
    down = down or [False] * len(load)
    return min(range(len(load)), key=lambda i: (down[i], load[i], i))


class RemoteEnvPool:
    """Replicas of one env server (``envhub serve``), addressed by base URL.

    Args:
        base_urls: one URL per replica, all serving the same env.
        token: bearer token of the servers, if any.
        timeout_s: total time for one request (the engine's step deadline usually cuts first).
        retry: the clients' retry policy (connection errors, 503 capacity).

    Raises:
        ConfigurationError: no URL, or one that is not http(s).
    """

    def __init__(
        self,
        base_urls: Sequence[str],
        *,
        env_id: str,
        token: str | None = None,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not base_urls:
            raise ConfigurationError("Give at least one env server URL (e.g. http://127.0.0.1:8000).")
        self.env_id = env_id
        self.base_urls = list(base_urls)
        self._clients = [AsyncEnvClient(u, token=token, timeout_s=timeout_s, retry=retry) for u in base_urls]
        self._load = [0] * len(base_urls)
        # A replica that could not be reached takes no new groups for a while (unless all are down).
        self._down_until = [0.0] * len(base_urls)
        self.down_cooldown_s = 10.0

    @property
    def replicas(self) -> int:
        return len(self._clients)

    def load(self) -> list[int]:
        return list(self._load)

    async def open_group(
        self,
        *,
        group_size: int,
        task_id: str | None,
        seed: int,
        split: str | None,
        env_kwargs: Mapping[str, Any],
        replica: int | None = None,
        history: HistoryOptions | None = None,
    ) -> OpenGroup:
        now = time.monotonic()
        down = [until > now for until in self._down_until]
        index = _least_loaded(self._load, down) if replica is None else replica
        # Count the sessions before the request, so concurrent openers spread out.
        self._load[index] += group_size
        try:
            created = await self._clients[index].create_group(
                group_size, task_id=task_id, seed=seed, split=split, env_kwargs=env_kwargs, history=history
            )
        except BaseException as exc:
            self._load[index] -= group_size
            if isinstance(exc, ServerUnreachableError):
                self._down_until[index] = time.monotonic() + self.down_cooldown_s
            raise
        members = tuple(MemberStart(m.session_id, m.observation, dict(m.info)) for m in created.sessions)
        return OpenGroup(index, members)

    async def step(self, group: OpenGroup, items: Sequence[StepItem]) -> list[StepOutcome]:
        reply = await self._clients[group.replica].batch_step(
            [(i.session_id, i.action, i.request_id) for i in items]
        )
        outcomes: list[StepOutcome] = []
        for item, slot in zip(items, reply.results, strict=True):
            error = slot_error(slot)
            if error is not None or slot.result is None:
                outcomes.append(StepOutcome(error=error))
                continue
            r = slot.result
            png = None
            if r.history is not None:
                if r.history.png_base64 is not None:
                    png = base64.b64decode(r.history.png_base64)
                else:
                    png = await self.history_png(group.replica, item.session_id)
            outcomes.append(
                StepOutcome(
                    r.observation,
                    r.reward,
                    r.terminated,
                    r.truncated,
                    dict(r.info),
                    r.step_count,
                    history=r.history,
                    history_png=png,
                )
            )
        return outcomes

    async def history_png(self, replica: int, session_id: str) -> bytes:
        return await self._clients[replica].fetch_history_png(session_id)

    async def step_count(self, replica: int, session_id: str) -> int | None:
        try:
            state = await self._clients[replica].state(session_id)
        except EnvhubError:
            return None
        return state.step_count

    async def adopt(self, replica: int, session_ids: Sequence[str]) -> None:
        self._load[replica] += len(session_ids)

    async def close_group(self, group: OpenGroup) -> None:
        self._load[group.replica] -= len(group.members)
        client = self._clients[group.replica]

        async def close(sid: str) -> None:
            # Already gone (lost, expired) or the server is down: its TTL reaps it.
            with contextlib.suppress(EnvhubError):
                await client.delete_session(sid)

        await asyncio.gather(*(close(m.session_id) for m in group.members))

    async def task_ids(
        self, split: str | None, count: int | None, env_kwargs: Mapping[str, Any] | None = None
    ) -> list[str]:
        # The server lists the tasks of its env as its operator started it (GET /v1/tasks takes
        # no env arguments); a job's env_kwargs shape its sessions, not this list.
        if env_kwargs:
            _log.warning(
                "env_kwargs %s do not reach the task list of an env server: the tasks are those of "
                "its env as started (start the server on the dataset the job names)",
                sorted(env_kwargs),
            )
        ids: list[str] = []
        offset = 0
        while count is None or len(ids) < count:
            page = await self._clients[0].tasks(split, offset=offset, limit=1000)
            ids.extend(page.task_ids)
            offset += len(page.task_ids)
            if not page.task_ids or offset >= page.total:
                break
        return ids if count is None else ids[:count]

    async def aclose(self) -> None:
        await asyncio.gather(*(c.close() for c in self._clients))


def wire_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` as it looks after the env server's JSON encoding (tuples -> lists, numpy -> plain)."""
    return dict(json.loads(json.dumps(dict(info), ensure_ascii=False, default=json_default)))


_NO_SERVER_HISTORY = (
    "In-process envs have no env server to render AgentOCR history; use render_at='client' "
    "or env servers (RemoteEnvPool)."
)


class InProcessEnvPool:
    """Envs in this process, each call run in a worker thread (no server needed).

    Args:
        make_env: builds one env from keyword arguments (e.g. ``lambda **kw: envhub.make(id, **kw)``).
        env_id: the env's id, for records.
        threads: worker threads. The default 1 runs every env call on one thread, in order:
            some engines keep process-wide state that is not thread-safe (TextWorld, which
            ALFWorld runs on, fails when two games load at once). Policy calls still overlap.
    """

    def __init__(self, make_env: Callable[..., Any], *, env_id: str, threads: int = 1) -> None:
        self.env_id = env_id
        self._make_env = make_env
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="envhub-env")
        self._envs: dict[str, Any] = {}
        self._steps: dict[str, int] = {}
        self._ids = itertools.count()
        self._load = [0]

    @property
    def replicas(self) -> int:
        return 1

    def load(self) -> list[int]:
        return list(self._load)

    async def _run(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def open_group(
        self,
        *,
        group_size: int,
        task_id: str | None,
        seed: int,
        split: str | None,
        env_kwargs: Mapping[str, Any],
        replica: int | None = None,
        history: HistoryOptions | None = None,
    ) -> OpenGroup:
        if history is not None:
            raise ConfigurationError(_NO_SERVER_HISTORY)
        options: dict[str, Any] = {} if split is None else {"split": split}
        if task_id is not None:
            options["task_id"] = task_id

        def start() -> list[tuple[Any, str, dict[str, Any]]]:
            started: list[tuple[Any, str, dict[str, Any]]] = []
            try:
                for _ in range(group_size):
                    env = self._make_env(**env_kwargs)
                    started.append((env, "", {}))
                    observation, info = env.reset(seed=seed, options=options or None)
                    started[-1] = (env, str(observation), wire_info(info))
            except BaseException:
                for env, _, _ in started:
                    env.close()
                raise
            return started

        started = await self._run(start)
        members = []
        for env, observation, info in started:
            sid = f"local-{next(self._ids)}"
            self._envs[sid], self._steps[sid] = env, 0
            members.append(MemberStart(sid, observation, info))
        self._load[0] += group_size
        return OpenGroup(0, tuple(members))

    async def step(self, group: OpenGroup, items: Sequence[StepItem]) -> list[StepOutcome]:
        def run() -> list[StepOutcome]:
            out: list[StepOutcome] = []
            for item in items:
                env = self._envs.get(item.session_id)
                if env is None:
                    out.append(StepOutcome(error=SessionNotFoundError(item.session_id)))
                    continue
                try:
                    obs, reward, terminated, truncated, info = env.step(item.action)
                except Exception as exc:  # the env's bug becomes this slot's error, as on the server
                    error = ExecutionError(
                        str(exc), exception_type=type(exc).__name__, session_id=item.session_id
                    )
                    out.append(StepOutcome(error=error))
                    continue
                self._steps[item.session_id] += 1
                out.append(
                    StepOutcome(
                        str(obs),
                        float(reward),
                        bool(terminated),
                        bool(truncated),
                        wire_info(info),
                        self._steps[item.session_id],
                    )
                )
            return out

        return await self._run(run)  # type: ignore[no-any-return]

    async def history_png(self, replica: int, session_id: str) -> bytes:
        raise ConfigurationError(_NO_SERVER_HISTORY)

    async def step_count(self, replica: int, session_id: str) -> int | None:
        return self._steps.get(session_id)

    async def adopt(self, replica: int, session_ids: Sequence[str]) -> None:
        self._load[0] += len(session_ids)

    async def close_group(self, group: OpenGroup) -> None:
        envs = [self._envs.pop(m.session_id, None) for m in group.members]
        for m in group.members:
            self._steps.pop(m.session_id, None)
        self._load[0] -= len(group.members)

        def close() -> None:
            for env in envs:
                if env is not None:
                    env.close()

        await self._run(close)

    async def task_ids(
        self, split: str | None, count: int | None, env_kwargs: Mapping[str, Any] | None = None
    ) -> list[str]:
        def ids() -> list[str]:
            kwargs = dict(env_kwargs or {})
            try:
                env = self._make_env(**kwargs)
            except TypeError as exc:
                # A keyword the constructor does not take is the job's mistake, as on a server.
                raise ConfigurationError(
                    f"{self.env_id} cannot be built with env_kwargs {sorted(kwargs)}: {exc}.",
                    env_kwargs=sorted(kwargs),
                ) from exc
            try:
                return [str(t) for t in env.unwrapped.task_ids(split)]
            finally:
                env.close()

        found = await self._run(ids)
        return found if count is None else found[:count]

    async def aclose(self) -> None:
        for sid in list(self._envs):
            self._envs.pop(sid).close()
        self._executor.shutdown(wait=False, cancel_futures=True)
