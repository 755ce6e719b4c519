"""Checkpoints: everything a resumed run needs to continue as if it had never stopped.

``RUN_DIR/checkpoints/iter_<k>/`` holds the model (``save_pretrained``: a normal HF directory,
servable by vLLM; for a LoRA run peft's adapter directory, ``adapter_model.safetensors`` and
``adapter_config.json``, which :func:`envhub.train.export.export_checkpoint` merges into a
servable model), the tokenizer files, and ``trainer_state.pt``: optimizer, scheduler, the
torch/numpy/python RNG states and the learner's mini-batch shuffle generator, the policy
version, the task schedule's position and the iteration. Weights and optimizer state are full
(gathered from FSDP2 shards) and the optimizer state is keyed by parameter name
(``torch.distributed.checkpoint.state_dict``), so a checkpoint written by one process, DDP or
FSDP2 resumes under any of them; older checkpoints with
index-keyed optimizer state still load. A checkpoint is written to a temporary name and
renamed, so a crash mid-write never leaves a half checkpoint that resume would pick; ``latest``
is whichever complete one has the highest iteration. Older ones beyond ``keep`` are deleted.

A checkpoint restores state, not settings: the optimizer's hyperparameters (lr, betas, weight
decay) and the scheduler's base learning rates stay as the resumed run built them from its
recipe, so a changed ``optim.lr`` applies after a resume (:class:`_OptimizerSettings`).

A multi-agent run with a model per agent (``agents:``, Dr. MAS) keeps each agent's model,
tokenizer files and ``agent_state.pt`` (its optimizer, scheduler and shuffle generator) in
``agents/<role>/``; the top level holds the shared model (when some role plays it) and the run's
counters and RNGs. A resume with another set of agents is refused.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from envhub.core.errors import ConfigurationError

__all__ = [
    "ADAPTER_CONFIG",
    "ADAPTER_WEIGHTS",
    "AGENTS_DIR",
    "DEFAULT_ADAPTER",
    "TOKENIZER_FILES",
    "AgentParts",
    "TrainerState",
    "full_optimizer_state",
    "is_peft_model",
    "latest_checkpoint",
    "load_checkpoint",
    "save_checkpoint",
]

_STATE = "trainer_state.pt"
_AGENT_STATE = "agent_state.pt"
#: The folder of a checkpoint that holds each agent's own model (``agents/<role>/``).
AGENTS_DIR = "agents"
#: What peft's ``save_pretrained`` writes for a LoRA model (the adapter only).
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
    "special_tokens_map.json",
)


@dataclass
class TrainerState:
    """The loop's counters."""

    iteration: int  # iterations completed
    policy_version: int
    schedule_position: int
    consumed_groups: int = 0
    #: Uids of the groups trained on since the checkpoint before this one: a group redelivered
    #: after a crash is recognised and acknowledged without being used twice. Only these can
    #: come back (groups are acknowledged right after each checkpoint), so the list starts over
    #: after each checkpoint and does not grow with the run.
    consumed_uids: list[str] = field(default_factory=list)
    #: The iteration whose validation reached ``validation.stop_at``: the run is over.
    stopped_at: int | None = None
    #: The run's label on the queue (``rollout.run``, else from the run directory when the run
    #: began): a resume keeps it, so it reads its own consumer group wherever the directory is.
    run_label: str | None = None
    #: Groups the staleness rule dropped, over the whole run (``staleness/dropped``), and the
    #: part of them sampled by weights no checkpoint holds (``staleness/dropped_lost``).
    dropped_groups: int = 0
    dropped_lost: int = 0
    #: Other runs' groups the trainer passed over on a shared stream (``queue/foreign``).
    foreign_groups: int = 0
    #: Rollout jobs whose groups were sampled by this run's weights (job id -> policy version),
    #: those within ``max_staleness`` of ``policy_version``: a resume uses their groups, and
    #: drops the groups of jobs not listed (a killed trainer's versions after this checkpoint).
    lineage_jobs: dict[str, int] = field(default_factory=dict)
    #: Iteration -> the uids of the groups each rank trained on in it (index = rank), for the
    #: iterations since the checkpoint before this one (the run's whole record is the union over
    #: its checkpoints): under torchrun over Redis rank 0 alone reads the queue and scatters the
    #: groups, and this is the record of that scatter (one list in one process).
    assignments: dict[int, list[list[str]]] = field(default_factory=dict)


