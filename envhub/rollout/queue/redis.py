"""The finished-group queue on Redis Streams (Redis 7.0 command set), via ``redis.asyncio``.

One stream (``envhub:groups``) holds one entry per finished group: small header fields
(``uid``, ``env``, ``policy_version``, ``job``) for filtering without decoding, plus the
compact payload ``v`` (:mod:`envhub.rollout.queue.codec`). Trainers are consumers of one
consumer group (``trainers``). Reference facts: ``shared/reference/round2_rollout_trainer.md`` §5.

* **Nothing is dropped.** The stream is never trimmed with MAXLEN (which deletes undelivered
  entries). Instead ``put`` waits while the group's ``lag + pending`` (``XINFO GROUPS``) is at
  ``max_backlog``. An entry leaves the stream only when acked (``XACK`` + ``XDEL`` in one
  MULTI) or moved to the dead-letter stream.
* **At-least-once.** ``get`` returns, in this order: this consumer's own pending entries (read
  with id ``0``: what it held when it last died, if it kept its name), entries other consumers
  left unacked for ``claim_idle_ms`` (``XAUTOCLAIM``), then new entries (``XREADGROUP >``).
  Ack only after the group was used.
* **De-duplication by uid.** Acking records the uids in a sorted set (in the same MULTI as the
  XACK); a later entry with a consumed uid (a producer that published twice, a redelivery of a
  group already used) is acked and skipped, never returned; so is a second entry with a uid
  this consumer already holds.
* **Dead letters.** An entry delivered more than ``dead_letter_after`` times (or whose payload
  cannot be decoded) moves to ``<stream>:dead`` with the reason, and is counted.
* **Errors.** Any Redis failure (down, refused, an error reply) raises
  :class:`~envhub.core.errors.QueueError` naming the URL (password masked), never a raw redis
  exception.

``claim_idle_ms`` must exceed the longest time a consumer holds a delivery before acking it
(or call :meth:`RedisQueue.touch` while working): a live consumer's deliveries idle past it are
handed to another consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from envhub.core.errors import ConfigurationError, QueueError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.codec import decode_group, encode_group
from envhub.rollout.queue.stats import QueueStats

__all__ = ["DEFAULT_URL", "Deduplicator", "RedisQueue", "mask_url"]

DEFAULT_URL = "redis://127.0.0.1:6379/0"
_RELEASED_IDLE_MS = 30 * 86400 * 1000


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (safe for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class Deduplicator:
    """The uids of consumed groups, in a Redis sorted set scored by time (kept ``ttl_s``)."""

    def __init__(self, client: aioredis.Redis, key: str, *, ttl_s: float = 7 * 86400) -> None:
        self.client, self.key, self.ttl_s = client, key, ttl_s

    async def seen(self, uids: Sequence[str]) -> list[bool]:
        """Whether each uid was consumed (one ``ZMSCORE``)."""
        if not uids:
            return []
        scores = await self.client.zmscore(self.key, list(uids))
        return [score is not None for score in scores]

    def mark(self, pipe: Any, uids: Sequence[str]) -> None:
        """Queue the commands that record ``uids`` as consumed on ``pipe`` (a MULTI pipeline)."""
        now = time.time()
        if uids:
            pipe.zadd(self.key, dict.fromkeys(uids, now))
        pipe.zremrangebyscore(self.key, "-inf", now - self.ttl_s)


@dataclass
class _Read:
    """One stream entry as read: fields are empty when the entry was deleted meanwhile."""

    entry_id: str
    fields: dict[bytes, bytes]
    times_delivered: int


class RedisQueue:
    """:class:`~envhub.rollout.queue.base.GroupQueue` on a Redis stream with a consumer group.

    Args:
        url: the Redis URL (``REDIS_URL``), e.g. ``redis://127.0.0.1:6379/0``.
        stream: the work stream's key.
        group: the consumer group (created with MKSTREAM from id 0 when missing).
        consumer: this consumer's name. Keep it stable across restarts of one trainer process
            so that it takes back its own pending entries at once; default: host-pid-random.
        max_backlog: ``put`` waits while undelivered plus pending entries reach this.
        claim_idle_ms: entries another consumer left unacked this long are taken over.
        dead_letter_after: an entry is delivered at most this many times, then dead-lettered.
        compress: zlib level for payloads, or ``None``.
        dedup_ttl_s: how long consumed uids are remembered.
        poll_s: how often a waiting ``put`` re-checks the backlog (it backs off to 10x).
        connect_timeout_s: how long to wait for a TCP connection to Redis.
        client: an existing ``redis.asyncio.Redis`` (``decode_responses=False``) to share; it
            is not closed by :meth:`aclose`.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        stream: str = "envhub:groups",
        group: str = "trainers",
        consumer: str | None = None,
        max_backlog: int = 1024,
        claim_idle_ms: int = 300_000,
        dead_letter_after: int = 10,
        compress: int | None = None,
        dedup_ttl_s: float = 7 * 86400,
        poll_s: float = 0.05,
        connect_timeout_s: float = 5.0,
        client: aioredis.Redis | None = None,
    ) -> None:
        if max_backlog < 1 or dead_letter_after < 1 or claim_idle_ms < 1:
            raise ConfigurationError(
                f"RedisQueue needs max_backlog >= 1, dead_letter_after >= 1 and claim_idle_ms >= 1; got "
                f"{max_backlog}, {dead_letter_after} and {claim_idle_ms}."
            )
        self.url = url
        self.stream, self.group = stream, group
        self.dead_stream = f"{stream}:dead"
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.max_backlog, self.claim_idle_ms, self.dead_letter_after = (
            max_backlog,
            claim_idle_ms,
            dead_letter_after,
        )
        self.compress, self.poll_s = compress, poll_s
        self._owns_client = client is None
        self.client: aioredis.Redis = client or aioredis.Redis.from_url(
            url, socket_connect_timeout=connect_timeout_s, decode_responses=False
        )
        self.dedup = Deduplicator(self.client, f"{stream}:{group}:consumed", ttl_s=dedup_ttl_s)
        self.stats = QueueStats()
        self._group_ready = False
        self._recovered = False  # own pending entries (id 0) read back after a restart
        self._pending_cursor = "0"
        self._claim_cursor = "0-0"
        self._claim_every_s = max(claim_idle_ms / 4000, 0.01)
        self._last_claim = 0.0
        self._outstanding: dict[str, str] = {}  # delivery id -> uid, returned and not acked

    # -- errors --------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def redis_errors(self, doing: str) -> AsyncIterator[None]:
        """Turn any Redis failure inside the block into a :class:`QueueError` that says what to check."""
        try:
            yield
        except (RedisError, OSError) as exc:
            where = mask_url(self.url)
            raise QueueError(
                f"Redis at {where} failed while {doing} ({type(exc).__name__}: {exc}). Check that REDIS_URL "
                f"points at a running Redis >= 7.0 and that `redis-cli -u {where} ping` answers PONG, then "
                "retry: unacked groups stay in the stream, and a group published twice is skipped by uid.",
                url=where,
                doing=doing,
                reason=f"{type(exc).__name__}: {exc}",
            ) from exc

    @contextlib.asynccontextmanager
    async def transaction(self, doing: str) -> AsyncIterator[Any]:
        """A MULTI/EXEC pipeline on :attr:`client`; Redis failures become :class:`QueueError`."""
        async with self.redis_errors(doing), self.client.pipeline(transaction=True) as pipe:
            yield pipe

    # -- producer ------------------------------------------------------------------------------

    def entry_fields(self, group: Group) -> dict[str, bytes | str]:
        """The stream fields of ``group``: header fields plus the payload ``v``."""
        return {
            "uid": group.uid,
            "env": group.env_id,
            "policy_version": "" if group.policy_version is None else str(group.policy_version),
            "job": group.job_id or "",
            "v": encode_group(group, compress=self.compress),
        }

    async def backlog(self) -> int:
        """Undelivered plus pending entries of the consumer group (what back-pressure bounds)."""
        await self._ensure_group()
        async with self.redis_errors("reading the queue backlog (XINFO GROUPS)"):
            for info in await self.client.xinfo_groups(self.stream):
                name = info["name"].decode() if isinstance(info["name"], bytes) else info["name"]
                if name == self.group:
                    if info.get("lag") is None:  # unknown after some deletions: count the entries
                        return int(await self.client.xlen(self.stream))
                    return int(info["lag"]) + int(info["pending"])
        self._group_ready = False  # the group was deleted under us: recreate it next time
        return 0

    async def wait_for_room(self) -> None:
        """Return once the backlog is below ``max_backlog`` (polls; counts a wait in ``stats.put_waits``)."""
        delay, waited = self.poll_s, False
        while await self.backlog() >= self.max_backlog:
            if not waited:
                self.stats.put_waits += 1
                waited = True
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, self.poll_s * 10)

    async def put(self, group: Group) -> None:
        """XADD ``group`` (no MAXLEN) once the backlog is below ``max_backlog``."""
        await self.wait_for_room()
        # Encoding a big group takes tens of ms: a thread keeps the event loop answering meanwhile.
        fields = await asyncio.to_thread(self.entry_fields, group)
        async with self.redis_errors("publishing a group (XADD)"):
            await self.client.xadd(self.stream, fields)  # type: ignore[arg-type]
        self.stats.put += 1

    # -- consumer ------------------------------------------------------------------------------

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        """Up to ``count`` deliveries: own pending, then idle ones of others, then new entries.

        Waits until at least one group is available, or returns ``[]`` after ``timeout_s``
        (``None`` waits indefinitely; ``0`` never blocks).
        """
        _check_count(count)
        await self._ensure_group()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        block_cap_s = min(2.0, max(0.05, self.claim_idle_ms / 2000))  # wake up to reclaim idle entries
        while True:
            reads: list[_Read] = []
            if not self._recovered:
                reads = await self._read_own_pending(count)
            if self._recovered:
                reads += await self._autoclaim(count - len(reads))
                need = count - len(reads)
                if need > 0:
                    block_s = 0.0 if reads else block_cap_s
                    if deadline is not None:
                        block_s = max(0.0, min(block_s, deadline - time.monotonic()))
                    reads += await self._read_new(need, block_s)
            out = await self._accept(reads)
            if out:
                return out
            if deadline is not None and time.monotonic() >= deadline:
                return []

    async def ack(self, deliveries: Sequence[Delivery]) -> None:
        """XACK + XDEL the deliveries and record their uids as consumed, in one MULTI."""
        if not deliveries:
            return
        ids = [d.delivery_id for d in deliveries]
        async with self.transaction("acknowledging groups (XACK)") as pipe:
            self.dedup.mark(pipe, [d.group.uid for d in deliveries])
            pipe.xack(self.stream, self.group, *ids)
            pipe.xdel(self.stream, *ids)
            results = await pipe.execute()
        self.stats.acked += int(results[-2])
        for entry_id in ids:
            self._outstanding.pop(entry_id, None)

    async def touch(self, deliveries: Sequence[Delivery]) -> None:
        """Reset the idle time of deliveries still being worked on, so nobody takes them over."""
        if deliveries:
            async with self.redis_errors("extending deliveries (XCLAIM JUSTID)"):
                await self.client.xclaim(
                    self.stream,
                    self.group,
                    self.consumer,
                    0,
                    [d.delivery_id for d in deliveries],
                    justid=True,
                )

    async def aclose(self) -> None:
        """Hand unacked deliveries back (others can take them at once) and close the connection."""
        try:
            if self._outstanding:
                # IDLE makes them look idle for a long time (beyond any consumer's claim_idle_ms),
                # so the next XAUTOCLAIM of any consumer takes them.
                await self.client.xclaim(
                    self.stream,
                    self.group,
                    self.consumer,
                    0,
                    list(self._outstanding),
                    idle=max(self.claim_idle_ms, _RELEASED_IDLE_MS),
                    justid=True,
                )
                self._outstanding.clear()
        except (RedisError, OSError):
            pass  # best effort: without it they are reclaimed after claim_idle_ms anyway
        finally:
            if self._owns_client:
                await self.client.aclose()

    # -- internals -----------------------------------------------------------------------------

    async def _ensure_group(self) -> None:
        if self._group_ready:
            return
        async with self.redis_errors("creating the consumer group (XGROUP CREATE)"):
            try:
                await self.client.xgroup_create(self.stream, self.group, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._group_ready = True

    async def _read_own_pending(self, count: int) -> list[_Read]:
        async with self.redis_errors("reading this consumer's pending groups (XREADGROUP 0)"):
            reply: Any = await self.client.xreadgroup(
                self.group, self.consumer, {self.stream: self._pending_cursor}, count=count
            )
        entries = reply[0][1] if reply else []
        if not entries:
            self._recovered = True
            return []
        self._pending_cursor = _text(entries[-1][0])
        return await self._with_counts(entries)

    async def _autoclaim(self, count: int) -> list[_Read]:
        now = time.monotonic()
        if count <= 0 or now - self._last_claim < self._claim_every_s:
            return []
        self._last_claim = now
        async with self.redis_errors("taking over idle groups (XAUTOCLAIM)"):
            claimed: Any = await self.client.xautoclaim(
                self.stream, self.group, self.consumer, self.claim_idle_ms, self._claim_cursor, count=count
            )
        cursor, entries = claimed[0], claimed[1]  # the third element, deleted ids, left the PEL already
        self._claim_cursor = _text(cursor)
        if entries:
            self._last_claim = 0.0  # more may be waiting: look again next time
        # Our own idle deliveries come back too: we still hold them, they are not new.
        entries = [e for e in entries if _text(e[0]) not in self._outstanding]
        reads = await self._with_counts(entries)
        self.stats.claimed += len(reads)
        return reads

    async def _read_new(self, count: int, block_s: float) -> list[_Read]:
        block_ms = int(block_s * 1000)
        async with self.redis_errors("reading new groups (XREADGROUP >)"):
            reply: Any = await self.client.xreadgroup(
                self.group, self.consumer, {self.stream: ">"}, count=count, block=block_ms or None
            )
        entries = reply[0][1] if reply else []
        return [_Read(_text(i), dict(f or {}), 1) for i, f in entries]

    async def _with_counts(self, entries: list[Any]) -> list[_Read]:
        """Attach XPENDING delivery counts to entries this consumer now owns."""
        if not entries:
            return []
        ids = [_text(i) for i, _ in entries]
        async with self.redis_errors("reading delivery counts (XPENDING)"):
            rows: Any = await self.client.xpending_range(
                self.stream,
                self.group,
                min=ids[0],
                max=ids[-1],
                count=len(ids) + len(self._outstanding),
                consumername=self.consumer,
            )
        counts = {_text(r["message_id"]): int(r["times_delivered"]) for r in rows}
        return [_Read(i, dict(f or {}), counts.get(i, 1)) for i, (_, f) in zip(ids, entries, strict=True)]

    async def _accept(self, reads: list[_Read]) -> list[Delivery]:
        """Decode, de-duplicate and dead-letter ``reads``; the rest become deliveries."""
        live: list[_Read] = []
        gone: list[str] = []  # deleted meanwhile, or duplicates: ack and delete
        for read in reads:
            if not read.fields:
                gone.append(read.entry_id)
            elif read.times_delivered > self.dead_letter_after:
                await self._dead_letter(read, f"delivered {read.times_delivered} times without an ack")
            else:
                live.append(read)
        uids = [_text(r.fields.get(b"uid", b"")) for r in live]
        async with self.redis_errors("checking consumed uids (ZMSCORE)"):
            consumed = await self.dedup.seen(uids)
        held = set(self._outstanding.values())
        out: list[Delivery] = []
        for read, uid, seen in zip(live, uids, consumed, strict=True):
            if seen or uid in held:
                gone.append(read.entry_id)
                self.stats.duplicates_skipped += 1
                continue
            try:
                group = await asyncio.to_thread(decode_group, read.fields[b"v"])
            except (QueueError, KeyError) as exc:
                await self._dead_letter(read, f"undecodable payload: {exc}")
                continue
            held.add(uid)
            self._outstanding[read.entry_id] = uid
            out.append(Delivery(group, read.entry_id, read.times_delivered))
        if gone:
            async with self.transaction("dropping duplicate groups (XACK)") as pipe:
                pipe.xack(self.stream, self.group, *gone)
                pipe.xdel(self.stream, *gone)
                await pipe.execute()
        self.stats.delivered += len(out)
        self.stats.redelivered += sum(1 for d in out if d.times_delivered > 1)
        return out

    async def _dead_letter(self, read: _Read, reason: str) -> None:
        fields = {k: v for k, v in read.fields.items() if k != b"reason"}
        fields.update(
            {
                b"reason": reason.encode(),
                b"source_id": read.entry_id.encode(),
                b"times_delivered": str(read.times_delivered).encode(),
            }
        )
        async with self.transaction("moving a group to the dead-letter stream") as pipe:
            pipe.xadd(self.dead_stream, fields)  # type: ignore[arg-type]
            pipe.xack(self.stream, self.group, read.entry_id)
            pipe.xdel(self.stream, read.entry_id)
            await pipe.execute()
        self.stats.dead_lettered += 1


def _check_count(count: int) -> None:
    if count < 1:
        raise ConfigurationError(f"get(count) needs count >= 1; got {count}.")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
