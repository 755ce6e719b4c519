"""tau-bench's retail and airline customer-service domains.

Registered as ``envhub/TauRetail-v0`` and ``envhub/TauAirline-v0``.

Light on purpose: importing this package loads no data. The env classes live in
:mod:`envhub.envs.tau.env`, the data loader in :mod:`envhub.envs.tau.data`, the reward and
``pass_hat_k`` in :mod:`envhub.envs.tau.reward`, the user simulators in
:mod:`envhub.envs.tau.users`.
"""

from envhub.envs.tau.data import data_status
from envhub.envs.tau.env import TauAirlineEnv, TauEnv, TauRetailEnv
from envhub.envs.tau.policy import GoldPolicy
from envhub.envs.tau.reward import pass_hat_k
from envhub.envs.tau.users import LLMUser, RuleBasedUser, ScriptedUser, UserSimulator

__all__ = [
    "GoldPolicy",
    "LLMUser",
    "RuleBasedUser",
    "ScriptedUser",
    "TauAirlineEnv",
    "TauEnv",
    "TauRetailEnv",
    "UserSimulator",
    "data_status",
    "pass_hat_k",
]
