"""Loaders for Search-R1's corpus jsonl and QA rows (FlashRAG jsonl, Search-R1 parquet)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from envhub.core.errors import ConfigurationError, DataNotFoundError
from envhub.envs.search.data import (
    EMBEDDED_DATA_DIR,
    Passage,
    Question,
    data_status,
    load_corpus,
    load_dataset,
    load_questions,
    write_corpus_jsonl,
    write_questions_parquet,
)


def test_corpus_contents_split_into_title_and_text(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": 0, "contents": '"Paris"\nParis is the capital of France.'}) + "\n\n")
    (passage,) = load_corpus(path)
    assert passage == Passage(id="0", title="Paris", text="Paris is the capital of France.")
    assert passage.contents == '"Paris"\nParis is the capital of France.'


def test_corpus_roundtrip(tmp_path: Path) -> None:
    passages = [Passage("1", "Ä title", "text with\ttab"), Passage("2", "B", "x")]
    write_corpus_jsonl(passages, tmp_path / "c.jsonl")
    assert list(load_corpus(tmp_path / "c.jsonl")) == passages


def test_bad_corpus_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": "0", "contents": "\\"A\\"\\nx"}\n{"id": "1"}\n')
    with pytest.raises(ConfigurationError, match=r"corpus.jsonl:2"):
        load_corpus(path)


def test_missing_corpus_says_how_to_get_data(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="envhub data search generate"):
        load_corpus(tmp_path / "nope.jsonl")


def test_search_r1_processed_parquet_rows_load_without_question_column(tmp_path: Path) -> None:
    prompt = (
        "Answer the given question. ... For example, <answer> Beijing </answer>. Question: who wrote hamlet?"
    )
    rows = [
        {
            "data_source": "nq",
            "prompt": [{"role": "user", "content": prompt}],
            "ability": "fact-reasoning",
            "reward_model": {
                "style": "rule",
                "ground_truth": {"target": ["William Shakespeare", "Shakespeare"]},
            },
            "extra_info": {"split": "test", "index": 7},
        }
    ]
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    (question,) = load_questions(path, split="test")
    assert question == Question(
        id="test_7",
        question="who wrote hamlet?",
        golden_answers=("William Shakespeare", "Shakespeare"),
        data_source="nq",
    )


def test_flashrag_jsonl_rows_load(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    row = {
        "id": "dev_0",
        "question": "q?",
        "golden_answers": ["a"],
        "metadata": {"supporting_ids": ["3"], "hops": 1},
    }
    path.write_text(json.dumps(row) + "\n")
    (question,) = load_questions(path)
    assert question.supporting_ids == ("3",) and question.hops == 1 and question.data_source == "unknown"


def test_row_without_answers_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question": "q?"}) + "\n")
    with pytest.raises(ConfigurationError, match="golden_answers"):
        load_questions(path)


def test_parquet_written_by_envhub_reads_back_equal(tmp_path: Path) -> None:
    questions = [Question("t-1", "Who?", ("A", "B"), ("4", "9"), "envhub-world", 2)]
    write_questions_parquet(questions, tmp_path / "x.parquet", split="train", prompt="Question: {question}\n")
    assert list(load_questions(tmp_path / "x.parquet")) == questions


def test_dataset_reads_parquet_when_no_jsonl(world_dir: Path, tmp_path: Path) -> None:
    for name in ("corpus.jsonl", "train.parquet", "test.parquet"):
        (tmp_path / name).write_bytes((world_dir / name).read_bytes())
    from_parquet = load_dataset(tmp_path)
    from_jsonl = load_dataset(world_dir)
    assert from_parquet.splits == from_jsonl.splits


def test_dataset_without_a_split_file_says_which(tmp_path: Path, world_dir: Path) -> None:
    (tmp_path / "corpus.jsonl").write_bytes((world_dir / "corpus.jsonl").read_bytes())
    with pytest.raises(DataNotFoundError, match="'train' question file"):
        load_dataset(tmp_path)


def test_embedded_dataset_is_available() -> None:
    status = data_status()
    assert status.available and "embedded" in status.source
    dataset = load_dataset(EMBEDDED_DATA_DIR)
    assert len(dataset.passages) == 1500
    assert len(dataset.splits["train"]) == 400 and len(dataset.splits["test"]) == 150
