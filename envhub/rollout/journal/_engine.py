"""The engine's and the service's journal calls, on the queue package's :class:`RolloutJournal`.

:class:`EngineJournal` adapts a :class:`~envhub.rollout.journal.RolloutJournal`
(:class:`~envhub.rollout.journal.MemoryJournal` or
:class:`~envhub.rollout.journal.RedisJournal`) and the queue groups are committed to:

* slots are the engine's integers, written as decimal strings;
* a member's start (first observation and ``info``) rides in the member record, the replica index
  in the group's ``meta``;
* each journaled step carries what it led to (the next observation and ``info``) under
  ``info["_next"]`` in the journal's copy only: it is what a resumed member needs to build its
  next prompt, and the published step never has it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from envhub.core.records import Group, Step
from envhub.rollout.journal._store import RolloutJournal
from envhub.rollout.queue.base import GroupQueue

__all__ = ["EngineJournal", "ResumePoint"]

_NEXT = "_next"
_FINISHED = frozenset({"done", "cancelled"})


@dataclass
class ResumePoint:
    """An in-flight group read back from the journal: where each member stood."""

    slot: int
    attempt: int
    replica: int
    members: list[dict[str, Any]]  # session_id, observation, info (the start)
    entries: list[list[dict[str, Any]]]  # per member: journaled step entries, in order


class EngineJournal:
    """Journal calls of :class:`~envhub.rollout.engine.RolloutEngine` and the rollout service.

    Args:
        journal: where steps, open groups and jobs are kept.
        queue: where committed groups are published (atomically with marking them done).
        base_urls: the env replicas, by index (recorded with each member, for people reading
            the journal).
    """

    def __init__(self, journal: RolloutJournal, queue: GroupQueue, base_urls: Sequence[str] = ()) -> None:
        self.journal = journal
        self.queue = queue
        self.base_urls = list(base_urls)
        self._publishing: set[asyncio.Task[int]] = set()  # parked groups being published

    # -- jobs (the service) ----------------------------------------------------------------------

    async def save_job(self, job_id: str, spec: dict[str, Any]) -> None:
        await self.journal.save_job(job_id, spec)

    async def jobs(self) -> list[tuple[str, dict[str, Any]]]:
        """The jobs that did not finish (running or failed), oldest first."""
        return [(r.job_id, r.spec) for r in await self.journal.jobs() if r.status not in _FINISHED]

    async def job_statuses(self) -> list[tuple[str, str, dict[str, Any]]]:
        """Every job of the journal as ``(job_id, status, spec)``, oldest first."""
        return [(r.job_id, r.status, r.spec) for r in await self.journal.jobs()]

    async def delete_job(self, job_id: str) -> None:
        """Remove the job and every journal key of it (retention pruning)."""
        await self.journal.delete_job(job_id)

    async def finish_job(self, job_id: str, status: str) -> None:
        await self.journal.set_job_status(job_id, status)

    async def done_slots(self, job_id: str) -> set[int]:
        """The job's done slots (parked ones included); parked groups are published meanwhile.

        Groups that had finished and were waiting for room when the service died count as done
        (never re-run); a background task publishes them as room appears, so a resume does not
        wait for the consumers.
        """
        task = asyncio.create_task(self.journal.publish_ready(job_id))
        self._publishing.add(task)
        task.add_done_callback(self._publishing.discard)
        return {int(s) for s in await self.journal.done_slots(job_id)}

    # -- groups (the engine) ---------------------------------------------------------------------

    async def begin_group(
        self, job_id: str, slot: int, attempt: int, *, replica: int, members: list[dict[str, Any]]
    ) -> None:
        url = self.base_urls[replica] if replica < len(self.base_urls) else ""
        records = [
            {
                "base_url": url,
                "session_id": m["session_id"],
                "observation": m["observation"],
                "info": m["info"],
            }
            for m in members
        ]
        task_id = str(members[0]["info"].get("task_id", "")) if members else ""
        await self.journal.begin_group(
            job_id, str(slot), attempt=attempt, task_id=task_id, members=records, meta={"replica": replica}
        )

    async def record_step(
        self, job_id: str, slot: int, attempt: int, member: int, entry: dict[str, Any]
    ) -> None:
        step = Step.model_validate(entry["step"])
        info = {**step.info, _NEXT: {"observation": entry["observation"], "info": entry["info"]}}
        await self.journal.record_step(job_id, str(slot), member, step.model_copy(update={"info": info}))

    async def commit_group(self, job_id: str, slot: int, group: Group) -> None:
        await self.journal.commit_group(job_id, str(slot), group, self.queue)

    async def abandon_group(self, job_id: str, slot: int, attempt: int) -> None:
        await self.journal.abandon_group(job_id, str(slot))

    async def open_groups(self, job_id: str) -> list[ResumePoint]:
        """The job's in-flight groups as the engine resumes them."""
        points = []
        for group in await self.journal.open_groups(job_id):
            starts = [
                {
                    "session_id": m.session_id,
                    "observation": m.extra.get("observation", ""),
                    "info": m.extra.get("info", {}),
                }
                for m in group.members
            ]
            entries = []
            for m in group.members:
                kept = []
                for step in m.steps:
                    info = dict(step.info)
                    after = info.pop(_NEXT, None)
                    if after is None:
                        break  # a step without what it led to cannot be continued from
                    kept.append(
                        {
                            "step": step.model_copy(update={"info": info}).model_dump(mode="json"),
                            "observation": after["observation"],
                            "info": after["info"],
                        }
                    )
                entries.append(kept)
            points.append(
                ResumePoint(
                    int(group.slot), group.attempt, int(group.meta.get("replica", 0)), starts, entries
                )
            )
        return points
