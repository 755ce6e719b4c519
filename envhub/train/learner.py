"""The actor update: response logprobs, verl's loss over mini- and micro-batches, AdamW.

:class:`Learner` owns the trainable model, a frozen reference copy (only when the KL
coefficient is not 0; for a LoRA model the base with its adapters disabled, no copy), the
optimizer and the learning-rate schedule. One :meth:`Learner.update` is verl's
``update_policy``: ``ppo_epochs`` passes over the rows, each split into mini-batches (one
optimizer step each) and micro-batches (gradient accumulation). The token-mean denominator
is the whole mini-batch's token count, summed over data-parallel ranks, so micro-batching and
the number of ranks do not change the loss (verl 0.9.1; ``loss.micro_batch_mean`` restores
verl-agent's per-micro-batch mean). A step whose loss or gradient norm is not finite is skipped
and counted, never applied; under torchrun the ranks agree on it (a step is skipped on all or
none).

Under FSDP2 (``shard``, ``envhub.train.parallel``) every forward and backward pass is a
collective, so the ranks agree on the number of passes and a rank with fewer rows runs passes
whose loss is multiplied by 0 (they add nothing to the gradient but take part in the gathers).

Logprobs are of the temperature-scaled distribution (logits / T, as verl's actor does), so they
compare with the rollout's processed logprobs.
"""

from __future__ import annotations

import contextlib
import copy
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from envhub.train.config import LossConfig, ModelConfig, OptimConfig
from envhub.train.loss import (
    KPOParams,
    agg_loss,
    entropy_from_logits,
    kl_penalty,
    policy_loss,
    tis_weights,
)
from envhub.train.parallel import all_gather_objects, all_reduce_floats
from envhub.train.rows import RowBatch

__all__ = [
    "COMPUTE_DTYPES",
    "HiddenSink",
    "Learner",
    "UpdateStats",
    "precision_context",
    "resolve_device",
    "response_logprobs",
]


def resolve_device(name: str) -> torch.device:
    """``auto`` -> cuda when available, else cpu."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


COMPUTE_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


def precision_context(
    device: torch.device, dtype: torch.dtype | None
) -> contextlib.AbstractContextManager[Any]:
    """Autocast to ``dtype`` on ``device`` (None or float32: no autocast).

    Every forward pass whose log-probs enter the ratio (old, reference, new) runs under this one
    context, so on-policy the ratio is exactly 1.
    """
    if dtype is None or dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def _unwrap(model: Any) -> Any:
    """The Hugging Face causal LM inside a DDP wrapper and/or a peft model."""
    inner = getattr(model, "module", None)
    if inner is not None and type(model).__name__ == "DistributedDataParallel":
        model = inner
    if hasattr(model, "get_base_model"):
        model = model.get_base_model()
    return model


def _head_logp_entropy(
    hidden: torch.Tensor,
    ids: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    temperature: float,
    with_entropy: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-prob of ``ids`` and the entropy at ``(n, hidden)`` positions, with fp32 softmax."""
    logits = torch.nn.functional.linear(hidden, weight, bias).float()
    if temperature > 0:
        logits = logits / temperature
    lse = torch.logsumexp(logits, dim=-1)
    logp = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1) - lse
    if not with_entropy:
        return logp, torch.zeros_like(logp)
    # H = lse - Σ softmax·logits, one vocab-wide temporary beside the logits
    entropy = lse - (torch.softmax(logits, dim=-1) * logits).sum(-1)
    return logp, entropy


#: Receives each row's last-layer hidden states on its response tokens, ``(tokens, hidden)``
#: float32 on CPU, with the row's index in the batch (TimerPO's grounded score, envhub.train.grounded).
HiddenSink = Callable[[int, torch.Tensor], None]


