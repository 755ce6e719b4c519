"""The env the staleness tests train on: a few tasks take many turns, the rest one.

Trainer tests name it by entry point, ``tests.train.uneven_env:UnevenEnv``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from envhub.core.env import AgentEnv, Outcome

__all__ = ["LONG", "UnevenEnv", "episode_length"]

#: Turns of a long task (every fourth task, ``t3``, ``t7``, ...); the others end after one.
LONG = 24


def episode_length(task_id: str) -> int:
    """Turns until ``task_id`` ends, whatever the actions (without ``outlast``)."""
    return LONG if int(task_id[1:]) % 4 == 3 else 1


def _lines(path: Path | None) -> int:
    if path is None or not path.is_file():
        return 0
    return len(path.read_bytes().splitlines())


class UnevenEnv(AgentEnv):
    """Episodes whose length the task fixes: groups of long tasks finish versions after the others.

    ## Description
    A counter that ignores where the actions lead: task ``t<i>`` ends after
    :func:`episode_length` turns. With a policy that generates a few tokens per turn, a group
    of a long task takes about ``LONG`` times as long to play as one of a short task, so an
    asynchronous trainer gets groups of short tasks admitted after it first. With
    ``progress`` (a trainer's ``metrics.jsonl``, one line per iteration) and ``outlast`` = n, a
    long task also goes on until the trainer has finished n more iterations than when the
    episode began (instead of after ``LONG`` turns): it comes back at least n - 1 versions
    late, however fast or slow the machine.

    ## Action Space
    Any Unicode string.

    ## Observation Space
    ``"task t<i> turn <n>: say a word"``.

    ## Rewards
    On the last turn, 1.0 when the action has an even number of characters, else 0 (so group
    members differ and advantages are not all zero).

    ## Starting State
    Turn 0.

    ## Episode End
    After :func:`episode_length` turns; a long task with ``outlast``, once ``progress`` has
    ``outlast`` lines more than at reset (terminated). The run's ``rollout.max_steps``
    truncates it.

    ## Information
    ``anchor`` is ``"t<i>:<turn>"``; ``admissible_actions`` is None.

    ## Arguments
    ``progress`` (a file path or None) and ``outlast`` (int, default 0), as above. With them,
    ``turn_s`` (float, default 0.02) is how long a held turn waits (leaving the trainer the CPU)
    and ``linger_s`` (float, default 0) how long a held task goes on after ``progress`` grew by
    ``outlast`` lines: it spans whatever the trainer does right after writing that line (a
    weight push). With ``fail_long`` (bool, default False) a long task raises where it would
    end, so its group is lost (the rollout engine drops it; a trainer admits another in its place).
    ``envhub.make("tests.train.uneven_env:UnevenEnv")`` builds it.

    ## Version History
    * v0: first version.
    * v0: ``fail_long``, ``turn_s`` and ``linger_s`` added (their defaults keep every episode as before).
    """

    splits = ("train", "test")
    default_split = "train"

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        progress: str | None = None,
        outlast: int = 0,
        fail_long: bool = False,
        turn_s: float = 0.02,
        linger_s: float = 0.0,
    ) -> None:
        super().__init__(render_mode=render_mode)
        self._fail_long, self._turn_s, self._linger_s = fail_long, turn_s, linger_s
        self._released: float | None = None  # when progress grew enough (time.monotonic)
        self._progress = Path(progress) if progress else None
        self._outlast = outlast
        self._turn = 0
        self._length = 1
        self._until = 0

    def _task_ids(self, split: str) -> Sequence[str]:
        return [f"t{i}" for i in range(16)] if split == "train" else [f"t{i}" for i in range(16, 20)]

    def _reset_task(self, task_id: str) -> Outcome:
        self._turn, self._length = 0, episode_length(task_id)
        self._until = _lines(self._progress) + self._outlast if self._length > 1 and self._outlast else 0
        self._released = None
        return Outcome(observation=f"task {task_id} turn 0: say a word", anchor=f"{task_id}:0")

    def _step(self, action: str) -> Outcome:
        self._turn += 1
        if self._until:  # a long task held until the trainer is far enough
            if self._released is None and _lines(self._progress) >= self._until:
                self._released = time.monotonic()
            done = self._released is not None and time.monotonic() - self._released >= self._linger_s
            if not done:
                time.sleep(self._turn_s)  # waiting for the trainer: leave it the CPU
        else:
            done = self._turn >= self._length
        if done and self._fail_long and self._length > 1:
            raise RuntimeError(f"task {self.task_id} fails where it would end (fail_long)")
        return Outcome(
            observation=f"task {self.task_id} turn {self._turn}: say a word",
            anchor=f"{self.task_id}:{self._turn}",
            reward=float(done and len(action) % 2 == 0),
            terminated=done,
            won=done and len(action) % 2 == 0,
        )
