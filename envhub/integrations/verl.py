"""verl 0.9: envhub episodes as a verl ``AgentLoop`` (``pip install 'envhub-rl[verl]'``, verl 0.9.1).

verl's agent-loop rollout (``actor_rollout_ref.rollout.mode=async``) runs one
``AgentLoopBase.run()`` per dataset row and trains on what it returns: one sample per
trajectory, ``prompt_ids`` then ``response_ids`` with a ``response_mask`` that is 1 on sampled
tokens and 0 on everything else spliced in. :class:`EnvhubAgentLoop` plays one envhub episode
that way, in process or against an ``envhub serve`` server:

1. it resets the env and renders the family's first-step prompt with verl's own Continuous
   Token builder (``ct_build_initial_tokens``);
2. each turn it samples through verl's ``server_manager.generate`` (token ids in, token ids and
   logprobs out), appends the sampled ids verbatim (``ct_merge_assistant_token``), turns the
   decoded text into an action with the env package's projection rule and steps the env;
3. the env's reply goes in as a user message whose tokens get mask 0 (``ct_merge_context_msg``);
4. at the end, or when the response budget (``rollout.response_length``) is spent, it returns
   an ``AgentLoopOutput`` whose ``reward_score`` is the episode return (verl puts it on the
   last response token as ``rm_scores``) and whose ``extra_fields`` carry the per-step rewards,
   anchors, validity flags and ``won``.

**One sample per trajectory.** A verl AgentLoop yields one training sample per episode, with the
return on its last token, so it gives GRPO-style (episode-level) advantages. GiGPO's and
HGPO's step-level groups need one row per step: for those, train with envhub's own trainer
(``envhub-train --algo gigpo``) or through verl-agent with
:mod:`envhub.integrations.verl_agent`. The per-step anchors and rewards in ``extra_fields`` are
there for analysis and custom advantage code, not used by verl itself.

Using it in a verl run: point verl at the loop with a config file and name it in the data.

.. code-block:: yaml

    # agent_loops.yaml, passed as actor_rollout_ref.rollout.agent.agent_loop_config_path
    - name: envhub_agent
      _target_: envhub.integrations.verl.EnvhubAgentLoop
      env_id: envhub/Sokoban-v0
      base_url: http://127.0.0.1:8000     # omit to play in process

and write the training rows with :func:`episode_rows` (each row names ``agent_name:
envhub_agent`` and its episode in ``extra_info``). :func:`write_agent_loop_config` writes the
YAML. ``docs/integrations/verl.md`` has a runnable example.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.integrations._episode import TextEpisode, plain_mapping

try:
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
    from verl.workers.rollout.llm_server import LLMServerClient
    from verl.workers.rollout.replica import TokenOutput
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissingError("verl", extra="verl") from exc

__all__ = [
    "AGENT_NAME",
    "EnvhubAgentLoop",
    "PolicyServerClient",
    "episode_batch",
    "episode_rows",
    "write_agent_loop_config",
]

#: The name :class:`EnvhubAgentLoop` is registered under (the rows' ``agent_name``).
AGENT_NAME = "envhub_agent"


@register(AGENT_NAME)
class EnvhubAgentLoop(AgentLoopBase):  # type: ignore[misc]  # verl ships no type information
    """One envhub episode per verl sample (see the module docstring).

    verl builds one instance per sample with ``hydra.utils.instantiate``; the keyword arguments
    below come from the agent-loop config entry and apply to every row, and a row's
    ``extra_info`` may override ``env_id`` and pick the episode with ``task_id``, ``seed`` and
    ``split``.

    Args:
        env_id: the envhub env (id or short name).
        base_url: play on this envhub server instead of in process.
        token: bearer token for that server.
        env_kwargs: keyword arguments for the env's constructor.
        projection: projection rule for the model's text (default: the env package's rule;
            ``"none"`` sends the text as it is).
        max_turns: most model turns per episode (default: the env's step limit).
        *args, **kwargs: verl's own (trainer config, server manager, tokenizer, ...).
    """

    def __init__(
        self,
        *args: Any,
        env_id: str | None = None,
        base_url: str | None = None,
        token: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        projection: str | None = None,
        max_turns: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.env_id = env_id
        self.base_url = base_url
        self.token = token
        self.env_kwargs = plain_mapping(env_kwargs)
        self.projection = projection
        self.max_turns = max_turns
        self.response_length: int = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play one episode; its token sequence, mask, logprobs and return.

        Args:
            sampling_params: verl's sampling parameters, passed to ``server_manager.generate``.
            **kwargs: the dataset row (``raw_prompt``: its system messages go before the env's
                first prompt, the rest is ignored; ``extra_info``: ``env_id``, ``task_id``,
                ``seed``, ``split``).

        Raises:
            ConfigurationError: no env id in the config or the row.
        """
        row = plain_mapping(kwargs.get("extra_info"))
        env_id = row.get("env_id") or self.env_id
        if not env_id:
            raise ConfigurationError(
                "EnvhubAgentLoop needs an env: set env_id in the agent-loop config entry or in the "
                "row's extra_info (episode_rows(env_id, ...) writes it)."
            )
        seed = row.get("seed")
        episode = await asyncio.to_thread(
            TextEpisode,
            str(env_id),
            base_url=self.base_url,
            token=self.token,
            env_kwargs=self.env_kwargs,
            projection=self.projection,
        )
        try:
            return await self._play(episode, sampling_params, kwargs.get("raw_prompt"), row, seed)
        finally:
            await asyncio.to_thread(episode.close)

    async def _play(
        self,
        episode: TextEpisode,
        sampling_params: dict[str, Any],
        raw_prompt: Any,
        row: dict[str, Any],
        seed: Any,
    ) -> AgentLoopOutput:
        first, start_meta = await asyncio.to_thread(
            episode.start,
            seed=None if seed is None else int(seed),
            task_id=row.get("task_id"),
            split=row.get("split"),
        )
        # The row's system messages go first; its other messages only name the episode (verl's
        # dataset needs a non-empty prompt) and are not shown to the model.
        system = [
            dict(m) for m in (raw_prompt if raw_prompt is not None else ()) if m.get("role") == "system"
        ]
        messages: list[dict[str, Any]] = [*system, *first]
        token_ids: list[int] = await self.ct_build_initial_tokens(messages)
        response_mask: list[int] = []
        logprobs: list[float] | None = None
        request_id = uuid.uuid4().hex  # one id per episode: sticky routing for the prefix cache
        timings = {"generate_sequences": 0.0, "tool_calls": 0.0}
        steps: list[dict[str, Any]] = []
        cut = False
        replies = 0  # env replies spliced in as user messages
        max_turns = min(self.max_turns or episode.max_turns, episode.max_turns)
        for turn in range(max_turns):
            started = time.perf_counter()
            output: TokenOutput = await self.server_manager.generate(
                request_id=request_id, prompt_ids=token_ids, sampling_params=sampling_params
            )
            timings["generate_sequences"] += time.perf_counter() - started
            if logprobs is None and output.log_probs:
                logprobs = [0.0] * len(response_mask)
            merged, response_mask, aligned = await self.ct_merge_assistant_token(
                token_ids,
                output.token_ids,
                response_mask,
                logprobs,
                assistant_logprobs=output.log_probs or None,
            )
            token_ids, logprobs = merged.token_ids, aligned if logprobs is not None else None
            text = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            messages.append({"role": "assistant", "content": text})
            if len(response_mask) >= self.response_length:
                cut = True  # verl drops tokens past the budget; an action it cannot train on is not played
                break
            started = time.perf_counter()
            step = await asyncio.to_thread(episode.step, text)
            timings["tool_calls"] += time.perf_counter() - started
            steps.append({"reward": step.reward, **step.metadata})
            if step.done or step.message is None or turn == max_turns - 1:
                break  # no env reply after the last turn: nothing would be sampled after it
            previous = list(messages)
            messages.append(step.message)
            merged, mask, aligned = await self.ct_merge_context_msg(
                previous, messages, token_ids, response_mask, logprobs
            )
            if len(mask) >= self.response_length:
                cut = True
                break
            token_ids, response_mask = merged.token_ids, mask
            logprobs = aligned if logprobs is not None else None
            replies += 1
        generated = sum(1 for m in messages if m["role"] == "assistant")
        # verl counts turns as its own loops do: the first prompt, each model turn, each reply
        return self._output(
            token_ids,
            response_mask,
            logprobs,
            episode,
            steps,
            start_meta,
            cut,
            timings,
            1 + generated + replies,
        )

    def _output(
        self,
        token_ids: list[int],
        response_mask: list[int],
        logprobs: list[float] | None,
        episode: TextEpisode,
        steps: list[dict[str, Any]],
        start_meta: dict[str, Any],
        cut: bool,
        timings: dict[str, float],
        num_turns: int,
    ) -> AgentLoopOutput:
        size = len(response_mask)
        prompt_ids = token_ids[: len(token_ids) - size]
        response_ids = token_ids[len(token_ids) - size :]
        budget = self.response_length
        rewards = [float(s["reward"]) for s in steps]
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[:budget],
            response_mask=response_mask[:budget],
            response_logprobs=logprobs[:budget] if logprobs else None,
            reward_score=episode.episode_return,
            num_turns=num_turns,
            metrics=timings,
            extra_fields={
                "env_id": episode.setup.env_id,
                "task_id": start_meta.get("task_id"),
                "env_return": episode.episode_return,
                "env_won": episode.won,
                "env_steps": len(steps),
                "env_truncated_by_length": cut,
                "step_rewards": rewards,
                "anchors": [start_meta.get("anchor"), *(s.get("anchor") for s in steps)],
                "actions": [s.get("action") for s in steps],
                "actions_valid": [bool(s.get("is_action_valid")) for s in steps],
                # the keys verl's own loops always set, so batches can mix agent loops
                "turn_scores": rewards,
                "tool_rewards": [],
            },
        )


