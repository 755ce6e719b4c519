"""Env instances in one process share corpus, questions and index until the files change."""

from __future__ import annotations

from pathlib import Path

from envhub.envs.search.data import Passage, write_corpus_jsonl
from envhub.envs.search.env import SearchQAEnv
from envhub.envs.search.fixtures import write_world
from envhub.envs.search.resources import shared_dataset, shared_retriever


def test_instances_share_the_loaded_corpus_and_index(world_dir: Path, tmp_path: Path) -> None:
    a = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i")
    b = SearchQAEnv(data_dir=world_dir, index_dir=tmp_path / "i")
    assert a.retriever is b.retriever
    assert a._dataset.passages is b._dataset.passages
    a.close()  # closing one instance leaves the shared retriever usable by the other
    b.reset(seed=0)
    assert b.step("<search>mayor</search>")[4]["retrieved_ids"]


def test_changed_files_are_loaded_again(tmp_path: Path) -> None:
    write_world(tmp_path, n_passages=50, n_train=5, n_test=5, seed=1)
    first = shared_dataset(tmp_path, ("train", "test"))
    retriever = shared_retriever("bm25", tmp_path / "corpus.jsonl", index_dir=tmp_path / "i")
    write_corpus_jsonl([Passage("0", "Only", "a single passage about zebras")], tmp_path / "corpus.jsonl")
    second = shared_dataset(tmp_path, ("train", "test"))
    assert len(first.passages) == 50 and len(second.passages) == 1
    again = shared_retriever("bm25", tmp_path / "corpus.jsonl", index_dir=tmp_path / "i")
    assert again is not retriever and [h.passage.id for h in again.search_one("zebras", 3)] == ["0"]
