"""The agent's side of the prompt for the tau-bench envs.

tau-bench's tool-calling agent uses the domain's policy document as its whole system prompt
and passes the tools through the API's ``tools=`` field. :func:`system_prompt` returns that
document unchanged. Models served without native tool calling (plain text in, text out) also
need the tool list and the call syntax in the prompt; :func:`text_tools_prompt` adds them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "FIRST_STEP",
    "HISTORY_LENGTH",
    "MEMORY_STYLE",
    "WITH_HISTORY",
    "domain_system_prompt",
    "lazy_system",
    "system_prompt",
    "text_tools_prompt",
]

_CALL_SYNTAX = """# Tools

You can call one tool per turn. To call a tool, answer with only:
<tool_call>{{"name": "<tool name>", "arguments": {{...}}}}</tool_call>
Any other answer is sent to the customer as a message. Tool results come back as the next
observation; the customer's replies come back the same way.

Available tools (OpenAI function schemas):
{tools}"""


def system_prompt(policy: str) -> str:
    """The system prompt of tau-bench's tool-calling agent: the policy document itself."""
    return policy


def text_tools_prompt(policy: str, tools: Sequence[dict[str, Any]]) -> str:
    """The policy followed by the tool schemas and the ``<tool_call>`` syntax, for text-only models.

    Args:
        policy: the domain policy document.
        tools: OpenAI function schemas (``env.tools``).
    """
    listing = "\n".join(json.dumps(tool["function"], separators=(",", ":")) for tool in tools)
    return policy.rstrip() + "\n\n" + _CALL_SYNTAX.format(tools=listing)


# -- the rollout engine's prompt templates (contract: envhub.agent.prompt) ---------------------
# The per-domain modules (prompt_retail, prompt_airline) add SYSTEM: the domain's policy with the
# tool list and the call syntax, so the engine (training, eval, envhub rollout) plays tau with
# any text model. The customer's messages and the tool results are the observations.

MEMORY_STYLE = "step"
#: The whole conversation by default (an episode has at most 30 turns).
HISTORY_LENGTH = 30

_ANSWER = "Answer with exactly one tool call or one message to the customer."

FIRST_STEP = "The customer writes: {observation}\n\n" + _ANSWER

WITH_HISTORY = (
    "The conversation so far, {step_count} turn(s) (the last {history_length} shown, each with what "
    "you saw and what you did):\n{history}\n"
    "Turn {current_step}. Latest: {observation}\n\n" + _ANSWER
)


def domain_system_prompt(domain: str) -> str:
    """The system prompt of ``domain`` for text models: its policy, its tools and the call syntax.

    Raises:
        DataNotFoundError: the tau-bench data is missing.
    """
    from envhub.envs.tau.airline_tools import AIRLINE_TOOLS
    from envhub.envs.tau.data import load_domain
    from envhub.envs.tau.retail_tools import RETAIL_TOOLS
    from envhub.envs.tau.toolkit import tool_schemas

    tools = {"retail": RETAIL_TOOLS, "airline": AIRLINE_TOOLS}[domain]
    return text_tools_prompt(load_domain(domain).policy, tool_schemas(tools))


def lazy_system(domain: str, module: str) -> Callable[[str], Any]:
    """A prompt module's ``__getattr__``: ``SYSTEM`` is ``domain``'s, read from the data when first
    asked for (importing the module needs no data)."""

    def __getattr__(name: str) -> Any:
        if name == "SYSTEM":
            return domain_system_prompt(domain)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
