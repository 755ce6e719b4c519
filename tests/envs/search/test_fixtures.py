"""The fictional-world generator: deterministic, exact size, sound questions."""

from __future__ import annotations

from pathlib import Path

from envhub.envs.search.bm25 import BM25Retriever
from envhub.envs.search.data import load_dataset
from envhub.envs.search.fixtures import DATA_SOURCE, generate_questions, generate_world, write_world
from envhub.envs.search.scoring import normalize_answer


def test_same_seed_gives_identical_files(tmp_path: Path) -> None:
    write_world(tmp_path / "a", n_passages=300, n_train=20, n_test=10, seed=3)
    write_world(tmp_path / "b", n_passages=300, n_train=20, n_test=10, seed=3)
    write_world(tmp_path / "c", n_passages=300, n_train=20, n_test=10, seed=4)
    for name in ("corpus.jsonl", "train.jsonl", "test.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "corpus.jsonl").read_bytes() != (tmp_path / "c" / "corpus.jsonl").read_bytes()


def test_corpus_has_exactly_the_requested_size_and_unique_ids() -> None:
    for n in (10, 123, 1000):
        passages = generate_world(n, seed=1).passages
        assert len(passages) == n
        assert [p.id for p in passages] == [str(i) for i in range(n)]


def test_every_question_is_answerable_from_its_supporting_passages() -> None:
    world = generate_world(1200, seed=5)
    by_id = {p.id: p for p in world.passages}
    questions = generate_questions(world, 300, seed=6)
    assert len(questions) == 300
    assert len({q.question for q in questions}) == 300
    assert {q.hops for q in questions} == {1, 2, 3}
    for q in questions:
        assert q.data_source == DATA_SOURCE
        assert len(q.supporting_ids) == q.hops
        # the answer is stated in the last supporting passage
        last = normalize_answer(by_id[q.supporting_ids[-1]].text)
        assert any(normalize_answer(g) in last for g in q.golden_answers), q


def test_multi_hop_questions_name_the_first_entity_only() -> None:
    world = generate_world(1200, seed=5)
    by_id = {p.id: p for p in world.passages}
    for q in generate_questions(world, 200, seed=8):
        if q.hops > 1:
            first_title = by_id[q.supporting_ids[0]].title
            assert first_title in q.question
            # the intermediate entity is not given away in the question
            assert by_id[q.supporting_ids[1]].title not in q.question


def test_bm25_finds_a_supporting_passage_for_90_percent_of_single_hop_questions(tmp_path: Path) -> None:
    write_world(tmp_path, n_passages=3000, n_train=400, n_test=0, seed=11)
    dataset = load_dataset(tmp_path, splits=("train",))
    retriever = BM25Retriever.build(dataset.passages)
    single = [q for q in dataset.splits["train"] if q.hops == 1]
    assert len(single) >= 100
    found = sum(
        any(hit.passage.id in q.supporting_ids for hit in retriever.search_one(q.question, 3)) for q in single
    )
    assert found / len(single) >= 0.90


def test_cli_generate_writes_a_loadable_dataset(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from envhub.cli import app

    result = CliRunner().invoke(
        app,
        [
            "data",
            "search",
            "generate",
            "--out",
            str(tmp_path),
            "--passages",
            "200",
            "--train",
            "10",
            "--test",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "200 passages" in result.output
    dataset = load_dataset(tmp_path)
    assert len(dataset.passages) == 200 and len(dataset.splits["test"]) == 5
    assert (tmp_path / "train.parquet").is_file()


def test_shipped_dataset_is_what_the_generator_makes(tmp_path: Path) -> None:
    from envhub.envs.search.data import EMBEDDED_DATA_DIR

    write_world(tmp_path, n_passages=1500, n_train=400, n_test=150, seed=0)
    for name in ("corpus.jsonl", "train.jsonl", "test.jsonl"):
        assert (tmp_path / name).read_bytes() == (EMBEDDED_DATA_DIR / name).read_bytes(), (
            f"{name} drifted from the generator; regenerate it with write_world(seed=0)"
        )
