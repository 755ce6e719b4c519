"""verl's PPO-style actor loss, exactly: clipped token ratios, dual clip, k3 KL, entropy, TIS.

Shapes: every per-token tensor is ``(rows, response_tokens)`` with ``mask`` 1 on sampled
response tokens and 0 on padding (and on env tokens in trajectory mode). ``advantages`` is per
token (a per-row scalar broadcast over the row's tokens, see :func:`envhub.algos.broadcast_to_tokens`).

The formulas are verl 0.9.1's (``shared/reference/round2_rollout_trainer.md`` §2):

* ratio ``r = exp(clamp(logp - old, -20, 20))`` per token;
* ``L = max(-A·r, -A·clip(r, 1-ε_low, 1+ε_high))``, and where ``A < 0`` the dual clip
  ``L = min(L, -c·A)`` with ``c = 3``;
* aggregation ``token-mean`` over the whole mini-batch by default (the denominator is passed in
  so that micro-batches and data-parallel ranks add up to one true token mean);
* k3 KL (``low_var_kl``): ``d = clamp(ref - logp, -20, 20)``, ``k3 = clamp(exp(d) - d - 1, -10, 10)``;
* truncated importance sampling against the rollout's logprobs multiplies the per-token loss by
  ``min(exp(old - rollout), threshold)`` (no gradient through the weight).

Two other ratios replace the token ratio ``r`` (``policy_loss(ratio=...)``): GSPO's
length-normalised sequence ratio, and KPO's Kalman-filtered token ratio (:func:`kalman_log_ratio`;
He, Feng, Cheng, Feng, An, "Online Causal Kalman Filtering for Stable and Effective Policy
Optimization", arXiv 2602.10609, and the authors' ``shuohe1995/verl-kpo`` @ c3135943,
``verl/trainer/ppo/core_algos.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

__all__ = [
    "AggMode",
    "KLKind",
    "KPOParams",
    "PolicyLossOutput",
    "RatioKind",
    "agg_loss",
    "entropy_from_logits",
    "kalman_log_ratio",
    "kl_penalty",
    "policy_loss",
    "tis_weights",
]

AggMode = Literal[
    "token-mean",
    "token-sum",
    "seq-mean-token-sum",
    "seq-mean-token-mean",
    "seq-mean-token-sum-norm",
    "token-sum-norm",
]
#: verl's estimator names; a ``+`` suffix keeps the value and takes k2's gradient (straight through).
KLKind = Literal[
    "low_var_kl",
    "k3",
    "kl",
    "k1",
    "abs",
    "mse",
    "k2",
    "low_var_kl+",
    "k3+",
    "kl+",
    "k1+",
    "abs+",
    "mse+",
    "k2+",
]
RatioKind = Literal["token", "sequence", "kpo"]

_LOG_RATIO_CLAMP = 20.0
_K3_CLAMP = 10.0


def agg_loss(
    loss: torch.Tensor,
    mask: torch.Tensor,
    mode: AggMode = "token-mean",
    *,
    global_tokens: float | None = None,
    global_rows: float | None = None,
    norm_constant: float | None = None,
) -> torch.Tensor:
    """Reduce a per-token loss matrix to a scalar the way verl 0.9.1's ``agg_loss`` does.

    Args:
        loss: ``(rows, tokens)`` per-token values.
        mask: ``(rows, tokens)`` 1 where the token counts.
        mode: ``token-mean`` Σ(L·m)/Σm; ``token-sum`` Σ(L·m); ``seq-mean-token-sum`` mean over
            rows of Σ_t L·m; ``seq-mean-token-mean`` mean over rows of Σ_t L·m/Σ_t m;
            ``seq-mean-token-sum-norm`` (Dr. GRPO, verl 0.9.1) the ``seq-mean-token-sum`` value
            divided by ``norm_constant`` (default: the padded token width);
            ``token-sum-norm`` verl-agent's older Dr. GRPO form Σ(L·m)/``norm_constant``, which
            is the 0.9.1 value times the row count.
        global_tokens: the token-mean denominator of the whole mini-batch (all micro-batches and
            ranks); defaults to this call's Σm, i.e. a mean over this micro-batch only.
        global_rows: the seq-mean denominator likewise (rows with at least one token).
        norm_constant: the Dr. GRPO constant.
    """
    mask = mask.to(loss.dtype)
    if mode == "token-mean":
        denom = mask.sum() if global_tokens is None else torch.tensor(global_tokens, dtype=loss.dtype)
        return (loss * mask).sum() / denom.clamp_min(1.0)
    if mode == "token-sum":
        return (loss * mask).sum()
    per_row_tokens = mask.sum(dim=-1)
    live = per_row_tokens > 0  # verl 0.9.1 leaves fully masked rows out of the seq-mean modes
    rows = live.sum().to(loss.dtype) if global_rows is None else torch.tensor(global_rows, dtype=loss.dtype)
    row_sum = (loss * mask).sum(dim=-1)
    if mode == "seq-mean-token-sum":
        return row_sum[live].sum() / rows.clamp_min(1.0)
    if mode == "seq-mean-token-mean":
        # verl divides by (tokens + 1e-8); kept, so the parity test can be exact (1e-8 relative)
        return (row_sum[live] / (per_row_tokens[live] + 1e-8)).sum() / rows.clamp_min(1.0)
    constant = float(loss.shape[-1]) if norm_constant is None else norm_constant
    if mode == "seq-mean-token-sum-norm":
        return row_sum[live].sum() / rows.clamp_min(1.0) / constant
    if mode == "token-sum-norm":
        return row_sum.sum() / constant
    raise ValueError(f"Unknown loss aggregation {mode!r}; use one of {AggMode.__args__}.")  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PolicyLossOutput:
    """The aggregated policy-gradient loss and verl's diagnostics (detached floats)."""

    loss: torch.Tensor
    clipfrac: float
    clipfrac_lower: float
    approx_kl: float


