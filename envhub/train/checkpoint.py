"""Checkpoints: everything a resumed run needs to continue as if it had never stopped.

``RUN_DIR/checkpoints/iter_<k>/`` holds the model (``save_pretrained``: a normal HF directory,
servable by vLLM), the tokenizer files, and ``trainer_state.pt``: optimizer, scheduler, the
torch/numpy/python RNG states, the policy version, the task schedule's position and the
iteration. A checkpoint is written to a temporary name and renamed, so a crash mid-write never
leaves a half checkpoint that resume would pick; ``latest`` is whichever complete one has the
highest iteration. Older ones beyond ``keep`` are deleted.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = ["TrainerState", "latest_checkpoint", "load_checkpoint", "save_checkpoint"]

_STATE = "trainer_state.pt"
_TOKENIZER_FILES = (
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
    #: Uids of every group trained on: a group redelivered after a crash is recognised and
    #: acknowledged without being used twice.
    consumed_uids: list[str] = field(default_factory=list)


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


def save_checkpoint(
    run_dir: str | Path,
    *,
    model: Any,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    state: TrainerState,
    tokenizer_dir: str | Path | None = None,
    keep: int = 2,
) -> Path:
    """Write checkpoint ``iter_<state.iteration>`` atomically and prune old ones."""
    root = Path(run_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"iter_{state.iteration}"
    tmp = root / f".tmp_iter_{state.iteration}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    if tokenizer_dir is not None:
        for name in _TOKENIZER_FILES:
            src = Path(tokenizer_dir) / name
            if src.is_file():
                shutil.copy2(src, tmp / name)
    torch.save(
        {
            "state": state.__dict__,
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": {
                "torch": torch.get_rng_state(),
                "numpy": np.random.get_state(),
                "python": random.getstate(),
            },
        },
        tmp / _STATE,
    )
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for _, old in _checkpoints(Path(run_dir))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def load_checkpoint(
    path: str | Path, *, model: Any, optimizer: torch.optim.Optimizer, scheduler: Any
) -> TrainerState:
    """Restore model weights, optimizer, scheduler and RNGs from ``path``; return the counters."""
    from safetensors.torch import load_file

    path = Path(path)
    weights: dict[str, torch.Tensor] = {}
    for file in sorted(path.glob("*.safetensors")):
        weights.update(load_file(str(file)))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if unexpected or [m for m in missing if not m.endswith("lm_head.weight")]:
        raise RuntimeError(
            f"Checkpoint {path} does not fit the model: missing {missing[:5]}, unexpected {unexpected[:5]}."
        )
    blob = torch.load(path / _STATE, weights_only=False)
    optimizer.load_state_dict(blob["optimizer"])
    scheduler.load_state_dict(blob["scheduler"])
    rng = blob["rng"]
    torch.set_rng_state(rng["torch"])
    np.random.set_state(rng["numpy"])
    random.setstate(rng["python"])
    return TrainerState(**blob["state"])
