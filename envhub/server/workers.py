"""The pool of worker processes that host the env instances.

Each worker is a process (``spawn`` or ``forkserver``) running
:func:`envhub.server.host.serve_worker` on one end of a socket pair. The server keeps the other
end as an asyncio stream with one reader task per worker, so waiting on a worker never blocks
the event loop. Messages are framed like ``multiprocessing`` connections (a 4-byte big-endian
length, then a pickle) so the worker side can use plain blocking ``Connection`` calls.

Failure handling, the reason this module exists:

* a worker that dies (SIGKILL, segfault, ``os._exit``) closes its socket; the reader sees EOF,
  fails that worker's pending calls with :class:`WorkerDied`, tells the owner through
  ``on_death`` (which marks its sessions lost) and starts a replacement in the same slot;
* a watchdog fails the call a worker is stuck on with :class:`WorkerTimedOut` and kills the
  worker, which then goes through the same replacement path. "Stuck" means the worker has sent
  nothing for the step timeout while that call (the oldest unanswered one: a worker answers in
  order) was waiting; time a call spends queued behind other sessions' steps does not count, so
  a busy worker is not killed for being busy (it reports progress between the ops it runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from envhub.server.host import serve_worker
from envhub.server.messages import Call, Hello, Op, OpResult, Progress, to_wire

__all__ = ["WorkerDied", "WorkerPool", "WorkerSlot", "WorkerTimedOut"]

_log = logging.getLogger("envhub.server")

_HEADER = struct.Struct("!i")
_LONG_HEADER = struct.Struct("!Q")


class WorkerDied(Exception):
    """The worker process ended before answering (internal; the server maps it to SESSION_LOST)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkerTimedOut(Exception):
    """The worker did not answer within the step timeout (mapped to STEP_TIMEOUT)."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"no answer within {timeout_s:g} s")
        self.timeout_s = timeout_s


@dataclass
class WorkerSlot:
    """One worker slot: the live process, its stream and its pending calls.

    ``generation`` increases with each replacement so a caller can tell that the process its
    session lived in is gone even if the slot is alive again.
    """

    index: int
    generation: int = 0
    process: Any = None
    pid: int | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    writer: asyncio.StreamWriter | None = None
    reader_task: asyncio.Task[None] | None = None
    #: Unanswered calls by message id, in the order sent, each with its send time (monotonic).
    pending: dict[int, tuple[asyncio.Future[list[OpResult]], float]] = field(default_factory=dict)
    #: When the worker last sent anything (monotonic): answers, or progress during a long frame.
    progress_at: float = 0.0
    outbox: list[Call] = field(default_factory=list)
    sessions: int = 0
    restarts: int = 0
    failed_starts: int = 0
    killed_for_timeout: bool = False

    @property
    def alive(self) -> bool:
        return self.ready.is_set() and self.writer is not None


class WorkerPool:
    """``size`` worker processes serving ``env_id``.

    Args:
        env_id: what the workers build (a registered id, family or ``module:Class``).
        size: number of worker processes.
        start_method: ``"spawn"`` or ``"forkserver"``.
        step_timeout_s: a worker that makes no progress for this long while a call waits on it
            fails that call and is recycled (time queued behind other calls does not count).
        on_death: called with ``(slot_index, generation, reason)`` when a worker's process ends.
        on_restart: called with the slot index each time a replacement is started.
    """

    def __init__(
        self,
        *,
        env_id: str,
        size: int,
        start_method: str,
        step_timeout_s: float,
        on_death: Callable[[int, int, str], None],
        on_restart: Callable[[int], None] = lambda index: None,
    ) -> None:
        self._env_id = env_id
        self._ctx = multiprocessing.get_context(start_method)
        self._timeout = step_timeout_s
        self._on_death = on_death
        self._on_restart = on_restart
        self._ids = itertools.count()
        self._closing = False
        self._watchdog: asyncio.Task[None] | None = None
        self.slots = [WorkerSlot(index=i) for i in range(size)]

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, *, ready_timeout_s: float = 120.0) -> None:
        """Start every worker and wait until each has said hello.

        Raises:
            RuntimeError: a worker did not come up within ``ready_timeout_s``.
        """
        for slot in self.slots:
            await self._launch(slot)
        try:
            await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in self.slots)), ready_timeout_s)
        except TimeoutError as exc:
            await self.stop()
            raise RuntimeError(
                f"envhub workers for {self._env_id!r} did not start within {ready_timeout_s:g} s; "
                "run `envhub serve` in the foreground to see the worker's traceback."
            ) from exc
        self._watchdog = asyncio.create_task(self._watch(), name="envhub-worker-watchdog")

    async def stop(self) -> None:
        """Close every worker's stream (they exit on EOF) and reap the processes."""
        self._closing = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        for slot in self.slots:
            if slot.writer is not None:
                slot.writer.close()
            if slot.reader_task is not None:
                slot.reader_task.cancel()
        for slot in self.slots:
            process = slot.process
            if process is None:
                continue
            await asyncio.to_thread(process.join, 5.0)
            if process.is_alive():
                process.kill()
                await asyncio.to_thread(process.join, 5.0)

    async def _launch(self, slot: WorkerSlot) -> None:
        parent_sock, child_sock = socket.socketpair()
        process = self._ctx.Process(  # type: ignore[attr-defined]
            target=serve_worker,
            args=(child_sock, self._env_id),
            name=f"envhub-worker-{slot.index}",
            daemon=True,
        )
        with _main_module_hidden():
            process.start()
        child_sock.close()  # only the child holds its end now, so its death reads as EOF here
        reader, writer = await asyncio.open_connection(sock=parent_sock)
        slot.process, slot.pid, slot.writer = process, process.pid, writer
        slot.ready.clear()
        slot.killed_for_timeout = False
        slot.reader_task = asyncio.create_task(
            self._read(slot, reader, slot.generation), name=f"envhub-worker-reader-{slot.index}"
        )

    # -- calls ------------------------------------------------------------------------------------

    def least_loaded(self) -> WorkerSlot:
        """The live slot with the fewest sessions (any slot if none is live yet)."""
        live = [s for s in self.slots if s.alive] or self.slots
        return min(live, key=lambda s: s.sessions)

    async def call(self, slot: WorkerSlot, ops: list[Op], *, generation: int | None = None) -> list[OpResult]:
        """Send ``ops`` to ``slot`` as one message and wait for their results.

        Args:
            slot: the worker.
            ops: the operations (:mod:`envhub.server.messages`, run by
                :class:`envhub.server.host.EnvHost`).
            generation: the process generation the caller's sessions live in; if the slot has
                moved on, the call fails at once instead of reaching a process without them.

        Raises:
            WorkerDied: the worker ended (or was replaced) before answering.
            WorkerTimedOut: no answer within the step timeout; the worker is being recycled.
        """
        if generation is not None and generation != slot.generation:
            raise WorkerDied("its worker process was replaced")
        if not slot.ready.is_set():
            try:
                await asyncio.wait_for(slot.ready.wait(), self._timeout)
            except TimeoutError as exc:
                raise WorkerDied(f"its worker did not start within {self._timeout:g} s") from exc
            if generation is not None and generation != slot.generation:
                raise WorkerDied("its worker process was replaced")
        writer = slot.writer
        if writer is None or writer.is_closing():
            raise WorkerDied("its worker process is not running")
        message_id = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[OpResult]] = loop.create_future()
        slot.pending[message_id] = (future, time.monotonic())
        # Calls made in the same event-loop turn travel in one frame: under load this turns
        # hundreds of small writes and worker wake-ups into a few.
        if not slot.outbox:
            loop.call_soon(self._flush, slot)
        slot.outbox.append(Call(message_id, to_wire(ops)))
        return await future

    def _flush(self, slot: WorkerSlot) -> None:
        messages, slot.outbox = slot.outbox, []
        writer = slot.writer
        if not messages or writer is None or writer.is_closing():
            return  # the reader's death handling fails their futures
        writer.write(_frame(pickle.dumps(messages, protocol=pickle.HIGHEST_PROTOCOL)))

    # -- reader, watchdog, replacement ----------------------------------------------------------

    async def _read(self, slot: WorkerSlot, reader: asyncio.StreamReader, generation: int) -> None:
        reason = "its worker process exited"
        try:
            while True:
                payload = await _read_frame(reader)
                slot.progress_at = time.monotonic()
                answers = pickle.loads(payload)
                if isinstance(answers, Hello):
                    slot.pid = answers.pid
                    slot.failed_starts = 0
                    slot.ready.set()
                    continue
                if isinstance(answers, Progress):  # a long frame is still running, op by op
                    continue
                for message_id, results in answers:
                    entry = slot.pending.pop(message_id, None)
                    if entry is not None and not entry[0].done():
                        entry[0].set_result(results)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            return
        if slot.killed_for_timeout:
            reason = "its worker was restarted after a step exceeded the step timeout"
        elif slot.process is not None:
            await asyncio.to_thread(slot.process.join, 1.0)
            code = slot.process.exitcode
            if code is not None and code < 0:
                reason = f"its worker process was killed by signal {signal.Signals(-code).name}"
            elif code is not None:
                reason = f"its worker process exited with status {code}"
        await self._handle_death(slot, generation, reason)

    async def _handle_death(self, slot: WorkerSlot, generation: int, reason: str) -> None:
        if slot.generation != generation:
            return
        slot.generation += 1
        slot.ready.clear()
        if slot.writer is not None:
            slot.writer.close()
        slot.writer, slot.pid, slot.sessions = None, None, 0
        pending, slot.pending, slot.outbox = slot.pending, {}, []
        for future, _deadline in pending.values():
            if not future.done():
                future.set_exception(WorkerDied(reason))
        self._on_death(slot.index, generation, reason)
        while not self._closing:
            # A worker that dies while starting (bad env import) must not spin: back off.
            if slot.failed_starts:
                await asyncio.sleep(min(30.0, 0.5 * 2**slot.failed_starts))
            slot.failed_starts += 1
            slot.restarts += 1
            self._on_restart(slot.index)
            try:
                await self._launch(slot)
                return
            except OSError as exc:  # no memory or file descriptors left to start a process: retry
                _log.warning("could not start envhub worker %d: %s", slot.index, exc)

    async def _watch(self) -> None:
        interval = max(0.05, min(1.0, self._timeout / 4))
        while True:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for slot in self.slots:
                if not slot.pending or slot.killed_for_timeout:
                    continue
                # The worker answers in order, so the oldest unanswered call is the one it is
                # running. Its clock starts when it was sent or when the worker last reported
                # progress, whichever is later: waiting behind other sessions' steps is not
                # this step taking too long.
                mid, (future, sent_at) = next(iter(slot.pending.items()))
                if max(sent_at, slot.progress_at) + self._timeout > now:
                    continue
                slot.pending.pop(mid, None)
                if not future.done():
                    future.set_exception(WorkerTimedOut(self._timeout))
                # The calls queued behind it fail with WorkerDied (SESSION_LOST) when it dies.
                self.kill(slot, for_timeout=True)

    def kill(self, slot: WorkerSlot, *, for_timeout: bool = False) -> None:
        """SIGKILL the slot's process (it is replaced as if it had crashed)."""
        slot.killed_for_timeout = slot.killed_for_timeout or for_timeout
        slot.ready.clear()  # /ready and new sessions see it gone now, not when its EOF arrives
        if slot.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(slot.pid, signal.SIGKILL)


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Keep ``spawn`` from re-running the caller's ``__main__`` in the worker.

    Workers only need :func:`serve_worker` (importable from envhub), but ``spawn`` re-imports
    the parent's main script in the child, which re-starts the server when that script has no
    ``if __name__ == "__main__"`` guard (a benchmark, a notebook). Hiding the main module's
    path and spec while the process starts makes the child skip that step.
    """
    main = sys.modules.get("__main__")
    saved = {name: getattr(main, name) for name in ("__file__", "__spec__") if hasattr(main, name)}
    try:
        for name in saved:
            setattr(main, name, None) if name == "__spec__" else delattr(main, name)
        yield
    finally:
        for name, value in saved.items():
            setattr(main, name, value)


def _frame(payload: bytes) -> bytes:
    if len(payload) < 0x7FFFFFFF:
        return _HEADER.pack(len(payload)) + payload
    return _HEADER.pack(-1) + _LONG_HEADER.pack(len(payload)) + payload


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    (size,) = _HEADER.unpack(await reader.readexactly(4))
    if size == -1:
        (size,) = _LONG_HEADER.unpack(await reader.readexactly(8))
    return await reader.readexactly(size)
