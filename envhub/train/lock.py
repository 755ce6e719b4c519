"""One live trainer per run label: a lock on the Redis queue the run's groups come through.

Two trainers on one run label (the same run directory, or the same ``rollout.run``) would read
the same consumer group (``trainers:<run>``), take each other's groups and acknowledge groups
the other has not checkpointed. So on a Redis queue, rank 0 of a run takes a lock before it
reads anything: the key ``<stream>:trainers:<run>:lock`` (:func:`run_lock_key`), set with
``SET NX PX`` to who holds it (host, pid-namespace, pid and the process's start time), with a
TTL (``ENVHUB_QUEUE_RUN_LOCK_MS``, 30 s) that a heartbeat thread renews every third of it.

Why Redis, not a file lock in the run directory: the Redis key is where the conflict is (the
consumer group), so it covers two machines, two mounts of one directory and two directories
given the same ``rollout.run``; a ``flock`` covers none of these reliably (NFS). What the file
lock does better is SIGKILL, and the lock recovers that too:

* the holder was on this host (same pid namespace) and is gone (no such pid, a zombie, or the
  pid now belongs to a process started later): the lock is taken over at once;
* the holder is on another host (or in another container): it is waited for until its TTL
  runs out without a renewal (at most ``ttl_ms``), then taken; a holder that renews meanwhile
  is alive, and the start fails;
* the holder is alive on this host: the start fails at once.

The run directory has a lock of its own, for every queue (the in-process one included): rank 0
holds an exclusive ``flock`` on ``<run dir>/.trainer.lock`` (:class:`RunDirLock`) while it
runs, so two trainers never write one directory's checkpoints, metrics and drop ledger. The
kernel drops it when its holder dies, SIGKILL included, so a resume is never blocked by it.

A refused start raises :class:`RunLockedError` (code ``RUN_LOCKED``; ``envhub-train`` prints it
on one line and exits 2). A holder that stops renewing for longer than the TTL (a process
frozen past it) loses the lock, and :attr:`RunLock.lost` says so: the trainer then stops before
its next checkpoint and acknowledgement.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import redis
from redis.exceptions import RedisError

from envhub.core.errors import EnvhubError, QueueError
from envhub.rollout.queue.redis import mask_url
from envhub.rollout.queue.settings import DEFAULT_RUN_LOCK_MS, run_group

__all__ = ["RunDirLock", "RunLock", "RunLockedError", "run_lock_key"]

# Renew (or release, with ARGV[2] = 0) the lock only while this holder's value is in it.
_RENEW_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if tonumber(ARGV[2]) > 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  else
    redis.call('DEL', KEYS[1])
  end
  return 1
end
return 0
"""


class RunLockedError(EnvhubError):
    """Another live trainer holds the run label's lock (or this one lost it)."""

    code = "RUN_LOCKED"
    status_code = 409


def run_lock_key(stream: str, run: str) -> str:
    """The lock of the trainers of run label ``run`` on ``stream``: ``<stream>:trainers:<run>:lock``."""
    return f"{stream}:{run_group(run)}:lock"


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time (clock ticks after boot), from ``/proc``; None if absent."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after "pid (comm) ": field 3 on
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def _pid_namespace() -> str | None:
    with contextlib.suppress(OSError):
        return os.readlink("/proc/self/ns/pid")
    return None


def _identity() -> dict[str, Any]:
    stat = _proc_stat(os.getpid())
    return {
        "host": socket.gethostname(),
        "ns": _pid_namespace(),
        "pid": os.getpid(),
        "start": stat[1] if stat else None,
        "since": round(time.time(), 3),
        "token": uuid.uuid4().hex,
    }


def _gone(holder: dict[str, Any]) -> bool:
    """Whether a holder on this host (same pid namespace) is certainly dead."""
    here = _pid_namespace()
    if holder.get("host") != socket.gethostname() or here is None or holder.get("ns") != here:
        return False  # another host or container: only its TTL can tell
    stat = _proc_stat(int(holder.get("pid", -1)))
    if stat is None:
        return True
    state, start = stat
    return state in ("Z", "X") or (holder.get("start") is not None and start != holder["start"])


def _describe(holder: dict[str, Any]) -> str:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(holder.get("since", 0))))
    return f"pid {holder.get('pid')} on host {holder.get('host')}, since {since}"


