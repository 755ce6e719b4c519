"""A checkpoint as a servable model: ``envhub-train export --checkpoint DIR --out DIR``.

A LoRA run's checkpoint holds only the adapter (peft's ``adapter_model.safetensors`` and
``adapter_config.json``). :func:`export_checkpoint` loads the base model the adapter was trained
on (``base_model_name_or_path`` in the adapter config, or ``base``), applies the adapter, merges
it into the base weights (peft's ``merge_and_unload``) and writes a plain Hugging Face model
directory with the tokenizer files: what ``AutoModelForCausalLM.from_pretrained`` and vLLM load.
A full-weight checkpoint is written the same way (without ``trainer_state.pt``). The output is
written to a temporary name and renamed, so a failed export leaves no half model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from envhub.core.errors import ConfigurationError
from envhub.train.checkpoint import ADAPTER_CONFIG, TOKENIZER_FILES, latest_checkpoint

__all__ = ["export_checkpoint", "resolve_checkpoint"]


def _is_checkpoint(path: Path) -> bool:
    """A LoRA adapter, a trainer checkpoint or an HF model directory (not a run's config.json)."""
    if (path / ADAPTER_CONFIG).is_file() or (path / "trainer_state.pt").is_file():
        return True
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and "model_type" in config


def resolve_checkpoint(path: str | Path) -> Path:
    """``path`` itself when it is a checkpoint, else a run directory's latest checkpoint.

    Raises:
        ConfigurationError: ``path`` is not a directory, or holds no checkpoint.
    """
    path = Path(path)
    if not path.is_dir():
        raise ConfigurationError(
            f"--checkpoint {str(path)!r} is not a directory; give RUN_DIR/checkpoints/iter_<k> or a run "
            "directory.",
            path=str(path),
        )
    if _is_checkpoint(path):
        return path
    latest = latest_checkpoint(path)
    if latest is None:
        raise ConfigurationError(
            f"--checkpoint {str(path)!r} has no checkpoint (no adapter_config.json or config.json, and no "
            "checkpoints/iter_<k>); give a checkpoint directory or a run directory that has one.",
            path=str(path),
        )
    return latest


def _base_dir(checkpoint: Path, base: str | Path | None) -> Path:
    """The base model directory of a LoRA checkpoint (``base``, else the adapter config's)."""
    try:
        recorded = json.loads((checkpoint / ADAPTER_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            f"{checkpoint / ADAPTER_CONFIG} is not readable JSON ({exc}).", path=str(checkpoint)
        ) from exc
    name = base
    if name is None and isinstance(recorded, dict):
        name = recorded.get("base_model_name_or_path")
    path = Path(name) if name else None
    if path is None or not (path / "config.json").is_file():
        raise ConfigurationError(
            f"The LoRA checkpoint's base model {str(name)!r} is not a local model directory; give the "
            "directory the run trained on (model.path) with --base DIR.",
            base=str(name),
        )
    return path


def _load(checkpoint: Path, base: str | Path | None) -> tuple[Any, Path]:
    """The merged plain model of ``checkpoint`` and the directory its tokenizer files come from."""
    from transformers import AutoModelForCausalLM

    def load(path: Path) -> Any:
        return AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32, local_files_only=True)

    if not (checkpoint / ADAPTER_CONFIG).is_file():
        return load(checkpoint), checkpoint
    from peft import PeftModel

    base_dir = _base_dir(checkpoint, base)
    model = PeftModel.from_pretrained(load(base_dir), str(checkpoint), is_trainable=False)
    tokenizer = checkpoint if (checkpoint / "tokenizer_config.json").is_file() else base_dir
    return model.merge_and_unload(), tokenizer


def export_checkpoint(checkpoint: str | Path, out: str | Path, *, base: str | Path | None = None) -> Path:
    """Write ``checkpoint`` (or a run directory's latest) as a plain HF model directory ``out``.

    Args:
        checkpoint: ``RUN_DIR/checkpoints/iter_<k>``, or a run directory (its latest checkpoint).
        out: the model directory to write (absent or empty).
        base: a LoRA checkpoint's base model directory, where the one its adapter config records
            has moved.

    Returns:
        ``out``.

    Raises:
        ConfigurationError: no checkpoint there, ``out`` is not empty, or the base model is missing.
    """
    path = resolve_checkpoint(checkpoint)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigurationError(f"--out {str(out)!r} is not empty; give a new directory.", path=str(out))
    if (path / ADAPTER_CONFIG).is_file():
        _base_dir(path, base)  # a missing base fails before anything loads
    model, tokenizer = _load(path, base)
    tmp = out.parent / f".tmp-{out.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(tmp, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (tokenizer / name).is_file():
            shutil.copy2(tokenizer / name, tmp / name)
    if out.exists():
        out.rmdir()
    tmp.rename(out)
    return out
