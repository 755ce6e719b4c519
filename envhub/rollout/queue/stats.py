"""Counters every queue backend keeps (for ``/metrics`` and for tests)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["QueueStats"]


@dataclass
class QueueStats:
    """What one queue object did since it was created.

    Attributes:
        put: groups published.
        put_waits: puts that had to wait for room (back-pressure engaged), counted once per put.
        delivered: deliveries returned by ``get`` (first deliveries and redeliveries).
        redelivered: deliveries returned with ``times_delivered > 1``.
        claimed: deliveries taken over from another consumer that sat on them past the idle limit.
        acked: deliveries acknowledged.
        duplicates_skipped: deliveries of a group uid already consumed (or already held), acked and
            dropped instead of being returned a second time.
        dead_lettered: entries moved to the dead-letter store (delivered too often, or undecodable).
        filtered_out: entries of other envs or runs than this consumer reads (acked for its group).
        claims_refused: lapsed-looking entries whose holder's lease was still alive (given back).
        leases_lost: held deliveries whose lease lapsed before it was renewed (another consumer
            may have taken them: the holder was stalled for longer than the lease).
    """

    put: int = 0
    put_waits: int = 0
    delivered: int = 0
    redelivered: int = 0
    claimed: int = 0
    acked: int = 0
    duplicates_skipped: int = 0
    dead_lettered: int = 0
    filtered_out: int = 0
    claims_refused: int = 0
    leases_lost: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