class PolicyServerClient(LLMServerClient):  # type: ignore[misc]  # verl ships no type information
    """verl's server-manager interface over an envhub policy backend.

    verl's own ``LLMServerClient`` routes ``generate`` through a Ray load balancer to vLLM or
    SGLang replicas that verl starts on GPUs. This client answers the same call from any
    :class:`envhub.policy.base.PolicyBackend` instead: an OpenAI-compatible server
    (:class:`~envhub.policy.openai_http.OpenAIBackend`, e.g. a vLLM you started yourself) or a
    model in process (:class:`~envhub.policy.transformers_backend.TransformersBackend`). Use it
    to run verl agent loops outside a verl training job (evaluation, debugging, CPU tests).

    Args:
        backend: the policy backend; it receives the prompt ids as given (never re-rendered).
        max_tokens: tokens per turn when ``sampling_params`` has no ``max_tokens``.
        config: the trainer config verl passes to its clients (may be None).
    """

    def __init__(self, backend: Any, *, max_tokens: int = 256, config: Any = None) -> None:
        super().__init__(config, load_balancer_handle=None)
        self.backend = backend
        self.max_tokens = max_tokens

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any
    ) -> TokenOutput:
        """Sample one turn for ``prompt_ids`` with verl's sampling parameters."""
        from envhub.policy.base import Prompt, SamplingParams

        if kwargs.get("image_data") or kwargs.get("video_data") or kwargs.get("audio_data"):
            raise ConfigurationError(
                "PolicyServerClient takes text prompts only (no images, video or audio)."
            )
        top_k = sampling_params.get("top_k")
        sampling = SamplingParams(
            temperature=float(sampling_params.get("temperature", 1.0)),
            top_p=float(sampling_params.get("top_p", 1.0)),
            top_k=-1 if top_k is None else int(top_k),
            max_tokens=int(sampling_params.get("max_tokens") or self.max_tokens),
            seed=sampling_params.get("seed"),
        )
        [completion] = await self.backend.generate(
            [Prompt(messages=[], token_ids=list(prompt_ids), request_id=request_id)], sampling
        )
        return TokenOutput(
            token_ids=list(completion.token_ids or []),
            log_probs=list(completion.logprobs) if completion.logprobs is not None else None,
            stop_reason="completed",
            num_preempted=0,
        )


