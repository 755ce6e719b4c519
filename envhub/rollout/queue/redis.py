"""The finished-group queue on Redis Streams (Redis 7.0 command set), via ``redis.asyncio``.

One stream (``envhub:groups``) holds one entry per finished group: small header fields
(``uid``, ``env``, ``policy_version``, ``job``) for filtering without decoding, plus the
compact payload ``v`` (:mod:`envhub.rollout.queue.codec`). Trainers are consumers of one
consumer group (``trainers``). Reference facts: ``shared/reference/round2_rollout_trainer.md`` §5.

* **Readers never take from each other.** Each reader is its own consumer group (the trainers
  of one run share one); acking (``XACK``) only clears that group's pending list. An entry is
  deleted once *every* group on the stream is done with it: after each ack the stream is
  trimmed with ``XTRIM MINID`` to the smallest, over all groups (``XINFO GROUPS``), of the
  group's oldest pending id (``XPENDING``) and the successor of its last-delivered id
  (:data:`_TRIM_SCRIPT`, run atomically). A reader that must consume nothing (export, viewer)
  reads with ``XRANGE`` and no group at all (:func:`read_stream`). Redis 7.0 has no per-group
  delete; reference ``shared/reference/round3_notes.md``.
* **Back-pressure counts lag, never held groups.** ``put`` waits while the consumer group's
  *lag* (entries not yet delivered to it, ``XINFO GROUPS``) is at ``max_lag``. Groups a
  trainer holds unacked until its checkpoint are delivered, so they never stall the producer;
  ``max_unacked`` bounds how many one consumer may hold (a clear error past it, not a hang).
* **At most one holder.** Every delivery takes a lease: a per-uid key
  ``<stream>:<group>:lease:<uid>`` holding the consumer's name with a TTL of ``claim_idle_ms``.
  A background task renews the leases of everything this consumer holds (and resets the
  entries' idle time, ``XCLAIM JUSTID``) every third of the lease. ``XAUTOCLAIM`` only finds
  entries idle past the lease, and a claimed entry is accepted only when its lease really
  lapsed (the key is gone or names this consumer); otherwise it goes straight back to its
  holder. :meth:`RedisQueue.touch` still renews by hand.
* **At-least-once.** ``get`` returns, in this order: this consumer's own pending entries (read
  with id ``0``: what it held when it last died, if it kept its name), entries whose holder's
  lease lapsed (``XAUTOCLAIM``), then new entries (``XREADGROUP >``). Ack only after the
  group was used.
* **De-duplication by uid.** Acking records the uids in a sorted set (in the same MULTI as the
  XACK); a later entry with a consumed uid (a producer that published twice, a redelivery of a
  group already used) is acked and skipped, never returned; so is an entry whose uid another
  live lease holds.
* **Filters.** A consumer built with ``envs`` / ``runs`` gets only entries whose ``env`` /
  ``run`` header field matches; the rest are acked *for its group only* (give a filtered
  reader its own group).
* **Dead letters.** An entry delivered more than ``dead_letter_after`` times (or whose payload
  cannot be decoded) is copied to ``<stream>:dead`` with the reason, acked, and counted.
* **Errors.** Any Redis failure (down, refused, an error reply) raises
  :class:`~envhub.core.errors.QueueError` naming the URL (password masked), never a raw redis
  exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from envhub.core.errors import ConfigurationError, QueueError
from envhub.core.records import Group
from envhub.rollout.queue.base import Delivery
from envhub.rollout.queue.codec import decode_columns, decode_group, encode_group
from envhub.rollout.queue.settings import DEFAULT_LEASE_MS, DEFAULT_MAX_LAG, DEFAULT_MAX_UNACKED
from envhub.rollout.queue.stats import QueueStats

__all__ = ["DEFAULT_URL", "Deduplicator", "RedisQueue", "mask_url", "read_stream"]

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


# The MINID retention rule (see the module docstring), atomic in one script: the smallest id any
# group still needs; entries before it were delivered to and acked by every group. Returns the
# number of entries trimmed (0 when the stream has no group: nothing may be dropped then).
_TRIM_SCRIPT = """
local function parse(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  return am < bm or (am == bm and as < bs)
end
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
if #groups == 0 then return 0 end
local keep = nil
for _, g in ipairs(groups) do
  local info = {}
  for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
  local ms, seq = parse(info['last-delivered-id'])
  local need = ms .. '-' .. (seq + 1)
  if tonumber(info['pending']) > 0 then
    local oldest = redis.call('XPENDING', KEYS[1], info['name'])[2]
    if less(oldest, need) then need = oldest end
  end
  if keep == nil or less(need, keep) then keep = need end
end
return redis.call('XTRIM', KEYS[1], 'MINID', keep)
"""

# Take (or keep) the lease of a uid: granted when nobody holds it or this consumer already does.
# Returns 1 when granted, else the holder's name.
_LEASE_SCRIPT = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return holder
"""

# Renew leases this consumer still holds; returns, per key, 1 when renewed, 0 when it was lost.
_RENEW_SCRIPT = """
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
"""


@dataclass
class _Read:
    """One stream entry as read: fields are empty when the entry was deleted meanwhile."""

    entry_id: str
    fields: dict[bytes, bytes]
    times_delivered: int
    claimed: bool = False


def _wanted(fields: dict[bytes, bytes], envs: frozenset[str] | None, runs: frozenset[str] | None) -> bool:
    if envs is not None and _text(fields.get(b"env", b"")) not in envs:
        return False
    return runs is None or _text(fields.get(b"run", b"")) in runs


async def read_stream(
    client: aioredis.Redis,
    stream: str,
    *,
    envs: Collection[str] | None = None,
    runs: Collection[str] | None = None,
    batch: int = 64,
) -> AsyncIterator[Group]:
    """Every group on ``stream``, oldest first, read with ``XRANGE``: consumes nothing.

    No consumer group is involved, so exports and viewers take nothing from the trainers and
    hold nothing back from retention. ``envs`` / ``runs`` keep only entries whose header field
    matches (checked before decoding).
    """
    env_set = None if envs is None else frozenset(envs)
    run_set = None if runs is None else frozenset(runs)
    start = "-"
    while True:
        entries: Any = await client.xrange(stream, min=start, count=batch)
        for _, fields in entries:
            if _wanted(fields, env_set, run_set):
                yield await asyncio.to_thread(decode_group, fields[b"v"])
        if len(entries) < batch:
            return
        start = "(" + _text(entries[-1][0])


class RedisQueue:
    """:class:`~envhub.rollout.queue.base.GroupQueue` on a Redis stream with a consumer group.

    Args:
        url: the Redis URL (``REDIS_URL``), e.g. ``redis://127.0.0.1:6379/0``.
        stream: the work stream's key.
        group: the consumer group (created with MKSTREAM from id 0 when missing). Every reader
            that must see every group (a second trainer run, a monitor) uses its own group.
        consumer: this consumer's name. Keep it stable across restarts of one trainer process
            so that it takes back its own pending entries at once; default: host-pid-random.
        max_lag: ``put`` waits while this many entries are not yet delivered to ``group``
            (``ENVHUB_QUEUE_MAX_LAG``, default 1024). Delivered, unacked entries do not count.
        max_unacked: ``get`` refuses to hold more than this many deliveries unacked
            (``ENVHUB_QUEUE_MAX_UNACKED``; a trainer checks its checkpoint interval at start-up).
        claim_idle_ms: the lease of a holder on each delivery (``ENVHUB_QUEUE_LEASE_MS``);
            another consumer takes a delivery over only once its holder's lease lapsed.
        renew_leases: renew this consumer's leases in a background task (off: call
            :meth:`touch` at least once per ``claim_idle_ms``).
        dead_letter_after: an entry is delivered at most this many times, then dead-lettered.
        run: the ``run`` header field this producer writes on its entries (a trainer run id).
        envs: when set, this consumer gets only entries of these env ids.
        runs: when set, this consumer gets only entries of these runs.
        compress: zlib level for payloads, or ``None``.
        columns: deliver groups decoded as columns (:func:`decode_columns`, the trainer's fast
            path); ``Delivery.group`` is then decoded only on first use.
        dedup_ttl_s: how long consumed uids are remembered.
        poll_s: how often a waiting ``put`` re-checks the lag (it backs off to 10x).
        connect_timeout_s: how long to wait for a TCP connection to Redis.
        client: an existing ``redis.asyncio.Redis`` (``decode_responses=False``) to share; it
            is not closed by :meth:`aclose`.
        max_backlog: former name of ``max_lag``.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        stream: str = "envhub:groups",
        group: str = "trainers",
        consumer: str | None = None,
        max_lag: int = DEFAULT_MAX_LAG,
        max_unacked: int = DEFAULT_MAX_UNACKED,
        claim_idle_ms: int = DEFAULT_LEASE_MS,
        renew_leases: bool = True,
        dead_letter_after: int = 10,
        run: str = "",
        envs: Collection[str] | None = None,
        runs: Collection[str] | None = None,
        compress: int | None = None,
        columns: bool = False,
        dedup_ttl_s: float = 7 * 86400,
        poll_s: float = 0.05,
        connect_timeout_s: float = 5.0,
        client: aioredis.Redis | None = None,
        max_backlog: int | None = None,
    ) -> None:
        max_lag = max_backlog if max_backlog is not None else max_lag
        if max_lag < 1 or dead_letter_after < 1 or claim_idle_ms < 1 or max_unacked < 1:
            raise ConfigurationError(
                "RedisQueue needs max_lag >= 1, max_unacked >= 1, dead_letter_after >= 1 and "
                f"claim_idle_ms >= 1; got {max_lag}, {max_unacked}, {dead_letter_after} and {claim_idle_ms}."
            )
        self.url = url
        self.stream, self.group = stream, group
        self.dead_stream = f"{stream}:dead"
        self.consumer = consumer or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.max_lag, self.max_unacked = max_lag, max_unacked
        self.claim_idle_ms, self.dead_letter_after = claim_idle_ms, dead_letter_after
        self.renew_leases = renew_leases
        self.run = run
        self.envs = None if envs is None else frozenset(envs)
        self.runs = None if runs is None else frozenset(runs)
        self.compress, self.poll_s = compress, poll_s
        self.columns = columns
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
        self._renewer: asyncio.Task[None] | None = None

    @property
    def max_backlog(self) -> int:
        """Former name of :attr:`max_lag`."""
        return self.max_lag

    @max_backlog.setter
    def max_backlog(self, value: int) -> None:
        self.max_lag = value

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
            "run": self.run,
            "policy_version": "" if group.policy_version is None else str(group.policy_version),
            "job": group.job_id or "",
            "v": encode_group(group, compress=self.compress),
        }

    async def _group_info(self) -> dict[str, Any] | None:
        await self._ensure_group()
        async with self.redis_errors("reading the consumer group (XINFO GROUPS)"):
            for info in await self.client.xinfo_groups(self.stream):
                if _text(info["name"]) == self.group:
                    return dict(info)
        self._group_ready = False  # the group was deleted under us: recreate it next time
        return None

    async def lag(self) -> int:
        """Entries not yet delivered to the consumer group (what back-pressure bounds)."""
        info = await self._group_info()
        if info is None:
            return 0
        if info.get("lag") is not None:
            return int(info["lag"])
        # Redis cannot tell the lag (e.g. after XDEL of unread entries): count what follows the
        # last delivered id, up to the bound (that is all back-pressure needs to know).
        async with self.redis_errors("counting undelivered groups (XRANGE)"):
            after = "(" + _text(info["last-delivered-id"])
            entries: Any = await self.client.xrange(self.stream, min=after, count=self.max_lag + 1)
            return len(entries)

    async def backlog(self) -> int:
        """Undelivered plus delivered-but-unacked entries of the consumer group (what it retains)."""
        info = await self._group_info()
        if info is None:
            return 0
        return await self.lag() + int(info["pending"])

    async def wait_for_room(self) -> None:
        """Return once the lag is below ``max_lag`` (polls; counts a wait in ``stats.put_waits``)."""
        delay, waited = self.poll_s, False
        while await self.lag() >= self.max_lag:
            if not waited:
                self.stats.put_waits += 1
                waited = True
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, self.poll_s * 10)

    async def put(self, group: Group) -> None:
        """XADD ``group`` (no MAXLEN) once the lag is below ``max_lag``."""
        await self.wait_for_room()
        # Encoding a big group takes tens of ms: a thread keeps the event loop answering meanwhile.
        fields = await asyncio.to_thread(self.entry_fields, group)
        async with self.redis_errors("publishing a group (XADD)"):
            await self.client.xadd(self.stream, fields)  # type: ignore[arg-type]
        self.stats.put += 1

    # -- consumer ------------------------------------------------------------------------------

    async def get(self, count: int, *, timeout_s: float | None = None) -> list[Delivery]:
        """Up to ``count`` deliveries: own pending, then lapsed ones of others, then new entries.

        Waits until at least one group is available, or returns ``[]`` after ``timeout_s``
        (``None`` waits indefinitely; ``0`` never blocks).

        Raises:
            QueueError: this consumer would hold more than ``max_unacked`` unacked deliveries.
        """
        _check_count(count)
        if len(self._outstanding) + count > self.max_unacked:
            raise QueueError(
                f"Consumer {self.consumer!r} holds {len(self._outstanding)} unacked groups and asked for "
                f"{count} more, past max_unacked={self.max_unacked}. Ack sooner (a trainer: a smaller "
                "output.checkpoint_every) or raise ENVHUB_QUEUE_MAX_UNACKED.",
                held=len(self._outstanding),
                max_unacked=self.max_unacked,
            )
        await self._ensure_group()
        self._start_renewer()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        block_cap_s = min(2.0, max(0.05, self.claim_idle_ms / 2000))  # wake up to reclaim lapsed entries
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
        """XACK the deliveries for this group, record their uids and drop their leases (one MULTI).

        Then trim what every group is done with (the MINID retention rule).
        """
        if not deliveries:
            return
        ids = [d.delivery_id for d in deliveries]
        async with self.transaction("acknowledging groups (XACK)") as pipe:
            self.dedup.mark(pipe, [d.uid for d in deliveries])
            pipe.xack(self.stream, self.group, *ids)
            pipe.delete(*(self._lease_key(d.uid) for d in deliveries))
            results = await pipe.execute()
        self.stats.acked += int(results[-2])
        for entry_id in ids:
            self._outstanding.pop(entry_id, None)
        await self.trim()

    async def trim(self) -> int:
        """Delete the entries every consumer group on the stream has acked; returns how many."""
        async with self.redis_errors("trimming acked groups (XTRIM MINID)"):
            return int(await self.client.eval(_TRIM_SCRIPT, 1, self.stream))  # type: ignore[misc]

    async def touch(self, deliveries: Sequence[Delivery]) -> None:
        """Renew the leases of deliveries still being worked on, so nobody takes them over."""
        if deliveries:
            await self._renew({d.delivery_id: d.uid for d in deliveries})

    async def aclose(self) -> None:
        """Hand unacked deliveries back (others can take them at once) and close the connection."""
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._renewer
            self._renewer = None
        try:
            if self._outstanding:
                # IDLE makes them look idle for a long time (beyond any consumer's lease), and the
                # lease keys go, so the next XAUTOCLAIM of any consumer takes them.
                async with self.client.pipeline(transaction=True) as pipe:
                    pipe.xclaim(
                        self.stream,
                        self.group,
                        self.consumer,
                        0,
                        list(self._outstanding),
                        idle=max(self.claim_idle_ms, _RELEASED_IDLE_MS),
                        justid=True,
                    )
                    pipe.delete(*(self._lease_key(uid) for uid in self._outstanding.values()))
                    await pipe.execute()
                self._outstanding.clear()
        except (RedisError, OSError):
            pass  # best effort: without it they are reclaimed once the leases lapse anyway
        finally:
            if self._owns_client:
                await self.client.aclose()

    # -- leases --------------------------------------------------------------------------------

    def _lease_key(self, uid: str) -> str:
        return f"{self.stream}:{self.group}:lease:{uid}"

    def _start_renewer(self) -> None:
        if self.renew_leases and (self._renewer is None or self._renewer.done()):
            self._renewer = asyncio.create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        """Renew every held lease each third of ``claim_idle_ms``, for as long as this consumer lives."""
        while True:
            await asyncio.sleep(self.claim_idle_ms / 3000)
            if self._outstanding:
                with contextlib.suppress(QueueError):  # Redis away: the next round tries again
                    await self._renew(dict(self._outstanding))

    async def _renew(self, held: dict[str, str]) -> None:
        """Extend the leases of ``held`` (delivery id -> uid) and reset the entries' idle time."""
        ids, uids = list(held), list(held.values())
        async with self.redis_errors("renewing leases (XCLAIM JUSTID)"):
            kept: Any = await self.client.eval(  # type: ignore[misc]
                _RENEW_SCRIPT,
                len(uids),
                *(self._lease_key(u) for u in uids),
                self.consumer,
                self.claim_idle_ms,
            )
            mine: list[Any] = [i for i, ok in zip(ids, kept, strict=True) if ok]
            if mine:
                await self.client.xclaim(self.stream, self.group, self.consumer, 0, mine, justid=True)
        lost = len(ids) - len(mine)
        if lost:
            self.stats.leases_lost += lost  # renewed too late: another consumer may hold them now

    async def _take_lease(self, uid: str) -> str | None:
        """Take the lease of ``uid``; returns ``None`` when granted, else the live holder's name."""
        async with self.redis_errors("taking a lease (SET PX)"):
            got = await self.client.eval(  # type: ignore[misc]
                _LEASE_SCRIPT, 1, self._lease_key(uid), self.consumer, self.claim_idle_ms
            )
        return None if got == 1 else _text(got)

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
        async with self.redis_errors("taking over lapsed groups (XAUTOCLAIM)"):
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
        for read in reads:
            read.claimed = True
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

    async def _give_back(self, read: _Read, holder: str) -> None:
        """Return a claimed entry to the consumer whose lease on it is still alive."""
        async with self.redis_errors("returning a group to its holder (XCLAIM JUSTID)"):
            await self.client.xclaim(self.stream, self.group, holder, 0, [read.entry_id], justid=True)
        self.stats.claims_refused += 1

    async def _accept(self, reads: list[_Read]) -> list[Delivery]:
        """Filter, de-duplicate, lease and dead-letter ``reads``; the rest become deliveries."""
        live: list[_Read] = []
        gone: list[str] = []  # deleted meanwhile, filtered out, or duplicates: ack for this group
        for read in reads:
            if not read.fields:
                gone.append(read.entry_id)
            elif not _wanted(read.fields, self.envs, self.runs):
                gone.append(read.entry_id)
                self.stats.filtered_out += 1
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
            holder = await self._take_lease(uid)
            if holder is not None:
                if read.claimed:  # its holder lives and renews: not ours to take
                    await self._give_back(read, holder)
                else:  # a second entry of a uid another consumer holds: a duplicate publish
                    gone.append(read.entry_id)
                    self.stats.duplicates_skipped += 1
                continue
            try:
                if self.columns:
                    payload = read.fields[b"v"]
                    columns = await asyncio.to_thread(decode_columns, payload)
                    delivery = Delivery(
                        None, read.entry_id, read.times_delivered, payload=payload, columns=columns
                    )
                else:
                    group = await asyncio.to_thread(decode_group, read.fields[b"v"])
                    delivery = Delivery(group, read.entry_id, read.times_delivered)
            except (QueueError, KeyError) as exc:
                await self._dead_letter(read, f"undecodable payload: {exc}")
                continue
            held.add(uid)
            self._outstanding[read.entry_id] = uid
            out.append(delivery)
            self.stats.claimed += read.claimed
        if gone:
            async with self.redis_errors("dropping duplicate groups (XACK)"):
                await self.client.xack(self.stream, self.group, *gone)
            await self.trim()
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
            await pipe.execute()
        self.stats.dead_lettered += 1
        await self.trim()


def _check_count(count: int) -> None:
    if count < 1:
        raise ConfigurationError(f"get(count) needs count >= 1; got {count}.")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
