"""The finished-group queue's settings (``ENVHUB_QUEUE_*``), read by the process that builds a queue.

The rollout service and the trainer each build one :class:`QueueSettings` in ``main`` (or take
one from their own settings) and pass its values to
:class:`~envhub.rollout.queue.redis.RedisQueue` / :class:`~envhub.rollout.queue.memory.MemoryQueue`.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "DEFAULT_LEASE_MS",
    "DEFAULT_MAX_LAG",
    "DEFAULT_MAX_UNACKED",
    "DEFAULT_RUN_LOCK_MS",
    "QueueSettings",
    "run_group",
]

#: ``put`` waits while this many groups are published but not yet delivered to the consumers.
DEFAULT_MAX_LAG = 1024
#: The most groups one consumer may hold delivered and unacked (a trainer: until its checkpoint).
DEFAULT_MAX_UNACKED = 4096
#: A holder's lease on a delivered group; renewed every third of it while the holder lives.
DEFAULT_LEASE_MS = 30_000
#: The TTL of a trainer's run lock (``envhub.train.lock``); its holder renews it every third.
DEFAULT_RUN_LOCK_MS = 30_000


def run_group(run: str) -> str:
    """The consumer group of a trainer run: ``trainers:<run>`` (``trainers`` for the unlabelled run).

    A trainer reads only its own run's entries (``runs={run}``) through its own group, so the
    entries it skips are acked for its group only and another run on the same stream still
    gets them. A producer labelling its entries ``run`` counts back-pressure on this group.
    """
    return f"trainers:{run}" if run else "trainers"


class QueueSettings(BaseSettings):
    """Bounds, leases and the trainer's run lock; every field is also ``ENVHUB_QUEUE_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="ENVHUB_QUEUE_", extra="ignore")

    max_lag: int = Field(
        default=DEFAULT_MAX_LAG,
        ge=1,
        description="Back-pressure: producers wait while this many groups are published but not yet "
        "delivered to the consumer group. Groups delivered and held unacked do not count.",
    )
    max_unacked: int = Field(
        default=DEFAULT_MAX_UNACKED,
        ge=1,
        description="The most groups one consumer may hold unacked (Redis keeps them for redelivery). "
        "A trainer holds checkpoint_every x groups per iteration; it checks this at start-up.",
    )
    lease_ms: int = Field(
        default=DEFAULT_LEASE_MS,
        ge=100,
        description="A holder's lease on a delivered group; a dead holder's groups go to another "
        "consumer once it lapsed. Live holders renew it in the background.",
    )
    run_lock_ms: int = Field(
        default=DEFAULT_RUN_LOCK_MS,
        ge=1000,
        description="The TTL of a trainer's lock on its run label (one live trainer per label); the "
        "holder renews it every third. A holder on another host that died frees it after this long; "
        "one on the same host, at once.",
    )
