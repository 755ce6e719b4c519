"""The rollout journal: what a rollout service needs to resume a job after it died.

A rollout job is a set of task *slots* (``"t0007"``: one group each). For every slot in flight
the journal holds the group being played (its deterministic uid, attempt, task, the env
sessions of its members and free-form ``meta``) and every finished step of every member, in
order. A service that restarts reads :meth:`~RolloutJournal.jobs`, skips
:meth:`~RolloutJournal.done_slots`, and continues each :meth:`~RolloutJournal.open_groups`
entry from its members' last recorded steps on the same env sessions (or re-runs it whole when
the sessions are gone: :meth:`~RolloutJournal.abandon_group`, then ``begin_group`` with
``attempt + 1``).

:meth:`~RolloutJournal.commit_group` publishes the finished group, marks the slot done and
deletes its journal entries in one step: on Redis one MULTI/EXEC holding the XADD to the
queue's stream, so a crash never publishes a group twice nor loses it; a second commit of a
done slot publishes nothing and returns ``False``. A finished group that must wait for room in
the queue (back-pressure) is first *parked*: its payload moves into the journal's ``ready``
hash and its slot counts as done, so a crash while it waits re-runs nothing;
:meth:`~RolloutJournal.publish_ready` (called when a job resumes) publishes parked groups.

Two implementations: :class:`MemoryJournal` (in-process, the embedded default; it dies with
the process, so it only guards against double commits) and :class:`RedisJournal` (shares the
connection of a :class:`~envhub.rollout.queue.redis.RedisQueue`). Keys of the Redis journal,
under ``prefix`` (default ``envhub:journal``)::

    <p>:jobs                     sorted set of job ids (by creation time)
    <p>:job:<job>                hash: spec (msgpack), status
    <p>:job:<job>:progress       hash of integer counters
    <p>:job:<job>:done           set of committed slots
    <p>:job:<job>:open           set of slots in flight
    <p>:job:<job>:ready          hash: slot -> stream fields of a finished group waiting for room
    <p>:job:<job>:g:<slot>       hash: uid, attempt, task_id, members, meta (msgpack)
    <p>:job:<job>:g:<slot>:steps hash: "<member>:<step_idx>" -> step payload (codec)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group, Step
from envhub.rollout.queue.base import GroupQueue
from envhub.rollout.queue.codec import decode_step, encode_step, pack, unpack

if TYPE_CHECKING:  # redis-py is the optional `redis` extra: MemoryJournal must import without it
    from envhub.rollout.queue.redis import RedisQueue

__all__ = [
    "PUBLISHED",
    "JobRecord",
    "MemoryJournal",
    "OpenGroup",
    "OpenMember",
    "RedisJournal",
    "RolloutJournal",
    "group_uid",
]

#: The counter :meth:`RolloutJournal.commit_group` increments with each published group.
PUBLISHED = "groups_published"


def group_uid(job_id: str, slot: int | str, attempt: int) -> str:
    """The uid of the group played for ``slot`` of ``job_id`` at ``attempt`` (deterministic)."""
    return f"{job_id}:{slot}:{attempt}"


class JobRecord(NamedTuple):
    """A saved job: its id, its spec as given to ``save_job`` and its status."""

    job_id: str
    spec: dict[str, Any]
    status: str


@dataclass(frozen=True)
class OpenMember:
    """One member of an open group: its env session and the steps it finished, in order."""

    index: int
    base_url: str
    session_id: str
    steps: list[Step]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OpenGroup:
    """A group in flight, as ``begin_group`` and ``record_step`` left it."""

    job_id: str
    slot: str
    uid: str
    attempt: int
    task_id: str
    members: list[OpenMember]
    meta: dict[str, Any]


@runtime_checkable
class RolloutJournal(Protocol):
    """The journal interface both implementations share (all methods are coroutines)."""

    async def save_job(self, job_id: str, spec: Mapping[str, Any]) -> None:
        """Store a job's spec (JSON-like); a new job's status is ``"running"``, an existing one's is kept."""
        ...

    async def jobs(self) -> list[JobRecord]:
        """Every saved job, oldest first."""
        ...

    async def set_job_status(self, job_id: str, status: str) -> None:
        """Set a saved job's status (e.g. ``"done"``, ``"cancelled"``)."""
        ...

    async def incr_progress(self, job_id: str, counter: str, amount: int = 1) -> int:
        """Add ``amount`` to one of the job's progress counters; returns the new value."""
        ...

    async def progress(self, job_id: str) -> dict[str, int]:
        """The job's progress counters (``groups_published`` is kept by ``commit_group``)."""
        ...

    async def begin_group(
        self,
        job_id: str,
        slot: str,
        *,
        attempt: int,
        task_id: str,
        members: Sequence[Mapping[str, Any]],
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Open ``slot`` for a new group (replacing a previous attempt's entries); returns its uid."""
        ...

    async def record_step(self, job_id: str, slot: str, member: int, step: Step) -> None:
        """Record a finished step of one member (idempotent per ``step.step_idx``)."""
        ...

    async def open_groups(self, job_id: str) -> list[OpenGroup]:
        """The job's groups in flight, by slot, with each member's recorded steps."""
        ...

    async def commit_group(self, job_id: str, slot: str, group: Group, queue: GroupQueue) -> bool:
        """Publish ``group`` to ``queue``, mark ``slot`` done and drop its entries, atomically.

        Returns ``False`` (publishing nothing) when the slot was already committed.
        """
        ...

    async def abandon_group(self, job_id: str, slot: str) -> None:
        """Drop the slot's open group (it will be re-run or counted as dropped); the slot stays undone."""
        ...

    async def done_slots(self, job_id: str) -> set[str]:
        """The slots whose group was committed (or finished and parked, waiting for room)."""
        ...

    async def publish_ready(self, job_id: str) -> int:
        """Publish the job's parked groups (finished, waiting for room at a crash); returns how many."""
        ...

    async def delete_job(self, job_id: str) -> None:
        """Forget everything about the job (its published groups stay in the queue)."""
        ...


def _member(index: int, raw: Mapping[str, Any], steps: list[Step]) -> OpenMember:
    extra = {k: v for k, v in raw.items() if k not in ("base_url", "session_id")}
    return OpenMember(index, str(raw.get("base_url", "")), str(raw["session_id"]), steps, extra)


def _check_members(members: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = [dict(m) for m in members]
    missing = [i for i, m in enumerate(out) if "session_id" not in m]
    if missing:
        raise ConfigurationError(
            f"begin_group: members {missing} have no 'session_id'; pass one "
            "{'base_url': ..., 'session_id': ...} per member."
        )
    return out


def _prefix_steps(steps: dict[int, Step]) -> list[Step]:
    """Steps 0, 1, 2, ... up to the first missing index (a later one cannot be resumed from)."""
    out: list[Step] = []
    while len(out) in steps:
        out.append(steps[len(out)])
    return out


def _already_done(job_id: str, slot: str) -> ConfigurationError:
    return ConfigurationError(
        f"Slot {slot!r} of job {job_id!r} was already committed; skip the slots in done_slots(job_id) "
        "when resuming a job."
    )


@dataclass
class _MemoryGroup:
    uid: str
    attempt: int
    task_id: str
    members: list[dict[str, Any]]
    meta: dict[str, Any]
    steps: dict[int, dict[int, Step]] = field(default_factory=dict)


@dataclass
class _MemoryJob:
    spec: dict[str, Any]
    status: str = "running"
    progress: dict[str, int] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    open: dict[str, _MemoryGroup] = field(default_factory=dict)


class MemoryJournal:
    """In-process :class:`RolloutJournal` (the embedded default; lost with the process)."""

    def __init__(self) -> None:
        self._jobs: dict[str, _MemoryJob] = {}

    def _job(self, job_id: str) -> _MemoryJob:
        job = self._jobs.get(job_id)
        if job is None:
            raise ConfigurationError(f"No job {job_id!r} in the rollout journal; save_job() it first.")
        return job

    async def save_job(self, job_id: str, spec: Mapping[str, Any]) -> None:
        job = self._jobs.setdefault(job_id, _MemoryJob(dict(spec)))
        job.spec = dict(spec)

    async def jobs(self) -> list[JobRecord]:
        return [JobRecord(job_id, dict(job.spec), job.status) for job_id, job in self._jobs.items()]

    async def set_job_status(self, job_id: str, status: str) -> None:
        self._job(job_id).status = status

    async def incr_progress(self, job_id: str, counter: str, amount: int = 1) -> int:
        progress = self._job(job_id).progress
        progress[counter] = progress.get(counter, 0) + amount
        return progress[counter]

    async def progress(self, job_id: str) -> dict[str, int]:
        job = self._jobs.get(job_id)
        return dict(job.progress) if job else {}

    async def begin_group(
        self,
        job_id: str,
        slot: str,
        *,
        attempt: int,
        task_id: str,
        members: Sequence[Mapping[str, Any]],
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        job = self._job(job_id)
        if slot in job.done:
            raise _already_done(job_id, slot)
        uid = group_uid(job_id, slot, attempt)
        job.open[slot] = _MemoryGroup(uid, attempt, task_id, _check_members(members), dict(meta or {}))
        return uid

    async def record_step(self, job_id: str, slot: str, member: int, step: Step) -> None:
        job = self._jobs.get(job_id)
        group = job.open.get(slot) if job else None
        if group is not None:  # a late step of an abandoned or committed group is dropped
            group.steps.setdefault(member, {})[step.step_idx] = step.model_copy(deep=True)

    async def open_groups(self, job_id: str) -> list[OpenGroup]:
        job = self._jobs.get(job_id)
        if job is None:
            return []
        return [
            OpenGroup(
                job_id,
                slot,
                g.uid,
                g.attempt,
                g.task_id,
                [_member(i, m, _prefix_steps(g.steps.get(i, {}))) for i, m in enumerate(g.members)],
                dict(g.meta),
            )
            for slot, g in sorted(job.open.items())
        ]

    async def commit_group(self, job_id: str, slot: str, group: Group, queue: GroupQueue) -> bool:
        job = self._job(job_id)
        if slot in job.done:
            return False
        job.done.add(slot)  # before awaiting: a concurrent commit of the slot sees it taken
        try:
            await queue.put(group)
        except BaseException:
            job.done.discard(slot)
            raise
        job.open.pop(slot, None)
        job.progress[PUBLISHED] = job.progress.get(PUBLISHED, 0) + 1
        return True

    async def abandon_group(self, job_id: str, slot: str) -> None:
        job = self._jobs.get(job_id)
        if job is not None:
            job.open.pop(slot, None)

    async def done_slots(self, job_id: str) -> set[str]:
        job = self._jobs.get(job_id)
        return set(job.done) if job else set()

    async def publish_ready(self, job_id: str) -> int:
        return 0  # nothing outlives the process: a waiting commit is still in its caller

    async def delete_job(self, job_id: str) -> None:
        self._jobs.pop(job_id, None)


class RedisJournal:
    """:class:`RolloutJournal` in Redis, on the connection of ``queue``.

    Args:
        queue: the :class:`RedisQueue` groups are committed to (its client is shared, so the
            XADD and the journal updates run in one MULTI/EXEC).
        prefix: the key prefix of every journal key.
    """

    def __init__(self, queue: RedisQueue, *, prefix: str = "envhub:journal") -> None:
        self.queue, self.prefix = queue, prefix
        self.client = queue.client

    # -- keys ----------------------------------------------------------------------------------

    def _job_key(self, job_id: str, *parts: str) -> str:
        return ":".join((self.prefix, "job", job_id, *parts))

    def _group_keys(self, job_id: str, slot: str) -> tuple[str, str]:
        meta = self._job_key(job_id, "g", slot)
        return meta, f"{meta}:steps"

    async def _require_job(self, job_id: str) -> None:
        async with self.queue.redis_errors("reading the rollout journal"):
            known = await self.client.zscore(f"{self.prefix}:jobs", job_id)
        if known is None:
            raise ConfigurationError(f"No job {job_id!r} in the rollout journal; save_job() it first.")

    # -- jobs ----------------------------------------------------------------------------------

    async def save_job(self, job_id: str, spec: Mapping[str, Any]) -> None:
        key = self._job_key(job_id)
        async with self.queue.transaction("saving a job to the rollout journal") as pipe:
            pipe.zadd(f"{self.prefix}:jobs", {job_id: time.time()}, nx=True)
            pipe.hset(key, "spec", pack(dict(spec)))
            pipe.hsetnx(key, "status", "running")
            await pipe.execute()

    async def jobs(self) -> list[JobRecord]:
        async with self.queue.redis_errors("listing the rollout journal's jobs"):
            ids = [_text(i) for i in await self.client.zrange(f"{self.prefix}:jobs", 0, -1)]
            async with self.client.pipeline(transaction=False) as pipe:
                for job_id in ids:
                    pipe.hgetall(self._job_key(job_id))
                rows = await pipe.execute()
        return [
            JobRecord(job_id, unpack(row[b"spec"]), _text(row[b"status"]))
            for job_id, row in zip(ids, rows, strict=True)
            if row
        ]

    async def set_job_status(self, job_id: str, status: str) -> None:
        await self._require_job(job_id)
        async with self.queue.redis_errors("writing a job status to the rollout journal"):
            await self.client.hset(self._job_key(job_id), "status", status)

    async def incr_progress(self, job_id: str, counter: str, amount: int = 1) -> int:
        async with self.queue.redis_errors("counting job progress in the rollout journal"):
            return int(await self.client.hincrby(self._job_key(job_id, "progress"), counter, amount))

    async def progress(self, job_id: str) -> dict[str, int]:
        async with self.queue.redis_errors("reading job progress from the rollout journal"):
            raw = await self.client.hgetall(self._job_key(job_id, "progress"))
        return {_text(k): int(v) for k, v in raw.items()}

    async def delete_job(self, job_id: str) -> None:
        async with self.queue.redis_errors("deleting a job from the rollout journal"):
            slots = [_text(s) for s in await self.client.smembers(self._job_key(job_id, "open"))]
            parts = ("progress", "done", "open", "ready")
            keys = [self._job_key(job_id), *(self._job_key(job_id, p) for p in parts)]
            keys += [k for slot in slots for k in self._group_keys(job_id, slot)]
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.delete(*keys)
                pipe.zrem(f"{self.prefix}:jobs", job_id)
                await pipe.execute()

    # -- groups --------------------------------------------------------------------------------

    async def begin_group(
        self,
        job_id: str,
        slot: str,
        *,
        attempt: int,
        task_id: str,
        members: Sequence[Mapping[str, Any]],
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        await self._require_job(job_id)
        if slot in await self.done_slots(job_id):
            raise _already_done(job_id, slot)
        uid = group_uid(job_id, slot, attempt)
        meta_key, steps_key = self._group_keys(job_id, slot)
        record = {
            "uid": uid,
            "attempt": attempt,
            "task_id": task_id,
            "members": pack(_check_members(members)),
            "meta": pack(dict(meta or {})),
        }
        async with self.queue.transaction("opening a group in the rollout journal") as pipe:
            pipe.delete(meta_key, steps_key)
            pipe.hset(meta_key, mapping=record)  # type: ignore[arg-type]
            pipe.sadd(self._job_key(job_id, "open"), slot)
            await pipe.execute()
        return uid

    async def record_step(self, job_id: str, slot: str, member: int, step: Step) -> None:
        _, steps_key = self._group_keys(job_id, slot)
        payload = encode_step(step)
        async with self.queue.redis_errors("recording a step in the rollout journal"):
            await self.client.hset(steps_key, f"{member}:{step.step_idx}", payload)

    async def open_groups(self, job_id: str) -> list[OpenGroup]:
        async with self.queue.redis_errors("reading open groups from the rollout journal"):
            slots = sorted(_text(s) for s in await self.client.smembers(self._job_key(job_id, "open")))
            async with self.client.pipeline(transaction=False) as pipe:
                for slot in slots:
                    for key in self._group_keys(job_id, slot):
                        pipe.hgetall(key)
                rows = await pipe.execute()
        out = []
        for i, slot in enumerate(slots):
            meta, steps = rows[2 * i], rows[2 * i + 1]
            if meta:
                out.append(self._open_group(job_id, slot, meta, steps))
        return out

    def _open_group(
        self, job_id: str, slot: str, meta: dict[bytes, bytes], raw_steps: dict[bytes, bytes]
    ) -> OpenGroup:
        by_member: dict[int, dict[int, Step]] = {}
        for name, payload in raw_steps.items():
            member, step_idx = (int(p) for p in _text(name).split(":"))
            by_member.setdefault(member, {})[step_idx] = decode_step(payload)
        members = unpack(meta[b"members"])
        return OpenGroup(
            job_id=job_id,
            slot=slot,
            uid=_text(meta[b"uid"]),
            attempt=int(meta[b"attempt"]),
            task_id=_text(meta[b"task_id"]),
            members=[_member(i, m, _prefix_steps(by_member.get(i, {}))) for i, m in enumerate(members)],
            meta=unpack(meta[b"meta"]),
        )

    async def commit_group(self, job_id: str, slot: str, group: Group, queue: GroupQueue) -> bool:
        """Publish, mark done and clear the slot in one MULTI/EXEC (see the protocol).

        When the queue is at ``max_lag``, the finished group is parked first (one MULTI: its
        payload into ``ready``, its open entries dropped), so a crash while it waits for room
        re-runs nothing. Back-pressure is checked before the transaction, so ``k`` concurrent
        commits can pass ``max_lag`` by at most ``k - 1`` entries; nothing is ever dropped.
        """
        from envhub.rollout.queue.redis import RedisQueue

        if not isinstance(queue, RedisQueue) or queue.client is not self.client:
            raise ConfigurationError(
                "RedisJournal.commit_group publishes in the same MULTI/EXEC as the journal update, so the "
                "queue must be the RedisQueue the journal was built with (RedisJournal(queue))."
            )
        fields = await asyncio.to_thread(queue.entry_fields, group)  # ~70 ms for a big group: off the loop
        if await queue.lag() >= queue.max_lag and not await self._park(job_id, slot, fields):
            return False
        return await self._publish(job_id, slot, fields)

    async def _park(self, job_id: str, slot: str, fields: Mapping[str, Any]) -> bool:
        """Move a finished group's payload into ``ready``; ``False`` when the slot was already done."""
        meta_key, steps_key = self._group_keys(job_id, slot)
        done = await self._watched_write(
            "parking a finished group in the rollout journal",
            job_id,
            slot,
            lambda pipe: (
                pipe.hset(self._job_key(job_id, "ready"), slot, pack(dict(fields))),
                pipe.srem(self._job_key(job_id, "open"), slot),
                pipe.delete(meta_key, steps_key),
            ),
        )
        return done

    async def _publish(self, job_id: str, slot: str, fields: Mapping[str, Any]) -> bool:
        """Wait for room, then XADD + mark done + clear the slot in one MULTI/EXEC."""
        await self.queue.wait_for_room()
        meta_key, steps_key = self._group_keys(job_id, slot)
        published = await self._watched_write(
            "committing a group (XADD + journal update)",
            job_id,
            slot,
            lambda pipe: (
                pipe.xadd(self.queue.stream, dict(fields)),
                pipe.sadd(self._job_key(job_id, "done"), slot),
                pipe.srem(self._job_key(job_id, "open"), slot),
                pipe.hdel(self._job_key(job_id, "ready"), slot),
                pipe.delete(meta_key, steps_key),
                pipe.hincrby(self._job_key(job_id, "progress"), PUBLISHED, 1),
            ),
        )
        if published:
            self.queue.stats.put += 1
        return published

    async def _watched_write(self, doing: str, job_id: str, slot: str, write: Any) -> bool:
        """Run ``write(pipe)`` in a MULTI unless ``slot`` is done; retried when ``done`` changed."""
        from redis.exceptions import WatchError

        done_key = self._job_key(job_id, "done")
        async with self.queue.redis_errors(doing):
            while True:
                async with self.client.pipeline(transaction=True) as pipe:
                    try:
                        # WATCH: a concurrent commit of any slot of the job makes EXEC fail; re-check.
                        await pipe.watch(done_key)
                        if await pipe.sismember(done_key, slot):
                            return False
                        pipe.multi()
                        write(pipe)
                        await pipe.execute()
                        return True
                    except WatchError:
                        continue

    async def publish_ready(self, job_id: str) -> int:
        ready_key = self._job_key(job_id, "ready")
        async with self.queue.redis_errors("reading parked groups from the rollout journal"):
            parked = await self.client.hgetall(ready_key)
        published = 0
        for slot, payload in sorted(parked.items()):
            raw: Any = payload
            fields = {k: v.encode() if isinstance(v, str) else v for k, v in unpack(raw).items()}
            if await self._publish(job_id, _text(slot), fields):
                published += 1
            else:  # committed meanwhile: only the parked copy is left to drop
                async with self.queue.redis_errors("dropping a parked group"):
                    await self.client.hdel(ready_key, slot)
        return published

    async def abandon_group(self, job_id: str, slot: str) -> None:
        meta_key, steps_key = self._group_keys(job_id, slot)
        async with self.queue.transaction("abandoning a group in the rollout journal") as pipe:
            pipe.delete(meta_key, steps_key)
            pipe.srem(self._job_key(job_id, "open"), slot)
            await pipe.execute()

    async def done_slots(self, job_id: str) -> set[str]:
        async with self.queue.redis_errors("reading done slots from the rollout journal"):
            done = await self.client.smembers(self._job_key(job_id, "done"))
            parked = await self.client.hkeys(self._job_key(job_id, "ready"))
        return {_text(s) for s in (*done, *parked)}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
