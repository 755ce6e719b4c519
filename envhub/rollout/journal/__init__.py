"""The rollout journal: what a rollout job needs to resume after its process died.

:class:`RolloutJournal` is the store's contract, with :class:`MemoryJournal` (in-process) and
:class:`RedisJournal` (on a :class:`~envhub.rollout.queue.redis.RedisQueue`'s connection);
:class:`EngineJournal` adapts a store to what the rollout engine and the service call
(:class:`~envhub.rollout.engine.JournalLike`), and reads in-flight groups back as
:class:`ResumePoint` rows. Importing this package does not import redis-py.
"""

from envhub.rollout.journal._engine import EngineJournal, ResumePoint
from envhub.rollout.journal._store import (
    PUBLISHED,
    JobRecord,
    MemoryJournal,
    OpenGroup,
    OpenMember,
    RedisJournal,
    RolloutJournal,
    group_uid,
)

__all__ = [
    "PUBLISHED",
    "EngineJournal",
    "JobRecord",
    "MemoryJournal",
    "OpenGroup",
    "OpenMember",
    "RedisJournal",
    "ResumePoint",
    "RolloutJournal",
    "group_uid",
]