@dataclass
class AgentParts:
    """One agent's own model and what trains it, as a checkpoint keeps them (``agents/<role>/``).

    ``model`` is the plain module (one process, or under DDP the wrapped one, whole on every
    rank: rank 0 writes it); its optimizer state is read from it as it is.
    """

    model: Any
    optimizer: torch.optim.Optimizer
    scheduler: Any
    shuffle: torch.Generator | None = None
    tokenizer_dir: str | Path | None = None
    #: The agent is this LoRA adapter of ``model`` (shared with other agents): only it is kept.
    adapter: str | None = None


#: peft's name of a LoRA model's first adapter (the shared model's, beside the agents' own).
DEFAULT_ADAPTER = "default"


def is_peft_model(model: Any) -> bool:
    """Whether ``model`` is a peft model (LoRA adapters over a frozen base)."""
    return hasattr(model, "peft_config") and hasattr(model, "get_base_model")


def _checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    root = run_dir / "checkpoints"
    if not root.is_dir():
        return []
    found = []
    for path in root.iterdir():
        if path.name.startswith("iter_") and (path / _STATE).is_file():
            try:
                found.append((int(path.name[5:]), path))
            except ValueError:
                continue
    return sorted(found)


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The newest complete checkpoint of a run, or None."""
    found = _checkpoints(Path(run_dir))
    return found[-1][1] if found else None


def full_optimizer_state(model: Any, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The optimizer's state keyed by parameter name, full tensors on the CPU.

    ``model`` is the module the optimizer steps (plain, or FSDP2-sharded: then every rank must
    call this, and only rank 0 gets the tensors).
    """
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    return dict(get_optimizer_state_dict(model, optimizer, options=options))


def _copy_tokenizer(tokenizer_dir: str | Path | None, out: Path) -> None:
    if tokenizer_dir is None:
        return
    for name in TOKENIZER_FILES:
        src = Path(tokenizer_dir) / name
        if src.is_file():
            shutil.copy2(src, out / name)


