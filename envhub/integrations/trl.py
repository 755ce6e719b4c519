"""TRL: envhub episodes for ``GRPOTrainer`` (``pip install 'envhub-rl[trl]'``, TRL 1.16).

TRL 1.16 offers two experimental hooks (``shared/reference/round2_rollout_trainer.md`` §4), and
this module fills both:

* ``GRPOTrainer(rollout_func=EnvhubRolloutFunc(...))`` plays whole multi-turn envhub episodes
  with the trainer's own model. Each dataset prompt names an episode (:func:`episode_prompt`:
  a task id and a reset seed); TRL hands the function every prompt ``num_generations`` times
  in a row, so each block of identical prompts becomes one GRPO group with identical starts.
  The episodes are played by envhub's rollout driver (:func:`~envhub.rollout.driver.play`,
  which returns the groups in prompt order) in trajectory mode (the env family's prompt
  template and projection rule, a :class:`~envhub.rollout.sequences.SequenceBuilder` that never
  re-tokenises), in process or
  against an ``envhub serve`` server (``base_url``). Each episode comes back as one sequence:
  ``prompt_ids`` (the first prompt), ``completion_ids`` (every sampled turn followed by the
  env's reply), ``logprobs`` (the sampling logprobs; 0.0 on env tokens) and ``env_mask``
  (1 on sampled tokens, 0 on env tokens, so TRL leaves the env's text out of the loss). The
  episode return goes to the reward functions as ``env_reward``; :func:`env_reward` is the
  reward function that reads it.
* ``GRPOTrainer(environment_factory=search_environment_factory(...))`` for a tool-style env:
  :class:`SearchToolEnv` shows Search-QA as the tools ``search`` and ``answer`` (TRL turns the
  public methods into tools from their type hints and docstrings), ``reset(**row)`` returns the
  question and ``get_reward()`` the episode return. :func:`tau_environment_factory` does the
  same for tau-bench: :class:`TauRetailToolEnv` and :class:`TauAirlineToolEnv` have one method
  per domain tool (its name, parameters and description as the env declares them) plus
  ``respond``, the message to the customer, whose return value is the customer's reply.

``rollout_func`` is the fit for any env with a text prompt template (ALFWorld, WebShop,
Sokoban, Search-QA, TimeSeries); ``environment_factory`` only for envs whose actions are tool
calls. Example (``docs/integrations/trl.md`` has a runnable one)::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from envhub.integrations.trl import EnvhubRolloutFunc, env_reward, episode_dataset

    rollout = EnvhubRolloutFunc("envhub/Sokoban-v0", base_url="http://127.0.0.1:8000", max_steps=10)
    trainer = GRPOTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=env_reward,
                          train_dataset=episode_dataset(64), rollout_func=rollout,
                          args=GRPOConfig(num_generations=4, ...))
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from envhub.core.errors import ConfigurationError, DependencyMissingError, EnvhubError
from envhub.core.records import Group, Trajectory
from envhub.core.wire import ContextConfig, RolloutRequest, SamplingRequest, redact
from envhub.integrations._agent import agent_setup
from envhub.integrations._episode import open_env

try:
    import trl  # noqa: F401  # checked here so a missing extra fails at import, naming the extra
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissingError("trl", extra="trl") from exc

__all__ = [
    "EXTRA_KEYS",
    "EnvhubRolloutFunc",
    "SearchToolEnv",
    "TauAirlineToolEnv",
    "TauRetailToolEnv",
    "TauToolEnv",
    "TrlVllmBackend",
    "env_reward",
    "episode_dataset",
    "episode_prompt",
    "parse_episode_prompt",
    "search_environment_factory",
    "tau_environment_factory",
]

#: The keys :class:`EnvhubRolloutFunc` adds beside TRL's own (one entry per completion); TRL
#: passes them to every reward function as keyword arguments (``env_mask`` it consumes itself).
EXTRA_KEYS = ("env_reward", "env_won", "env_steps", "task_id")


# -- dataset rows --------------------------------------------------------------------------------


def episode_prompt(task_id: str | None = None, seed: int | None = None) -> str:
    """The dataset prompt that names one episode: ``{"seed": ..., "task_id": ...}`` as JSON.

    Args:
        task_id: the env task (None: the env draws one from the split with ``seed``).
        seed: the reset seed (None: :class:`EnvhubRolloutFunc` uses its ``seed`` plus the
            group's position in the batch).
    """
    return json.dumps({"seed": seed, "task_id": task_id}, sort_keys=True)


def parse_episode_prompt(prompt: Any) -> tuple[str | None, int | None]:
    """``(task_id, seed)`` of a prompt made by :func:`episode_prompt`.

    A conversational prompt (a list of messages) is read from its last message's content.

    Raises:
        ConfigurationError: the prompt is not such a JSON object.
    """
    text = prompt[-1].get("content") if isinstance(prompt, list) and prompt else prompt
    try:
        spec = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        spec = None
    if not isinstance(spec, dict) or not set(spec) <= {"task_id", "seed"}:
        raise ConfigurationError(
            f"EnvhubRolloutFunc reads the episode from each prompt, and {str(prompt)[:80]!r} does not "
            "name one; build the dataset with envhub.integrations.trl.episode_dataset(...) or "
            "episode_prompt(task_id=..., seed=...).",
        )
    seed = spec.get("seed")
    task_id = spec.get("task_id")
    return (None if task_id is None else str(task_id)), (None if seed is None else int(seed))


def episode_dataset(count: int, *, task_ids: Sequence[str] | None = None, seed: int = 0) -> Any:
    """A ``datasets.Dataset`` of ``count`` episode prompts (column ``prompt``).

    Args:
        count: rows.
        task_ids: row ``i`` plays ``task_ids[i % len(task_ids)]`` (None: the env draws the task
            from its split with the row's seed).
        seed: row ``i`` resets with seed ``seed + i``.
    """
    from datasets import Dataset  # TRL's own dependency

    tasks = list(task_ids or [])
    prompts = [episode_prompt(tasks[i % len(tasks)] if tasks else None, seed + i) for i in range(count)]
    return Dataset.from_dict({"prompt": prompts})


# -- rollout_func ----------------------------------------------------------------------------------


def env_reward(
    completions: Sequence[Any], env_reward: Sequence[float] | None = None, **_: Any
) -> list[float | None]:
    """The TRL reward function of :class:`EnvhubRolloutFunc`: each episode's return, unchanged.

    Args:
        completions: TRL's decoded completions (only their number is used).
        env_reward: the ``env_reward`` extra key of the rollout (one per completion).

    Raises:
        ConfigurationError: no ``env_reward`` (the trainer has no ``EnvhubRolloutFunc``).
    """
    if env_reward is None or len(env_reward) != len(completions):
        raise ConfigurationError(
            "env_reward needs the env_reward key that EnvhubRolloutFunc returns; pass "
            "rollout_func=EnvhubRolloutFunc(...) to GRPOTrainer.",
        )
    # list[float | None] is TRL's reward-function type (None: not applicable to a sample).
    out: list[float | None] = [float(r) for r in env_reward]
    return out


def _whole_or_keywords(name: str, spec: type[Any], whole: Any, keywords: dict[str, Any]) -> Any:
    """A spec given whole, or made of the keywords given (the others keep the spec's defaults).

    Raises:
        ConfigurationError: both forms given, or a keyword out of the spec's range.
    """
    given = {k: v for k, v in keywords.items() if v is not None}
    if whole is not None:
        if given:
            raise ConfigurationError(
                f"Give {name} whole or its keywords ({', '.join(sorted(given))}), not both.", spec=name
            )
        return whole
    return _checked(spec, given)


def _request(**fields: Any) -> RolloutRequest:
    result: RolloutRequest = _checked(RolloutRequest, fields)
    return result


def _checked(spec: type[Any], fields: dict[str, Any]) -> Any:
    """``spec(**fields)``, a bad value a ConfigurationError naming the field (as ``envhub rollout`` does)."""
    from pydantic import ValidationError

    try:
        return spec.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        given = redact(first.get("input"))  # a refused request still holds its env token
        raise ConfigurationError(f"{where}: {first['msg']} (got {given!r}).") from None


class EnvhubRolloutFunc:
    """``GRPOTrainer``'s ``rollout_func``: envhub episodes played with the trainer's model.

    With ``GRPOConfig(use_vllm=True)`` every turn is sampled through TRL's vLLM
    (:class:`TrlVllmBackend`: TRL's generation path, weights synced by TRL, TRL's sampling
    settings, one training process). Otherwise each call copies the trainer's current weights
    into an in-process sampler (:class:`~envhub.policy.transformers_backend.TransformersBackend`,
    float32). Either way the episodes are on-policy; one group of ``num_generations`` episodes is
    played per distinct prompt.

    Args:
        env_id: the env (its family picks the prompt template and projection rule).
        base_url: play on this ``envhub serve`` server (None: envs in this process); a name
            that resolves to several replicas makes each address a replica, and every group
            stays on one.
        token: bearer token for that server.
        env_kwargs: env constructor keyword arguments.
        split: the split tasks are drawn from (None: the env's default).
        max_steps: env steps per episode before it is cut off (None: the request's default).
        max_tokens: tokens sampled per turn (``sampling.max_tokens``).
        temperature: sampling temperature of the in-process sampler (with ``use_vllm``, TRL's
            ``temperature`` applies instead; so for ``top_p`` and ``top_k``).
        top_p: nucleus sampling.
        top_k: top-k sampling (-1: off).
        history_length: memory window in the prompts (None: the family's).
        projection: projection rule (None: the family's).
        tokenizer: the model's tokenizer directory (None: the trainer model's ``name_or_path``).
        seed: reset seed of a prompt that names none is ``seed + group index``; sampling seeds
            come from it too (``seed + global_step``).
        max_concurrent_groups: groups played at once (None: the request's default).
        sampling: the whole :class:`~envhub.core.wire.SamplingRequest` (``stop``, ...), instead
            of ``max_tokens``/``temperature``/``top_p``/``top_k``; its seed is set per call.
        context: the whole :class:`~envhub.core.wire.ContextConfig`, instead of
            ``history_length``/``projection``.

    The keywords fill one :class:`~envhub.core.wire.RolloutRequest` (``request``), built and
    checked here; each call plays it whole with TRL's group size (:meth:`job`). A keyword left
    out takes the spec's own default.

    Attributes:
        request: the rollout job every call plays.
        last_groups: the groups of the last call, in prompt order (each trajectory's steps,
            rewards and token sequence), for logging and tests.

    Raises:
        UnknownEnvError: ``env_id`` is not registered.
        ConfigurationError: the family has no text prompt template (tau: use a tool env).
    """

    def __init__(
        self,
        env_id: str,
        *,
        base_url: str | None = None,
        token: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        split: str | None = None,
        max_steps: int | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        history_length: int | None = None,
        projection: str | None = None,
        tokenizer: str | Path | None = None,
        seed: int = 0,
        max_concurrent_groups: int | None = None,
        sampling: SamplingRequest | None = None,
        context: ContextConfig | None = None,
    ) -> None:
        sampling = _whole_or_keywords(
            "sampling",
            SamplingRequest,
            sampling,
            {"max_tokens": max_tokens, "temperature": temperature, "top_p": top_p, "top_k": top_k},
        )
        context = _whole_or_keywords(
            "context", ContextConfig, context, {"history_length": history_length, "projection": projection}
        )
        self.setup = agent_setup(env_id, projection=context.projection)
        if self.setup.template is None:
            raise ConfigurationError(
                f"{self.setup.env_id} has no text prompt template for a rollout_func; use a tool "
                "environment (environment_factory) for it.",
                env_id=self.setup.env_id,
            )
        limits = {"max_steps": max_steps, "max_concurrent_groups": max_concurrent_groups}
        self.request = _request(
            # Each address of a replicated name is a replica of its own; the pool keeps every
            # group's sessions on one of them. No base_url: envs in this process.
            env_urls=[base_url] if base_url else [],
            resolve_replicas=True,
            env_id=self.setup.env_id,
            env_token=token,
            env_kwargs=dict(env_kwargs or {}),
            split=split,
            sampling=sampling,
            context=context,
            seed=seed,
            on_failure="retry",
            trajectory_mode=True,
            **{k: v for k, v in limits.items() if v is not None},
        )
        self.tokenizer = None if tokenizer is None else str(tokenizer)
        self.last_groups: list[Group] = []
        self._calls = 0

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play one episode per prompt and return them as TRL expects.

        Args:
            prompts: this process's prompts, each repeated ``num_generations`` times in a row
                (TRL's sampler does the repeating).
            trainer: the ``GRPOTrainer``.

        Returns:
            ``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask`` and the
            :data:`EXTRA_KEYS`, each a list with one entry per prompt.

        Raises:
            ConfigurationError: a prompt names no episode, the prompts do not come in blocks of
                ``num_generations``, or the chat template rewrote earlier turns (an episode would
                be more than one sequence).
            EnvhubError: a group failed after its retries (the engine's failure is the cause).
        """
        group_size = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
        starts = self._group_starts(prompts, group_size, trainer.state.global_step)
        groups = asyncio.run(self._play(starts, group_size, trainer))
        self.last_groups = groups
        self._calls += 1
        out: dict[str, list[Any]] = {
            key: [] for key in ("prompt_ids", "completion_ids", "logprobs", "env_mask", *EXTRA_KEYS)
        }
        for group in groups:
            for trajectory in group.trajectories:
                self._append(out, trajectory)
        return out

    # -- helpers ---------------------------------------------------------------------------------

    def job(self, *, group_size: int, step: int) -> RolloutRequest:
        """The job one call plays: :attr:`request` whole, TRL's group size, the step's sampling seed."""
        sampling = self.request.sampling.model_copy(update={"seed": self.request.seed + step})
        return _request(**{**dict(self.request), "group_size": group_size, "sampling": sampling})

    def _group_starts(self, prompts: list[Any], group_size: int, step: int) -> list[tuple[str | None, int]]:
        if len(prompts) % group_size:
            raise ConfigurationError(
                f"rollout_func got {len(prompts)} prompts, not a multiple of num_generations={group_size}.",
            )
        starts = []
        for g in range(len(prompts) // group_size):
            block = prompts[g * group_size : (g + 1) * group_size]
            if any(p != block[0] for p in block):
                raise ConfigurationError(
                    "rollout_func expects each prompt num_generations times in a row (TRL's "
                    "RepeatSampler); got a block of different prompts.",
                )
            task_id, seed = parse_episode_prompt(block[0])
            starts.append((task_id, self.request.seed + step * 1_000_003 + g if seed is None else seed))
        return starts

    def _tokenizer_dir(self, model: Any) -> str:
        path = self.tokenizer or getattr(getattr(model, "config", None), "_name_or_path", None)
        if not path or not Path(path).is_dir():
            raise ConfigurationError(
                "EnvhubRolloutFunc needs the model's local tokenizer directory for its chat template; "
                "pass tokenizer=DIR.",
                found=str(path),
            )
        return str(path)

    async def _play(self, starts: list[tuple[str | None, int]], group_size: int, trainer: Any) -> list[Group]:
        from envhub.policy.tokenizer import ChatTokenizer
        from envhub.rollout.driver import play
        from envhub.rollout.engine import GroupTask
        from envhub.rollout.sequences import SequenceBuilder
        from envhub.train.rollouts import in_process_sampler_factory

        model = trainer.accelerator.unwrap_model(trainer.model)
        tokenizer_dir = self._tokenizer_dir(model)
        step = int(trainer.state.global_step)
        chat = ChatTokenizer(tokenizer_dir)
        backend: Any
        if getattr(trainer, "use_vllm", False):
            # TRL's own vLLM (server or colocate), whose weights TRL synced before calling us.
            backend = TrlVllmBackend(trainer, chat, policy_version=step)
        else:
            # A frozen float32 copy of the weights: generation never touches the model TRL trains.
            backend = in_process_sampler_factory(
                tokenizer_dir,
                device=str(trainer.accelerator.device),
                max_batch=max(1, len(starts) * group_size),
            )(model, step)
        request = self.job(group_size=group_size, step=step)
        # TRL passes each group's task and seed in its prompt, so the tasks are ours, not the
        # request's; the policy is TRL's model (a backend), its chat template the sequence builder.
        tasks = [GroupTask(slot, task_id, seed) for slot, (task_id, seed) in enumerate(starts)]
        try:
            played = await play(
                request,
                backend=backend,
                tasks=tasks,
                job_id=f"trl-{self._calls}",
                sequence_builder=lambda uid, traj_id: SequenceBuilder(chat, uid=uid, traj_id=traj_id),
            )
        finally:
            await backend.aclose()
        report = played.report
        if report.published != len(tasks):
            error = report.error
            raise EnvhubError(
                f"{len(tasks) - report.published} of {len(tasks)} groups failed"
                + (f" ({error.cause}: {error.message})" if error is not None else "")
                + "; TRL needs every completion of the batch.",
                dropped=report.dropped,
            )
        return played.groups  # in task (prompt) order, members in order

    @staticmethod
    def _append(out: dict[str, list[Any]], trajectory: Trajectory) -> None:
        if len(trajectory.sequences) != 1:
            raise ConfigurationError(
                f"Episode {trajectory.traj_id} became {len(trajectory.sequences)} token sequences: the chat "
                "template rewrote earlier turns (e.g. Qwen3 dropping <think> blocks), and TRL takes one "
                "completion per prompt. Use a template that only appends, or history_length=0 prompts.",
                traj_id=trajectory.traj_id,
            )
        sequence = trajectory.sequences[0]
        cut = sequence.prompt_length
        out["prompt_ids"].append(sequence.token_ids[:cut])
        out["completion_ids"].append(sequence.token_ids[cut:])
        out["logprobs"].append(sequence.logprobs[cut:])
        out["env_mask"].append(sequence.loss_mask[cut:])
        out["env_reward"].append(trajectory.episode_return)
        out["env_won"].append(trajectory.won)
        out["env_steps"].append(trajectory.length)
        out["task_id"].append(trajectory.task_id)


class TrlVllmBackend:
    """An envhub policy backend that samples through the trainer's vLLM (``GRPOConfig(use_vllm=True)``).

    Every turn of every episode goes to ``trainer.vllm_generation.generate``, TRL's generation
    path in both ``vllm_mode="server"`` and ``"colocate"``; TRL has pushed the current weights
    before it calls the ``rollout_func``. Prompts played at once are sent as one batch. TRL's
    sampling settings apply (``temperature``, ``top_p``, ``top_k``, ``min_p``,
    ``repetition_penalty``, ``generation_kwargs`` of ``GRPOConfig``), except the token limit,
    which is the rollout's per-turn ``max_tokens``.

    TRL's generate is collective over the trainer's processes (every process must call it
    the same number of times), and episodes end after different numbers of turns, so this
    backend needs a single training process.

    Args:
        trainer: the ``GRPOTrainer`` (``use_vllm`` on).
        tokenizer: the model's chat tokenizer (decodes the sampled tokens).
        policy_version: stamped on every completion (the trainer's global step).

    Raises:
        ConfigurationError: the trainer runs more than one process.
    """

    accepts_images = False

    def __init__(self, trainer: Any, tokenizer: Any, *, policy_version: int) -> None:
        processes = int(getattr(trainer.accelerator, "num_processes", 1))
        if processes != 1:
            raise ConfigurationError(
                f"EnvhubRolloutFunc with use_vllm needs one training process, not {processes}: TRL's vLLM "
                "generation is collective over processes and episodes take different numbers of turns. "
                "Train on one process, or set use_vllm=False to sample in each process.",
                processes=processes,
            )
        self.generation = trainer.vllm_generation
        self.tokenizer = tokenizer
        self.policy_version = policy_version
        self._pending: list[tuple[Sequence[Any], Any, asyncio.Future[list[Any]]]] = []

    async def generate(self, prompts: Sequence[Any], sampling: Any) -> list[Any]:
        """Sample one completion per prompt; prompts that arrive in the same tick share one call."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush)
        self._pending.append((prompts, sampling, future))
        return await future

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        by_limit: dict[int, list[tuple[Sequence[Any], Any, asyncio.Future[list[Any]]]]] = {}
        for item in pending:
            by_limit.setdefault(int(item[1].max_tokens), []).append(item)
        for max_tokens, items in by_limit.items():
            try:
                completions = self._sample([p for prompts, _, _ in items for p in prompts], max_tokens)
            except Exception as exc:  # handed to every waiting caller
                for _, _, future in items:
                    if not future.done():
                        future.set_exception(exc)
                continue
            start = 0
            for prompts, _, future in items:
                if not future.done():
                    future.set_result(completions[start : start + len(prompts)])
                start += len(prompts)

    def _sample(self, prompts: Sequence[Any], max_tokens: int) -> list[Any]:
        from envhub.policy.base import Completion

        ids = [
            list(p.token_ids) if p.token_ids is not None else self.tokenizer.render(p.messages)
            for p in prompts
        ]
        limit = self.generation.max_completion_length
        self.generation.max_completion_length = max_tokens  # the per-turn limit, for this call only
        started = time.perf_counter()
        try:
            _, completion_ids, logprobs, _ = self.generation.generate(
                prompts=ids, images=None, num_generations=1
            )
        finally:
            self.generation.max_completion_length = limit
        latency = time.perf_counter() - started
        eos = set(self.tokenizer.eos_token_ids)
        out = []
        for prompt_ids, tokens, token_logprobs in zip(ids, completion_ids, logprobs, strict=True):
            tokens = list(tokens)
            out.append(
                Completion(
                    text=self.tokenizer.decode(tokens),
                    prompt_token_ids=prompt_ids,
                    token_ids=tokens,
                    # vLLM's logprobs per token, sampled token first (TRL's own reading).
                    logprobs=[float(lp[0]) for lp in token_logprobs],
                    finish_reason="stop" if tokens and tokens[-1] in eos else "length",
                    policy_version=self.policy_version,
                    latency_s=latency,
                )
            )
        return out

    async def aclose(self) -> None:
        """Nothing to release: the vLLM engine or server is TRL's."""


# -- environment_factory ---------------------------------------------------------------------------


class _ToolEnv:
    """One envhub episode behind TRL's environment_factory protocol (subclasses add the tools).

    TRL calls ``reset(**row)`` before each rollout and appends what it returns to the prompt's
    last user message; each tool call is one env step; ``get_reward()`` is the episode return.
    """

    env_id: ClassVar[str] = ""
    #: What a tool call returns once the episode has ended.
    ended: ClassVar[str] = "The episode has ended; no more tool calls are needed."

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        split: str | None = None,
    ) -> None:
        if not self.env_id:
            raise ConfigurationError(f"{type(self).__name__} names no env: use one of its subclasses.")
        self._env: Any = open_env(self.env_id, base_url=base_url, token=token, env_kwargs=env_kwargs)
        self._split = split
        self._return = 0.0
        self._done = True
        self.info: dict[str, Any] = {}

    def reset(
        self, task_id: str | None = None, seed: int | None = None, split: str | None = None, **_: Any
    ) -> str:
        """Start the episode of a dataset row and return its first observation.

        Args:
            task_id: the task (None: drawn from the split with ``seed``).
            seed: the reset seed.
            split: the split (default: the one given to the constructor).
        """
        options: dict[str, Any] = {}
        if task_id is not None:
            options["task_id"] = task_id
        if (split or self._split) is not None:
            options["split"] = split or self._split
        observation, self.info = self._env.reset(seed=seed, options=options)
        self._return, self._done = 0.0, False
        return str(observation)

    def get_reward(self) -> float:
        """The episode return so far."""
        return self._return

    def _step(self, action: str) -> str:
        if self._done:
            return self.ended
        observation, reward, terminated, truncated, self.info = self._env.step(action)
        self._return += float(reward)
        self._done = bool(terminated or truncated)
        return str(observation)


class SearchToolEnv(_ToolEnv):
    """Search-QA (``envhub/SearchQA-v0``) as TRL tools: ``search`` and ``answer``.

    TRL calls ``reset(**row)`` before each rollout and appends what it returns (the question)
    to the prompt's last user message; the model then calls the tools, and ``get_reward()``
    scores the rollout with the env's return (exact match of the answer, 0 without one).

    Args:
        base_url: play on this ``envhub serve`` server (None: in process).
        token: bearer token for that server.
        env_kwargs: env constructor keyword arguments (``reward="f1"``, a retriever, ...).
        split: the split questions come from when the row names no task.
    """

    env_id: ClassVar[str] = "envhub/SearchQA-v0"

    def search(self, query: str) -> str:
        """Search the encyclopedia and return the top passages.

        Args:
            query: what to look up, e.g. an entity name and the fact wanted.

        Returns:
            The retrieved passages, or a note that the episode has ended.
        """
        return self._step(f"<search>{query}</search>").strip()

    def answer(self, answer: str) -> str:
        """Give the final answer; this ends the episode.

        Args:
            answer: the answer, as short as possible (a name, a year).

        Returns:
            A confirmation that the answer was recorded.
        """
        self._step(f"<answer>{answer}</answer>")
        return "Answer recorded."


def search_environment_factory(
    *,
    base_url: str | None = None,
    token: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    split: str | None = None,
) -> Callable[[], SearchToolEnv]:
    """``GRPOTrainer``'s ``environment_factory`` for Search-QA: each call makes a :class:`SearchToolEnv`."""

    def factory() -> SearchToolEnv:
        return SearchToolEnv(base_url=base_url, token=token, env_kwargs=env_kwargs, split=split)

    return factory


# -- tau-bench as TRL tools --------------------------------------------------------------------------

#: JSON-schema types of tau's tool parameters -> the Python types TRL's schema builder reads.
_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
}


class TauToolEnv(_ToolEnv):
    """tau-bench as TRL tools: one method per domain tool, plus ``respond``.

    Use :class:`TauRetailToolEnv` or :class:`TauAirlineToolEnv` (the tool methods are made from
    the domain's tool declarations, so TRL's schemas carry the env's names, parameters and
    descriptions). TRL calls ``reset(**row)`` and appends the customer's first message to the
    prompt; each tool call becomes one env step (a ``<tool_call>`` action) and returns its
    output; ``respond(content)`` sends a message and returns the customer's reply;
    ``get_reward()`` is the episode return (tau-bench's 0/1 reward once the conversation ends).
    Put the domain policy (:attr:`system_prompt`) in the rows' system message, as tau-bench's
    tool-calling agent does. TRL offers every public method to the model as a tool, so the
    class has no public method but the tools, ``reset`` and ``get_reward``.

    Args:
        base_url: play on this ``envhub serve`` server (None: in process).
        token: bearer token for that server.
        env_kwargs: env constructor keyword arguments (``user="llm"``, ``data_dir``, ...).
        split: the split tasks come from when the row names no task.
    """

    ended: ClassVar[str] = "The conversation has ended; no more tool calls are needed."

    @property
    def system_prompt(self) -> str:
        """The domain policy document (read after :meth:`reset`): the rows' system message.

        A property, not a method: TRL would offer a public method to the model as a tool.
        """
        return str(self.info.get("system_prompt", ""))

    def respond(self, content: str) -> str:
        """Send a message to the customer and return the customer's reply.

        Args:
            content: the message, e.g. a question for the details you need or a summary of
                what you are about to do.

        Returns:
            The customer's reply, or a note that the conversation has ended.
        """
        return self._call("respond", {"content": content})

    def _call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return self._step(
            "<tool_call>" + json.dumps({"name": name, "arguments": dict(arguments)}) + "</tool_call>"
        )


def _python_type(param: Any) -> Any:
    """The annotation TRL's schema builder turns back into the parameter's JSON schema."""
    if param.type == "array":
        item = _JSON_TYPES.get(str((param.items or {}).get("type", "")), Any)
        return list[item]  # type: ignore[valid-type]
    return _JSON_TYPES.get(param.type, Any)


def _tool_method(spec: Any) -> Callable[..., str]:
    """A method named and documented as the tau tool ``spec``, that plays it as one env step."""

    def method(self: TauToolEnv, **arguments: Any) -> str:
        return self._call(spec.name, arguments)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    lines = [" ".join(spec.description.split()), "", "Args:"]
    for param in spec.params:
        params.append(
            inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, annotation=_python_type(param))
        )
        note = " ".join(param.description.split()) or param.name
        if param.enum is not None:
            note += f" (choices: {json.dumps(list(param.enum))})"
        lines.append(f"    {param.name}: {note}")
    if not spec.params:
        lines.pop()  # no Args section
    lines += ["", "Returns:", "    The tool's output."]
    method.__name__ = method.__qualname__ = spec.name
    method.__doc__ = "\n".join(lines)
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = {p.name: _python_type(p) for p in spec.params} | {"return": str}
    return method


def _tau_tool_class(name: str, env_id: str, tools: Sequence[Any]) -> type[TauToolEnv]:
    namespace: dict[str, Any] = {
        "env_id": env_id,
        "__module__": __name__,
        "__doc__": f"{env_id} as TRL tools (see TauToolEnv).",
    }
    for spec in tools:
        namespace[spec.name] = _tool_method(spec)
    return type(name, (TauToolEnv,), namespace)


def _domain_tools(env_id: str) -> Sequence[Any]:
    from envhub.envs.tau.env import TauAirlineEnv, TauRetailEnv

    return (TauRetailEnv if env_id == "envhub/TauRetail-v0" else TauAirlineEnv).domain_tools


#: tau-bench retail's tools (``envhub/TauRetail-v0``) as TRL tool methods.
TauRetailToolEnv = _tau_tool_class(
    "TauRetailToolEnv", "envhub/TauRetail-v0", _domain_tools("envhub/TauRetail-v0")
)
#: tau-bench airline's tools (``envhub/TauAirline-v0``) as TRL tool methods.
TauAirlineToolEnv = _tau_tool_class(
    "TauAirlineToolEnv", "envhub/TauAirline-v0", _domain_tools("envhub/TauAirline-v0")
)


def tau_environment_factory(
    env_id: str = "envhub/TauRetail-v0",
    *,
    base_url: str | None = None,
    token: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    split: str | None = None,
) -> Callable[[], TauToolEnv]:
    """``GRPOTrainer``'s ``environment_factory`` for tau-bench retail or airline.

    Raises:
        ConfigurationError: ``env_id`` is not a tau-bench env.
    """
    classes = {"envhub/TauRetail-v0": TauRetailToolEnv, "envhub/TauAirline-v0": TauAirlineToolEnv}
    if env_id not in classes:
        raise ConfigurationError(
            f"tau_environment_factory plays {sorted(classes)}, not {env_id!r}.", env_id=env_id
        )
    cls = classes[env_id]

    def factory() -> TauToolEnv:
        return cls(base_url=base_url, token=token, env_kwargs=env_kwargs, split=split)

    return factory
