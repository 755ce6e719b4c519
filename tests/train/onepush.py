"""The one-push Sokoban learning runs shared by ``test_learning.py`` and ``test_learning_control.py``.

The learning runs and their control are in two files so that pytest-xdist (``--dist loadfile``)
runs them on two workers; both build the same model and compute the same blind ceiling.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from envhub.train.blind import BlindCeiling, recipe_blind_ceiling
from envhub.train.config import load_config
from envhub.train.trainer import Trainer, TrainResult

RECIPE = Path(__file__).resolve().parents[2] / "trainers" / "gigpo_sokoban_onepush.yaml"
#: How far above the blind ceiling greedy held-out success must end.
MARGIN = 0.3


def config(model: Path, run_dir: Path, **over: Any) -> Any:
    """The recipe with the model, the run directory and ``over`` (dotted keys) set, quietly."""
    return load_config(
        RECIPE,
        {
            "model.path": str(model),
            "output.run_dir": str(run_dir),
            "output.tensorboard": False,
            "output.progress": False,
            **over,
        },
    )


def run(model: Path, run_dir: Path, *, advantage_sign: float = 1.0, **over: Any) -> TrainResult:
    """Train the recipe to the end (or its ``validation.stop_at``)."""
    return asyncio.run(Trainer(config(model, run_dir, **over), advantage_sign=advantage_sign).run())


def build_model(root: Path) -> Path:
    """`envhub model tiny --hidden-size 128 --vocab-size 512`: two heads (width 64 learnt it more rarely)."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(root / "model", seed=0, hidden_size=128, vocab_size=512)


def blind_ceiling(root: Path) -> BlindCeiling:
    """The recipe's observation-blind ceiling over the rooms validation plays."""
    found = recipe_blind_ceiling(config(Path("unused"), root))
    print(found.describe())
    assert found.success + MARGIN <= 0.95, "the task leaves no room to beat the blind policy"
    return found


def greedy(result: TrainResult) -> tuple[float, float]:
    """Greedy held-out success before training and at the run's last validation."""
    validation = [v.metrics["val/success"] for v in result.validation]
    assert result.validation[0].iteration == 0 and len(validation) >= 2
    return validation[0], validation[-1]
