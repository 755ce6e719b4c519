"""ALFWorld on the real ALFWorld/TextWorld engine (``envhub/ALFWorld-v0``).

* :mod:`~envhub.envs.alfworld.env`: :class:`ALFWorldEnv`, one engine per instance;
* :mod:`~envhub.envs.alfworld.data`: game discovery under ``ALFWORLD_DATA`` with ALFWorld's
  filters and verl-agent's split names, and the embedded default games;
* :mod:`~envhub.envs.alfworld.fixtures`: envhub's game generator
  (``envhub data alfworld generate``);
* :mod:`~envhub.envs.alfworld.policy`: the walkthrough-replaying demo policy.

Importing this package loads neither TextWorld nor ALFWorld.
"""

from envhub.envs.alfworld.data import SPLIT_DIRS, TASK_TYPES

__all__ = ["SPLIT_DIRS", "TASK_TYPES"]
