"""The in-process finished-group queue (asyncio): the embedded default.

:class:`MemoryQueue` has the semantics of :class:`~envhub.rollout.queue.redis.RedisQueue`
without a server, so the same rollout and trainer code runs in one process:

* **back-pressure**: ``put`` waits while ``max_lag`` groups are not yet delivered; groups
  delivered and held unacked (a trainer waiting for its checkpoint) do not count, so holding
  them never stalls the producer; nothing is dropped;
* **at-least-once, one holder at a time**: a delivery stays pending until acked. An open
  consumer view renews its leases implicitly (it lives in this process), so nobody takes its
  deliveries over; one built with ``renew_leases=False`` keeps them only while it calls
  ``touch`` at least once per ``claim_idle_ms``. When a consumer is closed, its unacked
  deliveries go back to the front of the queue;
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
from envhub.rollout.queue.settings import DEFAULT_LEASE_MS, DEFAULT_MAX_LAG
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

    max_lag: int
    claim_idle_s: float
    dead_letter_after: int
    max_remembered: int
    undelivered: deque[_Entry] = field(default_factory=deque)
    pending: dict[str, _Entry] = field(default_factory=dict)
    consumed: OrderedDict[str, None] = field(default_factory=OrderedDict)
    dead_letters: list[Group] = field(default_factory=list)
    seq: itertools.count[int] = field(default_factory=itertools.count)
    renewing: set[str] = field(default_factory=set)  # open consumers whose leases never lapse
    # Created lazily: a Condition binds to the event loop that first uses it.
    changed: asyncio.Condition | None = None

    def condition(self) -> asyncio.Condition:
        if self.changed is None:
            self.changed = asyncio.Condition()
        return self.changed

    def backlog(self) -> int:
        return len(self.undelivered) + len(self.pending)

    def lag(self) -> int:
        return len(self.undelivered)


class MemoryQueue:
    """In-process :class:`~envhub.rollout.queue.base.GroupQueue`.

    Args:
        max_lag: the bound on undelivered groups; ``put`` waits at it.
        claim_idle_ms: a delivery held this long by a consumer that does not renew its leases
            (``renew_leases=False`` and no ``touch``) is delivered again to whoever asks next.
        dead_letter_after: an entry is delivered at most this many times, then dead-lettered.
        consumer: this view's consumer name.
        max_remembered: how many consumed uids are remembered for de-duplication (oldest forgotten).
        renew_leases: this view keeps its deliveries while it is open (default); off, it keeps
            them only while it calls :meth:`touch` often enough.
        max_pending: former name of ``max_lag``.

    Example::

        queue = MemoryQueue(max_lag=64)
        trainer = queue.consumer("trainer-0")
        await queue.put(group)
        [delivery] = await trainer.get(1)
        ...  # use delivery.group
        await trainer.ack([delivery])
    """

    def __init__(
        self,
        max_lag: int = DEFAULT_MAX_LAG,
        *,
        claim_idle_ms: int = DEFAULT_LEASE_MS,
        dead_letter_after: int = 10,
        consumer: str = "main",
        max_remembered: int = 1_000_000,
        renew_leases: bool = True,
        max_pending: int | None = None,
        _shared: _Shared | None = None,
    ) -> None:
        max_lag = max_pending if max_pending is not None else max_lag
        if max_lag < 1 or dead_letter_after < 1 or claim_idle_ms < 0:
            raise ConfigurationError(
                f"MemoryQueue needs max_lag >= 1, dead_letter_after >= 1 and claim_idle_ms >= 0; got "
                f"{max_lag}, {dead_letter_after} and {claim_idle_ms}."
            )
        self._shared = _shared or _Shared(
            max_lag=max_lag,
            claim_idle_s=claim_idle_ms / 1000,
            dead_letter_after=dead_letter_after,
            max_remembered=max_remembered,
        )
        self.name = consumer
        self.stats = QueueStats()
        self._closed = False
        if renew_leases:
            self._shared.renewing.add(consumer)

    def consumer(self, name: str, *, renew_leases: bool = True) -> MemoryQueue:
        """Another view of the same queue, acting as consumer ``name``."""
        return MemoryQueue(consumer=name, renew_leases=renew_leases, _shared=self._shared)

    @property
    def dead_letters(self) -> list[Group]:
        """Groups that were delivered ``dead_letter_after`` times without an ack."""
        return self._shared.dead_letters

    async def backlog(self) -> int:
        """Undelivered plus unacknowledged groups (what the queue retains)."""
        return self._shared.backlog()

    async def lag(self) -> int:
        """Groups not yet delivered (what back-pressure bounds)."""
        return self._shared.lag()

    async def raw_uids(self) -> list[str]:
        """The uid of every group the queue holds, pending then undelivered, duplicates included."""
        shared = self._shared
        entries = sorted([*shared.pending.values(), *shared.undelivered], key=lambda e: e.seq)
        return [e.group.uid for e in entries]

    async def put(self, group: Group) -> None:
        """Publish ``group``; waits while ``max_lag`` groups are undelivered."""
        self._check_open()
        shared = self._shared
        async with shared.condition():
            if shared.lag() >= shared.max_lag:
                self.stats.put_waits += 1
                await shared.condition().wait_for(lambda: shared.lag() < shared.max_lag)
            shared.undelivered.append(_Entry(next(shared.seq), group))
            self.stats.put += 1
            shared.condition().notify_all()

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        """Up to ``count`` deliveries: groups held too long by others first, then new ones.

        Waits until at least one group is available, or returns ``[]`` after ``timeout_s``
        (``None`` waits indefinitely; ``0`` never waits).
        """
        self._check_open()
        if count < 1:
            raise ConfigurationError(f"get(count) needs count >= 1; got {count}.")
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

    async def touch(self, deliveries: Sequence[Delivery]) -> None:
        """Reset the idle time of deliveries still being worked on, so nobody takes them over."""
        now = time.monotonic()
        for delivery in deliveries:
            entry = self._shared.pending.get(delivery.delivery_id)
            if entry is not None:
                entry.owner, entry.delivered_at = self.name, now

    async def aclose(self) -> None:
        """Close this consumer; its unacked deliveries go back to the front of the queue."""
        if self._closed:
            return
        self._closed = True
        shared = self._shared
        shared.renewing.discard(self.name)
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
            if e.owner != self.name
            and e.owner not in shared.renewing
            and now - e.delivered_at >= shared.claim_idle_s
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
        if out or stale or len(out) < count:
            shared.condition().notify_all()  # room was made (deliveries, dead letters, duplicates)
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
