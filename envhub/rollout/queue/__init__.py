"""Finished-group queues (in-process and Redis Streams) and the rollout journal.

See :mod:`envhub.rollout.queue.base` for the queue contract, :mod:`~envhub.rollout.queue.memory`
and :mod:`~envhub.rollout.queue.redis` for the backends, :mod:`~envhub.rollout.queue.journal`
for resuming rollout jobs after a crash, :mod:`~envhub.rollout.queue.codec` for payloads (and
the trainer's columnar decode), and :mod:`~envhub.rollout.queue.settings` for ``ENVHUB_QUEUE_*``.
Importing this package does not import redis-py; import the Redis classes from their modules.
"""

from envhub.rollout.queue.base import Delivery, GroupQueue, GroupWriter
from envhub.rollout.queue.codec import (
    GroupColumns,
    decode_columns,
    decode_group,
    decode_step,
    encode_group,
    encode_step,
)
from envhub.rollout.queue.journal import (
    JobRecord,
    MemoryJournal,
    OpenGroup,
    OpenMember,
    RolloutJournal,
    group_uid,
)
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.settings import QueueSettings
from envhub.rollout.queue.stats import QueueStats

__all__ = [
    "Delivery",
    "GroupColumns",
    "GroupQueue",
    "GroupWriter",
    "JobRecord",
    "MemoryJournal",
    "MemoryQueue",
    "OpenGroup",
    "OpenMember",
    "QueueSettings",
    "QueueStats",
    "RolloutJournal",
    "decode_columns",
    "decode_group",
    "decode_step",
    "encode_group",
    "encode_step",
    "group_uid",
]
