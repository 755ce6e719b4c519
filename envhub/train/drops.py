"""The drop ledger: groups the staleness rule dropped, recorded durably before they are acknowledged.

A durable (Redis) queue redelivers what a trainer has not acknowledged when it dies, so a
group used in an update is acknowledged only after the checkpoint that records it. A *dropped*
group (too old, or sampled by weights the run lost; :meth:`envhub.train.trainer.Trainer._verdict`)
needs no checkpoint of the model, only its count: so the trainer appends it to this ledger
(``RUN_DIR/dropped_groups.jsonl``, fsynced) and acknowledges it at once, instead of holding it
unacknowledged until the next checkpoint. A resume that drains a large backlog then holds no
more than one checkpoint interval's used groups (``check_ack_interval``), never the backlog.

Counted once across a crash: each line carries the iteration whose batch was being gathered
when the group was dropped. A checkpoint of iteration ``c`` counts every drop of iterations
``<= c`` (``TrainerState.dropped_groups``); a resume from it adds the ledger's lines of later
iterations (:meth:`DropLedger.since`) and skips their uids when the queue hands them back (a
crash between the line and the acknowledgement); it restamps those lines with its first
iteration (:meth:`DropLedger.restamp`), so its first checkpoint counts and prunes them. A
group dropped but not yet written is still unacknowledged, so it is redelivered and judged
again. After each checkpoint the lines it counts are pruned (:meth:`DropLedger.prune`), so the
file holds at most one interval's drops.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["LEDGER_NAME", "DropLedger", "DroppedGroup"]

#: The ledger's file name in the run directory.
LEDGER_NAME = "dropped_groups.jsonl"


@dataclass(frozen=True)
class DroppedGroup:
    """One dropped group: its uid, why (``stale``, ``lost``, ``uncorrectable``) and the
    iteration whose batch was being gathered (the trainer's completed iterations + 1)."""

    uid: str
    why: str
    iteration: int


class DropLedger:
    """An append-only, fsynced JSON-lines file of :class:`DroppedGroup` records.

    Args:
        path: the file (``RUN_DIR/dropped_groups.jsonl``); created on the first record.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def record(self, drops: Sequence[DroppedGroup]) -> None:
        """Append ``drops`` and fsync, so they survive a SIGKILL right after (before the ack)."""
        if not drops:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(asdict(d), separators=(",", ":")) + "\n" for d in drops)
        with self.path.open("a+b") as f:
            # A process killed mid-write left a torn last line: end it first, or the first
            # record would share its line and be skipped with it (acknowledged, never counted).
            if f.seek(0, os.SEEK_END) > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    lines = "\n" + lines
            f.write(lines.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[DroppedGroup]:
        """Every record, first per uid; a torn last line (a crash mid-write: never acked) is skipped."""
        if not self.path.is_file():
            return []
        out: list[DroppedGroup] = []
        seen: set[str] = set()
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                drop = DroppedGroup(**json.loads(line))
            except (ValueError, TypeError):
                continue
            if drop.uid not in seen:
                seen.add(drop.uid)
                out.append(drop)
        return out

    def since(self, iteration: int) -> list[DroppedGroup]:
        """The drops a checkpoint of ``iteration`` does not count (those of later iterations)."""
        return [d for d in self.read() if d.iteration > iteration]

    def prune(self, iteration: int) -> None:
        """Forget the drops a checkpoint of ``iteration`` counts (atomically: write, then rename)."""
        if self.path.is_file():
            self._rewrite(self.since(iteration))

    def restamp(self, iteration: int) -> list[DroppedGroup]:
        """The drops a checkpoint of ``iteration`` does not count, now stamped ``iteration + 1``.

        A resume from that checkpoint counts them all in its first iteration, so its first
        checkpoint counts them and prunes them, whatever ``checkpoint_every`` the killed run had
        (its lines may name iterations past the resumed run's next checkpoint: left with those,
        a later resume would count them again).
        """
        later = self.since(iteration)
        if any(d.iteration != iteration + 1 for d in later):
            self._rewrite([DroppedGroup(d.uid, d.why, iteration + 1) for d in later])
        return self.since(iteration)

    def _rewrite(self, keep: Sequence[DroppedGroup]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        text = "".join(json.dumps(asdict(d), separators=(",", ":")) + "\n" for d in keep)
        with tmp.open("wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())  # the kept lines on disk before the rename makes them the ledger
        tmp.replace(self.path)

    def clear(self) -> None:
        """Start over (a run that does not resume: no checkpoint counts anything yet)."""
        self.path.unlink(missing_ok=True)
