"""Small envs the server tests serve through ``module:Class`` entry points.

``CounterEnv`` echoes the action and counts steps (a trivial, deterministic text env).
``CrashyEnv`` is a counter whose actions can misbehave on purpose: ``crash`` kills the worker
process (``os._exit``), ``sleep:<s>`` blocks for ``s`` seconds (step timeouts), ``raise``
raises (``EXECUTION_ERROR``) and ``raise-odd-detail`` raises an envhub error whose detail is not JSON.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

from envhub.core.env import AgentEnv, Outcome
from envhub.core.errors import ConfigurationError

__all__ = ["CounterEnv", "CrashyEnv"]


class CounterEnv(AgentEnv):
    """Echo the action back and count steps; ``stop`` ends the episode with reward 1.

    Tasks are ``t0`` .. ``t9`` (train) and ``u0`` .. ``u4`` (test); the task id and the episode's
    first random number (from ``self.np_random``) appear in the first observation, so seeds matter.
    """

    splits = ("train", "test")
    default_split = "train"

    def __init__(self, *, render_mode: str | None = None, prefix: str = "") -> None:
        super().__init__(render_mode=render_mode)
        self._prefix = prefix
        self._count = 0

    def _task_ids(self, split: str) -> Sequence[str]:
        return [f"t{i}" for i in range(10)] if split == "train" else [f"u{i}" for i in range(5)]

    def _reset_task(self, task_id: str) -> Outcome:
        self._count = 0
        draw = int(self.np_random.integers(1_000_000))
        return Outcome(observation=f"{self._prefix}task {task_id} draw {draw}", anchor=f"{task_id}:0")

    def _step(self, action: str) -> Outcome:
        self._count += 1
        done = action == "stop"
        return Outcome(
            observation=f"{self._prefix}echo {action} #{self._count}",
            anchor=f"{self.task_id}:{self._count}",
            reward=1.0 if done else 0.0,
            terminated=done,
            won=done,
        )


class CrashyEnv(CounterEnv):
    """A counter with actions that crash the worker, sleep, or raise (see the module docstring)."""

    def _step(self, action: str) -> Outcome:
        if action == "crash":
            os._exit(1)
        if action.startswith("sleep:"):
            time.sleep(float(action.partition(":")[2]))
        if action == "raise":
            raise RuntimeError("CrashyEnv was asked to raise")
        if action == "raise-odd-detail":
            # An envhub error whose detail JSON cannot hold as is (a set, a lock).
            raise ConfigurationError("CrashyEnv odd detail", tags={"a"}, lock=threading.Lock())
        return super()._step(action)
