"""The training loop: groups in, advantages, verl's update, new weights out, version + 1.

One loop serves the synchronous and the asynchronous trainer. A producer admits groups by the
AReaL/SkyRL rule (``shared/reference/round2_rollout_trainer.md`` §7)::

    admitted groups  <=  (max_staleness + version + 1) * B

so with ``max_staleness = 0`` exactly B groups are played at version v and the trainer waits
for them (verl-agent's on-policy loop), and with k > 0 rollouts go on at the current version
while the trainer updates. Admission alone does not bound what is trained on (a long group
admitted at v can finish after groups admitted later, or a resume can find an old backlog on
Redis), so the bound holds again at consumption (:meth:`Trainer._verdict`): a group sampled more
than k versions before the current one, or by weights of a version this run's checkpoints never
held (a killed trainer's, after its last checkpoint), is dropped, never trained on, counted
(``staleness/dropped``, a run total kept in the checkpoint) and, when this process admitted it,
replaced. Each iteration the trainer takes B finished groups that pass the rule from the queue
(whole groups: an anchor group never mixes versions), computes advantages with
:mod:`envhub.algos`, old logprobs (recomputed by the actor, or the rollout's), reference
logprobs when the KL coefficient is not 0, and runs :meth:`Learner.update`; rows sampled by an
older version (at most k behind) are corrected by truncated importance sampling against their
stored rollout logprobs. Then it publishes the new weights (version + 1), logs, checkpoints
and, every k iterations, validates.

Under ``torchrun`` every rank plays and trains on its own B / world groups (data parallel over
groups: group statistics never cross ranks) and DDP or FSDP2 (``model.strategy``,
``envhub.train.parallel``) averages the gradients. Under FSDP2 the weights are sharded, so the
sampler, the vLLM push and checkpoints get them gathered, and those steps run on every rank.

A multi-agent run (``rollout.agents``, Dr. MAS) trains one shared model on every role's rows, or
with ``agents:`` a model per agent (:class:`AgentPolicy`): each role's calls are sampled by its
own model, its rows go to its own learner and optimizer, and every update records each agent's
gradient norm (``agent/<role>/grad_norm``). A model per agent runs in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from envhub.algos import compute_advantages, default_config
from envhub.core.errors import ConfigurationError, UnauthorizedError
from envhub.core.records import Group
from envhub.core.wire import PolicyEndpoint
from envhub.envs import resolve
from envhub.eval.report import metrics_from_groups
from envhub.rollout.engine import GroupTask
from envhub.rollout.queue.base import Delivery, GroupQueue
from envhub.rollout.queue.codec import GroupColumns
from envhub.rollout.queue.memory import MemoryQueue
from envhub.rollout.queue.settings import QueueSettings
from envhub.train.checkpoint import (
    DEFAULT_ADAPTER,
    AgentParts,
    TrainerState,
    full_optimizer_state,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
)
from envhub.train.config import (
    SHARED_POLICY,
    AgentPolicyConfig,
    LoRAConfig,
    ModelConfig,
    TrainConfig,
    TrainerCredentials,
)
from envhub.train.coso import CausalEntropy
from envhub.train.grounded import RowScores, expert_texts, mix_into_rows
from envhub.train.learner import Learner, resolve_device
from envhub.train.parallel import (
    all_reduce_floats,
    is_sharded,
    reduce_metrics,
    shard_fsdp2,
    unsharded_copy,
)
from envhub.train.rollouts import (
    EngineRollouts,
    RolloutSource,
    ServiceRollouts,
    build_env_pool,
    check_ack_interval,
    in_process_sampler_factory,
    new_run_id,
    refused,
    run_label,
    trainer_queue,
)
from envhub.train.rows import RowBatch, build_rows, build_rows_from_columns
from envhub.train.schedule import TaskSchedule
from envhub.train.tracking import MetricsLogger, write_groups
from envhub.train.trajectory_rows import build_sequence_rows, sequence_advantages

if TYPE_CHECKING:
    from envhub.policy.tokenizer import ChatTokenizer
    from envhub.rollout.sequences import SequenceBuilder

__all__ = [
    "AgentPolicy",
    "IterationResult",
    "TrainResult",
    "Trainer",
    "column_metrics",
    "rollout_metrics",
    "train",
]


@dataclass
class IterationResult:
    iteration: int
    metrics: dict[str, float]


@dataclass
class TrainResult:
    """What a run did."""

    run_dir: Path
    iterations: list[IterationResult] = field(default_factory=list)
    policy_version: int = 0
    validation: list[IterationResult] = field(default_factory=list)

    def series(self, key: str) -> list[float]:
        return [r.metrics[key] for r in self.iterations if key in r.metrics]


@dataclass
class AgentPolicy:
    """One model the run trains: the shared one (:data:`~envhub.train.config.SHARED_POLICY`), or
    an agent's own (``agents.<role>``), with its learner (optimizer) and tokenizer."""

    name: str
    model_config: ModelConfig
    model: Any
    learner: Learner
    tokenizer: ChatTokenizer
    device: torch.device
    #: The peft adapter of ``model`` that is this policy (agents that are adapters on one base).
    adapter: str | None = None

    def activate(self) -> None:
        """Make this policy's adapter the one the shared base runs (and trains) with."""
        if self.adapter is not None:
            self.model.set_adapter(self.adapter)


@dataclass
class _Dist:
    rank: int = 0
    world: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def _init_distributed(device: torch.device) -> _Dist:
    """Join the process group when launched by torchrun (gloo on CPU, NCCL on GPU)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return _Dist()
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return _Dist(rank=dist.get_rank(), world=dist.get_world_size())


def _rank_device(device: torch.device, world: int) -> torch.device:
    """Under torchrun, an unnumbered ``cuda`` means this rank's GPU (``LOCAL_RANK``), not GPU 0."""
    if world <= 1 or device.type != "cuda" or device.index is not None:
        return device
    local = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(local)
    return local


def _load_model(config: ModelConfig | TrainConfig, device: torch.device) -> Any:
    """The model of a ``model:`` section (of a run's, or an agent's), on ``device``."""
    from transformers import AutoModelForCausalLM

    if isinstance(config, TrainConfig):
        config = config.model

    path = Path(config.path)
    if not path.is_dir():
        raise ConfigurationError(
            f"model.path {str(path)!r} is not a directory. Give a local Hugging Face model directory; "
            "`envhub model tiny --out DIR` builds a tiny one with no download.",
            path=str(path),
        )
    # float32 master weights; model.dtype is the autocast compute precision (Learner). Only
    # model.pure_bf16 stores the weights in bf16 (and the Learner warns).
    dtype = torch.bfloat16 if config.pure_bf16 else torch.float32
    model: Any = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, local_files_only=True)
    model = model.to(device)
    if config.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    if config.lora is not None:
        try:
            from peft import get_peft_model
        except ImportError as exc:  # pragma: no cover - peft is in the train extra
            from envhub.core.errors import DependencyMissingError

            raise DependencyMissingError("peft", extra="train") from exc
        model = get_peft_model(model, _lora_config(config.lora))
    return model


