"""The copy-on-write episode database and tau-bench's canonical hash."""

from __future__ import annotations

import pytest

from envhub.envs.tau.db import TauDB, canonical_hash, to_hashable


def _base() -> dict[str, dict[str, object]]:
    return {"users": {"a": {"n": 1, "tags": ["x"]}, "b": {"n": 2, "tags": []}}}


def test_writes_go_to_the_episode_copy_only() -> None:
    base = _base()
    db = TauDB(base)
    db.writable("users", "a")["tags"].append("y")
    assert db.get("users", "a") == {"n": 1, "tags": ["x", "y"]}
    assert base["users"]["a"] == {"n": 1, "tags": ["x"]}
    assert TauDB(base).get("users", "a") == {"n": 1, "tags": ["x"]}


def test_items_keep_dict_order_with_new_keys_last() -> None:
    db = TauDB(_base())
    db.insert("users", "c", {"n": 3})
    db.writable("users", "a")["n"] = 10
    assert [(k, r["n"]) for k, r in db.items("users")] == [("a", 10), ("b", 2), ("c", 3)]
    assert db.touched() == [("users", "c"), ("users", "a")]


def test_full_hash_equals_hash_of_the_materialized_database() -> None:
    db = TauDB(_base())
    db.writable("users", "b")["n"] = 5
    assert db.full_hash() == canonical_hash(db.materialize())
    assert db.full_hash() != TauDB(_base()).full_hash()


def test_canonical_form_sorts_keys_and_distinguishes_int_from_float() -> None:
    assert to_hashable({"b": [1, {"d": 1, "c": 2}], "a": 0}) == (("a", 0), ("b", (1, (("c", 2), ("d", 1)))))
    assert canonical_hash({"x": 1}) != canonical_hash({"x": 1.0})
    assert canonical_hash({"x": 1, "y": 2}) == canonical_hash({"y": 2, "x": 1})


def test_has_rejects_unhashable_keys_like_a_dict() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        TauDB(_base()).has("users", ["a"])
