from envhub.core.tasks import NumberedTaskIds


def test_numbered_task_ids_behave_like_a_sequence_of_canonical_ids() -> None:
    ids = NumberedTaskIds("test", 500)
    assert len(ids) == 500 and ids[0] == "test-0" and ids[-1] == "test-499"
    assert ids[:2] == ["test-0", "test-1"]
    assert "test-42" in ids and "test-042" not in ids and "test-500" not in ids and "train-1" not in ids
    assert list(NumberedTaskIds("a", 2)) == ["a-0", "a-1"]
    assert ids.index_of("test-7") == 7 and ids.index_of(7) is None
