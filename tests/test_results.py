"""The README's and docs/benchmarks.md's server figures are the committed result file's.

``docs/results/server_load.json`` is what a full ``bench/server_load.py`` run wrote; the
README's throughput sentence and the part A table of ``docs/benchmarks.md`` are rendered from
it by ``bench/server_load.py --report`` and must match it word for word (line breaks aside).
"""

from __future__ import annotations

import json
from pathlib import Path

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


def test_the_readme_throughput_line_is_the_committed_results() -> None:
    data = json.loads(RESULT.read_text())
    assert _flat(readme_line(data)) in _flat((ROOT / "README.md").read_text())


def test_the_benchmarks_table_is_the_committed_results() -> None:
    data = json.loads(RESULT.read_text())
    assert markdown_table(data) in (ROOT / "docs" / "benchmarks.md").read_text()
