"""envhub's actor loss against verl 0.9.1's own functions (``verl_loss.json.gz``, ``make_verl_loss.py``).

48 seeded cases (1-8 rows, 1-16 tokens, right padding, interior holes and fully masked rows;
log ratios from on-policy to beyond verl's ±20 clamp; per-row and per-token advantages; rollout
importance weights; micro-batches of a larger mini-batch through ``global_batch_info``) were run
through verl's ``compute_policy_loss_vanilla`` and ``compute_policy_loss_gspo`` for every
``loss_agg_mode`` and four clip settings; its ``kl_penalty`` for every estimator name, ``agg_loss``
and ``entropy_from_logits`` likewise. All in float64: envhub must agree to 1e-7 relative on the
loss, the metrics and the gradient with respect to the log-probs (verl adds 1e-8 to the
denominators of its means, which moves them by up to 1e-8 relative; envhub does not).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from envhub.train.loss import agg_loss, entropy_from_logits, kl_penalty, policy_loss

from .fixtures import load_json

DATA: dict[str, Any] = load_json("verl_loss.json.gz")
RTOL, ATOL = 1e-7, 1e-9  # verl divides its means by (count + 1e-8)


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _close(got: float | torch.Tensor, expected: Any) -> bool:
    return torch.allclose(torch.as_tensor(got, dtype=torch.float64), _t(expected), rtol=RTOL, atol=ATOL)


def test_fixture_provenance_and_coverage() -> None:
    assert DATA["source"].startswith("PyPI verl==0.9.1")
    kinds = {(r["loss_fn"], r["mode"]) for c in DATA["policy"] for r in c["results"]}
    assert len(kinds) == 2 * 5
    assert any(c["global_batch_info"] for c in DATA["policy"]) and any(c["weights"] for c in DATA["policy"])
    # the cases reach clipping, dual clipping and the clamp
    results = [r for c in DATA["policy"] for r in c["results"]]
    assert any(r["clipfrac"] > 0 for r in results) and any(r["clipfrac_lower"] > 0 for r in results)


@pytest.mark.parametrize("case", DATA["policy"], ids=lambda c: f"case{c['case']}")
def test_policy_loss_equals_verls_for_every_ratio_mode_and_clip(case: dict[str, Any]) -> None:
    old, adv, mask = _t(case["old_log_prob"]), _t(case["advantages"]), _t(case["mask"])
    weights = None if case["weights"] is None else _t(case["weights"])
    glob = case["global_batch_info"]
    bad = []
    for r in case["results"]:
        logp = _t(case["log_prob"]).requires_grad_()
        low, high, c = r["clip"]
        out = policy_loss(
            logp,
            old,
            adv,
            mask,
            clip_low=low,
            clip_high=high,
            clip_c=c,
            ratio="token" if r["loss_fn"] == "vanilla" else "sequence",
            agg=r["mode"],
            global_tokens=glob.get("batch_num_tokens"),
            global_rows=glob.get("global_batch_size"),
            norm_constant=glob.get("loss_scale_factor"),
            weights=weights,
        )
        out.loss.backward()
        assert logp.grad is not None
        checks = {
            "loss": _close(out.loss.detach(), r["loss"]),
            "clipfrac": _close(out.clipfrac, r["clipfrac"]),
            "clipfrac_lower": _close(out.clipfrac_lower, r["clipfrac_lower"]),
            "ppo_kl": _close(out.approx_kl, r["ppo_kl"]),
            "grad": _close(logp.grad, r["grad"]),
        }
        bad += [f"{r['loss_fn']}/{r['mode']}/{r['clip']}: {k}" for k, ok in checks.items() if not ok]
    assert not bad, bad[:8]


@pytest.mark.parametrize("index", range(len(DATA["kl"])))
def test_kl_penalty_equals_verls_for_every_estimator(index: int) -> None:
    case = DATA["kl"][index]
    ref = _t(case["ref_log_prob"])
    for kind, expected in case["kinds"].items():
        logp = _t(case["log_prob"]).requires_grad_()
        value = kl_penalty(logp, ref, kind)
        value.sum().backward()
        assert _close(value.detach(), expected["value"]), kind
        assert logp.grad is not None and _close(logp.grad, expected["grad"]), kind


@pytest.mark.parametrize("index", range(len(DATA["agg"])))
def test_agg_loss_equals_verls_for_every_mode(index: int) -> None:
    case = DATA["agg"][index]
    glob = case["global_batch_info"]
    for mode, expected in case["values"].items():
        got = agg_loss(
            _t(case["loss"]),
            _t(case["mask"]),
            mode,
            global_tokens=glob.get("batch_num_tokens"),
            global_rows=glob.get("global_batch_size"),
            norm_constant=glob.get("loss_scale_factor"),
        )
        assert _close(got, expected), mode


def test_entropy_equals_verls() -> None:
    got = entropy_from_logits(_t(DATA["entropy"]["logits"]))
    assert torch.allclose(got.double(), _t(DATA["entropy"]["entropy"]), rtol=1e-6, atol=1e-6)
