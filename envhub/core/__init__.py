"""The envhub contract: the env base class, text spaces, errors, records and env specs.

The HTTP wire models, which the server and the client both import, are in
:mod:`envhub.core.wire`.
"""

from envhub.core.checker import ContractViolation, check_env
from envhub.core.env import INFO_KEYS, AgentEnv, Outcome
from envhub.core.errors import (
    ConfigurationError,
    DataNotFoundError,
    DependencyMissingError,
    EnvhubError,
    ResetNeededError,
    UnknownEnvError,
    UnknownTaskError,
)
from envhub.core.records import Group, Step, StepBatch, TokenSequence, Trajectory, canonical_anchor
from envhub.core.registry import DataStatus, EnvSpec, load_entry_point, register_specs
from envhub.core.spaces import UnicodeText
from envhub.core.tasks import NumberedTaskIds

__all__ = [
    "INFO_KEYS",
    "AgentEnv",
    "ConfigurationError",
    "ContractViolation",
    "DataNotFoundError",
    "DataStatus",
    "DependencyMissingError",
    "EnvSpec",
    "EnvhubError",
    "Group",
    "NumberedTaskIds",
    "Outcome",
    "ResetNeededError",
    "Step",
    "StepBatch",
    "TokenSequence",
    "Trajectory",
    "UnicodeText",
    "UnknownEnvError",
    "UnknownTaskError",
    "canonical_anchor",
    "check_env",
    "load_entry_point",
    "register_specs",
]
