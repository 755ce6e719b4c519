"""The finished-group queue contract: producers publish whole groups, consumers ack after use.

Two backends implement it: :class:`~envhub.rollout.queue.memory.MemoryQueue` (in-process, the
embedded default) and :class:`~envhub.rollout.queue.redis.RedisQueue` (Redis Streams with a
consumer group). Delivery is at-least-once: a consumer acknowledges a delivery only after it has
used the group; a group delivered to a consumer that died is delivered again to another once the
holder's lease lapsed (live holders renew theirs in the background, so one group has at most one
holder at a time). Consumers de-duplicate by ``Group.uid``. ``put`` waits (back-pressure)
instead of dropping while too many groups are published but not yet delivered; groups a
consumer holds unacked (until its checkpoint) never count against that bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from envhub.core.records import Group

__all__ = ["Delivery", "GroupQueue"]


@dataclass(frozen=True)
class Delivery:
    """One delivered group and the id to acknowledge it with."""

    group: Group
    delivery_id: str
    times_delivered: int = 1


@runtime_checkable
class GroupQueue(Protocol):
    async def put(self, group: Group) -> None:
        """Publish one finished group; waits while ``max_lag`` groups are undelivered."""
        ...

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        """Up to ``count`` groups (fewer after ``timeout_s``); pending redeliveries come first."""
        ...

    async def ack(self, deliveries: Sequence[Delivery]) -> None:
        """The groups were used; they will not be delivered again."""
        ...

    async def aclose(self) -> None: ...
