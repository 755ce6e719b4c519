"""Regenerate ``advantages.json.gz``: verl-agent's GiGPO and HGPO code on seeded random batches.

Not run in CI. The reference code is not on PyPI; fetch it and point this script at the files:

* GiGPO: repository ``vanzll/verl-agent`` at commit d0b9724 (``gigpo/core_gigpo.py``; byte-identical
  to upstream ``langfengQ/verl-agent``'s).
* HGPO: repository ``zzj1111/alfworldauto`` (a fork carrying upstream verl-agent's history) at
  commit 20bd331 (``recipe/hgpo/core_hgpo.py``, upstream PR #232).

Then, in a scratch virtualenv with torch on CPU::

    python3 -m venv $SCRATCH/adv
    $SCRATCH/adv/bin/pip install torch==2.13.0 numpy
    $SCRATCH/adv/bin/python tests/reference/make_advantages.py \\
        --gigpo $SCRATCH/core_gigpo.py --hgpo $SCRATCH/core_hgpo.py

Both files import ``verl.DataProto`` only for a type annotation; this script registers an
empty ``verl`` module so they import without verl. The inputs are fed as verl-agent's trainer
feeds them: step rewards are the discounted returns of the env rewards
(``compute_step_discounted_returns``), then ``apply_invalid_action_penalty`` subtracts the
penalty from the step reward and from the episode reward at the row's last response token.
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

OUT = Path(__file__).with_name("advantages.json.gz")
WIDTH = 3  # response tokens per row; all unmasked, the reward sits on the last one

#: Batches of kind "exact" use dyadic rewards, gamma and penalty, so float32 sums and means
#: are exact and the float32 reference cannot differ from float64 by more than rounding of
#: ``sum / n``; kind "realistic" uses WebShop/ALFWorld-like numbers (gamma 0.95, penalty 0.1).
EXACT = {"rewards": [0.0, 0.0, 1.0, 0.5, -1.0, 2.0, 10.0], "gamma": [1.0, 0.5, 0.0], "coef": [0.0, 0.25, 0.5]}
REALISTIC = {"rewards": [0.0, 0.0, 0.0, 1.0, 10.0, 0.3, 0.7], "gamma": [0.95, 0.9], "coef": [0.1, 0.01]}
SHORT = ["a", "b", "c", "d"]
LONG = ["go to cabinet 1", "go to cabinet 2", "go to cabinet 12", "open drawer 3", "open drawer 4",
        "take apple 1 from countertop 2", "take apple 2 from countertop 2"]  # fmt: skip


def load(path: Path, name: str) -> types.ModuleType:
    if "verl" not in sys.modules:
        verl = types.ModuleType("verl")
        verl.DataProto = object  # type: ignore[attr-defined]  # only used in annotations
        sys.modules["verl"] = verl
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_batch(rng: np.random.Generator, kind: str) -> dict[str, Any]:
    pools = EXACT if kind == "exact" else REALISTIC
    similarity = kind == "realistic" and rng.random() < 0.3
    anchors = LONG if similarity else SHORT
    rows = []
    for u in range(int(rng.integers(2, 5))):
        for t in range(int(rng.integers(1, 7))):
            for _ in range(int(rng.integers(1, 8))):
                rows.append({
                    "uid": f"u{u}", "traj": f"u{u}-t{t}",
                    "anchor": anchors[int(rng.integers(len(anchors)))],
                    "reward": float(rng.choice(pools["rewards"])),
                    "valid": bool(rng.random() > 0.25),
                })  # fmt: skip
    return {
        "kind": kind,
        "rows": rows,
        "mode": str(rng.choice(["mean_norm", "mean_std_norm"])),
        "gamma": float(rng.choice(pools["gamma"])),
        "coef": float(rng.choice(pools["coef"])),
        "w": float(rng.choice([1.0, 0.5])),
        "similarity_thresh": 0.8 if similarity else None,
        "history_length": int(rng.integers(0, 5)),
        "alpha": float(rng.choice([1.0, 0.5, 2.0])),
        "base_group": bool(rng.random() < 0.5),
    }


def run(batch: dict[str, Any], gigpo: types.ModuleType, hgpo: types.ModuleType) -> None:
    rows = batch["rows"]
    n = len(rows)
    uid = np.array([r["uid"] for r in rows], dtype=object)
    traj = np.array([r["traj"] for r in rows], dtype=object)
    anchor = np.array([r["anchor"] for r in rows], dtype=object)
    invalid = torch.tensor([0.0 if r["valid"] else 1.0 for r in rows])
    proto = types.SimpleNamespace(
        non_tensor_batch={
            "rewards": np.array([r["reward"] for r in rows]),
            "traj_uid": traj,
            "active_masks": np.ones(n, dtype=bool),
        },
        batch={"input_ids": torch.zeros(n, 1)},
    )
    step_rewards = gigpo.compute_step_discounted_returns(proto, batch["gamma"])
    step_rewards = step_rewards - batch["coef"] * invalid
    episode = {t: 0.0 for t in traj}
    for r in rows:
        episode[r["traj"]] += r["reward"]
    token_rewards = torch.zeros(n, WIDTH, dtype=torch.float32)
    token_rewards[:, -1] = torch.tensor([episode[t] for t in traj], dtype=torch.float32)
    token_rewards[:, -1] -= batch["coef"] * invalid
    mask = torch.ones(n, WIDTH, dtype=torch.float32)
    sim = batch["similarity_thresh"]
    g, _ = gigpo.compute_gigpo_outcome_advantage(
        token_level_rewards=token_rewards.clone(), step_rewards=step_rewards.clone(),
        response_mask=mask, anchor_obs=anchor, index=uid, traj_index=traj,
        step_advantage_w=batch["w"], mode=batch["mode"],
        enable_similarity=sim is not None, similarity_thresh=sim if sim is not None else 0.95,
    )  # fmt: skip
    h, _ = hgpo.compute_hgpo_outcome_advantage(
        token_rewards.clone(), step_rewards.clone(), mask, anchor, uid, traj,
        batch["history_length"], mode=batch["mode"],
        length_weight_alpha=batch["alpha"], base_group=batch["base_group"],
    )  # fmt: skip
    batch["step_rewards"] = step_rewards.tolist()
    batch["gigpo"] = g[:, 0].tolist()
    # HGPO does not support similarity grouping; it is run on every batch anyway (exact anchors).
    batch["hgpo"] = h[:, 0].tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gigpo", type=Path, required=True)
    parser.add_argument("--hgpo", type=Path, required=True)
    args = parser.parse_args()
    gigpo, hgpo = load(args.gigpo, "core_gigpo"), load(args.hgpo, "core_hgpo")
    rng = np.random.default_rng(16)
    batches = [random_batch(rng, "exact") for _ in range(60)]
    batches += [random_batch(rng, "realistic") for _ in range(60)]
    for batch in batches:
        run(batch, gigpo, hgpo)
    meta = {"torch": torch.__version__, "numpy": np.__version__}
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"versions": meta, "batches": batches}).encode())
    print(f"wrote {len(batches)} batches, {sum(len(b['rows']) for b in batches)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
