"""TimerPO: AnomSeer's time-series-grounded advantage (Zhang et al., ICML 2026, arXiv 2602.08868).

TimerPO adds to a GRPO-style advantage a semantic term: how close the policy's reasoning is to
an expert explanation of the task (AnomSeer's ExpCoT, built from classical detectors; for
envhub's TimeSeries env see :mod:`envhub.envs.timeseries.expert`), measured on the policy's own
last-layer hidden states. For each sample i of task group g:

1. ``A_main,i``: the main advantage (the authors' fork uses ``R_i - mean_g R``, its std
   computed but unused; envhub takes whatever GRPO advantage the run computes, so
   ``mode: mean_norm`` reproduces the fork and ``mean_std_norm`` divides by the std as GRPO does).
2. The entropic optimal-transport distance between the response's hidden states ``H_r`` and the
   expert text's ``H_e`` (:func:`ot_distance`): marginals ``softmax(||h||)`` over each side's
   tokens, cost ``C = max(0, 1 - cos(h_t, h_u))``, Sinkhorn in float64 with ``K = exp(-C/eps)``,
   ``eps = 0.08`` and 50 iterations of ``u = r / (K v)``, ``v = c / (K^T u)``; plan
   ``T = diag(u) K diag(v)`` and ``W = sum(T * C)``. Where a small ``eps`` would take ``K`` out of
   float64's range, the same iterations run on logarithms (:func:`sinkhorn_plan`).
3. Score ``s_i = clip(exp(-W_i / tau), 0, 1)``, ``tau = 0.5``; or (``clip``) the cosine of the
   mean-pooled states over a temperature, clamped to [0, 1] (:func:`clip_similarity`).
4. ``A_sem,i = s_i - mean_g s``; projection within the group:
   ``beta_g = sum A_sem A_main / (sum A_main^2 + 1e-8)``, ``A_perp = A_sem - beta_g A_main``.
5. ``A_i = A_main,i + alpha * A_perp,i`` (``alpha = 0.3``; ``A_sem`` with ``orth=False``).

Written from the paper and ``shared/reference/seed_methods_and_eval.md`` §3 (the authors' code
has no licence, so no fixture from it exists; ``tests/algos/test_timerpo.py`` pins every
formula with cases computed by hand). Pure numpy, float64, no torch: the trainer passes the
hidden states in as arrays (:mod:`envhub.train.grounded`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from envhub.algos.grouping import factorize
from envhub.core.errors import ConfigurationError

__all__ = [
    "ADV_MIX",
    "ORTH_EPS",
    "OT_EPS",
    "OT_N_ITER",
    "TAU",
    "GroundedAdvantage",
    "clip_similarity",
    "cosine_cost",
    "grounded_advantages",
    "group_centered",
    "orthogonal_residual",
    "ot_distance",
    "semantic_score",
    "sinkhorn_plan",
    "token_marginal",
]

#: The authors' settings (``ts.ot_eps``, ``ts.ot_n_iter``, the score temperature, ``ts.adv_mix``).
OT_EPS = 0.08
OT_N_ITER = 50
TAU = 0.5
ADV_MIX = 0.3
#: The projection's denominator guard (as the fork's ``groupwise_orth_residual``).
ORTH_EPS = 1e-8
#: Norm floor of the cosine (as ``torch.nn.functional.cosine_similarity``'s eps).
_COS_EPS = 1e-8

_F64 = NDArray[np.float64]
#: Each sample's task group: any hashable labels (uids, group indices).
_Groups = Sequence[Hashable] | NDArray[Any]


def _states(hidden: ArrayLike, name: str) -> _F64:
    array = np.asarray(hidden, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0:
        raise ConfigurationError(
            f"{name} must be a (tokens, hidden) array with at least one token, got {array.shape}."
        )
    return array


def token_marginal(hidden: ArrayLike) -> _F64:
    """``softmax(||h_t||)`` over the tokens (rows) of ``hidden``: the OT marginal of one side."""
    norms = np.linalg.norm(_states(hidden, "hidden"), axis=1)
    weights = np.exp(norms - norms.max())
    return np.asarray(weights / weights.sum(), dtype=np.float64)


def cosine_cost(a: ArrayLike, b: ArrayLike) -> _F64:
    """``C_tu = max(0, 1 - cos(a_t, b_u))`` for every pair of rows (norms floored at 1e-8)."""
    x, y = _states(a, "a"), _states(b, "b")
    xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), _COS_EPS)
    yn = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), _COS_EPS)
    return np.asarray(np.maximum(0.0, 1.0 - xn @ yn.T), dtype=np.float64)


def sinkhorn_plan(
    r: ArrayLike, c: ArrayLike, cost: ArrayLike, *, eps: float = OT_EPS, n_iter: int = OT_N_ITER
) -> _F64:
    """The entropic transport plan ``diag(u) K diag(v)`` after ``n_iter`` Sinkhorn iterations.

    ``K = exp(-cost / eps)``; starting from ``v = 1``, each iteration sets ``u = r / (K v)`` then
    ``v = c / (K^T u)``, so the plan's column sums are ``c`` exactly and its row sums tend to ``r``.
    float64 throughout: with ``eps = 0.08`` and costs in [0, 2], ``K >= exp(-25)``, and the plain
    iteration runs. A smaller ``eps`` (any ``grounded.ot_eps > 0`` is accepted) can take ``K``
    below float64's range (``exp(-1/0.001) = 0``), where ``K v = 0`` turns the plan into NaN;
    there the same iterations run on logarithms (``log u = log r - logsumexp(log K + log v)``),
    which give the same plan without the underflow.

    Raises:
        ConfigurationError: shapes that disagree, ``eps <= 0`` or ``n_iter < 1``.
    """
    rv, cv = np.asarray(r, dtype=np.float64), np.asarray(c, dtype=np.float64)
    cm = np.asarray(cost, dtype=np.float64)
    if cm.shape != (len(rv), len(cv)):
        raise ConfigurationError(f"cost must be {(len(rv), len(cv))} for these marginals, got {cm.shape}.")
    if not eps > 0 or n_iter < 1:
        raise ConfigurationError(
            f"Sinkhorn needs eps > 0 and n_iter >= 1, got eps={eps!r}, n_iter={n_iter!r}."
        )
    scaled = cm / eps
    if not scaled.size or float(scaled.max()) <= _PLAIN_LIMIT:
        with np.errstate(all="ignore"):  # checked just below
            plan = _sinkhorn_plain(rv, cv, scaled, n_iter)
        if np.isfinite(plan).all():
            return plan
    return _sinkhorn_log(rv, cv, scaled, n_iter)


#: ``cost / eps`` up to which the plain iteration runs: ``K >= exp(-300)`` keeps ``u`` and ``v``
#: (at most about ``1 / K``) far from float64's limits (``exp(+-709)``).
_PLAIN_LIMIT = 300.0


def _sinkhorn_plain(r: _F64, c: _F64, scaled: _F64, n_iter: int) -> _F64:
    kernel = np.exp(-scaled)
    v = np.ones(len(c), dtype=np.float64)
    u = np.ones(len(r), dtype=np.float64)
    for _ in range(n_iter):
        u = r / (kernel @ v)
        v = c / (kernel.T @ u)
    return np.asarray(u[:, None] * kernel * v[None, :], dtype=np.float64)


def _sinkhorn_log(r: _F64, c: _F64, scaled: _F64, n_iter: int) -> _F64:
    """The plain iteration on ``log u``, ``log v`` and ``log K = -scaled`` (same plan, no underflow)."""
    with np.errstate(divide="ignore"):  # a zero marginal entry is log 0 = -inf: its row stays 0
        log_r, log_c = np.log(r), np.log(c)
    log_k = -scaled
    log_v = np.zeros(len(c), dtype=np.float64)  # v = 1
    log_u = np.zeros(len(r), dtype=np.float64)
    for _ in range(n_iter):
        log_u = log_r - _logsumexp(log_k + log_v[None, :], axis=1)
        log_v = log_c - _logsumexp(log_k + log_u[:, None], axis=0)
    return np.asarray(np.exp(log_u[:, None] + log_k + log_v[None, :]), dtype=np.float64)


def _logsumexp(x: _F64, axis: int) -> _F64:
    top = x.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        total = np.log(np.exp(x - top).sum(axis=axis, keepdims=True))
    return np.asarray((top + total).squeeze(axis), dtype=np.float64)


def ot_distance(
    response: ArrayLike, expert: ArrayLike, *, eps: float = OT_EPS, n_iter: int = OT_N_ITER
) -> float:
    """``W = sum(T * C)`` between two sets of hidden states (tokens x hidden), as step 2 above."""
    cost = cosine_cost(response, expert)
    plan = sinkhorn_plan(token_marginal(response), token_marginal(expert), cost, eps=eps, n_iter=n_iter)
    return float((plan * cost).sum())


def semantic_score(distance: ArrayLike, tau: float = TAU) -> _F64:
    """``clip(exp(-W / tau), 0, 1)``, elementwise."""
    if not tau > 0:
        raise ConfigurationError(f"tau must be > 0, got {tau!r}.")
    w = np.asarray(distance, dtype=np.float64)
    return np.asarray(np.clip(np.exp(-w / tau), 0.0, 1.0), dtype=np.float64)


def clip_similarity(response: ArrayLike, expert: ArrayLike, temperature: float = 1.0) -> float:
    """CLIP-style score: ``clamp(cos(mean_t h_t, mean_u h_u) / temperature, 0, 1)``."""
    if not temperature > 0:
        raise ConfigurationError(f"temperature must be > 0, got {temperature!r}.")
    a = _states(response, "response").mean(axis=0)
    b = _states(expert, "expert").mean(axis=0)
    cos = float(a @ b) / max(float(np.linalg.norm(a)), _COS_EPS) / max(float(np.linalg.norm(b)), _COS_EPS)
    return float(np.clip(cos / temperature, 0.0, 1.0))


def _codes(group: _Groups, n: int) -> tuple[NDArray[np.int64], int]:
    labels = group.tolist() if isinstance(group, np.ndarray) else list(group)
    codes, n_groups = factorize(labels, column="group")
    if len(codes) != n:
        raise ConfigurationError(f"group has {len(codes)} entries for {n} samples.")
    return np.asarray(codes, dtype=np.int64), int(n_groups)


def group_centered(values: ArrayLike, group: _Groups) -> _F64:
    """``x_i - mean_{j in g(i)} x_j``: the in-group semantic advantage ``A_sem`` from the scores."""
    x = np.asarray(values, dtype=np.float64)
    codes, n_groups = _codes(group, len(x))
    mean = np.bincount(codes, weights=x, minlength=n_groups) / np.bincount(codes, minlength=n_groups)
    return np.asarray(x - mean[codes], dtype=np.float64)


def orthogonal_residual(
    a_sem: ArrayLike, a_main: ArrayLike, group: _Groups, *, eps: float = ORTH_EPS
) -> tuple[_F64, _F64]:
    """``A_perp = A_sem - beta_g A_main`` with ``beta_g = sum A_sem A_main / (sum A_main^2 + eps)``.

    Returns:
        ``(A_perp per sample, beta per sample)`` (beta repeated over its group's samples).
    """
    sem = np.asarray(a_sem, dtype=np.float64)
    main = np.asarray(a_main, dtype=np.float64)
    if sem.shape != main.shape:
        raise ConfigurationError(f"a_sem {sem.shape} and a_main {main.shape} differ in shape.")
    codes, n_groups = _codes(group, len(sem))
    dot = np.bincount(codes, weights=sem * main, minlength=n_groups)
    norm = np.bincount(codes, weights=main * main, minlength=n_groups)
    beta = (dot / (norm + eps))[codes]
    return np.asarray(sem - beta * main, dtype=np.float64), np.asarray(beta, dtype=np.float64)


@dataclass(frozen=True)
class GroundedAdvantage:
    """:func:`grounded_advantages`' result, one entry per sample.

    Attributes:
        advantages: ``A_main + adv_mix * A_perp`` (or ``* A_sem`` without ``orth``).
        semantic: ``A_sem``, the score centred in its group.
        residual: ``A_perp`` (equal to ``A_sem`` without ``orth``).
        beta: the group's projection coefficient (0 without ``orth``).
    """

    advantages: _F64
    semantic: _F64
    residual: _F64
    beta: _F64


def grounded_advantages(
    a_main: ArrayLike,
    score: ArrayLike,
    group: _Groups,
    *,
    adv_mix: float = ADV_MIX,
    orth: bool = True,
) -> GroundedAdvantage:
    """Mix the semantic scores into the main advantages (steps 4 and 5 of the module docstring).

    Args:
        a_main: each sample's main (GRPO-style) advantage.
        score: each sample's semantic score in [0, 1] (:func:`semantic_score` or :func:`clip_similarity`).
        group: each sample's task group (any hashable labels).
        adv_mix: alpha, the semantic term's weight.
        orth: project the semantic advantage orthogonally to ``a_main`` within each group first.
    """
    main = np.asarray(a_main, dtype=np.float64)
    sem = group_centered(score, group)
    if orth:
        residual, beta = orthogonal_residual(sem, main, group)
    else:
        residual, beta = sem, np.zeros_like(sem)
    return GroundedAdvantage(main + adv_mix * residual, sem, residual, beta)
