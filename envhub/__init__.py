"""envhub: Gymnasium environments for LLM agents, an HTTP step API, rollouts and training.

Importing envhub registers every env id with gymnasium (strings only; no env is imported)::

    import gymnasium
    import envhub

    env = gymnasium.make("envhub/TimeSeries-v0")
"""

from envhub.core import (
    AgentEnv,
    ContractViolation,
    DataNotFoundError,
    EnvhubError,
    Group,
    Step,
    StepBatch,
    Trajectory,
    UnknownEnvError,
    UnknownTaskError,
    check_env,
)
from envhub.envs import list_envs, make, register_all

__version__ = "0.1.0"

register_all()

__all__ = [
    "AgentEnv",
    "ContractViolation",
    "DataNotFoundError",
    "EnvhubError",
    "Group",
    "Step",
    "StepBatch",
    "Trajectory",
    "UnknownEnvError",
    "UnknownTaskError",
    "__version__",
    "check_env",
    "list_envs",
    "make",
    "register_all",
]
