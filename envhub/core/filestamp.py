"""File-identity stamps: a cache key that changes when a data file is edited or replaced.

Data loaded once per process and shared by env instances (a dataset, a corpus, an index) is
cached under its files' paths *and* this stamp, so an edited file is read again while an
unchanged one is not.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["FileStamp", "file_stamp"]

#: ``(path, size in bytes, modification time in ns)`` for each file that exists, in the given order.
FileStamp = tuple[tuple[str, int, int], ...]


def file_stamp(paths: Iterable[Path]) -> FileStamp:
    """The identity of the files' current contents; a file that cannot be stat'ed is left out.

    A missing file is not an error here: the loader that reads it raises its own, clearer one.
    """
    found = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(found)