def episode_rows(
    env_id: str,
    count: int,
    *,
    task_ids: Sequence[str] | None = None,
    seed: int = 0,
    split: str | None = None,
    system_prompt: str | None = None,
) -> list[dict[str, Any]]:
    """verl dataset rows, one per episode (``pandas.DataFrame(rows).to_parquet(path)``).

    Each row has verl's columns: ``prompt`` (a user message naming the episode, which verl's
    ``RLHFDataset`` needs and the loop does not show the model, after an optional system
    message, which it does), ``data_source`` (the env id), ``agent_name`` (:data:`AGENT_NAME`),
    ``reward_model`` (unused: the env's return is the reward) and ``extra_info`` (``env_id``,
    ``seed``, ``task_id``, ``split``, ``index``).

    Args:
        env_id: the env the rows play.
        count: how many rows.
        task_ids: play these tasks in turn (cycled); else each row resets with ``seed + i``.
        seed: first reset seed (row i resets with ``seed + i``).
        split: reset option ``split`` (e.g. ``"test"`` for validation rows).
        system_prompt: a system message to put before the env's first prompt.
    """
    rows = []
    for i in range(count):
        info: dict[str, Any] = {"env_id": env_id, "index": i, "seed": seed + i}
        if task_ids:
            info["task_id"] = task_ids[i % len(task_ids)]
        if split is not None:
            info["split"] = split
        name = " ".join(f"{k}={info[k]}" for k in ("task_id", "seed", "split") if k in info)
        prompt = [{"role": "user", "content": f"envhub episode: {env_id} {name}"}]
        if system_prompt is not None:
            prompt.insert(0, {"role": "system", "content": system_prompt})
        rows.append(
            {
                "data_source": env_id,
                "prompt": prompt,
                "agent_name": AGENT_NAME,
                "reward_model": {"style": "env", "ground_truth": ""},
                "extra_info": info,
            }
        )
    return rows


