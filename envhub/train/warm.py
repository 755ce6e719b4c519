"""A supervised warm start: scripted demonstrations, token cross-entropy, a model per policy.

A model that never writes a valid action gets the same reward on every row, so every
advantage is 0 and RL has nothing to follow (``docs/training.md``, the Dr. MAS recipe). The
warm start gives each model of a run the format first, from envhub's own scripted policies
(``warm_start`` in the recipe, :class:`~envhub.train.config.WarmStartSettings`):

1. **Demonstrations.** The scripted policies play the run's own rollout job
   (:meth:`~envhub.train.config.RolloutSettings.job`: the env, the orchestra, the context, the
   step limit) on ``warm_start.split`` through the real engine, so every role is sent exactly the
   prompt the run's model will be sent. Each call (each row of the played groups) is one
   demonstration: the chat messages and the scripted response. ``successful_only`` keeps the
   calls of won episodes only. A role in ``labels`` keeps the prompts it was played and is
   trained on another script's answers to them: a label blind to the observation
   (:func:`~envhub.envs.search.policy.coin_verifier`) teaches the format and leaves the decision
   to RL.
2. **Tokens.** A demonstration is tokenised as the in-process sampler reads it
   (:class:`~envhub.policy.transformers_backend.TransformersBackend`): the chat template's
   rendering of the messages with the generation prompt, then the response's ids and the
   end-of-turn id the sampler stops on. Only the response and end-of-turn tokens are scored.
   A prompt longer than ``rollout.max_prompt_tokens`` is left out (the run's ``overlong: mask``
   would leave such a row out too).
3. **Training.** Each model of the run (:data:`~envhub.train.config.SHARED_POLICY` for the
   top-level one, else the role whose ``agents.<role>`` it is) is loaded from the recipe's path
   in float32 and trained on its roles' demonstrations: ``epochs`` passes in a seeded shuffled
   order, ``batch_rows`` demonstrations a step, the mean cross-entropy over the batch's scored
   tokens, AdamW and gradient clipping. The same recipe and seed give the same weights.
4. **Output.** ``OUT/<name>/`` is a Hugging Face directory (the model, its generation config, the
   source's tokenizer and chat template) and ``envhub_warm_start.json`` (the settings and the
   losses). :attr:`WarmStartResult.overrides` are the recipe keys that point a run at them.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import random
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from envhub.core.errors import ConfigurationError
from envhub.core.records import Group
from envhub.core.wire import OrchestraSpec, RolloutRequest
from envhub.envs import resolve
from envhub.policy.base import PolicyBackend, Prompt, SamplingParams
from envhub.policy.scripted import load_scripted
from envhub.policy.tokenizer import ChatTokenizer
from envhub.train.config import SHARED_POLICY, TrainConfig, WarmStartSettings

__all__ = [
    "PROVENANCE",
    "Demonstration",
    "PolicyWarmStart",
    "TokenRow",
    "WarmStartResult",
    "collect_demonstrations",
    "demonstration_request",
    "fit",
    "model_sources",
    "tokenise",
    "warm_start",
]

#: The provenance file written beside each warmed model.
PROVENANCE = "envhub_warm_start.json"


@dataclass(frozen=True)
class Demonstration:
    """One scripted call: what its model was sent and what it should answer.

    Attributes:
        policy: the run's model that learns it (:data:`SHARED_POLICY` or a role with its own).
        agent: the role that made the call (None: a single-agent run).
        messages: the chat messages sent.
        response: the scripted response text.
    """

    policy: str
    agent: str | None
    messages: list[dict[str, Any]]
    response: str


@dataclass(frozen=True)
class TokenRow:
    """One tokenised demonstration: ``ids`` and where its scored part (the response) starts."""

    ids: list[int]
    start: int


@dataclass(frozen=True)
class PolicyWarmStart:
    """What the warm start did to one model.

    Attributes:
        name: the model (:data:`SHARED_POLICY` or a role).
        source: the recipe's model directory it started from.
        path: the directory written.
        rows: demonstrations trained on.
        skipped: demonstrations left out (prompt over ``rollout.max_prompt_tokens``).
        tokens: scored (response) tokens per epoch.
        losses: the mean cross-entropy of each epoch.
        seconds: the training time.
    """

    name: str
    source: str
    path: Path
    rows: int
    skipped: int
    tokens: int
    losses: list[float]
    seconds: float


@dataclass
class WarmStartResult:
    """The warm start of a run: its demonstrations and each model's result."""

    episodes: int
    won: int
    demonstrations: int
    policies: list[PolicyWarmStart] = field(default_factory=list)

    @property
    def overrides(self) -> dict[str, str]:
        """The recipe keys (``--set`` / ``--model``) that start a run from the warmed models."""
        out = {}
        for p in self.policies:
            key = "model.path" if p.name == SHARED_POLICY else f"agents.{p.name}.model.path"
            out[key] = str(p.path)
        return out


