"""The trainer's two data-parallel strategies under ``torchrun``: DDP and FSDP2.

Both are data parallel over groups: rank r plays and trains on its own B / world groups, and the
gradients are averaged over ranks. They differ in where the weights live:

* ``ddp`` (``torch.nn.parallel.DistributedDataParallel``): every rank holds the whole model, its
  gradients and its optimizer state; one all-reduce of the gradients per optimizer step (with
  Dr. MAS agents on one model, one per agent in the step: ``Learner.update``'s ``row_agents``).
* ``fsdp2`` (``torch.distributed.fsdp.fully_shard``): every rank holds 1 / world of each
  parameter (a ``DTensor``), of its gradient and of its optimizer state. Each decoder layer is
  one unit: its parameters are all-gathered before its forward and backward and freed after, and
  its gradients are reduce-scattered. That is what lets a model that does not fit one device
  train, at the price of these two rules:

  1. Every rank runs the same number of forward (and backward) passes, because each pass is a
     collective. Ranks hold different numbers of rows, so the learner agrees on a pass count
     (:func:`all_reduce_floats` with ``max``) and ranks with fewer rows run zero-weighted
     passes (``envhub.train.learner``).
  2. Whatever reads full weights gathers them first, on every rank at once
     (:func:`gathered_state_dict`, :func:`unsharded_copy`): the in-process sampler, the weight
     push to vLLM and checkpoints.

FSDP2's reduce-scatter averages over ranks (``ReduceOp.AVG``, as DDP's all-reduce does), so the
learner's scaling that turns the average into the global token mean is the same for both.
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from envhub.core.errors import ConfigurationError

__all__ = [
    "SUMMED_METRICS",
    "all_gather_objects",
    "all_reduce_floats",
    "barrier",
    "decoder_layers",
    "gathered_state_dict",
    "is_sharded",
    "reduce_metrics",
    "scatter_objects",
    "shard_fsdp2",
    "unsharded_copy",
]


def all_reduce_floats(values: list[float], op: Literal["sum", "max"] = "sum") -> list[float]:
    """Sum (or max) ``values`` over the ranks of the default process group.

    The tensor sits where the backend can reduce it: NCCL reduces only CUDA tensors, gloo CPU ones.
    Without a process group the values come back unchanged.
    """
    import torch.distributed as dist

    if not dist.is_initialized():
        return list(values)
    device = torch.device("cpu")
    if dist.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM)
    return [float(v) for v in t.cpu()]


def all_gather_objects(value: Any) -> list[Any]:
    """Every rank's ``value`` (picklable), in rank order; ``[value]`` without a process group.

    Collective and blocking: the trainer calls it in a worker thread (``asyncio.to_thread``), so
    the rank's event loop goes on playing groups while it waits for the other ranks.
    """
    import torch.distributed as dist

    if not dist.is_initialized():
        return [value]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def scatter_objects(values: list[Any] | None, src: int = 0) -> Any:
    """Rank r gets ``values[r]`` of rank ``src`` (the others pass None); ``values[0]`` alone.

    Collective and blocking, like :func:`all_gather_objects`.
    """
    import torch.distributed as dist

    if not dist.is_initialized():
        assert values is not None
        return values[0]
    out: list[Any] = [None]
    dist.scatter_object_list(out, values if dist.get_rank() == src else None, src=src)
    return out[0]


def barrier() -> None:
    """Wait until every rank of the default process group is here (nothing without one)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.barrier()


#: Metrics that are counts or rates of this rank's share of the batch: summed over ranks.
SUMMED_METRICS = frozenset(
    {
        "rows/count",
        "rows/dropped_long",
        "rows/overlong_masked",
        "rows/overlong_truncated",
        "rows/inexact",
        "rows/untokenized",
        "rows/segments",
        "rows/model_tokens",
        "rows/env_tokens",
        "rollout/episodes",
        "actor/tokens",
        "perf/tokens_per_s",
        "staleness/dropped_now",
        "staleness/corrected",
    }
)


def reduce_metrics(metrics: dict[str, float]) -> dict[str, float]:
    """One iteration's metrics over every rank (collective: every rank calls it; all get the result).

    Rules by key: counts (:data:`SUMMED_METRICS`) are summed; ``*/max``, ``*_max`` and ``time/*`` take the
    maximum (the slowest rank is the iteration's time); ``*/min`` the minimum; everything else is
    the mean over the ranks that logged the key (every rank trains B / world groups of the same
    size, so this is the batch mean of per-group quantities). Without a process group the
    metrics come back unchanged.
    """
    import torch.distributed as dist

    if not dist.is_initialized() or dist.get_world_size() == 1:
        return dict(metrics)
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, dict(metrics))
    keys = sorted({k for m in gathered for k in m})
    out: dict[str, float] = {}
    for key in keys:
        values = [float(m[key]) for m in gathered if key in m]
        if key in SUMMED_METRICS:
            out[key] = sum(values)
        elif key.endswith(("/max", "_max")) or key.startswith("time/"):
            out[key] = max(values)
        elif key.endswith("/min"):
            out[key] = min(values)
        else:
            out[key] = sum(values) / len(values)
    return out


