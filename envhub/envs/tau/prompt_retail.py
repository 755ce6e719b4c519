"""The prompt module of envhub/TauRetail-v0 (contract: :mod:`envhub.agent.prompt`): the templates of
:mod:`envhub.envs.tau.prompt`; ``SYSTEM`` is the retail policy with the tool list and the
``<tool_call>`` syntax, read from the data when first asked for.
"""

from envhub.envs.tau.prompt import FIRST_STEP, HISTORY_LENGTH, MEMORY_STYLE, WITH_HISTORY, lazy_system

__all__ = ["FIRST_STEP", "HISTORY_LENGTH", "MEMORY_STYLE", "SYSTEM", "WITH_HISTORY"]

SYSTEM: str
__getattr__ = lazy_system("retail", __name__)
