"""The drop ledger: dropped groups on disk before their ack, each counted once after a crash."""

from __future__ import annotations

from pathlib import Path

from envhub.train.drops import DropLedger, DroppedGroup


def test_a_resume_adds_only_the_drops_its_checkpoint_does_not_count(tmp_path: Path) -> None:
    ledger = DropLedger(tmp_path / "dropped_groups.jsonl")
    ledger.record([DroppedGroup("a", "stale", 3), DroppedGroup("b", "lost", 3)])
    ledger.record([DroppedGroup("c", "lost", 4)])
    # A checkpoint of iteration 3 counts a and b; one of iteration 2 counts none of them.
    assert [d.uid for d in ledger.since(3)] == ["c"]
    assert [d.uid for d in ledger.since(2)] == ["a", "b", "c"]
    assert DropLedger(ledger.path).since(2) == ledger.since(2)  # on disk, not in memory


def test_prune_forgets_what_a_checkpoint_counts(tmp_path: Path) -> None:
    ledger = DropLedger(tmp_path / "dropped_groups.jsonl")
    ledger.record([DroppedGroup("a", "stale", 3), DroppedGroup("c", "lost", 4)])
    ledger.prune(3)
    assert ledger.read() == [DroppedGroup("c", "lost", 4)]
    ledger.prune(4)
    assert ledger.read() == [] and ledger.path.read_text() == ""
    ledger.clear()
    assert not ledger.path.exists() and ledger.since(0) == []


def test_a_uid_recorded_twice_counts_once_and_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    ledger = DropLedger(tmp_path / "dropped_groups.jsonl")
    # Recorded, not yet acknowledged, when the trainer died; redelivered and recorded again
    # by a process that did not skip it: still one drop.
    ledger.record([DroppedGroup("a", "lost", 2)])
    ledger.record([DroppedGroup("a", "lost", 2)])
    with ledger.path.open("a") as f:
        f.write('{"uid":"b","why":"lo')  # killed mid-write: that group was never acknowledged
    assert ledger.since(1) == [DroppedGroup("a", "lost", 2)]


def test_a_drop_recorded_after_a_torn_line_is_kept(tmp_path: Path) -> None:
    # A trainer killed mid-write leaves a line without its newline; the resumed one appends its
    # own drops (acknowledged at once). Appended onto the torn fragment, the first of them would
    # share its line and be skipped with it: a drop acknowledged but never on the ledger, so a
    # second crash before the next checkpoint would not count it.
    ledger = DropLedger(tmp_path / "dropped_groups.jsonl")
    ledger.record([DroppedGroup("a", "lost", 2)])
    with ledger.path.open("a") as f:
        f.write('{"uid":"b","why":"lo')
    resumed = DropLedger(ledger.path)
    resumed.record([DroppedGroup("b", "lost", 2), DroppedGroup("c", "stale", 2)])
    assert [d.uid for d in DropLedger(ledger.path).since(1)] == ["a", "b", "c"]


def test_drops_a_resume_counted_are_not_counted_again_after_its_next_checkpoint(
    small_model_dir: Path, tmp_path: Path
) -> None:
    # A trainer with checkpoint_every = 10 dropped groups while gathering iterations 1 to 9 and
    # was killed. Resumed (from no checkpoint) with checkpoint_every = 2, it counts them all in
    # its first iteration and checkpoints at 2, which pruned only the lines of iterations <= 2;
    # killed again, the next resume (from 2) counted the lines of 3 to 9 a second time.
    from envhub.train.checkpoint import TrainerState
    from envhub.train.config import load_config
    from envhub.train.trainer import Trainer

    run = tmp_path / "run"
    ledger = DropLedger(run / "dropped_groups.jsonl")
    ledger.record([DroppedGroup(f"g{i}", "lost", i) for i in range(1, 10)])
    config = load_config(
        None,
        {
            "env": "envhub/SearchQA-v0",
            "model.path": str(small_model_dir),
            "output.run_dir": str(run),
            "output.checkpoint_every": 2,
            "rollout.queue": "redis://127.0.0.1:6379/0",  # never reached: only the ledger is read
        },
    )
    first = Trainer(config)
    first._open_ledger()
    assert first._replayed == (9, 9)  # all nine, in its first iteration (then a checkpoint at 2)
    first.state.iteration = 2
    assert first._ledger is not None
    first._ledger.prune(first.state.iteration)  # what _checkpoint does after writing it
    second = Trainer(config)
    second.state = TrainerState(iteration=2, policy_version=2, schedule_position=4)
    second._open_ledger()
    assert second._replayed == (0, 0)
