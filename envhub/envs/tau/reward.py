"""tau-bench's reward, with the gold state computed once per task, and the pass^k metric.

tau-bench scores an episode 1 when (a) the final database equals the database obtained by
replaying the task's gold actions on a fresh copy, compared by a canonical hash, and (b)
every required output appears in some message the agent sent to the user (both lowercased,
commas removed from the message); otherwise 0.

envhub computes the same thing faster. Each episode's :class:`TauDB` knows which records it
changed, so a database state is summarised by a *digest*: the canonical hashes of the
records whose content differs from the shared base, sorted. Two databases are equal exactly
when their digests are equal. The gold digest of a task is computed once per process
(:func:`gold_state`), so the per-episode cost is hashing the few records the agent changed.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb

from envhub.envs.tau.data import Domain, TauTask
from envhub.envs.tau.db import TauDB, canonical_hash
from envhub.envs.tau.toolkit import ToolSpec, invoke_tool

__all__ = [
    "TERMINATE_TOOLS",
    "GoldState",
    "RecordKey",
    "RewardInfo",
    "changed_records",
    "compute_reward",
    "gold_state",
    "output_found",
    "pass_hat_k",
    "replay",
    "state_digest",
]

#: Tools that end the episode (tau-bench's ``terminate_tools``); gold replay skips them.
TERMINATE_TOOLS = frozenset({"transfer_to_human_agents"})

RecordKey = tuple[str, str]


@dataclass(frozen=True)
class GoldState:
    """The database a task's gold actions produce, summarised.

    Attributes:
        changed: ``(table, key) -> record hash`` of every record that differs from the base.
        digest: :func:`state_digest` of ``changed``.
    """

    changed: Mapping[RecordKey, str]
    digest: str


@dataclass(frozen=True)
class RewardInfo:
    """One episode's reward and why.

    Attributes:
        reward: 1.0 or 0.0.
        db_match: the final database equals the gold database.
        outputs: required output -> whether some agent message contained it.
        missing_outputs: the required outputs never said.
        mismatched_records: ``"table/key"`` of records that differ from the gold database.
        digest: the final database's digest; ``gold_digest`` the gold one.
    """

    reward: float
    db_match: bool
    outputs: dict[str, bool] = field(default_factory=dict)
    missing_outputs: list[str] = field(default_factory=list)
    mismatched_records: list[str] = field(default_factory=list)
    digest: str = ""
    gold_digest: str = ""

    def as_info(self) -> dict[str, object]:
        """A JSON-safe dict for ``info["reward_info"]``."""
        return {
            "reward": self.reward,
            "db_match": self.db_match,
            "outputs": dict(self.outputs),
            "missing_outputs": list(self.missing_outputs),
            "mismatched_records": list(self.mismatched_records),
            "digest": self.digest,
            "gold_digest": self.gold_digest,
        }


@functools.lru_cache(maxsize=1 << 16)
def _base_hash(domain: Domain, table: str, key: str) -> str | None:
    record = domain.tables[table].get(key)
    return None if record is None else canonical_hash(record)


def changed_records(domain: Domain, db: TauDB) -> dict[RecordKey, str]:
    """``(table, key) -> hash`` of the records of ``db`` that differ from the domain's base tables."""
    return {key: h for key, h in db.record_hashes().items() if h != _base_hash(domain, *key)}


def state_digest(changed: Mapping[RecordKey, str]) -> str:
    """A canonical hash of a database state given its changed records."""
    lines = "\n".join(f"{table}\t{key}\t{h}" for (table, key), h in sorted(changed.items()))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def replay(db: TauDB, tools: Mapping[str, ToolSpec], task: TauTask) -> list[str]:
    """Run ``task``'s gold actions on ``db`` (terminating tools skipped); their outputs, in order."""
    outputs = []
    for action in task.actions:
        if action.name in TERMINATE_TOOLS or action.name == "respond":
            continue
        # Copy the arguments: some tools store them in the database, and tasks are shared.
        outputs.append(invoke_tool(tools, db, action.name, copy.deepcopy(action.kwargs)).output)
    return outputs


@functools.lru_cache(maxsize=4096)
def _gold_state_cached(domain: Domain, tools: tuple[ToolSpec, ...], task_id: str) -> GoldState:
    task = domain.task(task_id)
    if task is None:
        raise KeyError(task_id)
    db = TauDB(domain.tables)
    replay(db, {t.name: t for t in tools}, task)
    changed = changed_records(domain, db)
    return GoldState(changed=changed, digest=state_digest(changed))


def gold_state(domain: Domain, tools: Sequence[ToolSpec], task: TauTask) -> GoldState:
    """The gold database of ``task``, computed on first use and then cached for the process."""
    return _gold_state_cached(domain, tuple(tools), task.task_id)


def output_found(output: str, messages: Iterable[str]) -> bool:
    """tau-bench's output check: ``output.lower()`` in some message, lowercased with commas removed."""
    needle = output.lower()
    return any(needle in message.lower().replace(",", "") for message in messages)


def compute_reward(
    domain: Domain, tools: Sequence[ToolSpec], task: TauTask, db: TauDB, agent_messages: Sequence[str]
) -> RewardInfo:
    """Score an episode the way tau-bench's ``Env.calculate_reward`` does.

    Args:
        domain: the parsed domain (its tables are the episode's base).
        tools: the domain's tools (used to replay the gold actions once).
        task: the task of the episode.
        db: the episode's final database.
        agent_messages: every message the agent sent to the user, in order.
    """
    gold = gold_state(domain, tools, task)
    changed = changed_records(domain, db)
    digest = state_digest(changed)
    db_match = digest == gold.digest
    mismatched = sorted(
        f"{table}/{key}"
        for table, key in set(changed) | set(gold.changed)
        if changed.get((table, key)) != gold.changed.get((table, key))
    )
    outputs = {output: output_found(output, agent_messages) for output in task.outputs}
    missing = [o for o, found in outputs.items() if not found]
    reward = 1.0 if db_match and not missing else 0.0
    return RewardInfo(
        reward=reward,
        db_match=db_match,
        outputs=outputs,
        missing_outputs=missing,
        mismatched_records=mismatched,
        digest=digest,
        gold_digest=gold.digest,
    )


def pass_hat_k(
    results: Mapping[str, Sequence[bool | float]] | Sequence[Sequence[bool | float]], k: int
) -> float:
    """tau-bench's pass^k: the mean over tasks of C(c, k) / C(n, k).

    ``c`` counts successes (reward 1) among a task's ``n`` trials: the chance that ``k``
    trials drawn without replacement all succeed.

    Args:
        results: per task, the outcomes of its ``n`` trials (bools or 0/1 rewards).
        k: trials that must all succeed (1 <= k <= n for every task).

    Raises:
        ValueError: no tasks, or ``k`` outside ``1..n`` for some task.
    """
    groups = list(results.values()) if isinstance(results, Mapping) else list(results)
    if not groups:
        raise ValueError("pass_hat_k needs the results of at least one task.")
    total = 0.0
    for trials in groups:
        n = len(trials)
        if not 1 <= k <= n:
            raise ValueError(f"pass^k needs 1 <= k <= n; got k={k} for a task with n={n} trials.")
        c = sum(1 for r in trials if float(r) >= 1.0)
        total += comb(c, k) / comb(n, k)
    return total / len(groups)
