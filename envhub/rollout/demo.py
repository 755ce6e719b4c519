"""``envhub demo``: a few episodes of every available env with its built-in policy.

For each env whose data is available, the demo plays groups of episodes on the env's
first ``test``-split tasks (or its default split) with the family's built-in policy and with
its baseline (random) policy, records them as :class:`Group` records, flattens them into a
:class:`StepBatch`, and reports mean reward, success rate and steps per second.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from envhub.core.errors import UnknownEnvError
from envhub.core.records import Group, StepBatch
from envhub.core.registry import EnvSpec, load_entry_point
from envhub.envs.registry import make, resolve_all, specs
from envhub.rollout.episode import run_group

__all__ = ["DemoRow", "demo_env", "run_demo"]


@dataclass(frozen=True)
class DemoRow:
    """One line of the demo table."""

    env_id: str
    policy: str
    episodes: int
    mean_reward: float
    success: float
    steps: int
    steps_per_s: float
    note: str = ""


def demo_env(spec: EnvSpec, *, episodes: int, group_size: int, policy_path: str) -> DemoRow:
    """Play ``episodes`` episodes (in groups of ``group_size`` per task) with one policy."""
    policy_cls = load_entry_point(policy_path)
    probe = make(spec.id)
    split = "test" if "test" in spec.splits else spec.splits[0]
    task_ids = list(probe.unwrapped.task_ids(split)[: max(1, episodes // group_size)])  # type: ignore[attr-defined]
    probe.close()
    groups: list[Group] = []
    start = time.perf_counter()
    for i, task_id in enumerate(task_ids):
        groups.append(
            run_group(
                lambda: make(spec.id),
                policy_cls,
                env_id=spec.id,
                task_id=task_id,
                group_size=group_size,
                seed=1000 * i,
            )
        )
    elapsed = time.perf_counter() - start
    batch = StepBatch.from_groups(groups)
    trajectories = [t for g in groups for t in g.trajectories]
    return DemoRow(
        env_id=spec.id,
        policy=policy_path.rpartition(":")[2],
        episodes=len(trajectories),
        mean_reward=float(sum(t.episode_return for t in trajectories) / len(trajectories)),
        success=float(sum(t.won for t in trajectories) / len(trajectories)),
        steps=len(batch),
        steps_per_s=len(batch) / elapsed if elapsed > 0 else float("inf"),
    )


def _selected(env_ids: list[str] | None) -> list[EnvSpec]:
    """The specs named by ids, short names or family names (all of them when None).

    Raises:
        UnknownEnvError: a name matches no catalogue entry.
    """
    if not env_ids:
        return list(specs())
    catalogue = {s.id for s in specs()}
    chosen: set[str] = set()
    for name in env_ids:
        named = {spec.id for spec in resolve_all(name)} & catalogue
        if not named:  # a module:Class has no built-in policy: the demo has nothing to play
            raise UnknownEnvError(name, sorted(catalogue))
        chosen |= named
    return [s for s in specs() if s.id in chosen]


def run_demo(*, episodes: int = 20, group_size: int = 2, env_ids: list[str] | None = None) -> list[DemoRow]:
    """Demo rows for every selected catalogue env with data and a built-in policy.

    Raises:
        UnknownEnvError: ``env_ids`` names an env that does not exist.
    """
    rows: list[DemoRow] = []
    for spec in _selected(env_ids):
        if spec.demo_policy is None:
            continue
        status = spec.status()
        if not status.available:
            rows.append(DemoRow(spec.id, "-", 0, 0.0, 0.0, 0, 0.0, note=f"skipped: {status.how_to_get}"))
            continue
        n = episodes if spec.demo_episodes is None else min(episodes, spec.demo_episodes)
        for policy_path in (spec.demo_policy, spec.baseline_policy):
            rows.append(demo_env(spec, episodes=n, group_size=min(group_size, n), policy_path=policy_path))
    return rows
