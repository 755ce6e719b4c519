"""Shared pieces of the rollout tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envhub.core.records import Group
from envhub.rollout.engine import ResumePoint
from envhub.rollout.queue.base import Delivery


class CollectingQueue:
    """The simplest GroupQueue: keeps what was published, in order (a sink for engine tests)."""

    def __init__(self) -> None:
        self.groups: list[Group] = []

    async def put(self, group: Group) -> None:
        self.groups.append(group)

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        taken, self.groups = self.groups[:count], self.groups[count:]
        return [Delivery(g, g.uid) for g in taken]

    async def ack(self, deliveries: Sequence[Delivery]) -> None:
        return None

    async def aclose(self) -> None:
        return None


class RecordingJournal:
    """An in-memory journal with the calls the engine and the service make (the Redis journal
    of :mod:`envhub.rollout.queue.journal` is the durable one). It outlives an engine, as a
    Redis journal outlives a killed service, so tests can resume from it."""

    def __init__(self, queue: CollectingQueue) -> None:
        self.queue = queue
        self.specs: dict[str, dict[str, Any]] = {}
        self.finished: dict[str, str] = {}
        self.open: dict[tuple[str, int], dict[str, Any]] = {}
        self.done: dict[str, set[int]] = {}

    async def save_job(self, job_id: str, spec: dict[str, Any]) -> None:
        self.specs[job_id] = spec

    async def jobs(self) -> list[tuple[str, dict[str, Any]]]:
        return [(j, s) for j, s in self.specs.items() if j not in self.finished]

    async def finish_job(self, job_id: str, status: str) -> None:
        self.finished[job_id] = status

    async def begin_group(
        self, job_id: str, slot: int, attempt: int, *, replica: int, members: list[dict[str, Any]]
    ) -> None:
        self.open[(job_id, slot)] = {
            "attempt": attempt,
            "replica": replica,
            "members": members,
            "entries": [[] for _ in members],
        }

    async def record_step(
        self, job_id: str, slot: int, attempt: int, member: int, entry: dict[str, Any]
    ) -> None:
        record = self.open[(job_id, slot)]
        assert record["attempt"] == attempt
        record["entries"][member].append(entry)

    async def commit_group(self, job_id: str, slot: int, group: Group) -> None:
        if slot in self.done.setdefault(job_id, set()):
            return  # published once only
        await self.queue.put(group)
        self.done[job_id].add(slot)
        self.open.pop((job_id, slot), None)

    async def abandon_group(self, job_id: str, slot: int, attempt: int) -> None:
        record = self.open.get((job_id, slot))
        if record is not None and record["attempt"] == attempt:
            del self.open[(job_id, slot)]

    async def done_slots(self, job_id: str) -> set[int]:
        return set(self.done.get(job_id, set()))

    async def open_groups(self, job_id: str) -> list[ResumePoint]:
        return [
            ResumePoint(slot, r["attempt"], r["replica"], r["members"], [list(e) for e in r["entries"]])
            for (j, slot), r in self.open.items()
            if j == job_id
        ]
