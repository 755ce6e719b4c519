"""Run verl 0.9.1's own agent-loop worker over envhub episodes (executed in the verl venv).

``tests/integrations/test_verl.py`` runs this file with ``.venv-verl/bin/python`` (verl pins
transformers<5.11, so it cannot live in the test venv) and checks what it writes.

What runs is verl's: its trainer config (``ppo_trainer.yaml``, composed by Hydra), its
``AgentLoopWorker`` (which reads the agent-loop config file, looks the row's ``agent_name`` up
in its registry, builds :class:`EnvhubAgentLoop` with ``hydra.utils.instantiate``, and pads and
batches the outputs into a ``DataProto``), its Continuous Token builder and its
``AgentLoopOutput``. The one part that is not verl's is the server manager: verl's own routes
through a Ray load balancer to vLLM/SGLang replicas started on GPUs, so
:class:`PolicyServerClient` answers ``generate`` from the tiny model in process (real tokens and
sampling logprobs). Each call is recorded, so the test can check the mask and logprobs.

Usage: ``python verl_driver.py MODEL_DIR OUT.json OPTIONS_JSON``, where the options are
``loop`` (:class:`EnvhubAgentLoop`'s keyword arguments), ``count`` (rows), ``seed`` (first
reset seed), ``max_tokens`` (tokens per turn) and ``script`` (answers instead of sampling).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
import verl
from hydra import compose, initialize_config_dir
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.workers.rollout.replica import TokenOutput

from envhub.integrations.verl import PolicyServerClient, episode_batch, episode_rows, write_agent_loop_config
from envhub.policy.transformers_backend import TransformersBackend


class RecordingClient(PolicyServerClient):
    """PolicyServerClient that keeps every turn it sampled, per request id.

    With ``script``, turn k of each episode answers ``script[k]`` tokenised by the model's
    tokenizer (logprob 0) instead of sampling: real token ids for known moves.
    """

    calls: dict[str, list[dict[str, Any]]]
    script: list[str] | None = None

    async def generate(self, request_id: str, **kwargs: Any) -> Any:
        if self.script is None:
            output = await super().generate(request_id, **kwargs)
        else:
            turn = len(self.calls.get(request_id, []))
            ids = self.backend.tokenizer.encode(self.script[turn % len(self.script)])
            output = TokenOutput(token_ids=ids, log_probs=[0.0] * len(ids), stop_reason="completed")
        self.calls.setdefault(request_id, []).append(
            {
                "prompt_ids": list(kwargs["prompt_ids"]),
                "token_ids": output.token_ids,
                "log_probs": output.log_probs,
            }
        )
        return output


def trainer_config(model_dir: str, loops_path: Path) -> Any:
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(
            config_name="ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={model_dir}",
                "data.max_prompt_length=4096",
                "data.max_response_length=1536",
                "actor_rollout_ref.rollout.name=vllm",  # the backend verl would start; unused here
                "actor_rollout_ref.rollout.mode=async",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops_path}",
                "actor_rollout_ref.rollout.temperature=1.0",
                "actor_rollout_ref.rollout.calculate_log_probs=true",
            ],
        )


async def main(model_dir: str, out_path: str, options: dict[str, Any]) -> None:
    loop, count = options["loop"], int(options["count"])
    loops = write_agent_loop_config(Path(out_path).with_suffix(".loops.yaml"), **loop)
    config = trainer_config(model_dir, loops)
    backend = TransformersBackend(model_dir, max_batch=count)
    client = RecordingClient(backend, max_tokens=int(options["max_tokens"]), config=config)
    client.calls = {}
    client.script = options.get("script")
    worker = AgentLoopWorker(config, llm_client=client)

    batch = episode_batch(episode_rows(loop["env_id"], count, seed=int(options["seed"])), global_step=1)
    output = await worker.generate_sequences(batch)
    await backend.aclose()

    tensors = output.batch
    samples = []
    for i in range(count):
        extra = {k: _plain(v[i]) for k, v in output.non_tensor_batch.items() if k not in ("raw_prompt",)}
        samples.append(
            {
                "prompts": tensors["prompts"][i].tolist(),
                "responses": tensors["responses"][i].tolist(),
                "response_mask": tensors["response_mask"][i].tolist(),
                "attention_mask": tensors["attention_mask"][i].tolist(),
                "rollout_log_probs": tensors["rollout_log_probs"][i].tolist(),
                "rm_scores": tensors["rm_scores"][i].tolist(),
                "extra": extra,
            }
        )
    result = {
        "verl_version": verl.__version__,
        "torch": torch.__version__,
        "batch_keys": sorted(tensors.keys()),
        "non_tensor_keys": sorted(output.non_tensor_batch.keys()),
        "samples": samples,
        "calls": list(client.calls.values()),
    }
    Path(out_path).write_text(json.dumps(result))


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
