"""Shared pieces of the rollout tests."""

from __future__ import annotations

from collections.abc import Sequence

from envhub.core.records import Group
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
