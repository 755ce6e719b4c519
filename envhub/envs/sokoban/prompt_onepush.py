"""The short prompt of one-push Sokoban (``envhub/SokobanOnePush-v0``, the CPU learning task).

The legend, the goal and the room, then the cue; no ``<think>``/``<action>`` instructions: the
task is learnt from a randomly initialised model, whose one-token reply is read by its first
letter (:func:`envhub.envs.sokoban.projection.project_initial`). With verl-agent's full prompt
the room is a sixth of 360 tokens and every iteration three times slower (``docs/training.md``).
"""

from __future__ import annotations

__all__ = ["FIRST_STEP", "HISTORY_LENGTH", "MEMORY_STYLE", "WITH_HISTORY"]

MEMORY_STYLE = "step"
HISTORY_LENGTH = 0

FIRST_STEP = "Sokoban: push the box (X) onto the target (O); P is you.\n{observation}\nYour move:"
# One-push rooms end after one step; with a longer limit, later steps see the same prompt.
WITH_HISTORY = FIRST_STEP
