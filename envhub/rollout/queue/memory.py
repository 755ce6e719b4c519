"""The in-process finished-group queue (asyncio): the embedded default.

:class:`MemoryQueue` has the semantics of :class:`~envhub.rollout.queue.redis.RedisQueue`
without a server, so the same rollout and trainer code runs in one process:

* **back-pressure**: ``put`` waits while undelivered plus unacknowledged groups reach
  ``max_pending``; nothing is dropped;
* **at-least-once**: a delivery stays pending until acked. When a consumer is closed, its
  unacked deliveries go back to the front of the queue; a delivery held by another consumer for
  longer than ``claim_idle_ms`` is taken over (as Redis's XAUTOCLAIM does);
* **de-duplication by group uid**: a group whose uid was already acked (used), or that this
  consumer already holds, is dropped instead of being returned again;
* **dead letters**: an entry that would be delivered more than ``dead_letter_after`` times goes
  to :attr:`MemoryQueue.dead_letters` instead.

Several consumers share one queue through :meth:`MemoryQueue.consumer`, which returns another
view on the same queue under another consumer name. Groups are passed by reference (no copy).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from envhub.core.errors import ConfigurationError, QueueError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.stats import QueueStats

__all__ = ["MemoryQueue"]


@dataclass
class _Entry:
    seq: int
    group: Group
    times_delivered: int = 0
    owner: str | None = None
    delivered_at: float = 0.0


@dataclass
class _Shared:
    """The state all consumer views of one queue share."""

    max_pending: int
    claim_idle_s: float
    dead_letter_after: int
    max_remembered: int
    undelivered: deque[_Entry] = field(default_factory=deque)
    pending: dict[str, _Entry] = field(default_factory=dict)
    consumed: OrderedDict[str, None] = field(default_factory=OrderedDict)
    dead_letters: list[Group] = field(default_factory=list)
    seq: itertools.count[int] = field(default_factory=itertools.count)
    # Created lazily: a Condition binds to the event loop that first uses it.
    changed: asyncio.Condition | None = None

    def condition(self) -> asyncio.Condition:
        if self.changed is None:
            self.changed = asyncio.Condition()
        return self.changed

    def backlog(self) -> int:
        return len(self.undelivered) + len(self.pending)


class MemoryQueue:
    """In-process :class:`~envhub.rollout.queue.base.GroupQueue`.

    Args:
        max_pending: the bound on undelivered plus unacknowledged groups; ``put`` waits at it.
        claim_idle_ms: a delivery another consumer has held this long without acking is
            delivered again (to whichever consumer asks next).
        dead_letter_after: an entry is delivered at most this many times, then dead-lettered.
        consumer: this view's consumer name.
        max_remembered: how many consumed uids are remembered for de-duplication (oldest forgotten).

    Example::

        queue = MemoryQueue(max_pending=64)
        trainer = queue.consumer("trainer-0")
        await queue.put(group)
        [delivery] = await trainer.get(1)
        ...  # use delivery.group
        await trainer.ack([delivery])
    """

    def __init__(
        self,
        max_pending: int = 1024,
        *,
        claim_idle_ms: int = 300_000,
        dead_letter_after: int = 10,
        consumer: str = "main",
        max_remembered: int = 1_000_000,
        _shared: _Shared | None = None,
    ) -> None:
        if max_pending < 1 or dead_letter_after < 1 or claim_idle_ms < 0:
            raise ConfigurationError(
                f"MemoryQueue needs max_pending >= 1, dead_letter_after >= 1 and claim_idle_ms >= 0; got "
                f"{max_pending}, {dead_letter_after} and {claim_idle_ms}."
            )
        self._shared = _shared or _Shared(
            max_pending=max_pending,
            claim_idle_s=claim_idle_ms / 1000,
            dead_letter_after=dead_letter_after,
            max_remembered=max_remembered,
        )
        self.name = consumer
        self.stats = QueueStats()
        self._closed = False

    def consumer(self, name: str) -> MemoryQueue:
        """Another view of the same queue, acting as consumer ``name``."""
        return MemoryQueue(consumer=name, _shared=self._shared)

    @property
    def dead_letters(self) -> list[Group]:
        """Groups that were delivered ``dead_letter_after`` times without an ack."""
        return self._shared.dead_letters

    async def backlog(self) -> int:
        """Undelivered plus unacknowledged groups (what back-pressure bounds)."""
        return self._shared.backlog()

    async def put(self, group: Group) -> None:
        """Publish ``group``; waits while the backlog is at ``max_pending``."""
        self._check_open()
        shared = self._shared
        async with shared.condition():
            if shared.backlog() >= shared.max_pending:
                self.stats.put_waits += 1
                await shared.condition().wait_for(lambda: shared.backlog() < shared.max_pending)
            shared.undelivered.append(_Entry(next(shared.seq), group))
            self.stats.put += 1
            shared.condition().notify_all()

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        """Up to ``count`` deliveries: groups held too long by others first, then new ones.

        Waits until at least one group is available, or returns ``[]`` after ``timeout_s``
        (``None`` waits indefinitely; ``0`` never waits).
        """
        self._check_open()
        shared = self._shared
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        async with shared.condition():
            while True:
                out = self._take(count)
                if out:
                    return out
                wait_s = shared.claim_idle_s or None  # wake to take over idle deliveries
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return []
                    wait_s = remaining if wait_s is None else min(wait_s, remaining)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(shared.condition().wait(), wait_s)

    async def ack(self, deliveries: Sequence[Delivery]) -> None:
        """Mark the deliveries used: they are never delivered again, and their uids are remembered."""
        shared = self._shared
        async with shared.condition():
            for delivery in deliveries:
                entry = shared.pending.pop(delivery.delivery_id, None)
                self._remember(delivery.group.uid)
                if entry is not None:
                    self.stats.acked += 1
            shared.condition().notify_all()

    async def aclose(self) -> None:
        """Close this consumer; its unacked deliveries go back to the front of the queue."""
        if self._closed:
            return
        self._closed = True
        shared = self._shared
        async with shared.condition():
            mine = sorted((e for e in shared.pending.values() if e.owner == self.name), key=lambda e: e.seq)
            for entry in mine:
                del shared.pending[str(entry.seq)]
                entry.owner = None
            shared.undelivered.extendleft(reversed(mine))
            shared.condition().notify_all()

    # -- internals (called with the condition held) -------------------------------------------

    def _take(self, count: int) -> list[Delivery]:
        shared = self._shared
        now = time.monotonic()
        held = {e.group.uid for e in shared.pending.values() if e.owner == self.name}
        stale = [
            e
            for e in shared.pending.values()
            if e.owner != self.name and now - e.delivered_at >= shared.claim_idle_s
        ]
        out: list[Delivery] = []
        for entry in sorted(stale, key=lambda e: e.seq):
            if len(out) >= count:
                break
            del shared.pending[str(entry.seq)]
            self.stats.claimed += 1
            self._deliver(entry, now, held, out)
        while shared.undelivered and len(out) < count:
            self._deliver(shared.undelivered.popleft(), now, held, out)
        if len(out) < count or stale:
            shared.condition().notify_all()  # room may have been made (dead letters, duplicates)
        return out

    def _deliver(self, entry: _Entry, now: float, held: set[str], out: list[Delivery]) -> None:
        shared = self._shared
        uid = entry.group.uid
        if uid in shared.consumed or uid in held:
            self.stats.duplicates_skipped += 1
            return
        entry.times_delivered += 1
        if entry.times_delivered > shared.dead_letter_after:
            shared.dead_letters.append(entry.group)
            self.stats.dead_lettered += 1
            return
        entry.owner, entry.delivered_at = self.name, now
        shared.pending[str(entry.seq)] = entry
        held.add(uid)
        self.stats.delivered += 1
        if entry.times_delivered > 1:
            self.stats.redelivered += 1
        out.append(Delivery(entry.group, str(entry.seq), entry.times_delivered))

    def _remember(self, uid: str) -> None:
        consumed = self._shared.consumed
        consumed[uid] = None
        consumed.move_to_end(uid)
        while len(consumed) > self._shared.max_remembered:
            consumed.popitem(last=False)

    def _check_open(self) -> None:
        if self._closed:
            raise QueueError(
                f"Queue consumer {self.name!r} is closed; create another with queue.consumer(name)."
            )