class RunDirLock:
    """An exclusive ``flock`` on ``<run_dir>/.trainer.lock``: one live trainer per run directory.

    The file holds the holder's identity (for the refusal's message); the lock is the open file
    description's, so it goes with the process, however it ends.
    """

    NAME = ".trainer.lock"

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.path = Path(run_dir) / self.NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or fail at once.

        Raises:
            RunLockedError: another live process holds it.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder(fd)
            os.close(fd)
            where = str(self.path.parent)
            raise RunLockedError(
                f"Another trainer is running in run directory {where!r} ({_describe(holder)}); "
                "wait for it to end (or stop it), or give this run another --run-dir.",
                run_dir=str(self.path.parent),
                holder=holder,
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_identity(), sort_keys=True).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Unlock (idempotent); the file stays, empty of meaning once unlocked."""
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = None

    @staticmethod
    def _holder(fd: int) -> dict[str, Any]:
        with contextlib.suppress(OSError, ValueError):
            found = json.loads(os.pread(fd, 4096, 0) or b"{}")
            if isinstance(found, dict):
                return found
        return {}


class RunLock:
    """The lock of one run label (see the module docstring).

    Args:
        url: the Redis URL of the run's queue.
        key: :func:`run_lock_key` of the run's stream and label.
        ttl_ms: the lock's TTL; the heartbeat renews it every third.
        run: the run label (for messages).
    """

    def __init__(self, url: str, key: str, *, ttl_ms: int = DEFAULT_RUN_LOCK_MS, run: str = "") -> None:
        self.url, self.key, self.ttl_ms, self.run = url, key, ttl_ms, run
        self.identity = _identity()
        self._value = json.dumps(self.identity, sort_keys=True)
        self._client: redis.Redis = redis.Redis.from_url(url, socket_connect_timeout=5.0)
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._lost = False

    @property
    def lost(self) -> bool:
        """Whether another process took the lock over (this one did not renew it within the TTL)."""
        return self._lost

    def acquire(self) -> None:
        """Take the lock and start renewing it.

        Raises:
            RunLockedError: a live trainer holds it (on this host: at once; elsewhere: once it
                renewed past the TTL it had when this one looked).
            QueueError: Redis cannot be reached.
        """
        deadline: float | None = None
        while True:
            taken = self._try()
            if taken is None:
                self._beat = threading.Thread(target=self._renew, name="envhub-run-lock", daemon=True)
                self._beat.start()
                return
            raw, holder, ttl_ms = taken
            if _gone(holder):  # delete it only if it still holds that dead holder's value
                self._call(lambda c, raw=raw: c.eval(_RENEW_SCRIPT, 1, self.key, raw, 0))
                continue
            if deadline is None:
                deadline = time.monotonic() + max(ttl_ms, 0) / 1000 + 0.5
            local = holder.get("host") == socket.gethostname() and holder.get("ns") == _pid_namespace()
            if local or time.monotonic() >= deadline:
                raise self._refusal(holder, waited=not local)
            time.sleep(min(0.25, max(deadline - time.monotonic(), 0.01)))

    def release(self) -> None:
        """Stop renewing and delete the lock if it is still this holder's (idempotent)."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
            self._beat = None
            with contextlib.suppress(RedisError, OSError):
                self._client.eval(_RENEW_SCRIPT, 1, self.key, self._value, 0)  # type: ignore[no-untyped-call]
        self._client.close()

    # -- internals -----------------------------------------------------------------------------

    def _call(self, do: Any) -> Any:
        try:
            return do(self._client)
        except (RedisError, OSError) as exc:
            where = mask_url(self.url)
            raise QueueError(
                f"Redis at {where} failed while taking the trainer's run lock {self.key!r} "
                f"({type(exc).__name__}: {exc}). Check that REDIS_URL points at a running Redis.",
                url=where,
                doing="taking the run lock",
            ) from exc

    def _try(self) -> tuple[bytes, dict[str, Any], int] | None:
        """Set the lock if free (None); else its value, its holder ({} when unreadable) and TTL in ms."""
        while True:
            if self._call(lambda c: c.set(self.key, self._value, nx=True, px=self.ttl_ms)):
                return None
            raw, ttl = self._call(self._look)
            if raw is not None:
                break  # else it expired between the two calls: try again at once
        try:
            holder = json.loads(raw)
        except ValueError:
            holder = {}
        return raw, (holder if isinstance(holder, dict) else {}), int(ttl)

    def _look(self, client: redis.Redis) -> list[Any]:
        """The lock's value and its TTL in ms, read together."""
        with client.pipeline(transaction=True) as pipe:
            pipe.get(self.key)
            pipe.pttl(self.key)
            return list(pipe.execute())

    def _refusal(self, holder: dict[str, Any], *, waited: bool) -> RunLockedError:
        how = (
            f"it kept renewing for the {self.ttl_ms / 1000:g} s this trainer waited"
            if waited
            else "that process is alive on this host"
        )
        return RunLockedError(
            f"Another trainer is running on run label {self.run!r} ({_describe(holder)}; {how}): two "
            "trainers on one label would take and acknowledge each other's groups. Stop it, or give this "
            "run its own output.run_dir or rollout.run.",
            run=self.run,
            key=self.key,
            holder=holder,
        )

    def _renew(self) -> None:
        """The heartbeat: renew every third of the TTL; a Redis hiccup is retried at the next beat."""
        while not self._stop.wait(self.ttl_ms / 3000):
            try:
                kept = self._client.eval(_RENEW_SCRIPT, 1, self.key, self._value, self.ttl_ms)  # type: ignore[no-untyped-call]
            except (RedisError, OSError):
                continue
            if not kept:
                self._lost = True
                return