def _settings(config: TrainConfig) -> WarmStartSettings:
    if config.warm_start is None:
        raise ConfigurationError(
            "The recipe has no warm_start section: add one (warm_start: {policy: 'scripted:...'}; "
            "docs/training.md, 'Warm start') to say which scripted policies demonstrate."
        )
    return config.warm_start


def demonstration_request(config: TrainConfig, task_ids: Sequence[str] | None = None) -> RolloutRequest:
    """The run's rollout job, played by the warm start's scripted policies on its split: the
    first ``warm_start.tasks`` tasks, or ``task_ids`` (the whole split)."""
    warm = _settings(config)
    agents = config.rollout.agents
    update: dict[str, Any] = {
        "env_id": resolve(config.env).id,
        "policy": warm.policy,
        "split": warm.split,
        "task_ids": None if task_ids is None else list(task_ids),
        "count": warm.tasks if task_ids is None else None,
        "group_size": warm.group_size,
        "seed": config.seed,
    }
    if agents is not None:
        update["agents"] = OrchestraSpec.model_validate(
            {**agents.model_dump(exclude={"policies"}), "policies": warm.policies}
        )
    return config.rollout.job(**update)


async def _play_demonstrations(config: TrainConfig) -> list[Group]:
    from envhub.rollout.driver import play
    from envhub.train.config import TrainerCredentials
    from envhub.train.rollouts import build_env_pool

    warm = _settings(config)
    task_ids = None
    if warm.tasks is None:
        token = TrainerCredentials().env_token
        pool = build_env_pool(resolve(config.env).id, config.rollout, token=token)
        try:
            task_ids = await pool.task_ids(warm.split, None, config.rollout.env_kwargs)
        finally:
            await pool.aclose()
    return (await play(demonstration_request(config, task_ids), job_id="warm-start")).groups


def collect_demonstrations(config: TrainConfig) -> tuple[list[Demonstration], list[Group]]:
    """Play :func:`demonstration_request` and return every kept call, and the groups played. A
    role in ``warm_start.labels`` keeps its played prompts and takes its label's responses."""
    warm = _settings(config)
    labels = {role: load_scripted(spec) for role, spec in warm.labels.items()}  # a bad spec fails before play
    groups = asyncio.run(_play_demonstrations(config))
    out = []
    for group in groups:
        for traj in group.trajectories:
            if warm.successful_only and not traj.won:
                continue
            for step in traj.steps:
                if not step.prompt_messages:
                    continue
                agent = step.agent_id
                name = config.base_of(agent) if agent is not None else SHARED_POLICY
                out.append(Demonstration(name, agent, list(step.prompt_messages), step.response_text))
    return asyncio.run(_relabel(out, labels, warm.labels)), groups


async def _relabel(
    demonstrations: list[Demonstration], labels: Mapping[str, PolicyBackend], specs: Mapping[str, str]
) -> list[Demonstration]:
    """Each labelled role's demonstrations answered by its label (one batch per role), in order.
    The label sees the chat messages (a copy) and ``metadata["role"]`` only; what it answers never
    depends on whether the episode was won (``successful_only`` chose the prompts, not the
    responses)."""
    out = list(demonstrations)
    for role, backend in labels.items():
        where = [i for i, d in enumerate(out) if d.agent == role]
        prompts = [Prompt(messages=copy.deepcopy(out[i].messages), metadata={"role": role}) for i in where]
        try:
            answers = await backend.generate(prompts, SamplingParams())
        except Exception as exc:  # the script's own failure, said in one line with the key to fix
            raise ConfigurationError(
                f"warm_start.labels.{role}: {specs[role]} failed on a {role} prompt ({type(exc).__name__}: "
                f"{exc}); a label sees the chat messages and metadata['role'] only",
                role=role,
            ) from exc
        finally:
            await backend.aclose()
        for i, answer in zip(where, answers, strict=True):
            if not isinstance(answer.text, str):
                raise ConfigurationError(
                    f"warm_start.labels.{role}: {specs[role]} answered a {type(answer.text).__name__}, "
                    "not text",
                    role=role,
                )
            out[i] = dataclasses.replace(out[i], response=answer.text)
    return out


