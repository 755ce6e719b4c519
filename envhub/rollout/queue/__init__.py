"""Finished-group queues (in-process and Redis Streams).

See :mod:`envhub.rollout.queue.base` for the ports (:class:`GroupWriter`, what a producer needs,
and :class:`GroupQueue`, a writer that can be read), :mod:`~envhub.rollout.queue.memory` and
:mod:`~envhub.rollout.queue.redis` for the backends, :mod:`envhub.rollout.journal` for resuming
rollout jobs after a crash, :mod:`~envhub.rollout.queue.codec` for payloads (and
the trainer's columnar decode), and :mod:`~envhub.rollout.queue.settings` for ``ENVHUB_QUEUE_*``.
Importing this package does not import redis-py; import the Redis classes from their modules.
"""

from envhub.rollout.queue.base import Delivery, GroupQueue, GroupReader, GroupWriter
from envhub.rollout.queue.codec import (
    GroupColumns,
    decode_columns,
    decode_group,
    decode_step,
    encode_group,
    encode_step,
)
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.settings import QueueSettings
from envhub.rollout.queue.stats import QueueStats

__all__ = [
    "Delivery",
    "GroupColumns",
    "GroupQueue",
    "GroupReader",
    "GroupWriter",
    "MemoryQueue",
    "QueueSettings",
    "QueueStats",
    "decode_columns",
    "decode_group",
    "decode_step",
    "encode_group",
    "encode_step",
]