def tis_weights(old_logp: torch.Tensor, rollout_logp: torch.Tensor, threshold: float = 2.0) -> torch.Tensor:
    """Truncated importance weights ``min(exp(old - rollout), threshold)``, without gradient."""
    log_w = (old_logp - rollout_logp).detach().clamp(-_LOG_RATIO_CLAMP, _LOG_RATIO_CLAMP)
    return torch.exp(log_w).clamp(max=threshold)


def _sequence_log_ratio(logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """GSPO: every token carries the row's length-normalised log ratio, with a per-token gradient."""
    m = mask.to(logp.dtype)
    seq = ((logp - old_logp) * m).sum(-1) / m.sum(-1).clamp_min(1.0)
    return logp - logp.detach() + seq.detach().unsqueeze(-1)


@dataclass(frozen=True)
class KPOParams:
    """The scalar Kalman filter KPO runs over each response's token log ratios.

    The model (arXiv 2602.10609; ``kalman_gains_nonsteady_1d`` in the authors' code): the latent
    log ratio is a random walk ``x_t = x_{t-1} + w_t``, ``w_t ~ N(0, q)``, observed as the token's
    log ratio ``z_t = x_t + v_t``, ``v_t ~ N(0, r)``. The defaults are the authors'
    (``actor.kpo`` in their ``ppo_trainer.yaml``: ``kalman_Q 1e-6``, ``kalman_R 1.0``; ``P0 = 0``
    and ``x0 = 0`` are fixed in their ``compute_policy_loss_kpo``).

    Attributes:
        q: process noise variance (>= 0): how fast the latent log ratio may drift per token.
        r: observation noise variance (> 0): how little one token's log ratio is trusted.
        p0: the initial estimate's variance (>= 0); 0 trusts ``x0`` fully before the first token.
        x0: the initial estimate of the log ratio (0: ratio 1, on-policy).
        gain_eps: the gain actually applied is clamped to ``[gain_eps, 1 - gain_eps]`` (the
            authors clamp at 1e-6); the variance recursion uses the unclamped gain, as theirs
            does. 0 gives the textbook filter.

    Raises:
        ValueError: a value is not finite or out of range (the message names it).
    """

    q: float = 1e-6
    r: float = 1.0
    p0: float = 0.0
    x0: float = 0.0
    gain_eps: float = 1e-6

    def __post_init__(self) -> None:
        for name in ("q", "r", "p0", "x0", "gain_eps"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"KPOParams.{name} must be finite, got {getattr(self, name)!r}.")
        if self.q < 0 or self.p0 < 0:
            raise ValueError(
                f"KPOParams q and p0 are variances and must be >= 0, got q={self.q}, p0={self.p0}."
            )
        if self.r <= 0:
            raise ValueError(f"KPOParams.r (observation noise) must be > 0, got {self.r}.")
        if not 0.0 <= self.gain_eps < 0.5:
            raise ValueError(f"KPOParams.gain_eps must be in [0, 0.5), got {self.gain_eps}.")


def kalman_log_ratio(
    log_ratio: torch.Tensor, mask: torch.Tensor, params: KPOParams | None = None
) -> torch.Tensor:
    """KPO's online causal Kalman estimate of each token's log ratio, row by row (no gradient).

    For every row, over its response tokens in order, with ``x = x0`` and ``P = p0`` before the
    first token::

        P⁻ = P + q                      # predict: the random walk adds q
        K  = P⁻ / (P⁻ + r)              # gain
        x  = (1 - K') x + K' z_t        # update, K' = clamp(K, gain_eps, 1 - gain_eps)
        P  = (1 - K) P⁻ = r K           # posterior variance

    The estimate at token t uses tokens <= t only (causal). A token with ``mask == 0`` neither
    predicts nor updates, so the valid tokens are filtered exactly as if the masked ones were cut
    out, and its output is 0. For right-padded rows (verl's layout) this equals the authors'
    filter, which runs on through the padding with ``z = 0`` after the last valid token; for the
    masked env tokens inside a trajectory row their filter would take those as observations of 0,
    which envhub does not.

    The authors evaluate the gains in closed form in float32, whose rounding of ``1 + q/2`` moves
    the default (q = 1e-6) gains by up to 2%; this is the recursion itself, in float64.

    Vectorised: the gains depend only on the count of valid tokens so far (one scalar recursion
    over the longest row), and the estimate is a linear recurrence ``x_t = (1 - K'_t) x_{t-1} +
    K'_t z_t`` solved 32 tokens at a time with matrix products, not one tensor op per token.

    Args:
        log_ratio: ``(rows, tokens)`` observations ``z = logp - old_logp`` (detached here).
        mask: ``(rows, tokens)`` 1 on the tokens to filter.
        params: the filter; None uses the authors' defaults (:class:`KPOParams`).

    Returns:
        ``(rows, tokens)`` filtered log ratios in ``log_ratio``'s dtype (float32 at least), 0
        where the mask is 0, without gradient.
    """
    p = params or KPOParams()
    out_dtype = torch.promote_types(log_ratio.dtype, torch.float32)
    z = log_ratio.detach().to(torch.float64)
    live = mask.detach() != 0
    rows, tokens = z.shape
    if rows == 0 or tokens == 0:
        return torch.zeros_like(z, dtype=out_dtype)
    # The gains depend only on how many valid tokens came before, not on z: one scalar recursion
    # over the longest row (plain floats), then gathered per token by its valid-token count.
    gains, applied = [], []
    var = p.p0
    for _ in range(tokens):
        prior = var + p.q
        gain = prior / (prior + p.r)
        gains.append(gain)
        applied.append(min(max(gain, p.gain_eps), 1.0 - p.gain_eps))
        # (1 - K)·P⁻ written as r·K: the same value without cancellation when K is near 1
        var = gain * p.r
    k_seq = torch.tensor(applied, dtype=torch.float64, device=z.device)
    count = live.to(torch.int64).cumsum(-1) - 1  # index of the valid token, per row
    k = torch.where(live, k_seq[count.clamp(min=0)], torch.zeros_like(z))
    # x_t = a_t·x_{t-1} + b_t·z_t with a = 1 - K', b = K' on valid tokens and a = 1, b = 0 on
    # masked ones: a linear recurrence, solved blockwise. Inside a block of B tokens,
    # x_t = (Π_{s<=t} a_s)·x_in + Σ_{s<=t} (Π_{s<u<=t} a_u)·b_s·z_s, with the products taken as
    # exp of differences of log-cumsums (all <= 0, so nothing overflows).
    log_a = torch.log1p(-k).clamp_min(-1e4)  # K' = 1 (no clamp): a = 0, exp(-1e4) is 0 too
    bz = torch.where(live, k * z, torch.zeros_like(z))  # masked tokens may hold anything (NaN)
    out = torch.zeros_like(z)
    x = torch.full((rows,), p.x0, dtype=torch.float64, device=z.device)
    block = 32
    for start in range(0, tokens, block):
        la = log_a[:, start : start + block]
        cum = la.cumsum(-1)  # (rows, B)
        width = cum.shape[-1]
        diff = cum.unsqueeze(-1) - cum.unsqueeze(-2)  # [t, s] = Σ_{s<u<=t} log a_u
        causal = torch.ones(width, width, dtype=torch.bool, device=z.device).tril()
        weight = torch.where(causal, diff, torch.full_like(diff, -math.inf)).exp()
        xs = cum.exp() * x.unsqueeze(-1) + (weight @ bz[:, start : start + block].unsqueeze(-1)).squeeze(-1)
        out[:, start : start + width] = xs
        x = xs[:, -1]
    return torch.where(live, out, torch.zeros_like(out)).to(out_dtype)


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    clip_c: float | None = 3.0,
    ratio: RatioKind = "token",
    agg: AggMode = "token-mean",
    global_tokens: float | None = None,
    global_rows: float | None = None,
    weights: torch.Tensor | None = None,
    kpo: KPOParams | None = None,
    norm_constant: float | None = None,
) -> PolicyLossOutput:
    """The clipped policy-gradient loss of verl 0.9.1 (``compute_policy_loss_vanilla``), plus GSPO and KPO.

    Args:
        logp: current per-token log-probs (with gradient).
        old_logp: the behaviour ("old") log-probs.
        advantages: per-token advantages.
        mask: response mask.
        clip_low, clip_high: ε for the lower and upper clip (asymmetric allowed).
        clip_c: the dual-clip constant (> 1) for negative advantages; None turns it off. It
            applies to the token ratio only: verl 0.9.1's GSPO and the KPO authors' loss have no
            dual clip, so ``sequence`` and ``kpo`` ignore it (``clipfrac_lower`` is 0).
        ratio: ``token`` (verl's default), ``sequence`` (GSPO's length-normalised ratio) or
            ``kpo``: the value is ``exp(x̂_t)`` with ``x̂`` the Kalman-filtered log ratio
            (:func:`kalman_log_ratio`), the gradient is the token's own, as the authors'
            ``exp(logp - sg(logp) + sg(x̂))``: d r / d logp_t = r_t, nothing through the filter.
            The log ratio is clamped at 10 from above, as theirs is.
        agg: aggregation mode (:func:`agg_loss`); GSPO and KPO use ``seq-mean-token-mean``.
        global_tokens, global_rows: mini-batch denominators (see :func:`agg_loss`).
        weights: optional per-token weights (e.g. :func:`tis_weights`) multiplying the loss.
        kpo: the KPO filter (only with ``ratio="kpo"``); None uses :class:`KPOParams`' defaults.
        norm_constant: the ``seq-mean-token-sum-norm`` divisor (verl's ``loss_scale_factor``).

    Raises:
        ValueError: ``clip_c <= 1``, an unknown ``ratio``, or ``kpo`` given with another ratio.
    """
    if clip_c is not None and clip_c <= 1.0:
        raise ValueError(f"clip_c must be > 1 (verl's dual clip), got {clip_c}.")
    if kpo is not None and ratio != "kpo":
        raise ValueError(f"kpo parameters only apply to ratio='kpo', not ratio={ratio!r}.")
    if ratio == "token":
        log_ratio = (logp - old_logp).clamp(-_LOG_RATIO_CLAMP, _LOG_RATIO_CLAMP)
    elif ratio == "sequence":
        log_ratio = _sequence_log_ratio(logp, old_logp, mask).clamp(max=10.0)
    elif ratio == "kpo":
        filtered = kalman_log_ratio(logp - old_logp, mask, kpo).to(logp.dtype)
        log_ratio = (logp - logp.detach() + filtered).clamp(max=10.0)
    else:
        raise ValueError(f"Unknown ratio {ratio!r}; use 'token', 'sequence' or 'kpo'.")
    r = torch.exp(log_ratio)
    loss1 = -advantages * r
    loss2 = -advantages * r.clamp(1.0 - clip_low, 1.0 + clip_high)
    clipped = torch.maximum(loss1, loss2)
    m = mask.to(logp.dtype)
    clipfrac = _masked_mean((loss2 > loss1).to(logp.dtype), m)
    if clip_c is not None and ratio == "token":
        dual = -advantages * clip_c
        lower = (clipped > dual) & (advantages < 0)
        per_token = torch.where(advantages < 0, torch.minimum(clipped, dual), clipped)
        clipfrac_lower = _masked_mean(lower.to(logp.dtype), m)
    else:
        per_token, clipfrac_lower = clipped, 0.0
    if weights is not None:
        per_token = per_token * weights
    loss = agg_loss(
        per_token,
        mask,
        agg,
        global_tokens=global_tokens,
        global_rows=global_rows,
        norm_constant=norm_constant,
    )
    # verl's ppo_kl: of the clamped log ratio for the token ratio, of the raw one for GSPO
    raw = (logp - old_logp).detach()
    if ratio == "token":
        raw = raw.clamp(-_LOG_RATIO_CLAMP, _LOG_RATIO_CLAMP)
    approx_kl = _masked_mean(-raw, m)
    return PolicyLossOutput(loss=loss, clipfrac=clipfrac, clipfrac_lower=clipfrac_lower, approx_kl=approx_kl)