def decoder_layers(model: Any) -> list[torch.nn.Module]:
    """The repeated blocks of a Hugging Face model (the classes its ``_no_split_modules`` names).

    Raises:
        ConfigurationError: the model names no such class or none is found in it.
    """
    names = set(getattr(model, "_no_split_modules", None) or ())
    layers = [m for m in model.modules() if type(m).__name__ in names and m is not model]
    if not layers:
        raise ConfigurationError(
            f"model.strategy='fsdp2' shards each decoder layer, but {type(model).__name__} names no "
            "layer class in _no_split_modules (or has none). Use model.strategy='ddp'.",
        )
    return layers


def shard_fsdp2(model: torch.nn.Module, *, bf16: bool = False) -> torch.nn.Module:
    """Shard ``model`` in place with FSDP2 over the default process group: each layer, then the root.

    The root unit holds what is left (embeddings, final norm, output head); sharding the layers
    first lets each layer's gather overlap the previous one's compute.

    Args:
        model: a Hugging Face causal LM on this rank's device.
        bf16: compute in bf16 (parameters gathered in bf16) and reduce gradients in fp32; the
            sharded master weights keep their dtype.

    Returns:
        ``model`` itself, now an ``FSDPModule`` whose parameters are ``DTensor`` shards.
    """
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    kwargs: dict[str, Any] = {}
    if bf16:
        kwargs["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in decoder_layers(model):
        fully_shard(layer, **kwargs)
    fully_shard(model, **kwargs)
    return model


def is_sharded(model: Any) -> bool:
    """Whether ``model`` was sharded with FSDP2 (``fully_shard``)."""
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def gathered_state_dict(model: Any, *, keep: bool = True) -> dict[str, torch.Tensor]:
    """The full tensors of ``model.state_dict()``, on the CPU.

    Every rank must call it (each sharded tensor is all-gathered, one at a time, in the same
    order on every rank), so the device never holds more than one full tensor beyond the shards.

    Args:
        model: a sharded or a plain model.
        keep: False on ranks that only take part in the gathers (the vLLM push and checkpoints
            need the weights on rank 0 only); they get an empty dict.
    """
    from torch.distributed.tensor import DTensor

    out: dict[str, torch.Tensor] = {}
    for name, tensor in model.state_dict().items():
        full = tensor.full_tensor() if isinstance(tensor, DTensor) else tensor
        if keep:
            out[name] = full.detach().to("cpu", copy=True)
    return out


def _set_tensor(root: torch.nn.Module, dotted: str, value: torch.Tensor) -> None:
    owner, _, leaf = dotted.rpartition(".")
    module = root.get_submodule(owner) if owner else root
    if leaf in module._parameters:
        module._parameters[leaf] = torch.nn.Parameter(value, requires_grad=False)
    else:
        module._buffers[leaf] = value


def unsharded_copy(model: Any, *, keep: bool = True) -> Any | None:
    """A plain (unsharded, frozen, CPU) copy of an FSDP2-sharded Hugging Face model.

    Collective: every rank must call it. The copy is built on the meta device and then given the
    gathered tensors, so no memory goes to a throwaway initialisation. Buffers that are not in the
    state dict (rotary frequencies) are not sharded by FSDP2 and are copied as they are.

    Args:
        model: the sharded model.
        keep: False on ranks that only take part in the gathers; they get None.
    """
    from torch.distributed.fsdp import FSDPModule

    full = gathered_state_dict(model, keep=keep)
    if not keep:
        return None
    # fully_shard swaps the class for a subclass of (FSDPModule, original): build the original.
    cls: Any = next(c for c in type(model).__mro__ if not issubclass(c, FSDPModule))
    with torch.device("meta"):
        plain: Any = cls(model.config)
    for name, value in full.items():
        _set_tensor(plain, name, value)
    for name, buffer in model.named_buffers():
        if name not in full:
            _set_tensor(plain, name, buffer.detach().to("cpu", copy=True))
    if hasattr(plain, "tie_weights"):
        plain.tie_weights()  # a tied head shares the embedding again (no-op when untied)
    if getattr(model, "generation_config", None) is not None:
        plain.generation_config = model.generation_config
    left = [n for n, t in [*plain.named_parameters(), *plain.named_buffers()] if t.is_meta]
    if left:
        raise RuntimeError(f"unsharded_copy left tensors unset: {left[:5]}")
    return plain.eval()
