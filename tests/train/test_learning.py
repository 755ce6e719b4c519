"""The trainer learns to read the observation: one-push Sokoban from a random-init model.

``trainers/gigpo_sokoban_onepush.yaml`` (the `make demo` run): a one-row corridor of four floor
cells, the box next to the player and the target next to the box, on either side, anywhere
along the corridor (four layouts); one step. The move that wins depends on the room, so a policy that does not
read it cannot win more than the share of rooms of one side. That ceiling is computed exactly
(``envhub.train.blind``: every sequence of moves, ``still`` included, on the real env, over the
very rooms validation plays) and printed; a distribution over sequences cannot beat its best one.

The score is verl-agent's validation made greedy: the held-out test split (rooms never trained
on), T = 0, at the end of the run. It must beat the blind ceiling by 0.3 absolute.

The control (``test_learning_control.py``, a file of its own so that pytest-xdist runs it on
the other worker) runs the same iterations with every advantage set to zero (only the entropy bonus
acts): its training success must stay within sampling noise of where it started, and its greedy
success must not reach the bar. That shows the gradient of the advantages, not the iterations,
the entropy bonus or chance, does the learning.

The old test's room (one row of three cells, three steps, bumps are no-ops) is won by the blind
sequence "right, left" in every room: ``tests/train/test_blind.py`` holds that against it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.train.blind import BlindCeiling
from tests.train.onepush import MARGIN, greedy, run

# A run takes up to two minutes on a 2-core CPU (150 iterations of 128 one-step episodes); the
# learning runs end at the first validation past the bar (every 25 iterations), the control never.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


#: Seeds tried in turn until one run clears the bar (each the run's seed and its sampling seed,
#: so each run is the same every time on one machine). Reading the room is a symmetry break that
#: a run finds most of the time, not always (docs/training.md has the runs tried). A broken
#: trainer clears it with none: every run is printed, and the control
#: (``test_learning_control.py``) gets the same iterations with the advantages zeroed.
SEEDS = (0, 1, 2, 3, 4)
#: The order each algorithm tries them in: GRPO's seed 0 runs all 150 iterations below the bar on
#: this project's CPU (docs/training.md), so it is tried after seed 1, which clears it at 50.
ORDER = {"gigpo": SEEDS, "grpo": (1, 0, 2, 3, 4), "hgpo": SEEDS}


@pytest.mark.parametrize("algo", ["gigpo", "grpo", "hgpo"])
def test_each_algorithm_beats_the_blind_ceiling_on_held_out_rooms(
    algo: str, onepush_ceiling: BlindCeiling, onepush_model: Path, tmp_path: Path
) -> None:
    tried: list[str] = []
    for seed in ORDER[algo]:
        # The run ends at the first validation that clears the bar (validation.stop_at): at most
        # the recipe's iterations, which the control runs in full.
        bar = {"validation.stop_at": onepush_ceiling.success + MARGIN}
        seeded = {"seed": seed, "rollout.sampling_seed": seed, **bar}
        result = run(onepush_model, tmp_path / f"{algo}-{seed}", algo=algo, **seeded)
        before, after = greedy(result)
        tried.append(f"seed {seed}: {before:.3f} -> {after:.3f}")
        print(f"{algo}: greedy held-out success {tried[-1]}; {onepush_ceiling.describe()}")
        untrained = f"{algo}: the untrained model already reads the room ({before:.2f})"
        assert before <= onepush_ceiling.success, untrained
        if after >= onepush_ceiling.success + MARGIN:
            return
    pytest.fail(
        f"{algo}: greedy held-out success ({'; '.join(tried)}) never {MARGIN} above the blind "
        f"ceiling {onepush_ceiling.success:.3f}"
    )
