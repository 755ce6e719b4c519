"""Reading recorded steps from JSONL and the ``envhub render-history`` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from envhub.cli import app
from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.render.history_file import history_lines_from_jsonl
from envhub.render.samples import alfworld_style_steps


def _write_steps(path: Path, steps: int) -> list[tuple[str, str]]:
    pairs = alfworld_style_steps(steps, seed=4)
    path.write_text("".join(json.dumps({"observation": o, "action": a}) + "\n" for o, a in pairs))
    return pairs


def test_steps_become_agentocr_lines(tmp_path: Path) -> None:
    pairs = _write_steps(tmp_path / "h.jsonl", 6)
    lines = history_lines_from_jsonl(tmp_path / "h.jsonl")
    assert lines[1] == f"[Observation]: {pairs[1][0]} [Action]: {pairs[1][1]}"
    assert len(history_lines_from_jsonl(tmp_path / "h.jsonl", window=2)) == 2


def test_trajectories_strings_and_search_results(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trajectory = {
        "steps": [
            {"observation": "Q?", "action": "<search>q</search>"},
            {"observation": "<information>Doc 1</information>", "action": "<answer>A</answer>"},
        ]
    }
    path.write_text(json.dumps(trajectory) + "\n\n" + json.dumps("a preformatted line") + "\n")
    assert history_lines_from_jsonl(path, style="ocr-search") == [
        "<search>q</search> <information>Doc 1</information>",
        "<answer>A</answer>",
        "a preformatted line",
    ]


def test_missing_file_and_bad_lines_raise_errors_that_say_where(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="history file"):
        history_lines_from_jsonl(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"observation": "o", "action": "a"}\n{oops\n')
    with pytest.raises(ConfigurationError, match=r"bad.jsonl:2"):
        history_lines_from_jsonl(bad)
    bad.write_text('{"observation": "o"}\n')
    with pytest.raises(ConfigurationError, match="lacks"):
        history_lines_from_jsonl(bad)


def test_cli_writes_a_png_and_reports_tokens(tmp_path: Path) -> None:
    _write_steps(tmp_path / "h.jsonl", 8)
    out = tmp_path / "h.png"
    result = CliRunner().invoke(app, ["render-history", str(tmp_path / "h.jsonl"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "vision tokens" in result.output
    with Image.open(out) as image:
        assert image.format == "PNG" and image.width == 402