def episode_batch(rows: Sequence[Mapping[str, Any]], *, validate: bool = False, global_step: int = 0) -> Any:
    """The ``DataProto`` verl's ``AgentLoopWorker.generate_sequences`` takes for ``rows``.

    In a verl training job, ``RLHFDataset`` builds this from the parquet file; this is for
    running the loop outside one (evaluation, debugging). ``raw_prompt`` is the rows' ``prompt``.
    """
    import numpy as np
    from verl.protocol import DataProto

    def column(values: list[Any]) -> Any:
        array = np.empty(len(values), dtype=object)  # one object per row, even for lists
        array[:] = values
        return array

    non_tensors = {
        "raw_prompt": column([list(row["prompt"]) for row in rows]),
        "agent_name": column([row["agent_name"] for row in rows]),
        "extra_info": column([dict(row["extra_info"]) for row in rows]),
        "data_source": column([row["data_source"] for row in rows]),
        "index": np.arange(len(rows)),
    }
    return DataProto.from_dict(
        non_tensors=non_tensors, meta_info={"global_steps": global_step, "validate": validate}
    )


def write_agent_loop_config(path: str | Path, **options: Any) -> Path:
    """Write verl's agent-loop config file naming :class:`EnvhubAgentLoop` with ``options``.

    Pass the file as ``actor_rollout_ref.rollout.agent.agent_loop_config_path``; ``options``
    are :class:`EnvhubAgentLoop`'s keyword arguments (``env_id``, ``base_url``, ...).
    """
    import yaml

    entry = {"name": AGENT_NAME, "_target_": f"{EnvhubAgentLoop.__module__}.{EnvhubAgentLoop.__qualname__}"}
    entry.update({k: v for k, v in options.items() if v is not None})
    target = Path(path)
    target.write_text(yaml.safe_dump([entry], sort_keys=False))
    return target
