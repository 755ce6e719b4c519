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
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from envhub.core.records import Group

if TYPE_CHECKING:
    from envhub.rollout.queue.codec import GroupColumns

__all__ = ["Delivery", "GroupQueue", "GroupReader", "GroupWriter"]


class Delivery:
    """One delivered group and the id to acknowledge it with.

    A queue that decodes to columns (``RedisQueue(columns=True)``, the trainer's) fills
    :attr:`columns` (:func:`~envhub.rollout.queue.codec.decode_columns`, no pydantic) and keeps
    the payload: :attr:`group` is then decoded only when something asks for the record
    (validation, saving groups for the viewer), once.
    """

    __slots__ = ("_group", "_payload", "columns", "delivery_id", "times_delivered", "uid")

    def __init__(
        self,
        group: Group | None,
        delivery_id: str,
        times_delivered: int = 1,
        *,
        payload: bytes | None = None,
        columns: GroupColumns | None = None,
    ) -> None:
        if group is None and (payload is None or columns is None):
            raise ValueError("a Delivery needs its group, or its payload and columns")
        self._group, self._payload = group, payload
        self.columns = columns
        self.delivery_id, self.times_delivered = delivery_id, times_delivered
        self.uid: str = group.uid if group is not None else columns.uid  # type: ignore[union-attr]

    @property
    def group(self) -> Group:
        """The group record (decoded from the payload on first use when delivered as columns)."""
        if self._group is None:
            from envhub.rollout.queue.codec import decode_group

            assert self._payload is not None
            self._group = decode_group(self._payload)
        return self._group

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Delivery) and (self.delivery_id, self.uid) == (other.delivery_id, other.uid)

    def __hash__(self) -> int:
        return hash((self.delivery_id, self.uid))

    def __repr__(self) -> str:
        return f"Delivery(uid={self.uid!r}, delivery_id={self.delivery_id!r}, times={self.times_delivered})"


@runtime_checkable
class GroupWriter(Protocol):
    """The producer's port: what a rollout engine needs of where finished groups go."""

    async def put(self, group: Group) -> None:
        """Publish one finished group; waits while ``max_lag`` groups are undelivered."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class GroupReader(Protocol):
    """The consumer's port: groups delivered, then acknowledged once used (the trainer's side)."""

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        """Up to ``count`` groups (fewer after ``timeout_s``); pending redeliveries come first."""
        ...

    async def ack(self, deliveries: Sequence[Delivery]) -> None:
        """The groups were used; they will not be delivered again."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class GroupQueue(GroupWriter, GroupReader, Protocol):
    """Both ports on one backend (:class:`~envhub.rollout.queue.memory.MemoryQueue`,
    :class:`~envhub.rollout.queue.redis.RedisQueue`): what producers put, consumers get and ack."""
