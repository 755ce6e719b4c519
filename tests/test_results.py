"""The README's and docs/benchmarks.md's server figures are the committed result file's.

``docs/results/server_load.json`` is what a full ``bench/server_load.py`` run wrote; the
README's throughput sentence and the part A table of ``docs/benchmarks.md`` are rendered from
it by ``bench/server_load.py --report`` and must match it word for word (line breaks aside).
"""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from bench.server_load import markdown_table, readme_line

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "docs" / "results" / "server_load.json"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_committed_result_is_a_full_interleaved_run() -> None:
    data = json.loads(RESULT.read_text())
    assert not data["parameters"]["quick"]
    assert data["parameters"]["repeats"] >= 5
    part_a = [row for row in data["rows"] if row["part"] == "A"]
    assert len(part_a) == 4 and all(row["extra"]["runs"] >= 5 for row in part_a)


def _inconsistencies(data: dict[str, Any]) -> list[str]:
    """Where a part A row's headline figures are not what its own per-run figures give.

    The README quotes ``x_openenv_median``; it must be the median of the per-round ratios of
    the recorded runs (run i against OpenEnv's run i), and each median column the median of
    its runs, so a hand-edited headline does not pass for a measured one.
    """
    problems: list[str] = []
    if data["machine"].get("dirty", True):
        problems.append("the run was made from a tree with uncommitted changes: no commit to cite")
    part_a = [row for row in data["rows"] if row["part"] == "A"]
    reference = next(row for row in part_a if row["system"].startswith("OpenEnv"))
    ref_runs = reference["extra"]["runs_steps_per_s"]
    for row in part_a:
        extra, name = row["extra"], row["system"]
        runs = extra["runs_steps_per_s"]
        if abs(statistics.median(runs) - row["steps_per_s"]) > 1:
            problems.append(f"{name}: steps_per_s {row['steps_per_s']:.0f} is not the median of {runs}")
        for column in ("server_cpu_us_per_step", "client_cpu_us_per_step"):
            if abs(statistics.median(extra[f"runs_{column}"]) - row[column]) > 0.1:
                problems.append(f"{name}: {column} is not the median of its runs")
        if row is reference:
            continue
        ratios = [mine / ref for mine, ref in zip(runs, ref_runs, strict=True)]
        if any(abs(r - x) > 2e-3 * max(1.0, x) for r, x in zip(ratios, extra["x_openenv_runs"], strict=True)):
            problems.append(f"{name}: x_openenv_runs {extra['x_openenv_runs']} are not runs / OpenEnv's runs")
        if abs(statistics.median(extra["x_openenv_runs"]) - extra["x_openenv_median"]) > 1e-3:
            problems.append(f"{name}: x_openenv_median is not the median of x_openenv_runs")
    return problems


def test_the_committed_headline_figures_are_the_medians_of_its_runs() -> None:
    assert _inconsistencies(json.loads(RESULT.read_text())) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("x_openenv_median", 1.9),
        ("x_openenv_runs", [2.0, 2.0, 2.0, 2.0, 2.0]),
        ("runs_steps_per_s", [1, 1, 1, 1, 1]),
    ],
)
def test_a_hand_edited_headline_is_caught(field: str, value: object) -> None:
    data = json.loads(RESULT.read_text())
    edited = copy.deepcopy(data)
    rest = next(
        row for row in edited["rows"] if row["part"] == "A" and row["system"].startswith("envhub REST")
    )
    rest["extra"][field] = value
    assert _inconsistencies(edited), field


def test_the_readme_throughput_line_is_the_committed_results() -> None:
    data = json.loads(RESULT.read_text())
    assert _flat(readme_line(data)) in _flat((ROOT / "README.md").read_text())


def test_the_benchmarks_table_is_the_committed_results() -> None:
    data = json.loads(RESULT.read_text())
    assert markdown_table(data) in (ROOT / "docs" / "benchmarks.md").read_text()
