"""The agent prompt: tau-bench's policy document, plus tools for text-only models."""

from __future__ import annotations

from envhub.envs.tau.env import TauAirlineEnv
from envhub.envs.tau.prompt import system_prompt, text_tools_prompt


def test_system_prompt_is_the_policy_document_unchanged() -> None:
    env = TauAirlineEnv()
    assert system_prompt(env._domain.policy) == env.system_prompt
    assert env.system_prompt.startswith("# Airline Agent Policy")


def test_text_prompt_lists_every_tool_and_the_call_syntax() -> None:
    env = TauAirlineEnv()
    prompt = text_tools_prompt(env.system_prompt, env.tools)
    assert prompt.startswith(env.system_prompt.rstrip())
    assert "<tool_call>" in prompt
    assert all(f'"name":"{t["function"]["name"]}"' in prompt for t in env.tools)
