"""Regenerate ``verl_loss.json.gz``: verl 0.9.1's own actor-loss functions on seeded random inputs.

Not run in CI. Source: PyPI ``verl==0.9.1`` (``verl/trainer/ppo/core_algos.py``:
``compute_policy_loss_vanilla``, ``compute_policy_loss_gspo``, ``agg_loss``, ``kl_penalty``;
``verl/utils/torch_functional.py``: ``entropy_from_logits``), run unmodified, in float64 on CPU.

What this script writes:

* ``policy``: per case (rows × tokens of random log-probs, old log-probs, advantages, a mask
  with right padding, interior holes and fully masked rows), for each loss (``vanilla``,
  ``gspo``), each ``loss_agg_mode`` and each clip setting: verl's loss, its three metrics and
  the gradient of the loss with respect to ``log_prob``. Half the cases pass
  ``global_batch_info`` (``batch_num_tokens``, ``global_batch_size``, ``loss_scale_factor``) as
  a micro-batch of a larger mini-batch would, and some pass ``rollout_is_weights``.
* ``kl``: ``kl_penalty`` for every estimator name (``kl``, ``k1``, ``abs``, ``mse``, ``k2``,
  ``low_var_kl``, ``k3`` and their ``+`` straight-through forms): value and gradient.
* ``agg``: ``agg_loss`` on random loss matrices, every mode, with and without global sizes.
* ``entropy``: ``entropy_from_logits`` on random logits.

Run (the repository's ``.venv-verl`` has verl 0.9.1 and torch; or a scratch virtualenv with
``pip install verl==0.9.1 torch``)::

    .venv-verl/bin/python tests/reference/make_verl_loss.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("verl_loss.json.gz")
SEED = 20260923
MODES = ["token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]
KL_KINDS = [
    "kl",
    "k1",
    "abs",
    "mse",
    "k2",
    "low_var_kl",
    "k3",
    "kl+",
    "k1+",
    "abs+",
    "low_var_kl+",
    "k3+",
    "k2+",
]
#: (clip_ratio_low, clip_ratio_high, clip_ratio_c)
CLIPS = [(0.2, 0.2, 3.0), (0.2, 0.28, 3.0), (0.1, 0.3, 10.0), (3e-4, 3e-4, 1.5)]


def _mask(g: Any, rows: int, tokens: int, torch: Any) -> Any:
    lengths = torch.randint(0, tokens + 1, (rows,), generator=g)
    lengths[0] = max(int(lengths[0]), 1)  # at least one live token in the batch
    mask = (torch.arange(tokens).unsqueeze(0) < lengths.unsqueeze(1)).double()
    holes = torch.rand(rows, tokens, generator=g, dtype=torch.float64) < 0.1
    mask[holes & (torch.arange(tokens) > 0)] = 0.0  # interior holes (env tokens), never the first
    return mask


def main() -> None:
    import torch
    import verl
    from verl.trainer.ppo import core_algos
    from verl.utils.torch_functional import entropy_from_logits
    from verl.workers.config.actor import ActorConfig

    g = torch.Generator().manual_seed(SEED)
    policy: list[dict[str, Any]] = []
    for case in range(48):
        rows = [1, 3, 5, 8][case % 4]
        tokens = [1, 7, 16][(case // 4) % 3]
        scale = [0.02, 0.3, 2.0, 12.0][(case // 12) % 4]  # on-policy-ish .. beyond the ±20 clamp
        mask = _mask(g, rows, tokens, torch)
        old = -torch.rand(rows, tokens, generator=g, dtype=torch.float64) * 4.0
        logp = old + torch.randn(rows, tokens, generator=g, dtype=torch.float64) * scale
        if case % 3 == 0:
            adv = torch.randn(rows, 1, generator=g, dtype=torch.float64).expand(rows, tokens).clone()
        else:
            adv = torch.randn(rows, tokens, generator=g, dtype=torch.float64) * 2.0
        adv[adv.abs() < 0.05] = 0.0
        weights = None
        if case % 4 == 1:
            weights = torch.rand(rows, tokens, generator=g, dtype=torch.float64) * 2.0
        live_tokens = float(mask.sum())
        live_rows = float((mask.sum(-1) > 0).sum())
        glob: dict[str, Any] = {}
        if case % 2 == 1:  # a micro-batch of a larger mini-batch (dp_size 1)
            glob = {
                "batch_num_tokens": live_tokens + 5.0,
                "global_batch_size": live_rows + 2.0,
                "loss_scale_factor": 32.0,
            }
        entry: dict[str, Any] = {
            "case": case,
            "log_prob": logp.tolist(),
            "old_log_prob": old.tolist(),
            "advantages": adv.tolist(),
            "mask": mask.tolist(),
            "weights": None if weights is None else weights.tolist(),
            "global_batch_info": glob,
            "results": [],
        }
        for loss_name in ("vanilla", "gspo"):
            fn = core_algos.get_policy_loss_fn(loss_name)
            for low, high, c in CLIPS:
                config = ActorConfig(
                    strategy="fsdp",
                    ppo_micro_batch_size_per_gpu=1,
                    ppo_mini_batch_size=4,
                    rollout_n=1,
                    clip_ratio=0.2,
                    clip_ratio_low=low,
                    clip_ratio_high=high,
                    clip_ratio_c=c,
                )
                config.global_batch_info.update(glob)
                for mode in MODES:
                    lp = logp.clone().requires_grad_()
                    loss, metrics = fn(
                        old_log_prob=old,
                        log_prob=lp,
                        advantages=adv,
                        response_mask=mask,
                        loss_agg_mode=mode,
                        config=config,
                        rollout_is_weights=weights,
                    )
                    loss.backward()
                    assert lp.grad is not None
                    entry["results"].append(
                        {
                            "loss_fn": loss_name,
                            "clip": [low, high, c],
                            "mode": mode,
                            "loss": float(loss),
                            "clipfrac": float(metrics["actor/pg_clipfrac"]),
                            "clipfrac_lower": float(metrics["actor/pg_clipfrac_lower"]),
                            "ppo_kl": float(metrics["actor/ppo_kl"]),
                            "grad": lp.grad.tolist(),
                        }
                    )
        policy.append(entry)

    kl: list[dict[str, Any]] = []
    for case in range(12):
        rows, tokens = 3, 9
        ref = -torch.rand(rows, tokens, generator=g, dtype=torch.float64) * 5.0
        spread = [0.05, 1.0, 8.0, 30.0][case % 4]  # the last hits both clamps
        logp = ref + torch.randn(rows, tokens, generator=g, dtype=torch.float64) * spread
        out: dict[str, Any] = {"log_prob": logp.tolist(), "ref_log_prob": ref.tolist(), "kinds": {}}
        for kind in KL_KINDS:
            lp = logp.clone().requires_grad_()
            value = core_algos.kl_penalty(lp, ref, kind)
            value.sum().backward()
            assert lp.grad is not None
            out["kinds"][kind] = {"value": value.detach().tolist(), "grad": lp.grad.tolist()}
        kl.append(out)

    agg: list[dict[str, Any]] = []
    for case in range(16):
        rows, tokens = [2, 5, 7, 1][case % 4], [3, 11][case % 2]
        loss_mat = torch.randn(rows, tokens, generator=g, dtype=torch.float64)
        mask = _mask(g, rows, tokens, torch)
        glob = {}
        if case % 2:
            glob = {
                "batch_num_tokens": float(mask.sum()) * 3.0,
                "global_batch_size": 11.0,
                "loss_scale_factor": 7.0,
            }
        values = {mode: float(core_algos.agg_loss(loss_mat, mask, mode, **glob)) for mode in MODES}
        agg.append(
            {"loss": loss_mat.tolist(), "mask": mask.tolist(), "global_batch_info": glob, "values": values}
        )

    logits = torch.randn(4, 6, 50, generator=g, dtype=torch.float64) * 3.0
    entropy = {"logits": logits.tolist(), "entropy": entropy_from_logits(logits).tolist()}

    data = {
        "source": f"PyPI verl=={verl.__version__}: verl/trainer/ppo/core_algos.py "
        "(compute_policy_loss_vanilla, compute_policy_loss_gspo, agg_loss, kl_penalty), "
        "verl/utils/torch_functional.py (entropy_from_logits)",
        "torch": torch.__version__,
        "seed": SEED,
        "dtype": "float64",
        "modes": MODES,
        "clips": CLIPS,
        "policy": policy,
        "kl": kl,
        "agg": agg,
        "entropy": entropy,
    }
    OUT.write_bytes(gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"), mtime=0))
    print(
        f"wrote {OUT} ({OUT.stat().st_size} bytes): {len(policy)} policy cases, {len(kl)} kl, {len(agg)} agg"
    )


if __name__ == "__main__":
    main()
