"""Real data in GSM8K's format loads from a path; malformed files are refused by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import envhub
from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.envs.math.data import data_status, gsm8k_final_answer, load_dataset
from envhub.envs.math.fixtures import generate_tasks, write_gsm8k_jsonl


def _gsm8k_dir(root: Path) -> Path:
    write_gsm8k_jsonl(generate_tasks("train", 5, seed=11), root / "train.jsonl")
    write_gsm8k_jsonl(generate_tasks("test", 3, seed=12), root / "test.jsonl")
    return root


def test_gsm8k_s_final_answer_follows_the_last_marker_without_commas() -> None:
    assert gsm8k_final_answer("Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72") == "72"
    assert gsm8k_final_answer("... #### 1,000") == "1000"
    assert gsm8k_final_answer("no marker") == ""


def test_a_gsm8k_directory_is_read_as_the_env_s_tasks(tmp_path: Path) -> None:
    root = _gsm8k_dir(tmp_path)
    data = load_dataset(root)
    assert [t.id for t in data.splits["test"]] == ["test-00000", "test-00001", "test-00002"]
    first = json.loads((root / "test.jsonl").read_text().splitlines()[0])
    task = data.splits["test"][0]
    assert (task.question, task.solution, task.data_source) == (first["question"], first["answer"], "gsm8k")
    assert task.answer == first["answer"].rpartition("#### ")[2]
    env = envhub.make("envhub/Math-v0", data_dir=root)
    obs, info = env.reset(options={"task_id": "test-00000"})
    assert obs == task.question and info["data_source"] == "gsm8k"
    _, reward, terminated, _, info = env.step(f"\\boxed{{{task.answer}}}")
    assert (reward, terminated, info["won"]) == (1.0, True, True)
    env.close()


def test_the_data_variable_points_the_env_at_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _gsm8k_dir(tmp_path)
    monkeypatch.setenv("ENVHUB_MATH_DATA_DIR", str(root))
    assert data_status().available and data_status().source == str(root)
    env: Any = envhub.make("envhub/Math-v0")
    assert len(env.unwrapped.task_ids("test")) == 3
    env.close()
    monkeypatch.setenv("ENVHUB_MATH_DATA_DIR", str(tmp_path / "nowhere"))
    status = data_status()
    assert not status.available and "train.jsonl" in status.how_to_get


def test_a_missing_split_names_the_file_and_the_variable(tmp_path: Path) -> None:
    write_gsm8k_jsonl(generate_tasks("train", 2, seed=1), tmp_path / "train.jsonl")
    with pytest.raises(DataNotFoundError, match="ENVHUB_MATH_DATA_DIR") as caught:
        load_dataset(tmp_path)
    assert "test.jsonl" in caught.value.message


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("not json", "is not JSON"),
        ('{"question": "q"}', '"question" and "answer"'),
        ('{"question": "q", "answer": "no marker"}', "#### <number>"),
        ('{"question": "q", "answer": "#### seven"}', "'seven'"),
    ],
)
def test_a_malformed_line_is_refused_with_its_place(tmp_path: Path, line: str, named: str) -> None:
    write_gsm8k_jsonl(generate_tasks("train", 2, seed=1), tmp_path / "train.jsonl")
    (tmp_path / "test.jsonl").write_text('{"question": "ok", "answer": "#### 1"}\n' + line + "\n")
    with pytest.raises(ConfigurationError, match=named) as caught:
        load_dataset(tmp_path)
    assert caught.value.detail["line"] == 2 and caught.value.code == "INVALID_CONFIG"
