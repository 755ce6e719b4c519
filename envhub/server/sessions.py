"""The session table: ids, capacity, TTL, tombstones, and the calls that drive workers.

A session is an env instance in one worker process (chosen least-loaded at creation and
never moved). This module owns which session lives where, when it expires, and what a
client hears about a session that is gone:

* ``SESSION_NOT_FOUND`` (404): never existed, or was deleted;
* ``SESSION_EXPIRED`` (410): idle past the TTL and reaped;
* ``SESSION_LOST`` (410): its worker died or was recycled after a step timeout.

Tombstones for expired and lost sessions are kept (bounded) so a client can tell those apart.
Batch operations send one message per worker carrying all of that worker's items.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from envhub.core.errors import (
    CapacityReachedError,
    EnvhubError,
    SessionExpiredError,
    SessionLostError,
    SessionNotFoundError,
    StepTimeoutError,
    error_from_wire,
)
from envhub.core.wire import BatchResetItem, BatchStepItem, HistoryOptions
from envhub.server.history import RenderCounters
from envhub.server.messages import (
    CloseOp,
    CreateOp,
    HistoryPngOp,
    Op,
    OpResult,
    RenderStatsOp,
    ResetOp,
    SessionOp,
    StateOp,
    StepOp,
    Style,
    TasksOp,
)
from envhub.server.metrics import ServerMetrics
from envhub.server.workers import WorkerDied, WorkerPool, WorkerSlot, WorkerTimedOut

__all__ = ["SessionManager", "SessionRecord", "new_session_id"]

#: Tombstones kept for expired/lost sessions (the oldest are forgotten first).
_MAX_TOMBSTONES = 100_000


@dataclass
class SessionRecord:
    """Where a session lives and when it expires."""

    session_id: str
    slot: WorkerSlot
    generation: int
    created_at: float
    expires_at: float
    inflight: int = 0


@dataclass(frozen=True)
class _Tombstone:
    kind: str  # "expired" | "lost"
    reason: str


def new_session_id() -> str:
    return "s-" + secrets.token_urlsafe(12)


class SessionManager:
    """Sessions of one server over one :class:`WorkerPool`.

    Args:
        pool: the workers (not started yet; :meth:`start` starts them).
        env_id: the env served (for messages and responses).
        max_sessions: capacity; creating past it raises ``CapacityReachedError``.
        ttl_s: idle time after which a session is reaped.
        step_timeout_s: reported in ``STEP_TIMEOUT`` errors.
        retry_after_s: what ``CAPACITY_REACHED`` tells clients to wait.
        metrics: counters to update.
        clock: the time source for creation and expiry times (seconds since the epoch, since
            clients read ``expires_at``). It is the public attribute ``clock``, so a test can
            replace it on a running server and move time instead of sleeping.
    """

    def __init__(
        self,
        *,
        pool: WorkerPool,
        env_id: str,
        max_sessions: int,
        ttl_s: float,
        step_timeout_s: float,
        retry_after_s: int,
        metrics: ServerMetrics,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.pool = pool
        self.clock = clock
        self.env_id = env_id
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self._timeout = step_timeout_s
        self._retry_after = retry_after_s
        self._metrics = metrics
        self._sessions: dict[str, SessionRecord] = {}
        self._reserved = 0
        self._tombstones: OrderedDict[str, _Tombstone] = OrderedDict()
        self._reaper: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the workers and the TTL reaper."""
        await self.pool.start()
        self._reaper = asyncio.create_task(self._reap_forever(), name="envhub-session-reaper")

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        await self.pool.stop()

    @property
    def active(self) -> int:
        return len(self._sessions)

    def on_worker_death(self, index: int, generation: int, reason: str) -> None:
        """Tombstone every session that lived in the dead process (called by the pool)."""
        lost = [r for r in self._sessions.values() if r.slot.index == index and r.generation == generation]
        for record in lost:
            self._bury(record.session_id, _Tombstone("lost", reason))
        self._metrics.sessions_lost.inc(len(lost))

    # -- lookup -----------------------------------------------------------------------------------

    def _bury(self, sid: str, stone: _Tombstone) -> None:
        record = self._sessions.pop(sid, None)
        if record is not None and record.generation == record.slot.generation:
            record.slot.sessions -= 1
        self._tombstones[sid] = stone
        if len(self._tombstones) > _MAX_TOMBSTONES:
            self._tombstones.popitem(last=False)

    def _missing(self, sid: str) -> EnvhubError:
        stone = self._tombstones.get(sid)
        if stone is None:
            return SessionNotFoundError(sid)
        if stone.kind == "expired":
            return SessionExpiredError(sid, ttl_s=self.ttl_s)
        return SessionLostError(sid, reason=stone.reason)

    def lookup(self, sid: str) -> SessionRecord:
        """The live record of ``sid``, its expiry refreshed.

        Raises:
            SessionNotFoundError, SessionExpiredError, SessionLostError: the session is not usable.
        """
        record = self._sessions.get(sid)
        now = self.clock()
        if record is None:
            raise self._missing(sid)
        if record.generation != record.slot.generation:
            self._bury(sid, _Tombstone("lost", "its worker process was replaced"))
            raise self._missing(sid)
        if record.expires_at < now and record.inflight == 0:
            self._expire(record)
            raise self._missing(sid)
        record.expires_at = now + self.ttl_s
        return record

    def _expire(self, record: SessionRecord) -> None:
        self._bury(record.session_id, _Tombstone("expired", "idle past its TTL"))
        self._metrics.sessions_reaped.inc()
        asyncio.get_running_loop().create_task(self._close_quietly(record))

    async def _close_quietly(self, record: SessionRecord) -> None:
        # A dead worker took the env with it: nothing left to close.
        with contextlib.suppress(WorkerDied, WorkerTimedOut):
            await self.pool.call(record.slot, [CloseOp(record.session_id)], generation=record.generation)

    def _reserve(self, count: int) -> None:
        if self.active + self._reserved + count > self.max_sessions:
            raise CapacityReachedError(
                active=self.active + self._reserved,
                max_sessions=self.max_sessions,
                retry_after_s=self._retry_after,
            )
        self._reserved += count

    # -- calling workers --------------------------------------------------------------------------

    async def _call(self, record: SessionRecord, ops: list[Op]) -> list[OpResult]:
        """One message to the session's worker; worker failures become the session's errors."""
        record.inflight += 1
        try:
            return await self.pool.call(record.slot, ops, generation=record.generation)
        except WorkerTimedOut as exc:
            self._bury(record.session_id, _Tombstone("lost", "its worker was restarted after a step timeout"))
            raise StepTimeoutError(record.session_id, timeout_s=exc.timeout_s) from exc
        except WorkerDied as exc:
            self._bury(record.session_id, _Tombstone("lost", exc.reason))
            raise SessionLostError(record.session_id, reason=exc.reason) from exc
        finally:
            record.inflight -= 1

    @staticmethod
    def _unwrap(result: OpResult) -> Any:
        ok, payload = result
        if ok:
            return payload
        raise error_from_wire(payload["code"], payload["message"], payload.get("detail"))

    # -- single-session operations ----------------------------------------------------------------

    async def create(
        self,
        env_kwargs: dict[str, Any],
        *,
        session_id: str | None = None,
        history: HistoryOptions | None = None,
    ) -> SessionRecord:
        """Create one session on the least-loaded worker (with server-side history when asked).

        Raises:
            CapacityReachedError: no free slot.
            EnvhubError: the env could not be built (e.g. bad ``env_kwargs``).
        """
        records = await self._create_many(
            [env_kwargs], session_ids=[session_id or new_session_id()], history=history
        )
        return records[0]

    async def _create_many(
        self,
        kwargs_list: list[dict[str, Any]],
        *,
        session_ids: list[str],
        history: HistoryOptions | None = None,
    ) -> list[SessionRecord]:
        self._reserve(len(kwargs_list))
        # The worker rebuilds the options from a plain dict (the pipe carries builtins only).
        wire_history = None if history is None else history.model_dump()
        now = self.clock()
        records = []
        try:
            for sid in session_ids:
                slot = self.pool.least_loaded()
                slot.sessions += 1  # count it now so the next pick spreads the load
                records.append(SessionRecord(sid, slot, slot.generation, now, now + self.ttl_s))
            by_slot = _group(records, key=lambda r: r.slot.index)
            calls = [
                self.pool.call(
                    rs[0][1].slot,
                    [CreateOp(r.session_id, kwargs_list[i], wire_history) for i, r in rs],
                    generation=rs[0][1].generation,
                )
                for rs in by_slot.values()
            ]
            outcomes = await asyncio.gather(*calls, return_exceptions=True)
        finally:
            self._reserved -= len(kwargs_list)
        failure: BaseException | None = None
        for rs, outcome in zip(by_slot.values(), outcomes, strict=True):
            if isinstance(outcome, BaseException):
                failure = failure or outcome
                continue
            for (_i, record), result in zip(rs, outcome, strict=True):
                if result[0]:
                    self._sessions[record.session_id] = record
                else:
                    failure = failure or error_from_wire(
                        result[1]["code"], result[1]["message"], result[1]["detail"]
                    )
        if failure is not None:
            created = [r for r in records if r.session_id in self._sessions]
            for record in records:
                if record not in created and record.generation == record.slot.generation:
                    record.slot.sessions -= 1
            await self._discard(created)
            if isinstance(failure, WorkerDied | WorkerTimedOut):
                raise SessionLostError(records[0].session_id, reason=str(failure)) from failure
            raise failure
        self._metrics.sessions_created.inc(len(records))
        return records

    async def _discard(self, records: Sequence[SessionRecord]) -> None:
        for record in records:
            if (
                self._sessions.pop(record.session_id, None) is not None
                and record.generation == record.slot.generation
            ):
                record.slot.sessions -= 1
            await self._close_quietly(record)

    async def close(self, sid: str) -> None:
        """Delete a session and free its slot.

        Raises:
            SessionNotFoundError, SessionExpiredError, SessionLostError: as :meth:`lookup`.
        """
        record = self.lookup(sid)
        if self._sessions.pop(sid, None) is not None:
            record.slot.sessions -= 1
        await self._close_quietly(record)

    async def reset(
        self,
        sid: str,
        *,
        seed: int | None,
        task_id: str | None,
        options: dict[str, Any],
        request_id: str | None = None,
        style: Style = "rest",
        extra: dict[str, Any] | None = None,
    ) -> bytes:
        """Reset one session; returns the response JSON rendered by the worker."""
        record = self.lookup(sid)
        extra = {"expires_at": record.expires_at, **(extra or {})}
        (result,) = await self._call(record, [ResetOp(sid, seed, task_id, options, request_id, style, extra)])
        self._metrics.count_reset(result[0])
        return self._unwrap(result)  # type: ignore[no-any-return]

    async def step(
        self,
        sid: str,
        action: str,
        *,
        request_id: str | None = None,
        style: Style = "rest",
        extra: dict[str, Any] | None = None,
    ) -> bytes:
        """Step one session; returns the response JSON rendered by the worker."""
        record = self.lookup(sid)
        extra = (
            {"expires_at": record.expires_at, **(extra or {})} if extra else {"expires_at": record.expires_at}
        )
        started = time.perf_counter()
        (result,) = await self._call(record, [StepOp(sid, action, request_id, style, extra)])
        self._metrics.observe_step(result[0], time.perf_counter() - started)
        return self._unwrap(result)  # type: ignore[no-any-return]

    async def state(self, sid: str, *, style: Style = "rest") -> bytes:
        """The session's state JSON (see ``SessionState`` / OpenEnv ``State``)."""
        record = self.lookup(sid)
        extra = {"created_at": record.created_at, "expires_at": record.expires_at}
        (result,) = await self._call(record, [StateOp(sid, style, extra)])
        return self._unwrap(result)  # type: ignore[no-any-return]

    async def history_png(self, sid: str) -> tuple[bytes, int]:
        """The session's latest history image as PNG and the step it shows (encoded in the worker).

        Raises:
            ConfigurationError: the session was created without history.
            SessionNotFoundError, SessionExpiredError, SessionLostError: as :meth:`lookup`.
        """
        record = self.lookup(sid)
        (result,) = await self._call(record, [HistoryPngOp(sid)])
        return self._unwrap(result)  # type: ignore[no-any-return]

    async def render_stats(self, *, timeout_s: float = 2.0) -> list[tuple[int, int, RenderCounters]]:
        """Each live worker's history render counters ``(slot, generation, counters)``.

        A worker that does not answer within ``timeout_s`` (busy with a long step) is left
        out of this scrape rather than holding ``/metrics`` up.
        """
        live = [slot for slot in self.pool.slots if slot.alive]

        async def one(slot: WorkerSlot) -> tuple[int, int, RenderCounters] | None:
            generation = slot.generation
            try:
                (result,) = await asyncio.wait_for(
                    self.pool.call(slot, [RenderStatsOp()], generation=generation), timeout_s
                )
            except (WorkerDied, WorkerTimedOut, TimeoutError):
                return None
            return (slot.index, generation, result[1]) if result[0] else None

        answers = await asyncio.gather(*(one(slot) for slot in live))
        return [a for a in answers if a is not None]

    async def tasks(self, split: str | None, offset: int, limit: int) -> bytes:
        """One page of task ids, listed by a worker's scratch env."""
        slot = self.pool.least_loaded()
        try:
            (result,) = await self.pool.call(slot, [TasksOp(split, offset, limit)])
        except WorkerDied as exc:
            raise SessionLostError("(task listing)", reason=exc.reason) from exc
        except WorkerTimedOut as exc:
            raise StepTimeoutError("(task listing)", timeout_s=exc.timeout_s) from exc
        return self._unwrap(result)  # type: ignore[no-any-return]

    async def oneshot(self, ops_after_create: list[SessionOp]) -> list[OpResult]:
        """Run ops against a throwaway env (OpenEnv's stateless HTTP), then close it.

        ``ops_after_create`` use the placeholder session id ``"@"``, replaced here.
        """
        record = await self.create({})
        sid = record.session_id
        ops: list[Op] = [
            op._replace(session_id=sid) if op.session_id == "@" else op for op in ops_after_create
        ]
        try:
            return await self._call(record, ops)
        finally:
            if self._sessions.pop(sid, None) is not None and record.generation == record.slot.generation:
                record.slot.sessions -= 1
            await self._close_quietly(record)

    # -- groups and batches -----------------------------------------------------------------------

    async def create_group(
        self,
        *,
        group_size: int,
        task_id: str | None,
        seed: int,
        split: str | None,
        env_kwargs: dict[str, Any],
        history: HistoryOptions | None = None,
    ) -> tuple[list[SessionRecord], list[bytes]]:
        """``group_size`` sessions reset with the same task and seed (all or nothing).

        Returns:
            The records and each member's reset JSON (``GroupMember``-shaped plus ``expires_at``).
        """
        records = await self._create_many(
            [env_kwargs] * group_size,
            session_ids=[new_session_id() for _ in range(group_size)],
            history=history,
        )
        options = {"split": split} if split is not None else {}
        items = [
            BatchResetItem(session_id=r.session_id, seed=seed, task_id=task_id, options=options)
            for r in records
        ]
        slots = await self._batch(
            [ResetOp(i.session_id, i.seed, i.task_id, i.options, None, "rest", {}) for i in items],
            kind="reset",
        )
        failed = next((s for s in slots if not s[0]), None)
        if failed is not None:
            await self._discard(records)
            payload = failed[1]
            raise error_from_wire(payload["code"], payload["message"], payload.get("detail"))
        return records, [s[1] for s in slots]

    async def batch_step(self, items: Sequence[BatchStepItem]) -> list[OpResult]:
        """Step many sessions: one message per worker; one result or error per item, in order."""
        return await self._batch(
            [StepOp(i.session_id, i.action, i.request_id, "rest", {}) for i in items], kind="step"
        )

    async def batch_reset(self, items: Sequence[BatchResetItem]) -> list[OpResult]:
        """Reset many sessions: one message per worker; one result or error per item, in order."""
        ops = [ResetOp(i.session_id, i.seed, i.task_id, i.options, i.request_id, "rest", {}) for i in items]
        return await self._batch(ops, kind="reset")

    async def _batch(self, ops: Sequence[ResetOp | StepOp], *, kind: str) -> list[OpResult]:
        """Route ``ops`` to their workers; each op's ``extra`` is filled in here."""
        results: list[OpResult | None] = [None] * len(ops)
        routed: dict[int, list[tuple[int, SessionRecord, Op]]] = {}
        for pos, op in enumerate(ops):
            try:
                record = self.lookup(op.session_id)
            except EnvhubError as exc:
                results[pos] = (False, exc.to_dict())
                continue
            routed.setdefault(record.slot.index, []).append(
                (pos, record, op._replace(extra={"expires_at": record.expires_at}))
            )
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(self._call_slot(entries) for entries in routed.values()))
        elapsed = time.perf_counter() - started
        for entries, outcome in zip(routed.values(), outcomes, strict=True):
            for (pos, _record, _op), result in zip(entries, outcome, strict=True):
                results[pos] = result
                if kind == "step":
                    self._metrics.observe_step(result[0], elapsed)
                else:
                    self._metrics.count_reset(result[0])
        return results  # type: ignore[return-value]

    async def _call_slot(self, entries: list[tuple[int, SessionRecord, Op]]) -> list[OpResult]:
        """One message for all of a worker's batch items; a worker failure fails each item."""
        records = [record for _pos, record, _op in entries]
        for record in records:
            record.inflight += 1
        first = records[0]
        try:
            return await self.pool.call(
                first.slot, [op for _pos, _record, op in entries], generation=first.generation
            )
        except (WorkerDied, WorkerTimedOut) as exc:
            failed: list[OpResult] = []
            for record in records:
                if isinstance(exc, WorkerTimedOut):
                    error: EnvhubError = StepTimeoutError(record.session_id, timeout_s=exc.timeout_s)
                    reason = "its worker was restarted after a step timeout"
                else:
                    error, reason = SessionLostError(record.session_id, reason=exc.reason), exc.reason
                self._bury(record.session_id, _Tombstone("lost", reason))
                failed.append((False, error.to_dict()))
            return failed
        finally:
            for record in records:
                record.inflight -= 1

    # -- TTL --------------------------------------------------------------------------------------

    def reap(self) -> int:
        """Expire every idle session past its TTL; returns how many."""
        now = self.clock()
        idle = [r for r in self._sessions.values() if r.expires_at < now and r.inflight == 0]
        for record in idle:
            self._expire(record)
        return len(idle)

    async def _reap_forever(self) -> None:
        interval = max(0.1, min(5.0, self.ttl_s / 4))
        while True:
            await asyncio.sleep(interval)
            self.reap()


def _group(records: list[SessionRecord], *, key: Any) -> dict[Any, list[tuple[int, SessionRecord]]]:
    grouped: dict[Any, list[tuple[int, SessionRecord]]] = {}
    for i, record in enumerate(records):
        grouped.setdefault(key(record), []).append((i, record))
    return grouped
