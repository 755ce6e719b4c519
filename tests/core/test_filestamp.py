"""File stamps: the cache key of data shared by env instances changes when a file does."""

from __future__ import annotations

import os
from pathlib import Path

from envhub.core.filestamp import file_stamp


def test_a_stamp_names_each_existing_file_with_its_size_and_mtime_in_order(tmp_path: Path) -> None:
    a, b, missing = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "none.jsonl"
    a.write_text("{}\n")
    b.write_text("{}\n{}\n")
    stamp = file_stamp([b, missing, a])
    assert [(path, size) for path, size, _ in stamp] == [(str(b), 6), (str(a), 3)]
    assert file_stamp(iter([b, missing, a])) == stamp  # any iterable, read once
    assert file_stamp([missing]) == ()


def test_an_edited_or_touched_file_gets_a_new_stamp(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text("{}\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = file_stamp([path])
    assert file_stamp([path]) == before
    os.utime(path, ns=(2_000_000_000, 2_000_000_000))  # same size, newer mtime
    assert file_stamp([path]) != before
    path.write_text("{}\n{}\n")
    assert file_stamp([path])[0][1] == 6