def _lora_config(lora: LoRAConfig) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        task_type="CAUSAL_LM",
    )


def _chat_tokenizer(path: str) -> ChatTokenizer:
    from envhub.policy.tokenizer import ChatTokenizer

    return ChatTokenizer(path)


def _task_type(group: Group) -> str | None:
    for traj in group.trajectories:
        for step in reversed(traj.steps):
            value = step.info.get("task_type")
            if value is not None:
                return str(value)
    return None


def rollout_metrics(groups: Sequence[Group]) -> dict[str, float]:
    """Episode-level numbers of a set of groups (what verl-agent logs as episode/*)."""
    trajs = [t for g in groups for t in g.trajectories]
    if not trajs:
        return {}
    out = {
        "rollout/reward": float(np.mean([t.episode_return for t in trajs])),
        "rollout/success": float(np.mean([t.won for t in trajs])),
        "rollout/episode_length": float(np.mean([t.length for t in trajs])),
        "rollout/episodes": float(len(trajs)),
        "rollout/valid_action": float(
            np.mean([s.is_action_valid for t in trajs for s in t.steps])
            if any(t.steps for t in trajs)
            else 0.0
        ),
    }
    by_type: dict[str, list[bool]] = defaultdict(list)
    for g in groups:
        kind = _task_type(g)
        if kind is not None:
            by_type[kind].extend(t.won for t in g.trajectories)
    for kind, wins in sorted(by_type.items()):
        out[f"rollout/success/{kind}"] = float(np.mean(wins))
    return out


def _task_id(delivery: Delivery | Group) -> str:
    """A delivered group's task id (from its columns when it was decoded to columns)."""
    if isinstance(delivery, Delivery):
        return delivery.columns.task_id if delivery.columns is not None else delivery.group.task_id
    return delivery.task_id


def _provenance(delivery: Delivery) -> tuple[int | None, str | None, bool]:
    """A delivered group's policy version, job id, and whether every step has sampling logprobs."""
    if delivery.columns is not None:
        c = delivery.columns
        return c.policy_version, c.job_id, all(lp is not None for lp in c.response_logprobs)
    g = delivery.group
    steps = [s for t in g.trajectories for s in t.steps]
    return g.policy_version, g.job_id, all(s.response_logprobs is not None for s in steps)


def _foreign(queue: GroupQueue) -> int:
    """Entries of other runs a queue passed over (acknowledged for this run's consumer group)."""
    stats = getattr(queue, "stats", None)
    return int(getattr(stats, "filtered_out", 0))


def _row_agents(deliveries: Sequence[Delivery | Group], kept: np.ndarray) -> list[str]:
    """Each kept row's agent, in the row builders' order (columns when every delivery has them)."""
    agents: list[str] = []
    if all(isinstance(d, Delivery) and d.columns is not None for d in deliveries):
        for d in deliveries:
            assert isinstance(d, Delivery) and d.columns is not None
            agents.extend(d.columns.agent_id)
    else:
        for d in deliveries:
            group = d.group if isinstance(d, Delivery) else d
            agents.extend(s.agent_id for t in group.trajectories for s in t.steps)
    return [agents[i] for i in kept.tolist()]


def _padded_with(rows: RowBatch, pad_token_id: int) -> RowBatch:
    """``rows`` with ``pad_token_id`` where nothing is attended or sampled (another tokenizer's pad)."""
    rows.input_ids = rows.input_ids.masked_fill(rows.attention_mask == 0, pad_token_id)
    rows.response_ids = rows.response_ids.masked_fill(rows.response_mask == 0, pad_token_id)
    return rows


#: UpdateStats keys that add up over several models' updates (the others are token-weighted means).
_SUMMED = ("actor/tokens", "actor/optimizer_steps", "actor/skipped_steps")


def _combine_actor(parts: Sequence[dict[str, float]]) -> dict[str, float]:
    """The ``actor/*`` numbers of several models' updates as one: sums of counts, token-weighted
    means of the rest (``actor/grad_norm`` is then a mean over models: see ``agent/*``)."""
    if len(parts) == 1:
        return dict(parts[0])
    tokens = sum(p["actor/tokens"] for p in parts)
    out: dict[str, float] = {}
    for key in parts[0]:
        if key in _SUMMED:
            out[key] = sum(p[key] for p in parts)
        else:
            out[key] = sum(p[key] * p["actor/tokens"] for p in parts) / max(tokens, 1.0)
    return out


def _records(deliveries: Sequence[Delivery]) -> list[Group]:
    return [d.group for d in deliveries]


def _row_actions(deliveries: Sequence[Delivery | Group], kept: np.ndarray) -> list[str | None]:
    """The projected action of each kept row (None where invalid), in the row builders' order."""
    groups = [d.group if isinstance(d, Delivery) else d for d in deliveries]
    steps = [s for g in groups for t in g.trajectories for s in t.steps]
    return [steps[i].action if steps[i].is_action_valid else None for i in kept.tolist()]


def column_metrics(groups: Sequence[GroupColumns]) -> dict[str, float]:
    """:func:`rollout_metrics` from columns (per task type only from records: see ``_train_on``)."""
    if not groups or not any(len(g.episode_return) for g in groups):
        return {}
    returns = np.concatenate([g.episode_return for g in groups])
    valid = np.concatenate([g.is_action_valid for g in groups])
    return {
        "rollout/reward": float(returns.mean()),
        "rollout/success": float(np.concatenate([g.won for g in groups]).mean()),
        "rollout/episode_length": float(np.concatenate([g.length for g in groups]).mean()),
        "rollout/episodes": float(len(returns)),
        "rollout/valid_action": float(valid.mean()) if len(valid) else 0.0,
    }


