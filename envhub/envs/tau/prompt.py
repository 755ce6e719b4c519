"""The agent's side of the prompt for the tau-bench envs.

tau-bench's tool-calling agent uses the domain's policy document as its whole system prompt
and passes the tools through the API's ``tools=`` field. :func:`system_prompt` returns that
document unchanged. Models served without native tool calling (plain text in, text out) also
need the tool list and the call syntax in the prompt; :func:`text_tools_prompt` adds them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["system_prompt", "text_tools_prompt"]

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
