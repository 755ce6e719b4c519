"""One rollout end to end through a REAL vLLM server: the engine, a real env server, the tiny model.

``OpenAIBackend`` renders the chat template locally with the tiny model's tokenizer and sends token
ids to vLLM (``tests/conftest.py``'s session-wide server, shared with ``tests/policy``); the engine
plays one group of 4 on TimeSeries through ``envhub serve`` on loopback. What the trainer relies on
must hold for every Step: the ids are exactly what vLLM sampled, they decode to the recorded text,
every sampled token has one finite logprob, and the policy version is stamped.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.core.wire import ContextConfig, RolloutRequest, SamplingRequest
from envhub.policy.openai_http import OpenAIBackend
from envhub.policy.vllm_server import VllmServer
from envhub.rollout.engine import GroupTask, RolloutEngine
from envhub.rollout.envpool import RemoteEnvPool
from envhub.server import ServerSettings
from envhub.server.testing import RunningServer, serve_in_thread
from tests.rollout.conftest import CollectingQueue

pytestmark = [pytest.mark.vllm, pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

TS = "envhub/TimeSeries-v0"


@pytest.fixture(scope="module")
def ts_server() -> Iterator[RunningServer]:
    with serve_in_thread(ServerSettings(env_id=TS, workers=1)) as running:
        yield running


def test_a_group_of_4_through_vllm_records_exact_tokens(
    vllm_server: VllmServer, tiny_model_dir: Path, ts_server: RunningServer
) -> None:
    queue = CollectingQueue()
    backend = OpenAIBackend(
        vllm_server.base_url, vllm_server.model, tokenizer_path=tiny_model_dir, policy_version=3
    )
    envs = RemoteEnvPool([ts_server.base_url], env_id=TS)
    engine = RolloutEngine(
        envs=envs,
        backend=backend,
        config=RolloutRequest(
            group_size=4,
            sampling=SamplingRequest(temperature=1.0, max_tokens=16, seed=5),
            env_kwargs={"images": False},
            max_steps=3,
            context=ContextConfig(history_length=1),
            step_timeout_s=300,
        ),
        queue=queue,
        job_id="vllm",
    )

    async def main() -> None:
        try:
            await engine.run([GroupTask(0, "test-0", 0)])
        finally:
            await envs.aclose()
            await backend.aclose()

    asyncio.run(main())
    assert engine.report.published == 1 and engine.report.dropped == 0
    (group,) = queue.groups
    assert len(group.trajectories) == 4 and group.policy_version == 3
    steps = [s for t in group.trajectories for s in t.steps]
    assert len(steps) >= 4
    for step in steps:
        assert step.token_exact is True and step.policy_version == 3
        assert step.prompt_token_ids and step.response_token_ids
        assert backend.tokenizer is not None
        assert backend.tokenizer.decode(step.response_token_ids) == step.response_text
        assert step.response_logprobs is not None and len(step.response_logprobs) == len(
            step.response_token_ids
        )
        assert all(math.isfinite(lp) and lp <= 0.0 for lp in step.response_logprobs)
    # The tokens went through the engine's accounting too.
    assert engine.report.tokens == sum(
        len(s.prompt_token_ids or ()) + len(s.response_token_ids or ()) for s in steps
    )


def test_the_rollout_command_builds_trajectory_sequences_through_vllm(
    vllm_server: VllmServer, tiny_model_dir: Path, ts_server: RunningServer, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from envhub.cli import app
    from envhub.rollout.export import read_jsonl

    out = tmp_path / "groups.jsonl"
    args = ["rollout", "--env", TS, "--env-url", ts_server.base_url, "--task", "test-1", "--group-size", "2"]
    args += ["--max-steps", "2", "--max-tokens", "12", "--policy-url", vllm_server.base_url]
    args += ["--model", vllm_server.model, "--tokenizer", str(tiny_model_dir), "--trajectory-mode"]
    args += ["--env-kwarg", "images=false", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (group,) = list(read_jsonl(out))
    for trajectory in group.trajectories:
        assert trajectory.sequences, "trajectory mode built no token sequence"
        for sequence in trajectory.sequences:
            assert len(sequence.token_ids) == len(sequence.loss_mask) > sequence.prompt_length
            assert any(sequence.loss_mask) and all(math.isfinite(lp) for lp in sequence.logprobs)
