"""The control of ``test_learning.py``: the same run with zero advantages does not learn, and the
recipe's run is the same run each time.

In a file of its own so that pytest-xdist runs it beside the learning runs (``--dist loadfile``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from envhub.train.blind import BlindCeiling
from tests.train.onepush import MARGIN, config, greedy, run

# The control runs all 150 iterations of the recipe (about two minutes on a 2-core CPU).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_same_run_with_zero_advantages_stays_where_it_started(
    onepush_ceiling: BlindCeiling, onepush_model: Path, tmp_path: Path
) -> None:
    # The learning runs' rule too: their bar checked at every validation (validation.stop_at), so
    # the control must reach it at none of them (it would stop early), not only at its last.
    bar = {"validation.stop_at": onepush_ceiling.success + MARGIN}
    result = run(onepush_model, tmp_path / "zero", advantage_sign=0.0, **bar)
    success = result.series("rollout/success")
    looks = [v.metrics["val/success"] for v in result.validation]
    assert len(success) == len(result.iterations) == config(onepush_model, tmp_path).iterations, (
        f"zero advantages reached the bar at a validation: {looks}"
    )
    # Five iterations of 64 episodes at each end; three binomial standard deviations of the
    # difference of two such means (at the larger of the two rates, at least 1/64).
    first, late = sum(success[:5]) / 5, sum(success[-5:]) / 5
    p = max(first, late, 1 / 64)
    noise = 3 * math.sqrt(2 * p * (1 - p) / (5 * 64))
    before, after = greedy(result)
    print(
        f"zero advantages: training success {first:.3f} -> {late:.3f} (noise {noise:.3f}); "
        f"greedy {before:.3f} -> {after:.3f}"
    )
    assert abs(late - first) <= noise, f"training success moved from {first:.3f} to {late:.3f}"
    assert after < onepush_ceiling.success + MARGIN


def test_the_recipe_s_run_is_the_same_run_each_time(onepush_model: Path, tmp_path: Path) -> None:
    """`make demo` shows what the recipe's seeds give, every time: the same rollouts, the same updates.

    ``rollout.sampling_seed`` seeds every group step's sampling from the group's reset seed and the
    step, so the order in which concurrent groups reach the sampler changes nothing.
    """
    keys = ("rollout/success", "rollout/reward", "advantage/abs_mean", "actor/loss", "actor/grad_norm")
    over = {"iterations": 4, "validation.every": 0, "validation.before_training": False}
    runs = [run(onepush_model, tmp_path / f"run{i}", **over) for i in range(2)]
    first, second = ([[it.metrics[k] for k in keys] for it in r.iterations] for r in runs)
    assert len(first) == 4
    assert first == second
