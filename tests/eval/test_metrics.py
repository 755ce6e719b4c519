"""pass@k, avg@k and pass^k against brute force over recorded samples; Wilson and bootstrap intervals."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from envhub.eval.metrics import avg_at_k, bootstrap_tasks, pass_at_k, pass_hat_k, wilson
from envhub.eval.run import EvalConfig, evaluate, read_episodes


def _brute(wins: list[bool], k: int) -> tuple[float, float]:
    """(any success, all successes) over every k-subset of the recorded samples."""
    subsets = list(itertools.combinations(wins, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_estimators_equal_brute_force_for_every_c_and_k(n: int) -> None:
    for c in range(n + 1):
        wins = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            any_ok, all_ok = _brute(wins, k)
            assert pass_at_k(n, c, k) == pytest.approx(any_ok, abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(all_ok, abs=1e-12)
            assert avg_at_k(n, c, k) == pytest.approx(c / n)


def test_pass_at_k_is_stable_for_large_n() -> None:
    assert pass_at_k(1000, 1, 1) == pytest.approx(0.001)
    assert pass_at_k(1000, 500, 100) == pytest.approx(1 - math.comb(500, 100) / math.comb(1000, 100))


def test_k_above_n_is_refused() -> None:
    with pytest.raises(ValueError, match="k=3 must be between 1 and n=2"):
        pass_at_k(2, 1, 3)


def test_wilson_matches_the_textbook_value() -> None:
    # 8 of 10 at 95%: Wilson (0.4902, 0.9433) (Newcombe 1998, table I style).
    interval = wilson(8, 10)
    assert interval["lo"] == pytest.approx(0.4902, abs=1e-3)
    assert interval["hi"] == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 10)["lo"] == 0.0 and wilson(10, 10)["hi"] == 1.0


def test_bootstrap_resamples_tasks_not_episodes() -> None:
    # Two tasks: one always 1, one always 0. Resampling tasks gives means of 0, 0.5 or 1.
    per_task = [[1.0] * 50, [0.0] * 50]
    interval = bootstrap_tasks(per_task, lambda ts: float(np.mean([v for t in ts for v in t])))
    assert interval["value"] == 0.5
    assert interval["lo"] == 0.0 and interval["hi"] == 1.0


def test_report_pass_at_k_equals_brute_force_on_recorded_samples(tmp_path: Path) -> None:
    config = EvalConfig(
        env="TimeSeries-v0",
        policy="scripted:tests.eval.policies:MixedPolicy",
        split="test",
        limit=8,
        n=5,
        ks=[1, 2, 3, 5],
    )
    report = evaluate(config, tmp_path, plots=False)
    rows = read_episodes(tmp_path)
    assert len(rows) == 40
    by_task: dict[int, list[bool]] = {}
    for row in rows:
        by_task.setdefault(row["slot"], []).append(bool(row["won"]))
    assert len({sum(w) for w in by_task.values()}) > 1, "the samples must differ between tasks"
    assert any(0 < sum(w) < 5 for w in by_task.values()), "and within a task"
    for k in (1, 2, 3, 5):
        brute = [_brute(w, k) for w in by_task.values()]
        assert report["pass_at_k"][str(k)]["value"] == pytest.approx(np.mean([b[0] for b in brute]))
        assert report["pass_hat_k"][str(k)]["value"] == pytest.approx(np.mean([b[1] for b in brute]))
    assert report["success"]["value"] == pytest.approx(np.mean([r["won"] for r in rows]))
