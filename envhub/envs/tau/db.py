"""An episode's database: a copy-on-write view over the process-wide parsed tables.

tau-bench reloads (or deep-copies) the whole database per episode and hashes all of it for
the reward. Copying 5 MB of JSON takes tens of milliseconds, so envhub gives each episode a
:class:`TauDB` instead: reads see the shared base tables, and a tool that changes a record
first asks for :meth:`TauDB.writable`, which deep-copies that one record into the episode's
own layer. The result is indistinguishable from a deep copy (episodes never see each other's
writes) and the set of changed records is known, so the reward compares only those.

Record hashes use tau-bench's canonical form: dicts become key-sorted tuples, lists tuples,
and the ``str`` of that structure is hashed with SHA-256 (so ``1`` and ``1.0`` differ, as in
tau-bench).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["TauDB", "canonical_hash", "to_hashable"]


def to_hashable(item: Any) -> Any:
    """tau-bench's canonical form: dicts -> key-sorted tuples of pairs, lists -> tuples."""
    if isinstance(item, dict):
        return tuple((key, to_hashable(value)) for key, value in sorted(item.items()))
    if isinstance(item, list):
        return tuple(to_hashable(element) for element in item)
    if isinstance(item, set):
        return tuple(sorted(to_hashable(element) for element in item))
    return item


def canonical_hash(item: Any) -> str:
    """SHA-256 hex digest of ``str(to_hashable(item))`` (tau-bench's ``consistent_hash``)."""
    return hashlib.sha256(str(to_hashable(item)).encode("utf-8")).hexdigest()


class TauDB:
    """Copy-on-write tables for one episode.

    Args:
        base: table name -> {key -> record}; shared and never mutated through this object.
    """

    def __init__(self, base: Mapping[str, dict[str, Any]]) -> None:
        self._base = base
        # table -> {key: record}; records here are private to this episode.
        self._own: dict[str, dict[str, Any]] = {name: {} for name in base}

    @property
    def tables(self) -> tuple[str, ...]:
        """The table names."""
        return tuple(self._base)

    def get(self, table: str, key: str) -> Any:
        """The record (read-only by convention), or ``None`` if there is none."""
        own = self._own[table]
        if key in own:
            return own[key]
        return self._base[table].get(key)

    def has(self, table: str, key: Any) -> bool:
        """Whether ``table`` holds ``key``.

        Raises:
            TypeError: ``key`` is unhashable, exactly as ``key in dict`` does (tau-bench's tools
                then answer ``Error: unhashable type: 'list'``).
        """
        return key in self._own[table] or key in self._base[table]

    def writable(self, table: str, key: str) -> Any:
        """The record, copied into this episode's layer first; mutate only what this returns.

        Raises:
            KeyError: no such record.
        """
        own = self._own[table]
        if key not in own:
            own[key] = copy.deepcopy(self._base[table][key])
        return own[key]

    def insert(self, table: str, key: str, record: Any) -> None:
        """Add (or replace) a record in this episode's layer."""
        self._own[table][key] = record

    def items(self, table: str) -> Iterator[tuple[str, Any]]:
        """``(key, record)`` in tau-bench's dict order: base keys first, then new keys."""
        own, base = self._own[table], self._base[table]
        for key, record in base.items():
            yield key, own.get(key, record)
        for key, record in own.items():
            if key not in base:
                yield key, record

    def values(self, table: str) -> Iterator[Any]:
        """The records of ``table`` in tau-bench's dict order."""
        for _, record in self.items(table):
            yield record

    def touched(self) -> list[tuple[str, str]]:
        """``(table, key)`` of every record this episode copied or inserted."""
        return [(table, key) for table, own in self._own.items() for key in own]

    def record_hashes(self) -> dict[tuple[str, str], str]:
        """Canonical hash of every touched record."""
        return {(table, key): canonical_hash(self._own[table][key]) for table, key in self.touched()}

    def materialize(self) -> dict[str, dict[str, Any]]:
        """A full plain-dict copy of the current database (slow; for tests and tools outside the env)."""
        return {table: copy.deepcopy(dict(self.items(table))) for table in self._base}

    def full_hash(self) -> str:
        """tau-bench's hash of the whole database (slow: every record is hashed)."""
        return canonical_hash({table: dict(self.items(table)) for table in self._base})
