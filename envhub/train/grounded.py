"""TimerPO in the trainer: hidden states in, grounded advantages on the rows out.

The pure formulas are :mod:`envhub.algos.timerpo`; this module feeds them. Per iteration:

1. each group's expert explanation (the env's ``EnvSpec.expert_cot``, a function of the task
   id, so remote envs and queued groups need not carry the text) is tokenised and run through
   the policy: its last-layer hidden states ``H_e`` (:meth:`Learner.text_hidden_states`);
2. the pass that recomputes the old log-probs hands over each row's last-layer hidden states
   on its response tokens ``H_r`` (:meth:`Learner.logprobs` with a ``hidden_sink``), and
   :class:`RowScores` turns them into the row's score at once (``ot``: ``exp(-W/tau)``, ``clip``:
   the mean-pooled cosine), so no batch of hidden states is ever held;
3. :func:`mix_into_rows` centres the scores in their groups, projects them orthogonally to the
   rows' GRPO advantages and adds ``adv_mix`` times the result.

Samples are the rows (each step of each trajectory, as envhub's GRPO counts them) and groups are
the task groups; a row left out of the update (an overlong ``mask``) is left out here too. A row
with no response tokens has nothing to compare: it scores 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from envhub.algos.timerpo import clip_similarity, grounded_advantages, ot_distance, semantic_score
from envhub.core.errors import ConfigurationError
from envhub.core.registry import EnvSpec, load_entry_point
from envhub.train.config import GroundedSettings
from envhub.train.rows import RowBatch

__all__ = ["RowScores", "expert_texts", "mix_into_rows"]


def expert_texts(spec: EnvSpec, task_ids: Sequence[str]) -> list[str]:
    """The expert explanation of each task, from the env's ``EnvSpec.expert_cot`` function.

    Raises:
        ConfigurationError: the env has no expert explanation.
    """
    if spec.expert_cot is None:
        raise ConfigurationError(
            f"{spec.id} gives no expert explanation (EnvSpec.expert_cot); grounded needs one.", env=spec.id
        )
    explain: Callable[[str], str] = load_entry_point(spec.expert_cot)
    return [explain(task_id) for task_id in task_ids]


class RowScores:
    """A ``hidden_sink`` that scores each row against its group's expert states as they arrive.

    Args:
        settings: the run's ``grounded`` section (method, eps, iterations, tau, temperature).
        expert: each group's expert hidden states ``(tokens, hidden)``, by group index.
        group_index: each row's group index (``RowBatch.group_index``).
    """

    def __init__(
        self, settings: GroundedSettings, expert: Sequence[torch.Tensor], group_index: torch.Tensor
    ) -> None:
        self.settings = settings
        self._expert = [e.double().numpy() for e in expert]
        self._group = group_index.tolist()
        #: Each row's score (0 until its states arrive; rows without response tokens stay 0).
        self.score = np.zeros(len(self._group), dtype=np.float64)
        #: Each row's Sinkhorn distance (``ot`` only; NaN otherwise or without tokens).
        self.distance = np.full(len(self._group), np.nan, dtype=np.float64)

    def __call__(self, row: int, hidden: torch.Tensor) -> None:
        if hidden.shape[0] == 0:
            return
        response = hidden.double().numpy()
        expert = self._expert[self._group[row]]
        s = self.settings
        if s.method == "ot":
            w = ot_distance(response, expert, eps=s.ot_eps, n_iter=s.ot_n_iter)
            self.distance[row] = w
            self.score[row] = float(semantic_score(w, s.tau))
        else:
            self.score[row] = clip_similarity(response, expert, temperature=s.clip_temperature)


def mix_into_rows(rows: RowBatch, scores: RowScores) -> dict[str, float]:
    """Replace ``rows.advantages`` (per-row GRPO advantages) by the grounded mix; return metrics."""
    settings = scores.settings
    if rows.advantages.dim() != 1:
        raise ConfigurationError("grounded mixes per-row advantages; trajectory rows are not supported.")
    main = rows.advantages.double().numpy()
    out = grounded_advantages(
        main, scores.score, rows.group_index.tolist(), adv_mix=settings.adv_mix, orth=settings.orth
    )
    rows.advantages = torch.as_tensor(out.advantages, dtype=torch.float32)
    metrics = {
        "grounded/score_mean": float(scores.score.mean()) if len(main) else 0.0,
        "grounded/semantic_abs_mean": float(np.abs(out.semantic).mean()) if len(main) else 0.0,
        "grounded/residual_abs_mean": float(np.abs(out.residual).mean()) if len(main) else 0.0,
        "grounded/beta_abs_mean": float(np.abs(out.beta).mean()) if len(main) else 0.0,
        "grounded/advantage_abs_mean": float(np.abs(out.advantages).mean()) if len(main) else 0.0,
    }
    finite = scores.distance[np.isfinite(scores.distance)]
    if len(finite):
        metrics["grounded/ot_distance_mean"] = float(finite.mean())
    return metrics
