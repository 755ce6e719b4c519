"""Task id helpers shared by families whose tasks are numbered."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["NumberedTaskIds"]


class NumberedTaskIds(Sequence[str]):
    """The ids ``f"{prefix}-{i}"`` for ``i`` in ``range(count)``, without materialising them.

    Membership is O(1) and only the canonical spelling belongs (``"test-7"``, not ``"test-07"``).
    """

    def __init__(self, prefix: str, count: int) -> None:
        self.prefix = prefix
        self.size = count

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [f"{self.prefix}-{i}" for i in range(self.size)[index]]
        return f"{self.prefix}-{range(self.size)[index]}"

    def __iter__(self) -> Iterator[str]:
        return (f"{self.prefix}-{i}" for i in range(self.size))

    def __contains__(self, task_id: object) -> bool:
        return self.index_of(task_id) is not None

    def index_of(self, task_id: object) -> int | None:
        """The number in ``task_id`` if it belongs to this sequence, else ``None``."""
        if not isinstance(task_id, str):
            return None
        prefix, _, number = task_id.rpartition("-")
        if prefix != self.prefix or not number.isdigit() or str(int(number)) != number:
            return None
        index = int(number)
        return index if index < self.size else None

    def __repr__(self) -> str:
        return f"NumberedTaskIds({self.prefix!r}, {self.size})"