def tokenise(
    tokenizer: ChatTokenizer, demonstrations: Sequence[Demonstration], *, max_prompt_tokens: int | None
) -> tuple[list[TokenRow], int]:
    """Each demonstration as the sampler reads it (prompt with generation prompt, response, end
    of turn); and how many were left out for a prompt over ``max_prompt_tokens``."""
    eos = tokenizer.eos_token_ids[0]
    out, skipped = [], 0
    for demo in demonstrations:
        prompt = tokenizer.render(demo.messages, add_generation_prompt=True)
        if max_prompt_tokens is not None and len(prompt) > max_prompt_tokens:
            skipped += 1
            continue
        out.append(TokenRow([*prompt, *tokenizer.encode(demo.response), eos], len(prompt)))
    return out, skipped


def _batch(rows: Sequence[TokenRow], pad: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ids, attention mask and the scored-token mask (over the targets ids[1:])."""
    width = max(len(r.ids) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    scored = torch.zeros((len(rows), width - 1), dtype=torch.bool)
    for i, row in enumerate(rows):
        ids[i, : len(row.ids)] = torch.tensor(row.ids)
        attention[i, : len(row.ids)] = 1
        scored[i, row.start - 1 : len(row.ids) - 1] = True  # target t+1 is scored at position t
    return ids, attention, scored


def _batches(rows: Sequence[TokenRow], size: int, rng: random.Random) -> list[list[TokenRow]]:
    """A seeded shuffle, batched by length: rows of a window of 16 batches are sorted by length
    before batching (little padding, as ``group_by_length`` samplers do), then the batches shuffled."""
    order = list(rows)
    rng.shuffle(order)
    batches: list[list[TokenRow]] = []
    window = 16 * size
    for start in range(0, len(order), window):
        chunk = sorted(order[start : start + window], key=lambda r: len(r.ids))
        batches.extend(chunk[i : i + size] for i in range(0, len(chunk), size))
    rng.shuffle(batches)
    return batches


def _response_nll(model: Any, rows: Sequence[TokenRow], pad: int) -> tuple[torch.Tensor, int]:
    """The summed cross-entropy of the scored tokens, and their count. The output head runs on
    the scored positions only (most of a row is prompt)."""
    ids, attention, scored = _batch(rows, pad)
    hidden = model.get_decoder()(input_ids=ids, attention_mask=attention).last_hidden_state
    logits = model.get_output_embeddings()(hidden[:, :-1][scored]).float()
    nll = torch.nn.functional.cross_entropy(logits, ids[:, 1:][scored], reduction="sum")
    return nll, int(scored.sum())


def fit(
    model: Any,
    rows: Sequence[TokenRow],
    *,
    settings: WarmStartSettings,
    pad_token_id: int,
    seed: int,
    epochs: int | None = None,
    on_epoch: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` on ``rows`` (token cross-entropy on the scored tokens, the mean over each
    batch's) for ``epochs`` passes (default ``settings.epochs``); return each epoch's mean loss
    per scored token."""
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=settings.lr, weight_decay=settings.weight_decay)
    rng = random.Random(seed)
    model.train()
    losses = []
    for epoch in range(settings.epochs if epochs is None else epochs):
        total, count = 0.0, 0
        for batch in _batches(rows, settings.batch_rows, rng):
            nll, n = _response_nll(model, batch, pad_token_id)
            optimizer.zero_grad(set_to_none=True)
            (nll / n).backward()
            torch.nn.utils.clip_grad_norm_(params, settings.grad_clip)
            optimizer.step()
            total, count = total + float(nll.detach()), count + n
        losses.append(total / max(count, 1))
        if on_epoch is not None:
            on_epoch(epoch, losses[-1])
    model.eval()
    return losses


