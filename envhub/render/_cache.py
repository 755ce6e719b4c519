"""The segment optical cache: rendered history lines reused across the steps of an episode.

Two levels, so that a long-running server cannot grow without bound:

* :class:`TileStore` — one per process (create it once and pass it around; envhub keeps no
  module-level state). It holds every rendered tile of every live episode in one LRU ordered
  by last use and evicts the least recently used tiles once their bytes pass ``max_bytes``.
* :class:`SegmentCache` — one per episode, a namespace inside a store. ``clear()`` (called on
  env reset, as in AgentOCR) drops that episode's tiles; its hit/miss counters say how much
  of each render was reused.

Keys are 16-byte BLAKE2b digests of the segment's UTF-8 text: stable across processes and
runs, unlike Python's salted ``hash()`` that the reference uses.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from envhub.core.errors import ConfigurationError

__all__ = ["CacheStats", "SegmentCache", "TileStore", "segment_key"]

DEFAULT_MAX_BYTES = 256 * 1024 * 1024


def segment_key(segment: str) -> bytes:
    """The stable content key of a segment: BLAKE2b-128 of its stripped UTF-8 text."""
    data = segment.strip().encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


def _tile_bytes(tile: NDArray[np.uint8]) -> int:
    return int(tile.nbytes)


@dataclass(frozen=True)
class CacheStats:
    """A snapshot of cache counters.

    Attributes:
        hits: lookups answered from the cache.
        misses: lookups that had to render.
        tiles: tiles held now.
        nbytes: pixel bytes held now.
        evictions: tiles dropped by the byte bound (store only; 0 for an episode).
    """

    hits: int
    misses: int
    tiles: int
    nbytes: int
    evictions: int = 0


class TileStore:
    """A process-wide, thread-safe LRU of rendered tiles bounded by total pixel bytes.

    Args:
        max_bytes: the most pixel bytes held across all episodes (default 256 MiB).

    Raises:
        ConfigurationError: ``max_bytes`` is not a positive integer.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if not isinstance(max_bytes, int) or max_bytes < 1:
            raise ConfigurationError(
                "TileStore max_bytes must be a positive integer number of bytes (e.g. 256 * 2**20); "
                f"got {max_bytes!r}.",
                max_bytes=max_bytes,
            )
        self.max_bytes = max_bytes
        self._tiles: OrderedDict[tuple[int, bytes], NDArray[np.uint8]] = OrderedDict()
        self._owned: dict[int, set[bytes]] = {}
        self._owner_ids = itertools.count()
        self._lock = threading.Lock()
        self._nbytes = 0
        self._hits = 0
        self._misses = 0
        self._evictions = 0

    def new_owner(self) -> int:
        """A fresh namespace id for one episode cache."""
        with self._lock:
            owner = next(self._owner_ids)
            self._owned[owner] = set()
            return owner

    def get(self, owner: int, key: bytes) -> NDArray[np.uint8] | None:
        """The tile under ``(owner, key)``, marked as most recently used; ``None`` on a miss."""
        with self._lock:
            tile = self._tiles.get((owner, key))
            if tile is None:
                self._misses += 1
                return None
            self._tiles.move_to_end((owner, key))
            self._hits += 1
            return tile

    def put(self, owner: int, key: bytes, tile: NDArray[np.uint8]) -> None:
        """Insert a tile, then evict least recently used tiles until the byte bound holds.

        A tile larger than the whole bound is not kept (the caller still has it).
        """
        size = _tile_bytes(tile)
        with self._lock:
            if size > self.max_bytes or owner not in self._owned:
                return
            old = self._tiles.pop((owner, key), None)
            if old is not None:
                self._nbytes -= _tile_bytes(old)
            self._tiles[(owner, key)] = tile
            self._owned[owner].add(key)
            self._nbytes += size
            while self._nbytes > self.max_bytes:
                (victim_owner, victim_key), victim = self._tiles.popitem(last=False)
                self._owned[victim_owner].discard(victim_key)
                self._nbytes -= _tile_bytes(victim)
                self._evictions += 1

    def drop(self, owner: int, *, forget: bool = False) -> None:
        """Remove every tile of ``owner``; with ``forget`` also retire the namespace."""
        with self._lock:
            for key in self._owned.get(owner, ()):
                tile = self._tiles.pop((owner, key), None)
                if tile is not None:
                    self._nbytes -= _tile_bytes(tile)
            if forget:
                self._owned.pop(owner, None)
            elif owner in self._owned:
                self._owned[owner] = set()

    def count(self, owner: int) -> tuple[int, int]:
        """``(tiles, bytes)`` held for ``owner``."""
        with self._lock:
            tiles = [self._tiles[(owner, k)] for k in self._owned.get(owner, ())]
            return len(tiles), sum(_tile_bytes(t) for t in tiles)

    def stats(self) -> CacheStats:
        """Counters over all owners since the store was made."""
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._tiles), self._nbytes, self._evictions)


class SegmentCache:
    """One episode's segment cache: a namespace in a :class:`TileStore`.

    Args:
        store: the process-wide store to live in; ``None`` makes a private one bounded by
            ``max_bytes`` (fine for one env; a server should share one store).
        max_bytes: bound of the private store when ``store`` is ``None``.
    """

    def __init__(self, store: TileStore | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.store = store if store is not None else TileStore(max_bytes)
        self._owner = self.store.new_owner()
        self._keys: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0

    def key(self, segment: str) -> bytes:
        """:func:`segment_key` of ``segment``, memoised for the episode.

        A history repeats its earlier lines at every step; looking the text up in a dict
        (Python's string hash, computed once per string object) is cheaper than hashing the
        UTF-8 bytes again.
        """
        key = self._keys.get(segment)
        if key is None:
            key = self._keys[segment] = segment_key(segment)
        return key

    def get(self, key: bytes) -> NDArray[np.uint8] | None:
        """The cached tile for ``key`` or ``None``; counts a hit or a miss."""
        tile = self.store.get(self._owner, key)
        if tile is None:
            self.misses += 1
        else:
            self.hits += 1
        return tile

    def put(self, key: bytes, tile: NDArray[np.uint8]) -> None:
        """Keep ``tile`` under ``key`` (subject to the store's byte bound)."""
        self.store.put(self._owner, key, tile)

    def clear(self) -> None:
        """Drop this episode's tiles and zero its counters (call on env reset)."""
        self.store.drop(self._owner)
        self._keys.clear()
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        """Drop the tiles and retire the namespace (the episode's env is gone)."""
        self.store.drop(self._owner, forget=True)
        self._keys.clear()

    def stats(self) -> CacheStats:
        """This episode's counters since the last :meth:`clear`."""
        tiles, nbytes = self.store.count(self._owner)
        return CacheStats(self.hits, self.misses, tiles, nbytes)