def kl_penalty(logp: torch.Tensor, ref_logp: torch.Tensor, kind: KLKind = "low_var_kl") -> torch.Tensor:
    """Per-token KL estimate between the current and the reference policy (verl's ``kl_penalty``).

    A ``+`` suffix (``k3+``) keeps the estimator's value but takes the gradient of k2,
    ``½(logp - ref)²``, whose expected gradient is the KL's (verl 0.9.1's straight-through form).
    """
    if kind.endswith("+"):
        value = _kl_value(logp, ref_logp, kind[:-1])
        k2 = 0.5 * (logp - ref_logp).square()
        return k2 - k2.detach() + value.detach()
    return _kl_value(logp, ref_logp, kind)


def _kl_value(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str) -> torch.Tensor:
    if kind in ("low_var_kl", "k3"):
        d = (ref_logp - logp).clamp(-_LOG_RATIO_CLAMP, _LOG_RATIO_CLAMP)
        return (torch.exp(d) - d - 1.0).clamp(-_K3_CLAMP, _K3_CLAMP)
    if kind in ("kl", "k1"):
        return logp - ref_logp
    if kind == "abs":
        return (logp - ref_logp).abs()
    if kind in ("mse", "k2"):
        return 0.5 * (logp - ref_logp).square()
    raise ValueError(f"Unknown KL kind {kind!r}; use low_var_kl (k3), kl (k1), abs or mse (k2).")


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Per-position categorical entropy of (temperature-scaled) logits ``(..., vocab)``."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(-1)


def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    return float((values * mask).sum() / mask.sum().clamp_min(1.0))