def _forward_response(
    model: Any,
    rows: RowBatch,
    temperature: float,
    *,
    with_entropy: bool,
    chunk_tokens: int = 0,
    dtype: torch.dtype | None = None,
    on_hidden: Callable[[torch.Tensor, torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token logprobs (and entropies) of each row's response tokens, ``(rows, T)``.

    With ``chunk_tokens`` > 0 the output head runs only at the response tokens of the rows
    (padding and prompt positions never reach it), ``chunk_tokens`` at a time, and under grad
    each chunk is recomputed in the backward pass: the largest vocab-wide tensor is
    ``chunk_tokens × vocab``. With 0 the model's own logits over every position are used.
    Both run under :func:`precision_context` ``(dtype)``.

    ``on_hidden`` gets the pass's last-layer hidden states ``(rows, length, hidden)`` and the
    response positions ``(rows, T)`` (the decoder's output, as ``output_hidden_states[-1]``).
    """
    device = next(model.parameters()).device
    input_ids = rows.input_ids.to(device)
    attention = rows.attention_mask.to(device)
    # Trim the common right padding: a micro-batch of short rows need not pay for long ones.
    length = int(attention.sum(-1).max().item())
    input_ids, attention = input_ids[:, :length], attention[:, :length]
    # The token at position p is predicted by the logits at p - 1.
    index = (rows.response_index.to(device) - 1).clamp(min=0, max=length - 1)
    response_ids = rows.response_ids.to(device)
    positions = rows.response_index.to(device).clamp(max=length - 1)
    with precision_context(device, dtype):
        if chunk_tokens <= 0:
            out = model(
                input_ids=input_ids,
                attention_mask=attention,
                use_cache=False,
                output_hidden_states=on_hidden is not None,
            )
            if on_hidden is not None:
                on_hidden(out.hidden_states[-1], positions)
            vocab = out.logits.shape[-1]
            logits = out.logits.gather(1, index.unsqueeze(-1).expand(-1, -1, vocab)).float()
            if temperature > 0:
                logits = logits / temperature
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(-1, response_ids.unsqueeze(-1)).squeeze(-1)
            entropy = entropy_from_logits(logits) if with_entropy else None
            return logp, entropy
        return _lean_forward(
            model,
            input_ids,
            attention,
            index,
            response_ids,
            rows.response_mask.to(device),
            temperature,
            with_entropy,
            chunk_tokens,
            on_hidden=None if on_hidden is None else lambda hidden: on_hidden(hidden, positions),
        )


def _lean_forward(
    model: Any,
    input_ids: torch.Tensor,
    attention: torch.Tensor,
    index: torch.Tensor,
    response_ids: torch.Tensor,
    mask: torch.Tensor,
    temperature: float,
    with_entropy: bool,
    chunk_tokens: int,
    on_hidden: Callable[[torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    from torch.utils.checkpoint import checkpoint

    lm = _unwrap(model)
    captured: list[torch.Tensor] = []

    def keep(_module: Any, _args: Any, output: Any) -> None:
        captured.append(output[0] if isinstance(output, tuple) else output.last_hidden_state)

    # The forward goes through ``model`` itself (a DDP wrapper must see it); the model's own head
    # runs on the last position only, and the decoder's final hidden states are taken here.
    handle = lm.get_decoder().register_forward_hook(keep)
    try:
        model(input_ids=input_ids, attention_mask=attention, use_cache=False, logits_to_keep=1)
    finally:
        handle.remove()
    hidden = captured[-1]
    if on_hidden is not None:
        on_hidden(hidden)
    head = lm.get_output_embeddings()
    r_idx, t_idx = (mask > 0).nonzero(as_tuple=True)
    picked = hidden[r_idx, index[r_idx, t_idx]]  # (n, hidden): response tokens only
    ids = response_ids[r_idx, t_idx]
    logps, ents = [], []
    for start in range(0, picked.shape[0], chunk_tokens):
        h, i = picked[start : start + chunk_tokens], ids[start : start + chunk_tokens]
        if torch.is_grad_enabled():
            lp, en = checkpoint(
                _head_logp_entropy,
                h,
                i,
                head.weight,
                head.bias,
                temperature,
                with_entropy,
                use_reentrant=False,
            )
        else:
            lp, en = _head_logp_entropy(h, i, head.weight, head.bias, temperature, with_entropy)
        logps.append(lp)
        ents.append(en)
    flat = torch.cat(logps) if logps else hidden.new_zeros(0, dtype=torch.float32)
    logp = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).index_put((r_idx, t_idx), flat)
    entropy = None
    if with_entropy:
        flat_h = torch.cat(ents) if ents else flat
        entropy = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).index_put(
            (r_idx, t_idx), flat_h
        )
    return logp, entropy


def _idle_pass(model: Any, *, backward: bool) -> None:
    """A one-token forward (and backward of 0 x its output) that only joins FSDP2's collectives."""
    device = next(model.parameters()).device
    out = model(input_ids=torch.zeros((1, 1), dtype=torch.long, device=device), use_cache=False)
    if backward:
        # Zero gradients for every parameter, so every rank reduce-scatters the same tensors.
        (out.logits.float().sum() * 0.0).backward()


@torch.no_grad()
def response_logprobs(
    model: Any,
    rows: RowBatch,
    *,
    temperature: float,
    micro_batch_rows: int,
    passes: int | None = None,
    chunk_tokens: int = 0,
    dtype: torch.dtype | None = None,
    hidden_sink: HiddenSink | None = None,
) -> torch.Tensor:
    """Logprobs of the rows' response tokens under ``model`` (no gradient), ``(rows, T)`` on CPU.

    Args:
        passes: run exactly this many forward passes (at least the rows' micro-batch count),
            the extra ones on a dummy token: an FSDP2-sharded model needs the same count on every
            rank. None: one pass per micro-batch.
        chunk_tokens, dtype: as the update's forward (see :func:`_forward_response`); give the
            learner's, so that old and new logprobs come from one code path and precision.
        hidden_sink: called once per row with its last-layer hidden states on its response
            tokens (from the same pass; a micro-batch's states are handed over and dropped, so
            a whole batch's never sit in memory at once).
    """
    was_training = model.training
    model.eval()
    parts = []
    try:
        starts = range(0, len(rows), micro_batch_rows)
        for start in starts:
            chunk = rows.select(range(start, min(start + micro_batch_rows, len(rows))))
            logp, _ = _forward_response(
                model,
                chunk,
                temperature,
                with_entropy=False,
                chunk_tokens=chunk_tokens,
                dtype=dtype,
                on_hidden=None if hidden_sink is None else _row_states(hidden_sink, chunk, start),
            )
            parts.append(logp.float().cpu() * chunk.response_mask)
        device = next(model.parameters()).device
        with precision_context(device, dtype):
            for _ in range((passes or 0) - len(starts)):
                _idle_pass(model, backward=False)
    finally:
        model.train(was_training)
    if not parts:
        return torch.zeros(rows.response_mask.shape, dtype=torch.float32)
    return torch.cat(parts)


def _row_states(
    sink: HiddenSink, chunk: RowBatch, offset: int
) -> Callable[[torch.Tensor, torch.Tensor], None]:
    """Split a pass's hidden states into each row's response-token states for ``sink``."""

    def give(hidden: torch.Tensor, positions: torch.Tensor) -> None:
        lengths = chunk.response_mask.sum(-1).long().tolist()
        for r, n in enumerate(lengths):
            sink(offset + r, hidden[r, positions[r, :n]].detach().float().cpu())

    return give


@dataclass
class UpdateStats:
    """Averages over the optimizer steps of one update (what verl logs as actor/*)."""

    loss: float = 0.0
    pg_loss: float = 0.0
    kl: float = 0.0
    entropy: float = 0.0
    clipfrac: float = 0.0
    clipfrac_lower: float = 0.0
    approx_kl: float = 0.0
    grad_norm: float = 0.0
    lr: float = 0.0
    optimizer_steps: int = 0
    skipped_steps: int = 0
    tokens: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    #: Per agent (``update(row_agents=...)``): the mean over optimizer steps of the norm of the
    #: gradient its rows contribute, before clipping; with one agent in a step, the step's norm.
    #: Under torchrun, of the global gradient (every rank's rows of the agent), on every rank.
    agent_grad_norm: dict[str, float] = field(default_factory=dict)
    #: The largest of those norms over the update's optimizer steps (the spikes Dr. MAS shows).
    agent_grad_norm_max: dict[str, float] = field(default_factory=dict)
    agent_steps: dict[str, int] = field(default_factory=dict)

    def add_agent_norm(self, agent: str, norm: float) -> None:
        self.agent_grad_norm[agent] = self.agent_grad_norm.get(agent, 0.0) + norm
        self.agent_grad_norm_max[agent] = max(self.agent_grad_norm_max.get(agent, 0.0), norm)
        self.agent_steps[agent] = self.agent_steps.get(agent, 0) + 1

    def as_dict(self) -> dict[str, float]:
        return {
            "actor/loss": self.loss,
            "actor/pg_loss": self.pg_loss,
            "actor/kl": self.kl,
            "actor/entropy": self.entropy,
            "actor/clipfrac": self.clipfrac,
            "actor/clipfrac_lower": self.clipfrac_lower,
            "actor/approx_kl": self.approx_kl,
            "actor/grad_norm": self.grad_norm,
            "actor/lr": self.lr,
            "actor/optimizer_steps": float(self.optimizer_steps),
            "actor/skipped_steps": float(self.skipped_steps),
            "actor/tokens": float(self.tokens),
        }


def _agent_chunks(
    index: torch.Tensor, row_agents: Sequence[str], size: int
) -> tuple[list[torch.Tensor], list[str]]:
    """A mini-batch's micro-batches with one agent's rows each (agents in sorted order), and
    each micro-batch's agent."""
    by_agent: dict[str, list[int]] = {}
    for row in index.tolist():
        by_agent.setdefault(str(row_agents[row]), []).append(row)
    chunks: list[torch.Tensor] = []
    labels: list[str] = []
    for agent in sorted(by_agent):
        own = torch.tensor(by_agent[agent], dtype=torch.long)
        for s in range(0, len(own), size):
            chunks.append(own[s : s + size])
            labels.append(agent)
    return chunks, labels


class _GradShares:
    """The norm of what the gradient gained since the last :meth:`take` (one agent's share).

    Args:
        model: the trained module; its trainable parameters are read at each :meth:`take`
            (FSDP2 swaps a module's registered parameters between the unsharded tensors of a
            pass and the sharded ones that hold the reduced gradients after it).
        sharded: the gradients are FSDP2's DTensor shards: each rank sums the squares of its
            shard's growth and the sums are added over ranks (the global norm). Without it the
            gradients are whole (one process, or DDP's after its all-reduce) and the norm is local.
    """

    def __init__(self, model: Any, *, sharded: bool = False) -> None:
        self.model = model
        self.sharded = sharded
        self.seen: dict[str, torch.Tensor] = {}

    def take(self) -> float:
        total = 0.0
        for name, p in self.model.named_parameters():
            if not p.requires_grad or p.grad is None:
                continue
            grad = p.grad.detach()
            if self.sharded and hasattr(grad, "to_local"):
                grad = grad.to_local()
            before = self.seen.get(name)
            delta = grad if before is None else grad - before
            total += float(delta.float().pow(2).sum())
            if before is None:
                self.seen[name] = grad.clone()
            else:
                before.copy_(grad)
        if self.sharded:
            total = all_reduce_floats([total])[0]
        return math.sqrt(total)


def _aligned_chunks(
    chunks: list[torch.Tensor], labels: list[str], agents: Sequence[str]
) -> tuple[list[torch.Tensor | None], list[str]]:
    """Every rank's passes in one agreed order: each agent of ``agents`` in turn, as many passes
    as the rank with the most of its micro-batches runs (collective: every rank calls it).

    A rank with fewer of an agent's micro-batches runs idle passes (None) in their place, so an
    agent's last pass is the same pass on every rank: the point where its share of the global
    gradient is complete.
    """
    own = [labels.count(agent) for agent in agents]
    most = [int(n) for n in all_reduce_floats([float(n) for n in own], "max")]
    passes: list[torch.Tensor | None] = []
    out: list[str] = []
    for agent, mine, count in zip(agents, own, most, strict=True):
        held = [c for c, label in zip(chunks, labels, strict=True) if label == agent]
        passes += [*held, *([None] * (count - mine))]
        out += [agent] * count
    return passes, out


class Learner:
    """The trainable policy, its reference copy and its optimizer.

    Args:
        model: a causal LM (``transformers``) already on its device.
        model_config, loss, optim: the run's settings.
        temperature: the rollout temperature (logits are divided by it).
        ddp_model: the DDP-wrapped model when running under torchrun with DDP, else None.
        shard: under torchrun with FSDP2, the function that shards a module in place
            (``envhub.train.parallel.shard_fsdp2``). The reference copy is taken first and
            sharded too, then ``model``; the optimizer is built over the shards. None otherwise.
        seed: seeds the mini-batch shuffle.
    """

    def __init__(
        self,
        model: Any,
        *,
        model_config: ModelConfig,
        loss: LossConfig,
        optim: OptimConfig,
        temperature: float,
        ddp_model: Any | None = None,
        shard: Callable[[Any], Any] | None = None,
        seed: int = 0,
    ) -> None:
        if ddp_model is not None and shard is not None:
            raise ValueError("Learner takes ddp_model or shard, not both.")
        self.model = model
        self.ddp_model = ddp_model
        self.sharded = shard is not None
        #: Under torchrun (either strategy): reductions and agreements span the ranks.
        self.distributed = ddp_model is not None or self.sharded
        self.loss_config = loss
        self.optim_config = optim
        self.temperature = temperature
        #: The compute precision of every forward pass (old, reference and new logprobs alike).
        self.compute_dtype = COMPUTE_DTYPES[model_config.dtype]
        self.chunk_tokens = 0 if shard is not None else model_config.logprob_chunk_tokens
        self._check_masters(model, model_config)
        self.reference: Any | None = None
        #: A LoRA (peft) model's reference is its own base with the adapters switched off: the
        #: base weights are frozen, so no copy of them is made.
        self.reference_is_base = loss.kl_coef > 0 and hasattr(model, "disable_adapter")
        if loss.kl_coef > 0 and not self.reference_is_base:
            self.reference = copy.deepcopy(model).eval()
            for p in self.reference.parameters():
                p.requires_grad_(False)
        if shard is not None:
            # The reference is sharded too: a second full copy on every rank would undo what
            # FSDP2 is for. Its forward passes then follow the same pass-count agreement.
            if self.reference is not None:
                shard(self.reference)
            shard(model)
        params = [p for p in model.parameters() if p.requires_grad]
        # The fused kernel updates in place: the foreach one allocates parameter-sized
        # temporaries (about 2x the weights at the step's peak). Not for FSDP2's DTensor shards.
        self.optimizer = torch.optim.AdamW(
            params,
            lr=optim.lr,
            betas=optim.betas,
            weight_decay=optim.weight_decay,
            fused=shard is None and bool(params) and params[0].device.type in ("cpu", "cuda"),
        )
        #: Training progress in [0, 1] (iterations done / planned): the cosine schedule's clock.
        self.progress = 0.0
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        device = next(model.parameters()).device
        # float16 needs loss scaling (its range underflows small gradients); bf16 does not.
        self.scaler: Any | None = None
        if self.compute_dtype == torch.float16:
            self.scaler = torch.amp.GradScaler(device.type)
        #: Orders the rows of each update's mini-batches (checkpointed with the run).
        self.shuffle_generator = torch.Generator().manual_seed(seed)

    def _lr_factor(self, step: int) -> float:
        """The learning rate over ``optim.lr``: linear warm-up (optimizer steps), then the schedule."""
        opt = self.optim_config
        warm = min(1.0, (step + 1) / opt.warmup_steps) if opt.warmup_steps else 1.0
        if opt.lr_schedule == "constant":
            return warm
        p = min(max(self.progress, 0.0), 1.0)
        floor = opt.min_lr_ratio
        return warm * (floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * p)))

    def set_progress(self, done: int, total: int) -> None:
        """Move the schedule's clock to ``done`` of ``total`` iterations (before an update)."""
        self.progress = done / max(total, 1)
        for group, base in zip(self.optimizer.param_groups, self.scheduler.base_lrs, strict=True):
            group["lr"] = base * self._lr_factor(self.scheduler.last_epoch)

    @staticmethod
    def _check_masters(model: Any, config: ModelConfig) -> None:
        """float32 master weights unless ``pure_bf16`` says otherwise (then warn once)."""
        low = sorted(
            {str(p.dtype) for p in model.parameters() if p.requires_grad and p.dtype != torch.float32}
        )
        if config.pure_bf16:
            warnings.warn(
                "model.pure_bf16: AdamW updates bfloat16 weights directly. An update smaller than "
                "half of bf16's spacing (~0.4% of a weight) is rounded away, so at lr 1e-6 most "
                "weights never move. Leave pure_bf16 off for float32 master weights.",
                UserWarning,
                stacklevel=3,
            )
            return
        if low:
            raise ValueError(
                f"The trainable weights are {', '.join(low)}: AdamW needs float32 master weights "
                "(low-precision steps below the dtype's spacing are lost). Load the model in float32 "
                "and set model.dtype for bf16/fp16 compute, or set model.pure_bf16 to accept it."
            )

    # -- logprobs ------------------------------------------------------------------------------

    def _passes(self, rows: int) -> int | None:
        """Under FSDP2, the largest micro-batch count of any rank (every rank runs that many)."""
        if not self.sharded:
            return None
        return int(all_reduce_floats([math.ceil(rows / self.optim_config.micro_batch_rows)], "max")[0])

    def logprobs(self, rows: RowBatch, *, hidden_sink: HiddenSink | None = None) -> torch.Tensor:
        """Old logprobs recomputed by the actor (collective under FSDP2: call on every rank).

        Args:
            hidden_sink: also hand each row's last-layer response hidden states, from this same
                pass, to this function (TimerPO; see :func:`response_logprobs`).
        """
        return response_logprobs(
            self.model,
            rows,
            temperature=self.temperature,
            micro_batch_rows=self.optim_config.micro_batch_rows,
            passes=self._passes(len(rows)),
            chunk_tokens=self.chunk_tokens,
            dtype=self.compute_dtype,
            hidden_sink=hidden_sink,
        )

    @torch.no_grad()
    def text_hidden_states(self, token_ids: Sequence[Sequence[int]]) -> list[torch.Tensor]:
        """The policy's last-layer hidden states on each token sequence, ``(tokens, hidden)`` float32
        on CPU (TimerPO's expert explanation; no gradient, the learner's precision).

        One pass per ``micro_batch_rows`` sequences, right-padded (a causal model's states of the
        real tokens do not see the padding). Not for FSDP2 (the pass count would differ by rank).
        """
        model = self.model
        device = next(model.parameters()).device
        was_training = model.training
        model.eval()
        out: list[torch.Tensor] = []
        step = self.optim_config.micro_batch_rows
        try:
            for start in range(0, len(token_ids), step):
                batch = [list(ids) for ids in token_ids[start : start + step]]
                width = max(max(len(ids) for ids in batch), 1)
                ids = torch.zeros((len(batch), width), dtype=torch.long)
                attention = torch.zeros((len(batch), width), dtype=torch.long)
                for r, seq in enumerate(batch):
                    ids[r, : len(seq)] = torch.tensor(seq, dtype=torch.long)
                    attention[r, : len(seq)] = 1
                with precision_context(device, self.compute_dtype):
                    result = model(
                        input_ids=ids.to(device),
                        attention_mask=attention.to(device),
                        use_cache=False,
                        output_hidden_states=True,
                        logits_to_keep=1,  # the states are wanted, not the vocab-wide logits
                    )
                last = result.hidden_states[-1]
                out.extend(last[r, : len(seq)].float().cpu() for r, seq in enumerate(batch))
        finally:
            model.train(was_training)
        return out

    def reference_logprobs(self, rows: RowBatch) -> torch.Tensor | None:
        """Logprobs under the frozen reference, or None without one (collective under FSDP2).

        For a peft model, the model itself inside ``disable_adapter()``: the frozen base.
        """
        if self.reference_is_base:
            with self.model.disable_adapter():
                return response_logprobs(
                    self.model,
                    rows,
                    temperature=self.temperature,
                    micro_batch_rows=self.optim_config.micro_batch_rows,
                    chunk_tokens=self.chunk_tokens,
                    dtype=self.compute_dtype,
                )
        if self.reference is None:
            return None
        return response_logprobs(
            self.reference,
            rows,
            temperature=self.temperature,
            micro_batch_rows=self.optim_config.micro_batch_rows,
            passes=self._passes(len(rows)),
            chunk_tokens=self.chunk_tokens,
            dtype=self.compute_dtype,
        )

    # -- the update ----------------------------------------------------------------------------

    def _mini_batches(self, n: int, count: int | None) -> Iterator[torch.Tensor]:
        order = (
            torch.randperm(n, generator=self.shuffle_generator)
            if self.optim_config.shuffle
            else torch.arange(n)
        )
        if count is not None:
            # Data parallel: every rank steps the same number of times, a rank without rows (of
            # an agent's own model, Dr. MAS) with empty mini-batches that only join the reductions.
            if n == 0:
                yield from (order for _ in range(count))
                return
            yield from (chunk for chunk in torch.tensor_split(order, count) if len(chunk))
            return
        size = self.optim_config.mini_batch_rows or n
        for start in range(0, n, size):
            yield order[start : start + size]

    def _all_reduce_sum(self, value: float) -> float:
        if not self.distributed:
            return value
        return all_reduce_floats([value])[0]

    def update(
        self,
        rows: RowBatch,
        old_logprobs: torch.Tensor,
        ref_logprobs: torch.Tensor | None = None,
        *,
        mini_batches: int | None = None,
        entropy_weights: torch.Tensor | None = None,
        row_agents: Sequence[str] | None = None,
    ) -> UpdateStats:
        """``ppo_epochs`` passes of clipped policy-gradient steps over ``rows``.

        Args:
            rows: the rows, with ``advantages`` filled.
            old_logprobs: the behaviour logprobs the ratio is taken against.
            ref_logprobs: reference logprobs (required when the KL coefficient is not 0).
            mini_batches: split the rows into this many mini-batches instead of
                ``mini_batch_rows`` each (under torchrun every rank must step the same number of
                times; the caller agrees the count across ranks and keeps it <= every rank's rows).
            entropy_weights: ``(rows, T)`` per-token weights of the entropy bonus, without
                gradient (CoSo's ``c~``, :mod:`envhub.train.coso`); None weighs every token 1.
            row_agents: each row's agent (Dr. MAS): every mini-batch's rows are then ordered by
                agent, so each micro-batch holds one agent's rows, and the norm of each agent's
                share of the step's gradient is recorded (:attr:`UpdateStats.agent_grad_norm`).
                Under torchrun the share is of the global gradient (every rank's rows of the
                agent, after the reduction), the same number on every rank: the ranks run each
                agent's micro-batches in one agreed order, padded with idle passes, and DDP
                all-reduces at the end of each agent's run of micro-batches.
        """
        cfg, opt = self.loss_config, self.optim_config
        if cfg.kl_coef > 0 and ref_logprobs is None:
            raise ValueError("kl_coef > 0 needs reference logprobs.")
        stats = UpdateStats()
        module = self.ddp_model or self.model
        module.train()
        tis = None
        with_logprobs = rows.rows_with_logprobs()
        if cfg.tis_threshold is not None and bool(with_logprobs.any()):
            tis = tis_weights(old_logprobs, rows.rollout_logprobs, cfg.tis_threshold)
            # Per row: a row without sampling logprobs (an on-policy group from a backend that
            # records none) has nothing to be corrected against and keeps weight 1; one such
            # group must not switch the correction off for the rest of the batch.
            tis = torch.where(with_logprobs[:, None], tis, torch.ones_like(tis))
        # Under torchrun the agents of every rank's rows, in the order all ranks step through them.
        agent_order = None
        if row_agents is not None and self.distributed:
            held = all_gather_objects(sorted({str(a) for a in row_agents}))
            agent_order = sorted({a for names in held for a in names})
        for _ in range(opt.ppo_epochs):
            for index in self._mini_batches(len(rows), mini_batches):
                self._optimizer_step(
                    module,
                    rows,
                    index,
                    old_logprobs,
                    ref_logprobs,
                    tis,
                    stats,
                    entropy_weights,
                    row_agents,
                    agent_order,
                )
        n = max(stats.optimizer_steps + stats.skipped_steps, 1)
        for name in ("loss", "pg_loss", "kl", "entropy", "clipfrac", "clipfrac_lower", "approx_kl"):
            setattr(stats, name, getattr(stats, name) / n)
        stats.grad_norm /= max(stats.optimizer_steps, 1)
        for agent, steps in stats.agent_steps.items():
            stats.agent_grad_norm[agent] /= max(steps, 1)
        stats.lr = float(self.scheduler.get_last_lr()[0])
        return stats

    def _optimizer_step(
        self,
        module: Any,
        rows: RowBatch,
        index: torch.Tensor,
        old: torch.Tensor,
        ref: torch.Tensor | None,
        tis: torch.Tensor | None,
        stats: UpdateStats,
        entropy_weights: torch.Tensor | None = None,
        row_agents: Sequence[str] | None = None,
        agent_order: Sequence[str] | None = None,
    ) -> None:
        opt = self.optim_config
        mini = rows.select(index)
        local_tokens = max(float(mini.response_mask.sum()), 1.0)
        mini_tokens = self._all_reduce_sum(float(mini.response_mask.sum()))
        mini_rows = self._all_reduce_sum(float((mini.response_mask.sum(-1) > 0).sum()))
        labels: list[str] = []
        passes: list[torch.Tensor | None]
        if row_agents is not None:
            chunks, labels = _agent_chunks(index, row_agents, opt.micro_batch_rows)
            passes = list(chunks)
            if agent_order is not None:  # torchrun: each agent's passes end together on every rank
                passes, labels = _aligned_chunks(chunks, labels, agent_order)
        else:
            chunks = [index[s : s + opt.micro_batch_rows] for s in range(0, len(index), opt.micro_batch_rows)]
            passes = list(chunks)
            if self.ddp_model is not None and not passes:
                passes = [None]  # no rows on this rank: one idle pass joins the step's all-reduce
        shares = _GradShares(self.model, sharded=self.sharded) if len(set(labels)) > 1 else None
        agent_norms: dict[str, float] = {}
        # Agreed before the first pass: a rank that asks later would be waiting in this collective
        # while the others wait in the next pass's all-gather. Aligned passes are already agreed.
        idle_passes = (
            0 if agent_order is not None else (self._passes(len(index)) or len(passes)) - len(passes)
        )
        self.optimizer.zero_grad(set_to_none=True)
        totals = dict.fromkeys(("loss", "pg", "kl", "ent", "cf", "cfl", "akl"), 0.0)
        finite = True
        for k, chunk in enumerate(passes):
            # The last pass of an agent's run: its share of the (reduced) gradient is complete.
            last = k == len(passes) - 1
            ends_share = last or (bool(labels) and labels[k + 1] != labels[k])
            # DDP all-reduces once, on the last micro-batch; with agents under torchrun, on each
            # agent's last (the sum so far is then the same on every rank and averaging it again
            # leaves it as it is, so the step's gradient is unchanged).
            reduce_here = ends_share if agent_order is not None else last
            sync = contextlib.nullcontext()
            if self.ddp_model is not None and not reduce_here:
                sync = self.ddp_model.no_sync()
            # FSDP2 reduce-scatters after every backward instead: skipping it would keep every
            # unsharded gradient until the last micro-batch, the memory FSDP2 is there to save.
            with sync:
                if chunk is None:  # this rank has no more of the agent's rows: join the collectives
                    with precision_context(next(self.model.parameters()).device, self.compute_dtype):
                        _idle_pass(module, backward=True)
                else:
                    micro = rows.select(chunk)
                    ent_w = entropy_weights[chunk] if entropy_weights is not None else None
                    loss, parts = self._micro_loss(
                        module, micro, chunk, old, ref, tis, mini_tokens, mini_rows, len(chunks), ent_w
                    )
                    if not torch.isfinite(loss):
                        finite = False
                        if not self.distributed:
                            break
                        # Under torchrun the other ranks wait in this backward's collective: run
                        # it, and let the agreement below skip the step everywhere.
                    (self.scaler.scale(loss) if self.scaler is not None else loss).backward()
            if shares is not None and ends_share:
                scale = float(self.scaler.get_scale()) if self.scaler is not None else 1.0
                agent_norms[labels[k]] = shares.take() / scale
            if chunk is None:
                continue
            # Sums of per-micro shares make the mini-batch value; means are token-weighted.
            share = float(micro.response_mask.sum()) / local_tokens
            for key in ("loss", "pg", "kl", "ent"):
                totals[key] += parts[key]
            for key in ("cf", "cfl", "akl"):
                totals[key] += parts[key] * share
        with precision_context(next(self.model.parameters()).device, self.compute_dtype):
            for _ in range(idle_passes):
                _idle_pass(module, backward=True)
        if self.distributed:
            finite = self._all_reduce_sum(0.0 if finite else 1.0) == 0.0
        grad_norm = float("nan")
        if finite:
            if self.scaler is not None:
                self.scaler.unscale_(self.optimizer)  # clip the true gradient, not the scaled one
            params = [p for p in self.model.parameters() if p.requires_grad]
            # With FSDP2 the gradients are DTensor shards: clip_grad_norm_ reduces the shards'
            # norms over ranks and returns the global norm (a replicated DTensor), so every rank
            # clips by the same factor and agrees on skipping a non-finite step.
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, opt.grad_clip))
        if finite and math.isfinite(grad_norm):
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            self.scheduler.step()
            stats.optimizer_steps += 1
            stats.grad_norm += grad_norm
            if labels and shares is None and len(set(labels)) == 1:
                agent_norms[labels[0]] = grad_norm
            for agent, norm in agent_norms.items():
                stats.add_agent_norm(agent, norm)
        else:
            if self.scaler is not None and finite:
                self.scaler.update()  # an overflow of the scaled gradient: lower the scale
            self.optimizer.zero_grad(set_to_none=True)
            stats.skipped_steps += 1
        stats.loss += totals["loss"]
        stats.pg_loss += totals["pg"]
        stats.kl += totals["kl"]
        stats.entropy += totals["ent"]
        stats.clipfrac += totals["cf"]
        stats.clipfrac_lower += totals["cfl"]
        stats.approx_kl += totals["akl"]
        stats.tokens += int(mini.response_mask.sum())

    def _micro_loss(
        self,
        module: Any,
        micro: RowBatch,
        chunk: torch.Tensor,
        old: torch.Tensor,
        ref: torch.Tensor | None,
        tis: torch.Tensor | None,
        mini_tokens: float,
        mini_rows: float,
        accumulation: int,
        entropy_weights: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """The micro-batch's loss (to backpropagate) and its share of the logged values.

        ``entropy_weights`` (the micro-batch's rows) weigh each token's entropy in the bonus:
        CoSo's causal entropy ``sum m c~ H / sum m`` under the ``token-mean`` aggregation.
        """
        cfg = self.loss_config
        device = next(self.model.parameters()).device
        logp, entropy = _forward_response(
            module,
            micro,
            self.temperature,
            with_entropy=cfg.entropy_coef > 0,
            chunk_tokens=self.chunk_tokens,
            dtype=self.compute_dtype,
        )
        mask = micro.response_mask.to(device)
        adv = micro.advantages.to(device)
        if adv.dim() == 1:  # a per-row scalar (step rows); trajectory rows carry one per token
            adv = adv.unsqueeze(-1)
        adv = (adv * mask).float()
        old_c = old[chunk].to(device)
        weights = tis[chunk].to(device) if tis is not None else None
        if cfg.micro_batch_mean:
            # verl-agent: each micro-batch's own mean, divided by the accumulation steps.
            g_tokens, g_rows, scale = None, None, 1.0 / accumulation
        else:
            # DDP's all-reduce and FSDP2's reduce-scatter average gradients over ranks; the
            # global token mean wants their sum.
            g_tokens, g_rows, scale = mini_tokens, mini_rows, float(self._world())
        kpo = KPOParams(q=cfg.kpo.q, r=cfg.kpo.r, p0=cfg.kpo.p0) if cfg.ratio == "kpo" else None
        pg = policy_loss(
            logp,
            old_c,
            adv,
            mask,
            clip_low=cfg.clip_low,
            clip_high=cfg.clip_high,
            clip_c=cfg.clip_c,
            ratio=cfg.ratio,
            agg=cfg.agg,
            global_tokens=g_tokens,
            global_rows=g_rows,
            weights=weights,
            kpo=kpo,
            norm_constant=cfg.norm_constant,
        )
        loss = pg.loss
        ent_value = kl_value = 0.0
        if entropy is not None:
            if entropy_weights is not None:
                entropy = entropy * entropy_weights.to(device=entropy.device, dtype=entropy.dtype).detach()
            ent = agg_loss(
                entropy,
                mask,
                cfg.agg,
                global_tokens=g_tokens,
                global_rows=g_rows,
                norm_constant=cfg.norm_constant,
            )
            loss = loss - cfg.entropy_coef * ent
            ent_value = float(ent.detach())
        if cfg.kl_coef > 0 and ref is not None:
            kl = agg_loss(
                kl_penalty(logp, ref[chunk].to(device), cfg.kl_kind),
                mask,
                cfg.agg,
                global_tokens=g_tokens,
                global_rows=g_rows,
                norm_constant=cfg.norm_constant,
            )
            loss = loss + cfg.kl_coef * kl
            kl_value = float(kl.detach())
        logged = 1.0 / accumulation if cfg.micro_batch_mean else 1.0
        parts = {
            "loss": float(loss.detach()) * logged,
            "pg": float(pg.loss.detach()) * logged,
            "kl": kl_value * logged,
            "ent": ent_value * logged,
            "cf": pg.clipfrac,
            "cfl": pg.clipfrac_lower,
            "akl": pg.approx_kl,
        }
        return loss * scale, parts

    def _world(self) -> int:
        if not self.distributed:
            return 1
        import torch.distributed as dist

        return dist.get_world_size()
