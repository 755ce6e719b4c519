"""Regenerate ``drmas.json.gz``: Dr. MAS's own advantage pipeline on seeded multi-agent batches.

Not run in CI. The original is the authors' repository ``langfengQ/DrMAS`` (Apache-2.0) at commit
19c632bc0f75730b6db98d90b5035ee9bb7f66d1. Take three files from it::

    git -C DrMAS show 19c632b:verl/trainer/ppo/core_algos.py > $SCRATCH/core_algos.py
    git -C DrMAS show 19c632b:verl/trainer/ppo/ray_trainer.py > $SCRATCH/ray_trainer.py
    git -C DrMAS show 19c632b:agent_system/reward_manager/episode.py > $SCRATCH/episode.py

Then, with torch (CPU) and numpy (torch 2.13.0 and numpy 2.4.6 made the committed file)::

    python tests/reference/make_drmas.py --core-algos $SCRATCH/core_algos.py \\
        --ray-trainer $SCRATCH/ray_trainer.py --episode $SCRATCH/episode.py

What runs, unmodified, in the order ``RayPPOTrainer.fit`` runs it:

1. ``core_algos.compute_step_discounted_returns`` (GiGPO's step returns: one return per env step,
   shared by every agent call of that step, read from the ``env_step`` column);
2. ``episode.EpisodeRewardManager.__call__``: the team's episode reward on the last response
   token of every row (every agent call);
3. ``ray_trainer.apply_invalid_action_penalty``: the penalty off each invalid row's token score
   and step return;
4. ``ray_trainer.compute_advantage`` with ``adv_estimator`` ``grpo`` and ``gigpo``, each with
   ``group_by_agent_id`` False and True. It builds the group key (``f"{uid}_{agent_id}"`` when
   grouping by agent) and calls ``core_algos.compute_grpo_outcome_advantage`` or
   ``core_algos.compute_gigpo_outcome_advantage``.

``core_algos.py`` imports ``verl.DataProto`` (annotations) and ``verl.utils.torch_functional``
(used by GAE only): empty modules stand in. From ``ray_trainer.py`` (which imports ray, verl's
workers and the agent system) only ``AdvantageEstimator``, ``compute_response_mask``,
``apply_invalid_action_penalty`` and ``compute_advantage`` are compiled from its syntax tree and
run in a namespace holding numpy, torch and the loaded ``core_algos``. The batch is a small
stand-in for ``DataProto``: ``.batch`` and ``.non_tensor_batch`` dicts, ``len()``, and ``data[i]``
giving row ``i`` of each. Rows reach the code in rollout order (trajectory by trajectory, agent
calls in the order they were made), as ``gather_rollout_data`` builds the batch.

The batches: 2-4 task groups (uid) of 1-5 trajectories, each of 1-4 env steps. A "search" batch
has the search orchestra's calls (Verifier, then Search or Answer; an Answer ends the episode;
on the last step a Verifier "no" calls nobody); a "math" batch the solver/verifier loop (1-3
rounds of Solver then Verifier, a final Solver); a "random" batch 1-3 calls of random agents
per step. Every batch has a task group of one trajectory with a single call (a group of one for
both keys). Env rewards: 0/1 at the end for search and math, random pools otherwise;
half the batches dyadic (exact in float32).
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib.util
import json
import sys
import types
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import torch

OUT = Path(__file__).with_name("drmas.json.gz")
SOURCE = {
    "repository": "langfengQ/DrMAS",
    "commit": "19c632bc0f75730b6db98d90b5035ee9bb7f66d1",
    "files": {
        "verl/trainer/ppo/core_algos.py": [
            "compute_step_discounted_returns",
            "compute_grpo_outcome_advantage",
            "compute_gigpo_outcome_advantage",
        ],
        "verl/trainer/ppo/ray_trainer.py": ["apply_invalid_action_penalty", "compute_advantage"],
        "agent_system/reward_manager/episode.py": ["EpisodeRewardManager.__call__"],
    },
}
PROMPT, WIDTH = 2, 3  # prompt and response tokens per row; all attended, the reward sits on the last
EXACT = {"rewards": [0.0, 1.0, 0.5, -1.0, 2.0], "gamma": [1.0, 0.5], "coef": [0.0, 0.25, 0.5]}
REALISTIC = {"rewards": [0.0, 0.0, 1.0, 0.3, 0.7], "gamma": [0.95, 0.9], "coef": [0.01, 0.1]}
SHORT = ["a", "b", "c"]
LONG = ["who founded velmora dynamics", "who founded velmora dynamic", "doc 1 title oskar river",
        "doc 1 title oskar rivers", "in which year was the company founded"]  # fmt: skip


def stub_verl() -> None:
    verl = types.ModuleType("verl")
    verl.DataProto = object  # type: ignore[attr-defined]  # annotations only
    utils = types.ModuleType("verl.utils")
    functional = types.ModuleType("verl.utils.torch_functional")  # GAE's masked_whiten: not run
    verl.utils = utils  # type: ignore[attr-defined]
    utils.torch_functional = functional  # type: ignore[attr-defined]
    sys.modules.update({"verl": verl, "verl.utils": utils, "verl.utils.torch_functional": functional})


def load_module(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trainer_functions(path: Path, core_algos: types.ModuleType) -> dict[str, Any]:
    """The four definitions of ``ray_trainer.py`` this script runs, compiled from its syntax tree."""
    tree = ast.parse(path.read_text())
    wanted = {
        "AdvantageEstimator",
        "compute_response_mask",
        "apply_invalid_action_penalty",
        "compute_advantage",
    }
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name in wanted]
    assert {n.name for n in nodes} == wanted, {n.name for n in nodes}
    namespace: dict[str, Any] = {"np": np, "torch": torch, "core_algos": core_algos, "Enum": Enum,
                                 "DataProto": object}  # fmt: skip
    module = ast.Module(body=nodes, type_ignores=[])
    exec(compile(module, str(path), "exec"), namespace)  # the authors' code, run as is
    return namespace


class Proto:
    """What the authors' functions use of ``DataProto``: two dicts, ``len`` and ``data[i]``."""

    def __init__(self, batch: dict[str, torch.Tensor], non_tensor_batch: dict[str, np.ndarray]) -> None:
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch

    def __len__(self) -> int:
        return len(next(iter(self.non_tensor_batch.values())))

    def __getitem__(self, i: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(
            batch={k: v[i] for k, v in self.batch.items()},
            non_tensor_batch={k: v[i] for k, v in self.non_tensor_batch.items()},
        )


class Decoder:
    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        return ""


def episode_calls(rng: np.random.Generator, kind: str, n_steps: int) -> list[list[str]]:
    """The agent calls of each env step of one episode."""
    steps: list[list[str]] = []
    for k in range(n_steps):
        last = k == n_steps - 1
        if kind == "search":
            if last:
                steps.append(["verifier"] if rng.random() < 0.3 else ["verifier", "answer"])
            else:
                steps.append(["verifier", "search"])
        elif kind == "math":
            rounds = int(rng.integers(1, 4))
            steps.append(["solver", "verifier"] * rounds + (["solver"] if rng.random() < 0.5 else []))
        else:
            steps.append([str(rng.choice(["a0", "a1", "a2"])) for _ in range(int(rng.integers(1, 4)))])
    return steps


def random_batch(rng: np.random.Generator, kind: str, exact: bool) -> dict[str, Any]:
    pools = EXACT if exact else REALISTIC
    similarity = (not exact) and rng.random() < 0.3
    anchors = LONG if similarity else SHORT
    rows = []
    n_uid = int(rng.integers(2, 5))
    for u in range(n_uid):
        lone = u == n_uid - 1  # a task group of one trajectory with a single call
        for t in range(1 if lone else int(rng.integers(1, 6))):
            calls = (
                [["verifier" if kind != "random" else "a0"]]
                if lone
                else episode_calls(rng, kind, int(rng.integers(1, 5)))
            )
            for k, agents in enumerate(calls):
                last = k == len(calls) - 1
                if kind == "random":
                    reward = float(rng.choice(pools["rewards"]))
                else:  # the team is scored at the end only
                    reward = float(rng.choice([0.0, 1.0])) if last else 0.0
                anchor = anchors[int(rng.integers(len(anchors)))]
                for agent in agents:
                    rows.append({
                        "uid": f"u{u}", "traj": f"u{u}-t{t}", "env_step": k + 1, "agent": agent,
                        "anchor": anchor, "env_reward": reward, "valid": bool(rng.random() > 0.25),
                    })  # fmt: skip
    return {
        "kind": kind,
        "exact": exact,
        "rows": rows,
        "norm_adv_by_std": bool(rng.random() < 0.5),
        "gigpo_mode": str(rng.choice(["mean_norm", "mean_std_norm"])),
        "gamma": float(rng.choice(pools["gamma"])),
        "coef": float(rng.choice(pools["coef"])),
        "w": float(rng.choice([1.0, 0.5])),
        "similarity_thresh": 0.8 if similarity else None,
    }


def run(
    b: dict[str, Any], fns: dict[str, Any], core_algos: types.ModuleType, episode: types.ModuleType
) -> None:
    rows = b["rows"]
    n = len(rows)
    traj = np.array([r["traj"] for r in rows], dtype=object)
    # The rollout loop's episode reward: float32 sum of each env step's reward, once per step.
    totals: dict[str, np.float32] = {}
    seen: set[tuple[str, int]] = set()
    for r in rows:
        totals.setdefault(r["traj"], np.float32(0.0))
        if (r["traj"], r["env_step"]) not in seen:
            seen.add((r["traj"], r["env_step"]))
            totals[r["traj"]] = np.float32(totals[r["traj"]] + np.float32(r["env_reward"]))
    lengths = {t: float(len({r["env_step"] for r in rows if r["traj"] == t})) for t in totals}

    def proto() -> Proto:
        return Proto(
            {
                "input_ids": torch.zeros(n, PROMPT + WIDTH, dtype=torch.long),
                "prompts": torch.zeros(n, PROMPT, dtype=torch.long),
                "responses": torch.zeros(n, WIDTH, dtype=torch.long),
                "attention_mask": torch.ones(n, PROMPT + WIDTH, dtype=torch.long),
                "response_mask": torch.ones(n, WIDTH, dtype=torch.float32),
            },
            {
                "uid": np.array([r["uid"] for r in rows], dtype=object),
                "traj_uid": traj,
                "agent_id": np.array([r["agent"] for r in rows], dtype=object),
                "wg_id": np.array([r["agent"] for r in rows], dtype=object),
                "data_source": np.array(["search"] * n, dtype=object),
                "env_step": np.array([r["env_step"] for r in rows], dtype=object),
                "rewards": np.array([r["env_reward"] for r in rows], dtype=object),
                "active_masks": np.ones(n, dtype=object),
                "anchor_obs": np.array([r["anchor"] for r in rows], dtype=object),
                "is_action_valid": np.array([r["valid"] for r in rows], dtype=bool),
                "episode_rewards": np.array([totals[t] for t in traj], dtype=object),
                "episode_lengths": np.array([lengths[t] for t in traj], dtype=object),
            },
        )

    base = proto()
    step_rewards = core_algos.compute_step_discounted_returns(base, b["gamma"])
    manager = episode.EpisodeRewardManager(tokenizers={r["agent"]: Decoder() for r in rows}, num_examine=0)
    scores = manager(base)
    b["episode_reward"] = scores[:, -1].tolist()  # before the penalty: the team's reward, every row
    for algo in ("grpo", "gigpo"):
        for by_agent in (False, True):
            data = proto()
            data.batch["token_level_scores"] = scores.clone()
            data.batch["step_rewards"] = step_rewards.clone()
            data, _ = fns["apply_invalid_action_penalty"](data, invalid_action_penalty_coef=b["coef"])
            data.batch["token_level_rewards"] = data.batch["token_level_scores"]
            sim = b["similarity_thresh"]
            out = fns["compute_advantage"](
                data, adv_estimator=algo, gamma=b["gamma"], norm_adv_by_std_in_grpo=b["norm_adv_by_std"],
                group_by_agent_id=by_agent, step_advantage_w=b["w"], gigpo_mode=b["gigpo_mode"],
                gigpo_enable_similarity=sim is not None,
                gigpo_similarity_thresh=sim if sim is not None else 0.95,
            )  # fmt: skip
            advantages = out.batch["advantages"]
            assert torch.all(advantages == advantages[:, :1])  # broadcast over the response tokens
            b[f"{algo}_{'agent' if by_agent else 'global'}"] = advantages[:, 0].tolist()
            if algo == "gigpo" and not by_agent:
                b["step_rewards"] = data.batch["step_rewards"].tolist()  # after the penalty


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--core-algos", type=Path, required=True)
    parser.add_argument("--ray-trainer", type=Path, required=True)
    parser.add_argument("--episode", type=Path, required=True)
    args = parser.parse_args()
    stub_verl()
    core_algos = load_module(args.core_algos, "drmas_core_algos")
    episode = load_module(args.episode, "drmas_episode")
    fns = trainer_functions(args.ray_trainer, core_algos)
    rng = np.random.default_rng(27)
    batches = [random_batch(rng, kind, exact) for kind in ("search", "math", "random")
               for exact in (True, False) for _ in range(20)]  # fmt: skip
    quiet = open("/dev/null", "w")  # noqa: SIM115 - the authors' code prints diagnostics
    stdout, sys.stdout = sys.stdout, quiet
    try:
        for b in batches:
            run(b, fns, core_algos, episode)
    finally:
        sys.stdout = stdout
    meta = {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0]}
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"source": SOURCE, "versions": meta, "batches": batches}).encode())
    print(f"wrote {len(batches)} batches, {sum(len(b['rows']) for b in batches)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
