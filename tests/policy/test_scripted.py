"""The scripted policy backend: scripted text, injected latency, hangs and failures."""

from __future__ import annotations

import asyncio
import time

import pytest

from envhub.core.errors import ConfigurationError, PolicyUnavailableError
from envhub.core.policy import Policy
from envhub.policy import PolicyBackend, Prompt, SamplingParams
from envhub.policy.scripted import ScriptedBackend, heavy_tailed_latency, load_scripted, think_action


class Echo:
    """Answers the observation's first word, and counts its own steps."""

    def __init__(self, seed: int) -> None:
        self.seed, self.count = seed, 0

    def reset(self, observation: str, info: dict[str, object]) -> None:
        self.count = 0

    def act(self, observation: str, info: dict[str, object]) -> str:
        self.count += 1
        return f"{observation.split()[0]} {self.seed} {self.count}"


def prompt(member: str, index: int, step: int, observation: str = "look around") -> Prompt:
    meta = {"member": member, "member_index": index, "step_idx": step, "observation": observation, "info": {}}
    return Prompt(messages=[{"role": "user", "content": observation}], metadata=meta)


def test_scripted_backend_is_a_policy_backend_without_token_ids() -> None:
    backend = ScriptedBackend(lambda p: "hi", policy_version=3)
    assert isinstance(backend, PolicyBackend) and isinstance(Echo(0), Policy)
    [completion] = asyncio.run(backend.generate([prompt("a", 0, 0)], SamplingParams()))
    assert completion.text == "hi" and completion.policy_version == 3
    assert completion.token_ids is None and completion.token_exact is False


async def test_one_policy_per_member_reset_at_step_zero() -> None:
    backend = ScriptedBackend(make_policy=Echo)
    first = await backend.generate([prompt("a", 0, 0), prompt("b", 1, 0)], SamplingParams())
    second = await backend.generate([prompt("a", 0, 1), prompt("b", 1, 1)], SamplingParams())
    again = await backend.generate([prompt("a", 0, 0)], SamplingParams())
    assert [c.text for c in first] == [think_action("look 0 1"), think_action("look 1 1")]
    assert [c.text for c in second] == [think_action("look 0 2"), think_action("look 1 2")]
    assert again[0].text == think_action("look 0 1")  # a new episode starts a fresh policy


async def test_a_batch_waits_for_its_slowest_prompt() -> None:
    backend = ScriptedBackend(lambda p: "x", latency=lambda p: 0.2 if p.metadata["member_index"] else 0.0)
    started = time.perf_counter()
    done = await backend.generate([prompt("a", 0, 0), prompt("b", 1, 0)], SamplingParams())
    assert time.perf_counter() - started >= 0.2 and done[1].latency_s >= 0.2


async def test_a_hung_call_ends_only_by_cancellation_and_failures_raise() -> None:
    hung = ScriptedBackend(lambda p: "x", hang=lambda p: True)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(hung.generate([prompt("a", 0, 0)], SamplingParams()), 0.1)
    down = ScriptedBackend(lambda p: "x", fail=lambda p: PolicyUnavailableError("down", endpoint="x"))
    with pytest.raises(PolicyUnavailableError):
        await down.generate([prompt("a", 0, 0)], SamplingParams())


def test_heavy_tailed_latency_has_the_asked_median_and_a_tail() -> None:
    draw = heavy_tailed_latency(median_s=0.01, alpha=1.5, seed=1)
    values = sorted(draw(prompt("a", 0, 0)) for _ in range(4000))
    assert 0.008 < values[2000] < 0.012
    assert values[-1] > 10 * values[2000]


def test_load_scripted_accepts_policy_classes_and_functions_and_rejects_bad_specs() -> None:
    assert isinstance(
        load_scripted("scripted:envhub.envs.timeseries.policy:HeuristicPolicy"), ScriptedBackend
    )
    assert isinstance(load_scripted("scripted:envhub.policy.scripted:think_action"), ScriptedBackend)
    with pytest.raises(ConfigurationError, match="Cannot load scripted policy"):
        load_scripted("scripted:no_such_module:thing")
    with pytest.raises(ConfigurationError):
        ScriptedBackend()
