"""The trainer learns to read the observation: one-push Sokoban from a random-init model.

``trainers/gigpo_sokoban_onepush.yaml`` (the `make demo` run): a one-row corridor of four floor
cells, the box next to the player and the target next to the box, on either side, anywhere
along the corridor (four layouts); one step. The move that wins depends on the room, so a policy that does not
read it cannot win more than the share of rooms of one side. That ceiling is computed exactly
(``envhub.train.blind``: every sequence of moves, ``still`` included, on the real env, over the
very rooms validation plays) and printed; a distribution over sequences cannot beat its best one.

The score is verl-agent's validation made greedy: the held-out test split (rooms never trained
on), T = 0, at the end of the run. It must beat the blind ceiling by 0.3 absolute.

The control runs the same iterations with every advantage set to zero (only the entropy bonus
acts): its training success must stay within sampling noise of where it started, and its greedy
success must not reach the bar. That shows the gradient of the advantages, not the iterations,
the entropy bonus or chance, does the learning.

The old test's room (one row of three cells, three steps, bumps are no-ops) is won by the blind
sequence "right, left" in every room: ``tests/train/test_blind.py`` holds that against it.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from envhub.train.blind import BlindCeiling, recipe_blind_ceiling
from envhub.train.config import load_config
from envhub.train.trainer import Trainer, TrainResult

RECIPE = Path(__file__).resolve().parents[2] / "trainers" / "gigpo_sokoban_onepush.yaml"
MARGIN = 0.3

# A run takes up to two minutes on a 2-core CPU (150 iterations of 128 one-step episodes); the
# learning runs end at the first validation past the bar (every 25 iterations), the control never.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _config(model: Path, run_dir: Path, **over: Any) -> Any:
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


def _run(model: Path, run_dir: Path, *, advantage_sign: float = 1.0, **over: Any) -> TrainResult:
    config = _config(model, run_dir, **over)
    return asyncio.run(Trainer(config, advantage_sign=advantage_sign).run())


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`envhub model tiny --hidden-size 128 --vocab-size 512`: two heads (width 64 learnt it more rarely)."""
    from envhub.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("model128") / "model", seed=0, hidden_size=128, vocab_size=512
    )


@pytest.fixture(scope="module")
def ceiling(tmp_path_factory: pytest.TempPathFactory) -> BlindCeiling:
    found = recipe_blind_ceiling(_config(Path("unused"), tmp_path_factory.mktemp("blind")))
    print(found.describe())
    assert found.success + MARGIN <= 0.95, "the task leaves no room to beat the blind policy"
    return found


def _greedy(result: TrainResult) -> tuple[float, float]:
    validation = [v.metrics["val/success"] for v in result.validation]
    assert result.validation[0].iteration == 0 and len(validation) >= 2
    return validation[0], validation[-1]


#: Seeds tried in turn until one run clears the bar (each the run's seed and its sampling seed,
#: so each run is the same every time on one machine). Reading the room is a symmetry break that
#: a run finds most of the time, not always (docs/training.md has the runs tried). A broken
#: trainer clears it with none: every run is printed, and the control below gets the same
#: iterations with the advantages zeroed.
SEEDS = (0, 1, 2, 3, 4)


@pytest.mark.parametrize("algo", ["gigpo", "grpo", "hgpo"])
def test_each_algorithm_beats_the_blind_ceiling_on_held_out_rooms(
    algo: str, ceiling: BlindCeiling, model_dir: Path, tmp_path: Path
) -> None:
    tried: list[str] = []
    for seed in SEEDS:
        # The run ends at the first validation that clears the bar (validation.stop_at): at most
        # the recipe's iterations, which the control below runs in full.
        bar = {"validation.stop_at": ceiling.success + MARGIN}
        run = {"seed": seed, "rollout.sampling_seed": seed, **bar}
        result = _run(model_dir, tmp_path / f"{algo}-{seed}", algo=algo, **run)
        before, after = _greedy(result)
        tried.append(f"seed {seed}: {before:.3f} -> {after:.3f}")
        print(f"{algo}: greedy held-out success {tried[-1]}; {ceiling.describe()}")
        assert before <= ceiling.success, f"{algo}: the untrained model already reads the room ({before:.2f})"
        if after >= ceiling.success + MARGIN:
            return
    pytest.fail(
        f"{algo}: greedy held-out success ({'; '.join(tried)}) never {MARGIN} above the blind "
        f"ceiling {ceiling.success:.3f}"
    )


def test_the_same_run_with_zero_advantages_stays_where_it_started(
    ceiling: BlindCeiling, model_dir: Path, tmp_path: Path
) -> None:
    # The learning runs' rule too: their bar checked at every validation (validation.stop_at), so
    # the control must reach it at none of them (it would stop early), not only at its last.
    bar = {"validation.stop_at": ceiling.success + MARGIN}
    result = _run(model_dir, tmp_path / "zero", advantage_sign=0.0, **bar)
    success = result.series("rollout/success")
    looks = [v.metrics["val/success"] for v in result.validation]
    assert len(success) == len(result.iterations) == _config(model_dir, tmp_path).iterations, (
        f"zero advantages reached the bar at a validation: {looks}"
    )
    # Five iterations of 64 episodes at each end; three binomial standard deviations of the
    # difference of two such means (at the larger of the two rates, at least 1/64).
    first, late = sum(success[:5]) / 5, sum(success[-5:]) / 5
    p = max(first, late, 1 / 64)
    noise = 3 * math.sqrt(2 * p * (1 - p) / (5 * 64))
    before, after = _greedy(result)
    print(
        f"zero advantages: training success {first:.3f} -> {late:.3f} (noise {noise:.3f}); "
        f"greedy {before:.3f} -> {after:.3f}"
    )
    assert abs(late - first) <= noise, f"training success moved from {first:.3f} to {late:.3f}"
    assert after < ceiling.success + MARGIN


def test_the_recipe_s_run_is_the_same_run_each_time(model_dir: Path, tmp_path: Path) -> None:
    """`make demo` shows what the recipe's seeds give, every time: the same rollouts, the same updates.

    ``rollout.sampling_seed`` seeds every group step's sampling from the group's reset seed and the
    step, so the order in which concurrent groups reach the sampler changes nothing.
    """
    keys = ("rollout/success", "rollout/reward", "advantage/abs_mean", "actor/loss", "actor/grad_norm")
    over = {"iterations": 4, "validation.every": 0, "validation.before_training": False}
    runs = [_run(model_dir, tmp_path / f"run{i}", **over) for i in range(2)]
    first, second = ([[it.metrics[k] for k in keys] for it in r.iterations] for r in runs)
    assert len(first) == 4
    assert first == second
