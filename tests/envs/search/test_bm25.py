"""BM25 retrieval: bm25s scores, deterministic ranking, on-disk index cache."""

from __future__ import annotations

import json
from pathlib import Path

import bm25s
import numpy as np

from envhub.envs.search.bm25 import BM25Retriever
from envhub.envs.search.data import EMBEDDED_DATA_DIR, Passage, load_corpus, write_corpus_jsonl
from envhub.envs.search.retrieval import default_index_dir, format_information, information_observation


def test_scores_equal_bm25s(world_dir: Path) -> None:
    passages = load_corpus(world_dir / "corpus.jsonl")
    retriever = BM25Retriever.build(passages)
    model = bm25s.BM25()
    model.index(
        bm25s.tokenize([p.contents for p in passages], stopwords="en", show_progress=False),
        show_progress=False,
    )
    for query in ("In which year was the city founded?", "river sea kilometres", passages[5].title):
        tokens = [t for t in bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)[0]]
        expected = model.get_scores([t for t in tokens if t in model.vocab_dict])
        np.testing.assert_allclose(retriever.scores(query), expected, rtol=1e-5, atol=1e-6)


def test_results_are_best_first_with_ties_in_passage_order() -> None:
    passages = [Passage(str(i), f"T{i}", "apple banana") for i in range(5)] + [
        Passage("5", "T5", "apple apple")
    ]
    hits = BM25Retriever.build(passages).search_one("apple banana", 4)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    tied = [h.passage.id for h in hits if h.score == scores[0]]
    assert tied == sorted(tied, key=int)


def test_query_without_known_words_returns_nothing() -> None:
    retriever = BM25Retriever.build([Passage("0", "A", "alpha beta"), Passage("1", "B", "gamma")])
    assert retriever.search(["zzz unknown", "the of and", ""], 3) == [[], [], []]


def test_k_larger_than_corpus_returns_every_match() -> None:
    retriever = BM25Retriever.build([Passage("0", "A", "alpha beta"), Passage("1", "B", "alpha")])
    assert {h.passage.id for h in retriever.search_one("alpha", 50)} == {"0", "1"}


def test_index_is_cached_next_to_the_corpus_and_reused(tmp_path: Path, world_dir: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes((world_dir / "corpus.jsonl").read_bytes())
    first = BM25Retriever.from_corpus(corpus)
    index_dir = tmp_path / "corpus.bm25s"
    meta = json.loads((index_dir / "envhub-meta.json").read_text())
    assert meta["passages"] == first.size
    stamp = (index_dir / "envhub-meta.json").stat().st_mtime_ns
    second = BM25Retriever.from_corpus(corpus)
    assert (index_dir / "envhub-meta.json").stat().st_mtime_ns == stamp  # loaded, not rebuilt
    query = "Who is the mayor?"
    assert [h.passage.id for h in first.search_one(query, 3)] == [
        h.passage.id for h in second.search_one(query, 3)
    ]


def test_changed_corpus_rebuilds_the_index(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    write_corpus_jsonl([Passage("0", "A", "alpha"), Passage("1", "B", "beta")], corpus)
    assert BM25Retriever.from_corpus(corpus).search_one("gamma", 3) == []
    write_corpus_jsonl([Passage("0", "A", "alpha"), Passage("1", "B", "gamma")], corpus)
    assert [h.passage.id for h in BM25Retriever.from_corpus(corpus).search_one("gamma", 3)] == ["1"]


def test_embedded_corpus_index_goes_to_the_cache_dir() -> None:
    index_dir = default_index_dir(EMBEDDED_DATA_DIR / "corpus.jsonl", "bm25s")
    assert EMBEDDED_DATA_DIR not in index_dir.parents


def test_information_block_is_search_r1_format() -> None:
    retriever = BM25Retriever.build(
        [Passage("0", "Paris", "Paris is in France."), Passage("1", "Rome", "Rome.")]
    )
    hits = retriever.search_one("Paris France", 3)
    assert format_information(hits) == 'Doc 1(Title: "Paris") Paris is in France.'
    assert (
        information_observation(hits)
        == '\n\n<information>Doc 1(Title: "Paris") Paris is in France.</information>\n\n'
    )