class Trainer:
    """One training run (see the module docstring).

    Args:
        config: the run.
        on_iteration: called with each iteration's result (progress displays, tests).
        advantage_sign: multiplies every advantage; -1 is the control that must not learn.
    """

    def __init__(
        self,
        config: TrainConfig,
        *,
        on_iteration: Callable[[IterationResult], None] | None = None,
        advantage_sign: float = 1.0,
    ) -> None:
        self.config = config
        self.spec = resolve(config.env)
        self.env_id = self.spec.id
        self._on_iteration = on_iteration
        self._sign = advantage_sign
        self.run_dir = Path(config.output.run_dir)
        self.device = resolve_device(config.model.device)
        self.dist = _init_distributed(self.device)
        self.device = _rank_device(self.device, self.dist.world)
        if config.rollout.batch_tasks % self.dist.world:
            raise ConfigurationError(
                f"rollout.batch_tasks={config.rollout.batch_tasks} must divide evenly over "
                f"{self.dist.world} ranks (data parallel over groups).",
            )
        self.local_tasks = config.rollout.batch_tasks // self.dist.world
        torch.manual_seed(config.seed + self.dist.rank)
        roles = config.rollout.agents.roles if config.rollout.agents is not None else ()
        own_roles = [role for role in roles if role in config.agents]
        if own_roles and self.dist.world > 1:
            raise ConfigurationError(
                "agents: a model per agent trains in one process; run it without torchrun "
                f"(this is rank {self.dist.rank} of {self.dist.world}).",
            )
        #: Every model the run trains, by name: the shared one and each agent's own.
        self.policies: dict[str, AgentPolicy] = {}
        self.ddp: Any | None = None
        adapters = [role for role in own_roles if config.agents[role].adapter]
        if not own_roles or len(own_roles) < len(roles) or adapters:
            self._shared_policy()
        for i, role in enumerate(own_roles):
            spec = config.agents[role]
            if spec.adapter:
                self.policies[role] = self._adapter_policy(role, spec, seed=config.seed + 1 + i)
                continue
            device = resolve_device(spec.model.device)
            model = _load_model(spec.model, device)
            learner = Learner(
                model,
                model_config=spec.model,
                loss=config.loss,
                optim=spec.optim,
                temperature=config.rollout.sampling.temperature,
                seed=config.seed + 1 + i,
            )
            self.policies[role] = AgentPolicy(
                role, spec.model, model, learner, _chat_tokenizer(spec.model.path), device
            )
        if adapters:
            self.policies[SHARED_POLICY].adapter = DEFAULT_ADAPTER
        if SHARED_POLICY not in self.policies:
            # Every role has its own model: the first one stands for "the model" where one is read.
            first = self.policies[own_roles[0]]
            self.model, self.learner, self.tokenizer = first.model, first.learner, first.tokenizer
        self.advantage_config = default_config(config.algo, self.spec, **config.advantage)
        self.state = TrainerState(iteration=0, policy_version=0, schedule_position=0)
        self.run_id = f"{new_run_id()}-r{self.dist.rank}"
        # The run's label on the queue (stable across restarts of the run, shared by its ranks):
        # the trainer takes only groups labelled with it, through its own consumer group.
        self.run_label = config.rollout.run or run_label(self.run_dir)
        self.credentials = TrainerCredentials()  # ENVHUB_ENV_TOKEN, _ROLLOUT_TOKEN, _POLICY_API_KEY
        self.sampling = config.rollout.sampling
        self._tis = config.loss.tis_threshold
        #: CoSo's causal model (``loss.entropy: coso``), trained on every iteration's rows.
        self.coso = self._causal_entropy() if config.loss.entropy == "coso" else None
        if self._tis is None and config.max_staleness > 0 and config.loss.old_logprobs == "recompute":
            self._tis = 2.0  # stale rows are corrected by default (Agent Lightning / verl: 2)

    @property
    def own_policies(self) -> dict[str, AgentPolicy]:
        """The agents with a model of their own (``agents:``), by role."""
        return {name: p for name, p in self.policies.items() if name != SHARED_POLICY}

    def _adapter_policy(self, role: str, spec: AgentPolicyConfig, *, seed: int) -> AgentPolicy:
        """``role`` as a LoRA adapter of its own on the shared (peft) model, with its own optimizer."""
        assert spec.model.lora is not None  # checked at load
        model = self.model
        model.add_adapter(role, _lora_config(spec.model.lora))
        model.set_adapter(role)  # only the active adapter's weights are trainable: the optimizer's
        try:
            learner = Learner(
                model,
                model_config=spec.model,
                loss=self.config.loss,
                optim=spec.optim,
                temperature=self.config.rollout.sampling.temperature,
                seed=seed,
            )
        finally:
            model.set_adapter(DEFAULT_ADAPTER)
        return AgentPolicy(role, spec.model, model, learner, self.tokenizer, self.device, adapter=role)

    def _shared_policy(self) -> None:
        """Load the top-level model (the one model of a single-agent run), its learner and tokenizer."""
        config = self.config
        self.model = _load_model(config.model, self.device)
        shard: Callable[[Any], Any] | None = None
        if self.dist.world > 1 and config.model.strategy == "fsdp2":
            # Sharded inside the Learner, after it copies the reference and before the optimizer.
            bf16 = config.model.dtype == "bfloat16" and self.device.type == "cuda"
            shard = functools.partial(shard_fsdp2, bf16=bf16)
        elif self.dist.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            # No buffer broadcast: ranks run different numbers of forward passes (micro-batches
            # follow each rank's rows), and a per-forward collective would deadlock them.
            self.ddp = DistributedDataParallel(self.model, forward_sync_buffers=False)
        self.tokenizer = _chat_tokenizer(config.model.path)
        self.learner = Learner(
            self.model,
            model_config=config.model,
            loss=config.loss,
            optim=config.optim,
            temperature=config.rollout.sampling.temperature,
            ddp_model=self.ddp,
            shard=shard,
            seed=config.seed,
        )
        self.policies[SHARED_POLICY] = AgentPolicy(
            SHARED_POLICY, config.model, self.model, self.learner, self.tokenizer, self.device
        )

    # -- setup ---------------------------------------------------------------------------------

    def _causal_entropy(self) -> CausalEntropy:
        """CoSo's classifier over the policy's vocabulary, with the recipe's sizes and schedule."""
        if self.dist.world > 1:
            raise ConfigurationError(
                "loss.entropy='coso' trains its action classifier in one process, and under "
                f"torchrun each of the {self.dist.world} ranks would train its own; run CoSo "
                "without torchrun, or use entropy='plain'.",
            )
        vocab = max(len(self.tokenizer.hf), self.model.get_input_embeddings().num_embeddings)
        return CausalEntropy(
            vocab,
            self.tokenizer.hf,
            **self.config.loss.coso.model_dump(),
            seed=self.config.seed,
            device=self.device,
        )

    def _queue(self) -> GroupQueue:
        settings = QueueSettings()
        queue = trainer_queue(
            self.config.rollout.queue,
            stream=self.config.rollout.queue_stream,
            consumer=f"trainer-{self.dist.rank}",
            run=self.run_label,
            groups_per_iteration=self.config.rollout.batch_tasks,
            settings=settings,
        )
        if not isinstance(queue, MemoryQueue):  # durable: groups are acked only at checkpoints
            check_ack_interval(
                checkpoint_every=self.config.output.checkpoint_every,
                iterations=self.config.iterations,
                groups_per_iteration=self.local_tasks,
                max_unacked=settings.max_unacked,
            )
        return queue

    def _weight_sync(self) -> Any | None:
        settings = self.config.rollout
        if settings.generation != "openai" or not self.dist.main:
            return None
        from envhub.train.weight_sync import DiskVllmSync

        assert settings.policy_url is not None
        return DiskVllmSync(
            settings.policy_url, self.run_dir / "weights", api_key=self.credentials.policy_api_key
        )

    async def _check_weight_sync(self) -> None:
        """Fail before iteration 1 when the served policy cannot take new weights (a route missing)."""
        sync = self._weight_sync()
        if sync is None:
            return
        try:
            await sync.check_routes()
        finally:
            await sync.aclose()

    async def _served_model_name(self) -> str:
        """The model the requests name: ``rollout.policy.model``, else the first the server lists.

        Raises:
            ConfigurationError: the server does not list the recipe's model.
        """
        import httpx

        settings = self.config.rollout
        assert settings.policy_url is not None
        url = settings.policy_url.rstrip("/").removesuffix("/v1") + "/v1/models"
        key = self.credentials.policy_api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx.AsyncClient(timeout=10.0) as client:
            reply = await client.get(url, headers=headers)
        if reply.status_code in (401, 403):
            raise refused("policy server", settings.policy_url, "ENVHUB_POLICY_API_KEY")
        reply.raise_for_status()
        served = [str(entry["id"]) for entry in reply.json()["data"]]
        if not isinstance(settings.policy, PolicyEndpoint):
            return served[0]
        if settings.policy.model not in served:
            raise ConfigurationError(
                f"rollout.policy.model {settings.policy.model!r} is not served at {url} (it lists "
                f"{', '.join(served)}); name one of them, or leave rollout.policy out to take the first.",
                model=settings.policy.model,
                served=served,
            )
        return settings.policy.model

    async def _policy_endpoint(self) -> PolicyEndpoint:
        """The served policy the run samples from: the recipe's ``rollout.policy`` whole
        (:meth:`~envhub.train.config.RolloutSettings.endpoint`), the key from the environment."""
        return self.config.rollout.endpoint(
            model=await self._served_model_name(),
            tokenizer=self.config.model.path,
            api_key=self.credentials.policy_api_key,
        )

    async def _source(self, queue: GroupQueue) -> RolloutSource:
        settings = self.config.rollout
        if settings.rollout_service:
            return ServiceRollouts(
                service_url=settings.rollout_service,
                env_id=self.env_id,
                settings=settings,
                policy=await self._policy_endpoint(),
                weight_sync=self._weight_sync(),
                stream=settings.queue_stream,
                run=self.run_label,
                service_token=self.credentials.rollout_token,
                env_token=self.credentials.env_token,
            )
        envs = build_env_pool(self.env_id, settings, token=self.credentials.env_token)
        if settings.generation == "transformers":
            shared = self.policies.get(SHARED_POLICY)
            factory = (
                in_process_sampler_factory(
                    self.config.model.path,
                    device=str(self.device),
                    max_batch=settings.max_batch,
                    adapter=shared.adapter,
                )
                if shared is not None
                else None
            )
            agent_factories = {
                role: in_process_sampler_factory(
                    p.model_config.path,
                    device=str(p.device),
                    max_batch=settings.max_batch,
                    adapter=p.adapter,
                )
                for role, p in self.own_policies.items()
            }
            return EngineRollouts(
                envs=envs,
                queue=queue,
                settings=settings,
                backend_factory=factory,
                agent_factories=agent_factories or None,
                run_id=self.run_id,
                sequence_builder=self._sequence_builders(),
            )
        from envhub.rollout.jobs import build_backend

        # The one builder of an endpoint's backend: the served name, cap and timeout all apply.
        served = build_backend(await self._policy_endpoint(), 0)
        return EngineRollouts(
            envs=envs,
            queue=queue,
            settings=settings,
            served=served,
            weight_sync=self._weight_sync(),
            run_id=self.run_id,
            sequence_builder=self._sequence_builders(),
        )

    def _sequence_builders(self) -> Callable[[str, str], SequenceBuilder] | None:
        """Trajectory mode: builders of each episode's token sequence over the policy's tokenizer."""
        if not self.config.rollout.trajectory_mode:
            return None
        from envhub.rollout.sequences import SequenceBuilder

        tokenizer = self.tokenizer
        return lambda uid, traj_id: SequenceBuilder(tokenizer, uid=uid, traj_id=traj_id)

    def _resume(self) -> None:
        if not self.config.output.resume:
            return
        path = latest_checkpoint(self.run_dir)
        if path is None:
            return
        shared = SHARED_POLICY in self.policies
        self.state = load_checkpoint(
            path,
            model=self.model if shared else None,
            optimizer=self.learner.optimizer if shared else None,
            scheduler=self.learner.scheduler if shared else None,
            shuffle=self.learner.shuffle_generator if shared else None,
            agents=self._agent_parts() or None,
        )

    def _adopt_run_label(self) -> None:
        """The run keeps the queue label it began with (recorded in its checkpoints).

        A resumed run reads its own consumer group even when its directory moved (another mount
        point, another working directory for a relative path), which would change the default
        label.

        Raises:
            ConfigurationError: ``rollout.run`` names another label than the checkpoint's.
        """
        recorded = self.state.run_label
        if recorded is None:
            self.state.run_label = self.run_label
            return
        asked = self.config.rollout.run
        if asked and asked != recorded:
            raise ConfigurationError(
                f"rollout.run is {asked!r}, but this run's checkpoint records the label {recorded!r}: "
                "its groups on the queue carry that one. Leave rollout.run out (or set it to the "
                "recorded label) to resume, or start a new run directory for a new label.",
                run=asked,
                recorded=recorded,
            )
        self.run_label = recorded

    def _agent_parts(self) -> dict[str, AgentParts]:
        """Each own model and what trains it, as checkpoints keep them."""
        return {
            role: AgentParts(
                model=p.model,
                optimizer=p.learner.optimizer,
                scheduler=p.learner.scheduler,
                shuffle=p.learner.shuffle_generator,
                tokenizer_dir=p.model_config.path,
                adapter=p.adapter,
            )
            for role, p in self.own_policies.items()
        }

    async def _push(self, source: RolloutSource, version: int) -> dict[str, float]:
        """Make ``version`` of every model the one new groups are sampled with."""
        shared = self._full_model() if SHARED_POLICY in self.policies else None
        agents = {role: p.model for role, p in self.own_policies.items()}
        return await source.push_weights(shared, version, agents=agents or None)

    async def _training_task_ids(self) -> list[str]:
        """The training tasks: ``rollout.task_ids``, else the split's (its first ``rollout.count``)."""
        rollout = self.config.rollout
        if rollout.task_ids is not None:
            return list(rollout.task_ids)
        ids = await self._task_ids(rollout.split)
        return ids[: rollout.count] if rollout.count is not None else ids

    async def _task_ids(self, split: str | None) -> list[str]:
        pool = build_env_pool(self.env_id, self.config.rollout, token=self.credentials.env_token)
        try:
            return await pool.task_ids(split, None)
        except UnauthorizedError as exc:
            raise refused("env server", ", ".join(self.config.rollout.env_urls), "ENVHUB_ENV_TOKEN") from exc
        finally:
            await pool.aclose()

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> TrainResult:
        """Train for ``config.iterations`` iterations (continuing a checkpointed run)."""
        config = self.config
        self._resume()
        self._adopt_run_label()
        result = TrainResult(run_dir=self.run_dir, policy_version=self.state.policy_version)
        if self.state.iteration >= config.iterations or self.state.stopped_at is not None:
            return result
        await self._check_weight_sync()
        schedule = TaskSchedule(
            await self._training_task_ids(),
            seed=config.seed + 7919 * self.dist.rank,
            position=self.state.schedule_position,
        )
        logger = (
            MetricsLogger(
                self.run_dir,
                tensorboard=config.output.tensorboard,
                wandb=config.output.wandb,
                wandb_project=config.output.wandb_project,
                config=config.model_dump(mode="json"),
            )
            if self.dist.main
            else None
        )
        queue = self._queue()
        source = await self._source(queue)
        if self.dist.main:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            (self.run_dir / "config.json").write_text(config.model_dump_json(indent=2), encoding="utf-8")
        try:
            await self._push(source, self.state.policy_version)
            v = config.validation
            if v.before_training and self.state.iteration == 0:
                before = IterationResult(0, await self._validate(source))
                result.validation.append(before)
                if logger is not None:
                    logger.log(0, before.metrics)
            await self._loop(source, queue, schedule, logger, result)
        finally:
            if logger is not None:
                logger.close()
            await source.aclose()
            await queue.aclose()
        result.policy_version = self.state.policy_version
        return result

    async def _loop(
        self,
        source: RolloutSource,
        queue: GroupQueue,
        schedule: TaskSchedule,
        logger: MetricsLogger | None,
        result: TrainResult,
    ) -> None:
        config = self.config
        k, batch = config.max_staleness, self.local_tasks
        start_iteration = self.state.iteration
        first_position, first_consumed = schedule.position, self.state.consumed_groups
        admitted = 0  # groups admitted since this process started (a resume starts over)
        changed = asyncio.Condition()
        stop = asyncio.Event()
        concurrency = asyncio.Semaphore(max(config.rollout.max_concurrent_groups, batch))
        plays: set[asyncio.Task[None]] = set()
        failures: list[BaseException] = []

        def limit() -> int:
            return (k + (self.state.iteration - start_iteration) + 1) * batch

        def may_admit() -> bool:
            return stop.is_set() or admitted < limit()

        async def replace(count: int) -> None:
            """Admit ``count`` more groups in place of admitted ones that will never be trained on."""
            nonlocal admitted
            async with changed:
                admitted -= count
                changed.notify_all()

        async def play(tasks: list[GroupTask], version: int) -> None:
            async with concurrency:
                published = await source.play(tasks, version=version, sampling=self.sampling)
            if published < len(tasks):  # groups lost to failures: admit replacements
                await replace(len(tasks) - published)

        def done(task: asyncio.Task[None]) -> None:
            plays.discard(task)
            if not task.cancelled() and task.exception() is not None:
                failures.append(task.exception())  # type: ignore[arg-type]
                stop.set()

        async def producer() -> None:
            nonlocal admitted
            while not stop.is_set():
                async with changed:
                    await changed.wait_for(may_admit)
                if stop.is_set():
                    return
                # Admit what the rule allows at once: with k = 0 that is the iteration's B groups.
                room = limit() - admitted
                tasks = schedule.take(room)
                admitted += room
                task = asyncio.create_task(play(tasks, self.state.policy_version))
                plays.add(task)
                task.add_done_callback(done)

        producer_task = asyncio.create_task(producer())
        # A durable (Redis) queue is acknowledged only once a checkpoint records the groups as
        # used: a crash in between redelivers them, and the checkpoint's uids say which were used.
        durable = not isinstance(queue, MemoryQueue)
        unacked: list[Delivery] = []
        foreign_seen = _foreign(queue)
        try:
            while self.state.iteration < config.iterations and self.state.stopped_at is None:
                t0 = time.perf_counter()
                deliveries, dropped = await self._take(queue, batch, failures, source, replace)
                rollout_s = time.perf_counter() - t0
                # Dropped groups are acknowledged as used ones are: a durable queue's at the next
                # checkpoint (a crash before it redelivers them, to be judged again and counted once).
                unacked.extend(d for d, _ in dropped)
                seen, foreign_seen = foreign_seen, _foreign(queue)
                lost = sum(why == "lost" for _, why in dropped)
                counts = [float(len(dropped)), float(lost), float(foreign_seen - seen)]
                if self.dist.world > 1:  # the run's totals: every rank's, the same on every rank
                    counts = all_reduce_floats(counts)
                self.state.dropped_groups += int(counts[0])
                self.state.dropped_lost += int(counts[1])
                self.state.foreign_groups += int(counts[2])
                metrics = await self._train_on(deliveries)
                metrics["staleness/dropped_now"] = float(len(dropped))  # this rank's (summed over ranks)
                self.state.iteration += 1
                if config.output.save_groups:  # the viewer reads records: decode them (once) here
                    groups = await asyncio.to_thread(_records, deliveries)
                    write_groups(self.run_dir, self.state.iteration, groups, rank=self.dist.rank)
                    metrics.update(
                        {k: v for k, v in rollout_metrics(groups).items() if k.startswith("rollout/success/")}
                    )
                self.state.consumed_groups += len(deliveries)
                self.state.consumed_uids.extend(d.uid for d in deliveries)
                sync = await self._push(source, self.state.policy_version + 1)
                self.state.policy_version += 1
                self._record_lineage(source)
                metrics["staleness/dropped"] = float(self.state.dropped_groups)
                metrics["staleness/dropped_lost"] = float(self.state.dropped_lost)
                metrics["queue/foreign"] = float(self.state.foreign_groups)
                unacked.extend(deliveries)
                if not durable:
                    await queue.ack(unacked)
                    unacked.clear()
                elif hasattr(queue, "touch"):
                    await queue.touch(unacked)  # still ours: nobody may claim them meanwhile
                # A resume continues the schedule after the groups consumed so far; groups
                # admitted but not consumed are played again (at the then-current version).
                self.state.schedule_position = first_position + self.state.consumed_groups - first_consumed
                async with changed:
                    changed.notify_all()
                metrics.update(sync)
                metrics["time/rollout_wait_s"] = rollout_s
                metrics["time/iteration_s"] = time.perf_counter() - t0
                metrics["policy/version"] = float(self.state.policy_version)
                metrics["perf/tokens_per_s"] = metrics.get("actor/tokens", 0.0) / max(
                    metrics["time/iteration_s"], 1e-9
                )
                if config.validation.every and self.state.iteration % config.validation.every == 0:
                    validation = await self._validate(source)
                    result.validation.append(IterationResult(self.state.iteration, validation))
                    metrics.update(validation)
                # every rank's share of the batch, not rank 0's (collective: all ranks reach it)
                metrics = reduce_metrics(metrics)
                target = config.validation.stop_at
                if target is not None and metrics.get("val/success", -1.0) >= target:
                    # From the reduced metrics: every rank sees the same value and stops together.
                    self.state.stopped_at = self.state.iteration
                it = IterationResult(self.state.iteration, metrics)
                result.iterations.append(it)
                if logger is not None:
                    logger.log(self.state.iteration, metrics)
                if self._on_iteration is not None:
                    self._on_iteration(it)
                every = config.output.checkpoint_every
                last = self.state.iteration == config.iterations or self.state.stopped_at is not None
                if (every and self.state.iteration % every == 0) or last:
                    self._checkpoint()
                    await queue.ack(unacked)
                    unacked.clear()
        finally:
            stop.set()
            async with changed:
                changed.notify_all()
            producer_task.cancel()
            for task in list(plays):
                task.cancel()
            await asyncio.gather(producer_task, *plays, return_exceptions=True)

    async def _take(
        self,
        queue: GroupQueue,
        count: int,
        failures: list[BaseException],
        source: RolloutSource,
        replace: Callable[[int], Awaitable[None]],
    ) -> tuple[list[Delivery], list[tuple[Delivery, str]]]:
        """``count`` finished groups to train on, and the groups the staleness rule dropped meanwhile.

        Waits while rollouts run and fails with them. A group used before (a redelivery after a
        crash) is acknowledged and skipped. Every other group is judged by :meth:`_verdict`; a
        dropped one comes back second with the reason (the caller counts and acknowledges it),
        and when this process admitted it, ``replace`` admits another in its place.
        """
        got: list[Delivery] = []
        dropped: list[tuple[Delivery, str]] = []
        used = set(self.state.consumed_uids)
        while len(got) < count:
            if failures:
                raise failures[0]
            for d in await queue.get(count - len(got), timeout_s=0.2):
                if d.uid in used:  # trained on before a crash: acknowledge, never reuse
                    await queue.ack([d])
                    continue
                used.add(d.uid)
                why = await self._verdict(d, source)
                if why is None:
                    got.append(d)
                    continue
                dropped.append((d, why))
                await source.settle()
                if _provenance(d)[1] in source.jobs:  # this process admitted it: play one more
                    await replace(1)
        return got, dropped

    async def _verdict(self, delivery: Delivery, source: RolloutSource) -> str | None:
        """The staleness rule at consumption: None to train on the group, else why it is dropped.

        A group is trained on only when this run's weights of its version sampled it, that
        version is at most ``max_staleness`` behind the current one, and, when it is behind, its
        rows carry the sampling logprobs that truncated importance sampling corrects them with.
        ``"stale"``: more than ``max_staleness`` versions behind. ``"lost"``: its job is neither
        this process's nor one the checkpoint lists (a killed trainer's, sampled by weights of a
        version after its last checkpoint, which this run never had). ``"uncorrectable"``:
        behind, without sampling logprobs.
        """
        version, job, logprobs = _provenance(delivery)
        if version is None:  # not stamped (no source of the trainer's does that): as it comes
            return None
        lag = self.state.policy_version - version
        if lag > self.config.max_staleness:
            return "stale"
        if job is None or (job not in source.jobs and job not in self.state.lineage_jobs):
            await source.settle()  # a job just submitted: its id comes back with the service's answer
            if job is None or (job not in source.jobs and job not in self.state.lineage_jobs):
                return "lost"
        if lag > 0 and not logprobs:
            return "uncorrectable"
        return None

    def _record_lineage(self, source: RolloutSource) -> None:
        """Keep the jobs a resume may still use: this run's, within ``max_staleness`` of now."""
        oldest = self.state.policy_version - self.config.max_staleness
        jobs = {**self.state.lineage_jobs, **source.jobs}
        self.state.lineage_jobs = {job: v for job, v in jobs.items() if v >= oldest}

    async def _train_on(self, deliveries: Sequence[Delivery | Group]) -> dict[str, float]:
        """Advantages, old/ref logprobs and the update for one iteration's groups."""
        config = self.config
        actions: list[str | None] | None = None
        agents: list[str] | None = None
        if config.rollout.trajectory_mode:
            rows, metrics = await self._sequence_rows(deliveries)
        else:
            rows, metrics, actions, agents = await self._step_rows(deliveries)
        metrics["rows/count"] = float(len(rows))
        adv = rows.advantages
        if adv.dim() == 1:
            metrics["advantage/mean"] = float(adv.mean())
            metrics["advantage/abs_mean"] = float(adv.abs().mean())
        else:  # per token (trajectory rows): the mean over the model's tokens
            tokens = rows.response_mask.sum().clamp_min(1.0)
            metrics["advantage/mean"] = float((adv * rows.response_mask).sum() / tokens)
            metrics["advantage/abs_mean"] = float((adv.abs() * rows.response_mask).sum() / tokens)
        mini_batches = await self._agree_mini_batches(len(rows))
        shares = self._policy_rows(rows, agents)

        def compute() -> dict[str, float]:
            out: dict[str, float] = {}
            actor: list[dict[str, float]] = []
            diff = tokens = 0.0
            for policy, own_rows, own_agents in shares:
                policy.activate()
                try:
                    stats, diffs = self._update_policy(
                        policy, own_rows, own_agents, deliveries, actions, mini_batches, out
                    )
                finally:
                    if SHARED_POLICY in self.policies:
                        self.policies[SHARED_POLICY].activate()
                actor.append(stats.as_dict())
                diff, tokens = diff + diffs[0], tokens + diffs[1]
                for agent, norm in stats.agent_grad_norm.items():
                    out[f"agent/{agent}/grad_norm"] = norm
                    out[f"agent/{agent}/grad_norm_max"] = stats.agent_grad_norm_max[agent]
                if self.config.agents:  # a model per agent: each model's own numbers
                    out[f"agent/{policy.name}/rows"] = float(len(own_rows))
                    out[f"agent/{policy.name}/lr"] = stats.lr
                    out[f"agent/{policy.name}/loss"] = stats.loss
                    out[f"agent/{policy.name}/tokens"] = float(stats.tokens)
                    if diffs[1]:
                        out[f"agent/{policy.name}/logprob_diff"] = diffs[0] / diffs[1]
            if rows.has_rollout_logprobs:
                out["rollout/logprob_diff"] = diff / max(tokens, 1.0)
            if actor:
                out.update(_combine_actor(actor))
            return out

        # In a worker thread: the event loop keeps playing groups meanwhile (max_staleness > 0).
        metrics.update(await asyncio.to_thread(compute))
        return metrics

    def _policy_rows(
        self, rows: RowBatch, agents: list[str] | None
    ) -> list[tuple[AgentPolicy, RowBatch, list[str] | None]]:
        """Each model's rows (and their agents): all rows for one model; by role with ``agents:``."""
        if not self.own_policies or agents is None:
            return [(self.policies[SHARED_POLICY], rows, agents)]
        by_policy: dict[str, list[int]] = defaultdict(list)
        for i, agent in enumerate(agents):
            by_policy[self.config.policy_of(agent)].append(i)
        out: list[tuple[AgentPolicy, RowBatch, list[str] | None]] = []
        for name, policy in self.policies.items():
            index = by_policy.get(name, [])
            if not index:
                continue
            own = rows.select(index)
            if policy.tokenizer.pad_token_id != self.tokenizer.pad_token_id:
                own = _padded_with(own, policy.tokenizer.pad_token_id)
            out.append((policy, own, [agents[i] for i in index]))
        return out

    def _update_policy(
        self,
        policy: AgentPolicy,
        rows: RowBatch,
        agents: list[str] | None,
        deliveries: Sequence[Delivery | Group],
        actions: list[str | None] | None,
        mini_batches: int | None,
        out: dict[str, float],
    ) -> tuple[Any, tuple[float, float]]:
        """Old and reference logprobs and the update of one model on its rows.

        Returns its update's stats and (the summed |old - rollout| logprob gap, the tokens).
        """
        config = self.config
        learner = policy.learner
        t = time.perf_counter()
        # TimerPO: the expert states first, so the old-logprob pass can score each row as it goes.
        scores = self._grounded_scores(deliveries, rows) if config.grounded.enabled else None
        if config.loss.old_logprobs == "recompute" or not rows.has_rollout_logprobs:
            old = learner.logprobs(rows, hidden_sink=scores)
        else:
            old = rows.rollout_logprobs
        if scores is not None:  # the grounded mix, before the loss sees the advantages
            out.update(mix_into_rows(rows, scores))
        out["time/old_logprobs_s"] = out.get("time/old_logprobs_s", 0.0) + time.perf_counter() - t
        gap = (0.0, 0.0)
        if rows.has_rollout_logprobs:
            diff = ((old - rows.rollout_logprobs).abs() * rows.response_mask).sum()
            gap = (float(diff), float(rows.response_mask.sum()))
        t = time.perf_counter()
        ref = learner.reference_logprobs(rows)
        out["time/ref_s"] = out.get("time/ref_s", 0.0) + time.perf_counter() - t
        weights = None
        if self.coso is not None and actions is not None:
            t = time.perf_counter()
            weights = self._causal_weights(rows, actions, out)
            out["time/coso_s"] = time.perf_counter() - t
        t = time.perf_counter()
        saved = learner.loss_config
        if self._tis is not None and saved.tis_threshold is None and rows.has_rollout_logprobs:
            learner.loss_config = saved.model_copy(update={"tis_threshold": self._tis})
        try:
            learner.set_progress(self.state.iteration, config.iterations)
            stats = learner.update(
                rows, old, ref, mini_batches=mini_batches, entropy_weights=weights, row_agents=agents
            )
        finally:
            learner.loss_config = saved
        out["time/update_s"] = out.get("time/update_s", 0.0) + time.perf_counter() - t
        return stats, gap

    def _grounded_scores(self, deliveries: Sequence[Delivery | Group], rows: RowBatch) -> RowScores:
        """TimerPO's row scorer: each group's expert explanation run through the policy."""
        task_ids = [_task_id(d) for d in deliveries]
        limit = self.config.grounded.expert_max_tokens
        ids = [self.tokenizer.encode(text)[:limit] for text in expert_texts(self.spec, task_ids)]
        return RowScores(self.config.grounded, self.learner.text_hidden_states(ids), rows.group_index)

    def _causal_weights(
        self, rows: RowBatch, actions: Sequence[str | None], metrics: dict[str, float]
    ) -> torch.Tensor:
        """CoSo: add the rows to the classifier's buffer, train it, and weigh their tokens."""
        assert self.coso is not None
        ids, mask = rows.response_ids, rows.response_mask
        metrics["coso/rows"] = float(self.coso.observe(ids, mask, actions))
        fit = self.coso.update()
        weights = self.coso.weights(ids, mask, actions)
        valid = torch.tensor([a is not None for a in actions], dtype=torch.float32)[:, None] * mask
        metrics["coso/loss"] = fit.loss
        metrics["coso/accuracy"] = fit.accuracy
        metrics["coso/steps"] = float(fit.steps)
        metrics["coso/labels"] = float(len(self.coso.labels))
        metrics["coso/weight_mean"] = float((weights * valid).sum() / valid.sum().clamp_min(1.0))
        return weights

    def _staleness(self, versions: Sequence[int], metrics: dict[str, float]) -> None:
        """How far behind the current version the iteration's groups were sampled.

        ``staleness/corrected`` counts the groups behind it (their rows are corrected by
        truncated importance sampling; groups further behind than ``max_staleness`` never get here).
        """
        if versions:
            lag = [self.state.policy_version - v for v in versions]
            metrics["staleness/mean"] = float(np.mean(lag))
            metrics["staleness/max"] = float(max(lag))
            metrics["staleness/corrected"] = float(sum(1 for x in lag if x > 0))

    async def _step_rows(
        self, deliveries: Sequence[Delivery | Group]
    ) -> tuple[RowBatch, dict[str, float], list[str | None] | None, list[str] | None]:
        """One row per step, with its step's advantage, with CoSo each row's action, and in a
        multi-agent run each row's agent.

        Deliveries decoded as columns (a Redis queue) go straight to rows
        (:func:`build_rows_from_columns`, no records); others (in-process queue) through records.
        The actions (None where invalid) are read from the records only when CoSo needs them.
        """
        config = self.config
        columns = [d.columns for d in deliveries if isinstance(d, Delivery) and d.columns is not None]
        if len(columns) == len(deliveries):
            metrics = column_metrics(columns)
            versions = [c.policy_version for c in columns if c.policy_version is not None]
            built = await asyncio.to_thread(
                build_rows_from_columns,
                columns,
                **self._row_limits(),
            )
        else:
            groups = [d.group if isinstance(d, Delivery) else d for d in deliveries]
            metrics = rollout_metrics(groups)
            versions = [g.policy_version for g in groups if g.policy_version is not None]
            built = build_rows(
                groups,
                **self._row_limits(),
            )
        self._staleness(versions, metrics)
        rows = built.rows
        advantages = compute_advantages(built.steps, config.algo, config=self.advantage_config)
        rows.advantages = torch.as_tensor(advantages[built.kept] * self._sign, dtype=torch.float32)
        metrics["rows/dropped_long"] = float(built.dropped_long)
        metrics["rows/overlong_masked"] = float(built.dropped_long)
        metrics["rows/overlong_truncated"] = float(built.truncated)
        metrics["rows/inexact"] = float(built.inexact)
        actions = _row_actions(deliveries, built.kept) if self.coso is not None else None
        agents = _row_agents(deliveries, built.kept) if config.rollout.agents is not None else None
        return rows, metrics, actions, agents

    def _row_limits(self) -> dict[str, Any]:
        """The padding and length limits every row builder takes (step, column and sequence rows)."""
        rollout = self.config.rollout
        return {
            "pad_token_id": self.tokenizer.pad_token_id,
            "max_prompt_tokens": rollout.max_prompt_tokens,
            "max_response_tokens": rollout.max_response_tokens,
            "overlong": rollout.overlong,
            "overlong_penalty": rollout.overlong_penalty,
        }

    async def _sequence_rows(
        self, deliveries: Sequence[Delivery | Group]
    ) -> tuple[RowBatch, dict[str, float]]:
        """Trajectory mode: one row per episode's token sequence, per-token advantages.

        The sequences travel in the group records (a columns delivery decodes its record here).
        """
        config = self.config
        groups = [d.group if isinstance(d, Delivery) else d for d in deliveries]
        metrics = rollout_metrics(groups)
        self._staleness([g.policy_version for g in groups if g.policy_version is not None], metrics)
        built = await asyncio.to_thread(
            build_sequence_rows,
            groups,
            **self._row_limits(),
        )
        rows = built.rows
        rows.advantages = sequence_advantages(built, config.algo, self.advantage_config) * self._sign
        metrics["rows/overlong_masked"] = float(built.dropped_long)
        metrics["rows/overlong_truncated"] = float(built.truncated)
        metrics["rows/untokenized"] = float(built.untokenized)
        metrics["rows/segments"] = float(built.segments)
        metrics["rows/model_tokens"] = float(rows.tokens)
        metrics["rows/env_tokens"] = float(built.env_tokens)
        return rows, metrics

    async def _agree_mini_batches(self, rows: int) -> int | None:
        """Under torchrun, one mini-batch count for every rank (at most the smallest rank's rows)."""
        if self.dist.world == 1:
            return None
        fewest = -int(all_reduce_floats([-rows], "max")[0])
        total = int(all_reduce_floats([rows])[0])
        per = self.config.optim.mini_batch_rows or total
        return max(1, min(fewest, math.ceil(total / per)))

    def _full_model(self) -> Any:
        """The model whose weights generation gets: ``self.model``, or under FSDP2 a gathered copy.

        Collective under FSDP2 (every rank calls it). The copy is kept where it is used: on
        every rank for in-process generation (each rank samples its own groups), on rank 0 only
        for a served policy (only rank 0 pushes); elsewhere this returns None.
        """
        if not is_sharded(self.model):
            return self.model
        keep = self.config.rollout.generation == "transformers" or self.dist.main
        return unsharded_copy(self.model, keep=keep)

    def _checkpoint(self) -> None:
        """Write a checkpoint from rank 0; under FSDP2 every rank first joins the gathers.

        The weights are a full Hugging Face directory and the optimizer state is keyed by
        parameter name, so a checkpoint of any strategy resumes under any other, or in one process.
        """
        if SHARED_POLICY not in self.policies:  # a model per agent, one process
            save_checkpoint(
                self.run_dir,
                model=None,
                optimizer_state=None,
                scheduler=None,
                state=self.state,
                keep=self.config.output.keep_checkpoints,
                agents=self._agent_parts(),
            )
            return
        sharded = is_sharded(self.model)
        if not sharded and not self.dist.main:
            return
        model = unsharded_copy(self.model, keep=self.dist.main) if sharded else self.model
        optimizer_state = full_optimizer_state(self.model, self.learner.optimizer)
        if not self.dist.main:
            return
        save_checkpoint(
            self.run_dir,
            model=model,
            optimizer_state=optimizer_state,
            agents=self._agent_parts() or None,
            scheduler=self.learner.scheduler,
            state=self.state,
            tokenizer_dir=self.config.model.path,
            keep=self.config.output.keep_checkpoints,
            shuffle=self.learner.shuffle_generator,
        )

    async def _validate(self, source: RolloutSource) -> dict[str, float]:
        """verl-agent's validation: the test split, n = 1, T = 0.4, seeds offset by 1000."""
        v = self.config.validation
        if not isinstance(source, EngineRollouts):
            raise ConfigurationError("Validation runs with in-process rollouts; set validation.every=0 here.")
        tasks_ids = (await self._task_ids(v.split))[: v.tasks]
        tasks = [
            GroupTask(slot=i, task_id=t, seed=self.config.seed + v.seed_offset + i)
            for i, t in enumerate(tasks_ids)
        ]
        queue = MemoryQueue(max_pending=len(tasks) + 1)
        sampling = self.sampling.model_copy(
            update={"temperature": v.temperature, "seed": self.config.seed + v.seed_offset}
        )
        await source.play(
            tasks, version=self.state.policy_version, sampling=sampling, group_size=v.group_size, queue=queue
        )
        groups = [d.group for d in await queue.get(len(tasks), timeout_s=1.0)]
        metrics = {k.replace("rollout/", "val/"): value for k, value in rollout_metrics(groups).items()}
        # The numbers `envhub eval` reports (intervals, pass@k, pass^k, the env's breakdown).
        ks = range(1, v.group_size + 1)
        return {**metrics, **metrics_from_groups(groups, spec=self.spec, ks=ks, prefix="val/")}


def train(config: TrainConfig, **kwargs: Any) -> TrainResult:
    """Run a training run to the end (a blocking wrapper of :meth:`Trainer.run`)."""
    trainer = Trainer(config, **kwargs)
    try:
        return asyncio.run(trainer.run())
    finally:
        with contextlib.suppress(Exception):
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()
