"""Regenerate ``graphgpo.json.gz``: the GraphGPO authors' code on seeded random rollout groups.

Not run in CI. The authors' code is not on PyPI. It is ``recipe/GraphGPO/core_graph.py``,
which imports ``gigpo/core_gigpo.py``, in repository ``zzj1111/alfworldauto`` (a verl-agent
fork; Apache-2.0) at commit 37aec781da7f377874516e22d7f32c1932215eb4. Copy those two files
out of a checkout into a scratch directory, never into this repository::

    export SCRATCH=$(mktemp -d)
    mkdir -p $SCRATCH/gigpo
    git -C alfworldauto show 37aec78:recipe/GraphGPO/core_graph.py > $SCRATCH/core_graph.py
    git -C alfworldauto show 37aec78:gigpo/core_gigpo.py > $SCRATCH/gigpo/core_gigpo.py
    python3 -m venv $SCRATCH/venv
    $SCRATCH/venv/bin/pip install torch numpy networkx matplotlib
    $SCRATCH/venv/bin/python tests/reference/make_graphgpo.py --code $SCRATCH

Both files import ``verl.DataProto`` only for annotations; this script registers an empty
``verl`` module for it. The inputs are fed as the authors' trainer feeds them
(``recipe/GraphGPO/graphgpo_ray_trainer.py``): the rollout writes ``next_obs = 'success'`` on
the last step of an episode whose summed reward is > 0 (``rollout_loop.py``);
``ComplexGraph.from_data`` builds each uid's graph, ``Calculate_all_shortest_path`` runs the
reverse Dijkstra, ``compute_graph_path_returns`` gives the step rewards,
``apply_invalid_action_penalty`` subtracts the penalty from the step reward and from the episode
reward on the row's last response token, then ``compute_graphgpo_outcome_advantage`` (float32).

Groups are random walks on a random deterministic transition table per task, so trajectories
share states, revisit them, and reach the goal by different paths, or not at all. A failed
episode's final observation is the real next state; in half the batches it is instead a state
of its own ("fresh ends"), which is what envhub assumes where a final state is unknown.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

OUT = Path(__file__).with_name("graphgpo.json.gz")
WIDTH = 3  # response tokens per row; all unmasked, the episode reward sits on the last one


def load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_authors(code: Path) -> types.ModuleType:
    if "verl" not in sys.modules:
        verl = types.ModuleType("verl")
        verl.DataProto = object  # type: ignore[attr-defined]  # only used in annotations
        sys.modules["verl"] = verl
    sys.modules.setdefault("gigpo", types.ModuleType("gigpo"))
    gigpo = load(code / "gigpo" / "core_gigpo.py", "gigpo.core_gigpo")
    sys.modules["gigpo"].core_gigpo = gigpo  # type: ignore[attr-defined]
    import matplotlib

    matplotlib.use("Agg")  # the module imports pyplot; nothing is drawn here
    return load(code / "core_graph.py", "core_graph")


def random_group(
    rng: np.random.Generator, u: int, reward_kind: str, fresh_ends: bool
) -> list[dict[str, Any]]:
    n_states = int(rng.integers(3, 9))
    n_actions = int(rng.integers(2, 4))
    goal = n_states  # reaching it ends the episode
    # Deterministic dynamics; goal reachable from a few states only.
    table = rng.integers(0, n_states, size=(n_states, n_actions))
    for s in rng.choice(n_states, size=int(rng.integers(0, 3)), replace=False):
        table[s, int(rng.integers(n_actions))] = goal
    rows = []
    for t in range(int(rng.integers(2, 7))):
        traj = f"u{u}-t{t}"
        state, steps = 0, []
        for _ in range(int(rng.integers(1, 8))):
            nxt = int(table[state, int(rng.integers(n_actions))])
            won = nxt == goal
            if reward_kind == "binary":
                reward = 10.0 if won else 0.0
            else:  # a step cost, a win bonus, and now and then a partial reward
                reward = (10.0 if won else 0.0) - 0.1 + (1.0 if rng.random() < 0.1 else 0.0)
            steps.append({
                "uid": f"u{u}", "traj": traj, "step": len(steps), "anchor": f"s{state}",
                "next": f"s{nxt}" if not won else "goal", "reward": reward,
                "valid": bool(rng.random() > 0.2),
            })  # fmt: skip
            if won:
                break
            state = nxt
        if fresh_ends and steps[-1]["next"] != "goal":
            steps[-1]["next"] = f"end-{traj}"
        rows += steps
    return rows


def random_batch(rng: np.random.Generator) -> dict[str, Any]:
    reward_kind = str(rng.choice(["binary", "shaped"]))
    fresh_ends = bool(rng.random() < 0.5)
    rows: list[dict[str, Any]] = []
    for u in range(int(rng.integers(1, 4))):
        rows += random_group(rng, u, reward_kind, fresh_ends)
    return {
        "reward_kind": reward_kind,
        "fresh_ends": fresh_ends,
        "rows": rows,
        "mode": str(rng.choice(["mean_norm", "mean_std_norm"])),
        "gamma": float(rng.choice([0.1, 0.8, 0.5, 0.95])),
        "normalize_distance": bool(rng.random() < 0.5),
        "coef": float(rng.choice([0.0, 0.1, 0.25])),
        "step_w": float(rng.choice([1.0, 0.5])),
        "episode_w": float(rng.choice([1.0, 1.0, 0.0, 0.5])),
    }


def run(batch: dict[str, Any], authors: types.ModuleType) -> None:
    rows = batch["rows"]
    n = len(rows)
    episode: dict[str, float] = {}
    last: dict[str, int] = {}
    for i, r in enumerate(rows):
        episode[r["traj"]] = episode.get(r["traj"], 0.0) + r["reward"]
        last[r["traj"]] = i
    next_obs = [r["next"] for r in rows]
    for traj, i in last.items():  # rollout_loop.gather_rollout_data
        if episode[traj] > 0:
            next_obs[i] = "success"
    uid = np.array([r["uid"] for r in rows], dtype=object)
    traj = np.array([r["traj"] for r in rows], dtype=object)
    anchor = np.array([r["anchor"] for r in rows], dtype=object)
    invalid = torch.tensor([0.0 if r["valid"] else 1.0 for r in rows])
    proto = types.SimpleNamespace(
        non_tensor_batch={
            "uid": uid,
            "traj_uid": traj,
            "anchor_obs": anchor,
            "next_obs": np.array(next_obs, dtype=object),
            "text_actions": np.array(["a"] * n, dtype=object),
            "episode_rewards": np.array([episode[t] for t in traj], dtype=np.float32),
            "rewards": np.array([r["reward"] for r in rows], dtype=np.float32),
            "active_masks": np.ones(n, dtype=bool),
            "is_action_valid": np.array([r["valid"] for r in rows], dtype=bool),
        },
        batch={"input_ids": torch.zeros(n, 1)},
    )
    graphs = authors.ComplexGraph.from_data(proto)
    authors.ComplexGraph.Calculate_all_shortest_path(graphs)
    distances = {u: graphs[u].shortest_path_to_final[0] for u in graphs}
    batch["d_anchor"] = [float(distances[r["uid"]][r["anchor"]]) for r in rows]
    batch["d_next"] = [float(distances[r["uid"]][next_obs[i]]) for i, r in enumerate(rows)]
    step_rewards = authors.compute_graph_path_returns(
        proto, graphs, gamma=batch["gamma"], normalize_distance=batch["normalize_distance"]
    )
    batch["graph_returns"] = step_rewards.tolist()
    step_rewards = step_rewards - batch["coef"] * invalid
    token_rewards = torch.zeros(n, WIDTH, dtype=torch.float32)
    token_rewards[:, -1] = torch.tensor([episode[t] for t in traj], dtype=torch.float32)
    token_rewards[:, -1] -= batch["coef"] * invalid
    mask = torch.ones(n, WIDTH, dtype=torch.float32)
    adv, _ = authors.compute_graphgpo_outcome_advantage(
        token_level_rewards=token_rewards, step_rewards=step_rewards, response_mask=mask,
        anchor_obs=anchor, index=uid, traj_index=traj,
        step_advantage_w=batch["step_w"], episode_advantage_w=batch["episode_w"], mode=batch["mode"],
    )  # fmt: skip
    batch["advantages"] = adv[:, 0].tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--code", type=Path, required=True, help="dir with core_graph.py and gigpo/core_gigpo.py"
    )
    args = parser.parse_args()
    authors = load_authors(args.code)
    rng = np.random.default_rng(27)
    batches = [random_batch(rng) for _ in range(120)]
    for batch in batches:
        run(batch, authors)
    meta = {
        "torch": torch.__version__,
        "numpy": np.__version__,
        "commit": "37aec781da7f377874516e22d7f32c1932215eb4",
    }
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"versions": meta, "batches": batches}).encode())
    n_rows = sum(len(b["rows"]) for b in batches)
    print(f"wrote {len(batches)} batches, {n_rows} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
