"""Which tasks each iteration trains on: the split, shuffled once per epoch, B at a time.

Deterministic from the seed and resumable from a position, so a resumed run trains on the
tasks the interrupted one would have (verl's dataloader: shuffled epochs of the train set).
Group slots are numbered across the whole run, so every group id is unique.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from envhub.core.errors import ConfigurationError
from envhub.rollout.engine import GroupTask

__all__ = ["TaskSchedule"]


class TaskSchedule:
    """Cycle through ``task_ids`` in shuffled epochs.

    Args:
        task_ids: the split's tasks.
        seed: shuffling seed; group reset seeds derive from it too.
        position: tasks already handed out (restored from a checkpoint).
    """

    def __init__(self, task_ids: Sequence[str], *, seed: int, position: int = 0) -> None:
        if not task_ids:
            raise ConfigurationError("The training split has no tasks.")
        self.task_ids = list(task_ids)
        self.seed = seed
        self.position = position

    def _order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch]).permutation(len(self.task_ids))

    def take(self, count: int) -> list[GroupTask]:
        """The next ``count`` groups; slot = global position, reset seed = seed + slot."""
        out = []
        for _ in range(count):
            epoch, offset = divmod(self.position, len(self.task_ids))
            task = self.task_ids[int(self._order(epoch)[offset])]
            out.append(GroupTask(slot=self.position, task_id=task, seed=self.seed + self.position))
            self.position += 1
        return out