def save_checkpoint(
    run_dir: str | Path,
    *,
    model: Any | None,
    optimizer_state: dict[str, Any] | None,
    scheduler: Any | None,
    state: TrainerState,
    tokenizer_dir: str | Path | None = None,
    keep: int = 2,
    shuffle: torch.Generator | None = None,
    agents: dict[str, AgentParts] | None = None,
) -> Path:
    """Write checkpoint ``iter_<state.iteration>`` atomically and prune old ones.

    Args:
        model: a plain Hugging Face model holding the full weights, or a peft model (its
            adapter is written); either with ``save_pretrained``.
        optimizer_state: :func:`full_optimizer_state` of the trained module and its optimizer.
        shuffle: the learner's mini-batch shuffle generator (its state is kept).
        agents: each agent's own model and optimizer (``agents/<role>/``); ``model`` (with its
            optimizer state and scheduler) is then the shared model, or None when every role
            has its own.
    """
    root = Path(run_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"iter_{state.iteration}"
    tmp = root / f".tmp_iter_{state.iteration}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if model is not None:
        if is_peft_model(model) and len(model.peft_config) > 1:  # the agents' adapters go below
            model.save_pretrained(tmp, selected_adapters=[DEFAULT_ADAPTER])
        else:
            model.save_pretrained(tmp)
        _copy_tokenizer(tokenizer_dir, tmp)
    for role, parts in (agents or {}).items():
        out = tmp / AGENTS_DIR / role
        if parts.adapter is not None:  # peft writes a named adapter to out/<adapter>/
            parts.model.save_pretrained(out, selected_adapters=[parts.adapter])
        else:
            parts.model.save_pretrained(out)
        _copy_tokenizer(parts.tokenizer_dir, out)
        previous = parts.model.active_adapter if parts.adapter is not None else None
        if parts.adapter is not None:
            parts.model.set_adapter(parts.adapter)  # its weights trainable, as on load
        try:
            own_optimizer = full_optimizer_state(parts.model, parts.optimizer)
        finally:
            if previous is not None:
                parts.model.set_adapter(previous)
        torch.save(
            {
                "optimizer": own_optimizer,
                "scheduler": parts.scheduler.state_dict(),
                "shuffle": parts.shuffle.get_state() if parts.shuffle is not None else None,
            },
            out / _AGENT_STATE,
        )
    torch.save(
        {
            "state": state.__dict__,
            "optimizer": optimizer_state,
            "scheduler": scheduler.state_dict() if scheduler is not None else None,
            "agents": sorted(agents or {}),
            "rng": {
                "torch": torch.get_rng_state(),
                "numpy": np.random.get_state(),
                "python": random.getstate(),
                **({"shuffle": shuffle.get_state()} if shuffle is not None else {}),
            },
        },
        tmp / _STATE,
    )
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for _, old in _checkpoints(Path(run_dir))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _load_adapter(path: Path, model: Any, adapter: str = "default") -> None:
    """Load a LoRA checkpoint's adapter into the peft ``model`` (its base weights stay as loaded)."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    if not (path / ADAPTER_WEIGHTS).is_file():
        raise ConfigurationError(
            f"Checkpoint {path} holds full weights, not a LoRA adapter ({ADAPTER_WEIGHTS}), but this run "
            "trains model.lora: resume it without model.lora, or start a new run directory."
        )
    result: Any = set_peft_model_state_dict(
        model, load_file(str(path / ADAPTER_WEIGHTS)), adapter_name=adapter
    )
    missing = [k for k in result.missing_keys if "lora_" in k and f".{adapter}." in k]
    unexpected = list(result.unexpected_keys)
    if missing or unexpected:
        raise ConfigurationError(
            f"Checkpoint {path}'s adapter does not fit the model (model.lora target_modules changed?): "
            f"missing {missing[:5]}, unexpected {unexpected[:5]}."
        )


def _load_weights(path: Path, model: Any) -> None:
    from safetensors.torch import load_file
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    from envhub.train.parallel import is_sharded

    if (path / ADAPTER_WEIGHTS).is_file():
        raise ConfigurationError(
            f"Checkpoint {path} holds a LoRA adapter, but this run trains all weights: resume it with "
            f"the same model.lora settings (or export it with `envhub-train export`)."
        )
    weights: dict[str, torch.Tensor] = {}
    for file in sorted(path.glob("*.safetensors")):
        weights.update(load_file(str(file)))
    expected = set(model.state_dict())
    missing = sorted(expected - set(weights))
    unexpected = sorted(set(weights) - expected)
    if unexpected or [m for m in missing if not m.endswith("lm_head.weight")]:
        raise RuntimeError(
            f"Checkpoint {path} does not fit the model: missing {missing[:5]}, unexpected {unexpected[:5]}."
        )
    if is_sharded(model):
        full = StateDictOptions(full_state_dict=True, strict=False)
        set_model_state_dict(model, dict[str, Any](weights), options=full)
    else:
        model.load_state_dict(weights, strict=False)


@dataclass
class _OptimizerSettings:
    """An optimizer's hyperparameters and its scheduler's base learning rates, as the run built them.

    ``load_state_dict`` puts back the saved run's ``param_groups`` (lr, betas, weight decay...)
    and the scheduler's ``base_lrs`` along with the state; a resume keeps only the state (AdamW's
    moments and step counts, the scheduler's step) and trains with the recipe it was started with.
    """

    groups: list[dict[str, Any]]
    base_lrs: list[float]

    @classmethod
    def read(cls, optimizer: torch.optim.Optimizer, scheduler: Any) -> _OptimizerSettings:
        groups = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
        return cls(groups=groups, base_lrs=list(scheduler.base_lrs))

    def restore(self, optimizer: torch.optim.Optimizer, scheduler: Any) -> None:
        """Put the settings back over a loaded state; the schedule's position is the loaded one.

        The schedule multiplies its base, so the loaded learning rate (base x the factor at the
        saved step) is rescaled to the new base.
        """
        saved_base = list(scheduler.base_lrs)
        ratios = [new / old if old else 1.0 for new, old in zip(self.base_lrs, saved_base, strict=True)]
        for group, kept, ratio in zip(optimizer.param_groups, self.groups, ratios, strict=True):
            lr = float(group["lr"]) * ratio
            group.update(kept)
            group["lr"] = lr
        scheduler.base_lrs = list(self.base_lrs)
        scheduler._last_lr = [group["lr"] for group in optimizer.param_groups]


def _load_model_and_optimizer(
    path: Path, model: Any, optimizer: torch.optim.Optimizer, state: Any, adapter: str | None = None
) -> None:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    if adapter is not None:
        _load_adapter(path / adapter, model, adapter)
    elif is_peft_model(model):
        _load_adapter(path, model)
    else:
        _load_weights(path, model)
    full = StateDictOptions(full_state_dict=True, strict=False)
    groups = state.get("param_groups") or [{}]
    # An agent's adapter must be the active one: only its weights are trainable, and torch
    # builds the optimizer's state over the trainable ones.
    previous = model.active_adapter if adapter is not None else None
    if adapter is not None:
        model.set_adapter(adapter)
    try:
        if all(isinstance(p, str) for p in groups[0].get("params", [])):
            set_optimizer_state_dict(model, optimizer, state, options=full)
        else:  # an index-keyed state (checkpoints from before name-keyed ones)
            optimizer.load_state_dict(state)
    finally:
        if previous is not None:
            model.set_adapter(previous)


def load_checkpoint(
    path: str | Path,
    *,
    model: Any | None,
    optimizer: torch.optim.Optimizer | None,
    scheduler: Any | None,
    shuffle: torch.Generator | None = None,
    agents: dict[str, AgentParts] | None = None,
) -> TrainerState:
    """Restore model weights, optimizer, scheduler and RNGs from ``path``; return the counters.

    ``model`` is the module the optimizer steps: plain, FSDP2-sharded (then every rank calls
    this and takes its shard of the full tensors it reads), or a peft model (its adapter is
    loaded; the base weights are the ones it was built on). ``shuffle`` gets the learner's
    shuffle generator state back where the checkpoint has one. ``agents``: each agent's own
    model and optimizer, from ``agents/<role>/`` (``model`` is then the shared one, or None).

    Raises:
        ConfigurationError: the checkpoint was written with another set of agents (or without
            the shared model this run has).
    """
    path = Path(path)
    blob = torch.load(path / _STATE, weights_only=False)
    saved, wanted = sorted(blob.get("agents", [])), sorted(agents or {})
    if saved != wanted or (model is not None) != (blob["optimizer"] is not None):
        shared = "with" if blob["optimizer"] is not None else "without"
        raise ConfigurationError(
            f"Checkpoint {path} was written by a run whose agents with a model of their own were "
            f"{saved or 'none'} ({shared} a shared model); this run's agents are {wanted or 'none'}. "
            "Resume with the same agents section, or start a new run directory.",
            saved=saved,
            wanted=wanted,
        )
    if model is not None:
        assert optimizer is not None and scheduler is not None
        settings = _OptimizerSettings.read(optimizer, scheduler)
        _load_model_and_optimizer(path, model, optimizer, blob["optimizer"])
        scheduler.load_state_dict(blob["scheduler"])
        settings.restore(optimizer, scheduler)
    for role, parts in (agents or {}).items():
        where = path / AGENTS_DIR / role
        own = torch.load(where / _AGENT_STATE, weights_only=False)
        settings = _OptimizerSettings.read(parts.optimizer, parts.scheduler)
        _load_model_and_optimizer(where, parts.model, parts.optimizer, own["optimizer"], parts.adapter)
        parts.scheduler.load_state_dict(own["scheduler"])
        settings.restore(parts.optimizer, parts.scheduler)
        if parts.shuffle is not None and own.get("shuffle") is not None:
            parts.shuffle.set_state(own["shuffle"])
    rng = blob["rng"]
    torch.set_rng_state(rng["torch"])
    np.random.set_state(rng["numpy"])
    random.setstate(rng["python"])
    if shuffle is not None and "shuffle" in rng:
        shuffle.set_state(rng["shuffle"])
    return TrainerState(**blob["state"])