def model_sources(config: TrainConfig) -> dict[str, str]:
    """Each model the warm start trains and the recipe's directory it starts from, in the order
    that seeds them (the i-th model trains under ``config.seed + i``). An adapter agent has no
    model of its own: its demonstrations warm the top-level model it adapts, and the run then
    puts a fresh adapter on the warmed weights (an adapter starts as the identity)."""
    roles = config.rollout.agents.roles if config.rollout.agents is not None else ()
    bases = [config.base_of(role) for role in roles]
    out = {SHARED_POLICY: config.model.path} if SHARED_POLICY in bases or not roles else {}
    out.update((name, config.agents[name].model.path) for name in bases if name != SHARED_POLICY)
    return out


def _warm_one(
    name: str,
    source: str,
    demonstrations: Sequence[Demonstration],
    *,
    config: TrainConfig,
    out: Path,
    seed: int,
    on_epoch: Callable[[str, int, float], None] | None,
) -> PolicyWarmStart:
    from transformers import AutoModelForCausalLM

    if not Path(source).is_dir():
        raise ConfigurationError(
            f"The model {name!r} starts from {source!r}, which is not a directory; `envhub model tiny "
            "--out DIR` builds one.",
            path=source,
        )
    tokenizer = ChatTokenizer(source)
    rows, skipped = tokenise(tokenizer, demonstrations, max_prompt_tokens=config.rollout.max_prompt_tokens)
    if not rows:
        raise ConfigurationError(
            f"No demonstration is left for the model {name!r} ({len(demonstrations)} played, "
            f"{skipped} over rollout.max_prompt_tokens); play more tasks or turn off "
            "warm_start.successful_only.",
            policy=name,
        )
    started = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32, local_files_only=True)
        losses = fit(
            model,
            rows,
            settings=_settings(config),
            pad_token_id=tokenizer.pad_token_id,
            seed=seed,
            epochs=_settings(config).epochs_of(name),
            on_epoch=None if on_epoch is None else (lambda e, loss: on_epoch(name, e, loss)),
        )
    seconds = time.perf_counter() - started
    path = out / name
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.hf.save_pretrained(path)
    tokens = sum(len(r.ids) - r.start for r in rows)
    record = PolicyWarmStart(name, source, path, len(rows), skipped, tokens, losses, seconds)
    provenance = {
        "source": source,
        "roles": sorted({d.agent for d in demonstrations if d.agent is not None}),
        "rows": len(rows),
        "skipped": skipped,
        "tokens": tokens,
        "losses": losses,
        "epochs": len(losses),
        "seconds": seconds,
        "seed": seed,
        "demonstrations": len(demonstrations),
        "settings": _settings(config).model_dump(),
    }
    (path / PROVENANCE).write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    return record


def warm_start(
    config: TrainConfig,
    out_dir: str | Path,
    *,
    on_epoch: Callable[[str, int, float], None] | None = None,
) -> WarmStartResult:
    """Play the demonstrations and train every model of ``config`` on its own (module docstring).

    Args:
        config: the run; its ``warm_start`` section says who demonstrates and how to train.
        out_dir: where ``<name>/`` goes for each model (created).
        on_epoch: called with (model name, epoch, mean loss) after each epoch.

    Raises:
        ConfigurationError: no ``warm_start`` section, a model directory that does not exist, or
            a model with no demonstration left.
    """
    demonstrations, groups = collect_demonstrations(config)
    trajectories = [t for g in groups for t in g.trajectories]
    result = WarmStartResult(
        episodes=len(trajectories),
        won=sum(1 for t in trajectories if t.won),
        demonstrations=len(demonstrations),
    )
    by_policy: Mapping[str, list[Demonstration]] = defaultdict(list)
    for demo in demonstrations:
        by_policy[demo.policy].append(demo)
    out = Path(out_dir)
    for i, (name, source) in enumerate(model_sources(config).items()):
        result.policies.append(
            _warm_one(
                name,
                source,
                by_policy.get(name, []),
                config=config,
                out=out,
                seed=config.seed + i,
                on_epoch=on_epoch,
            )
        )
    return result
