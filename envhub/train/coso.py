"""CoSo's causal entropy: the entropy bonus weighted by each token's effect on the action.

Counterfactual Soft RL (Feng, Tan, Lyu, Zheng, Xu, Yan, Huang, An, "Towards Efficient Online
Tuning of VLM Agents via Counterfactual Soft Reinforcement Learning", ICML 2025, arXiv
2505.03792). A small classifier ``p_phi(a | y)`` learns which action ``a`` (the env's projected
action) an utterance ``y`` (the policy's response tokens) leads to. The effect of token ``t``
is how much replacing the window ``y_t .. y_{t+w-1}`` (w = 4) by the unknown token moves the
classifier's probability of the action actually taken::

    c_t = | p_phi(a | y) - p_phi(a | y with y_t..y_{t+w-1} := [UNK]) |

Special tokens and the authors' punctuation list get ``c_t = 0``. Per response, the effects are
min-max normalised and square-rooted, ``c~_t = sqrt((c_t - min c) / (max c - min c + 1e-10))``
in ``[0, 1]``, and, detached, they weight the per-token entropy of the policy::

    H_c = sum_t m_t c~_t H_t / sum_t m_t,      loss = L_pg - alpha * H_c

so the bonus keeps exploring the tokens that decide the action and leaves the boilerplate
alone. Semantics restated from the authors' code (``langfengQ/CoSo`` @ eb4f205c:
``digirl/coso/executor.py`` ``CausalExecutor.get_token_effect``, ``digirl/models/causal.py``,
``digirl/models/autoui_agent.py`` ``get_log_prob``, ``digirl/algorithms/causal_digirl/trainer.py``
``update_causal``); pinned by ``tests/reference/test_coso.py``.

Where envhub differs (``docs/training.md``, CoSo):

* the classifier mean-pools over the response's real tokens, and a window stops at the
  response's last token; the authors pool over the padded batch width too, so their effects
  for a padded row depend on its batch. On a row without padding both are the same;
* min and max are taken over the response's tokens (the authors' include the padding's zeros);
* a tokenizer without an unknown token (Qwen's) gets one of its own: an extra embedding row;
* labels are the projected action strings, up to ``max_labels`` distinct ones (the authors'
  are AitW's eight action types); a row whose action was invalid has no label and weight 0.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

__all__ = [
    "SKIP_TEXTS",
    "ActionClassifier",
    "CausalEntropy",
    "ClassifierUpdate",
    "LabelIndex",
    "causal_entropy",
    "effect_weights",
    "skip_token_ids",
    "token_effects",
]

#: The authors' punctuation: every token these strings encode to gets no effect.
SKIP_TEXTS = ("[]", "()", "{", "}", "{}", ":", '""', "'", ",", "!", "?", ";", "_", ".")


def skip_token_ids(tokenizer: Any) -> frozenset[int]:
    """The tokens whose effect is 0: the tokenizer's special tokens and :data:`SKIP_TEXTS`' tokens.

    Special tokens are those of ``special_tokens_map`` (eos, pad, unk, ... and any
    ``additional_special_tokens``), not every added token, as in the authors' code.
    """
    ids: set[int] = set()
    for value in tokenizer.special_tokens_map.values():
        for token in value if isinstance(value, list) else [value]:
            found = tokenizer.convert_tokens_to_ids(token)
            if isinstance(found, int):
                ids.add(found)
    for text in SKIP_TEXTS:
        ids.update(tokenizer.encode(text, add_special_tokens=False))
    return frozenset(ids)


class ActionClassifier(nn.Module):
    """``p_phi(a | y)``: a small transformer encoder over response tokens, mean-pooled, linear head.

    The authors' MiniBert (``digirl/models/causal.py``): token, position and (one) segment
    embedding summed, LayerNorm, dropout, post-norm GELU encoder layers, a mean over positions,
    dropout, a linear head. Their sizes are the defaults, and their initialisation: PyTorch's
    defaults (N(0, 1) embeddings), drawn in their order, so a seed gives their weights.

    Args:
        vocab_size: embedding rows (the policy's vocabulary, plus one if it has no unknown token).
        num_labels: action classes.
        hidden, heads, layers, ffn: encoder sizes.
        max_positions: the longest input; longer responses are cut to it.
        dropout: in the embeddings, the encoder and before the head (training only).
    """

    def __init__(
        self,
        vocab_size: int,
        num_labels: int,
        *,
        hidden: int = 128,
        heads: int = 4,
        layers: int = 3,
        ffn: int = 512,
        max_positions: int = 512,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.max_positions = max_positions
        # Every parameter starts at PyTorch's default, as the authors' classifier does: their
        # MiniBert subclasses PreTrainedModel directly and defines no ``_init_weights``, so its
        # ``init_weights()`` applies the base class's no-op (transformers 4.47.1, their pin);
        # embeddings stay N(0, 1), not BERT's N(0, 0.02). Parameters are created in the
        # authors' order, so a seed gives their draws (tests/train/test_coso.py pins both).
        self.token = nn.Embedding(vocab_size, hidden)
        self.position = nn.Embedding(max_positions, hidden)
        # The authors add the embedding of token type 0 to every position: a learned offset,
        # the first row of their two-row token-type table (drawn whole, N(0, 1)).
        self.segment = nn.Parameter(torch.randn(2, hidden)[0].clone())
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                hidden, heads, ffn, dropout=dropout, activation="gelu", batch_first=True
            )
            for _ in range(layers)
        )
        self.head = nn.Linear(hidden, num_labels)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Label logits ``(rows, labels)`` of ``ids`` ``(rows, T)``; ``mask`` 1 on real tokens."""
        ids, mask = ids[:, : self.max_positions], mask[:, : self.max_positions]
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.token(ids) + self.position(positions).unsqueeze(0) + self.segment
        x = self.dropout(self.norm(x))
        live = mask > 0
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=~live)
        weights = live.to(x.dtype).unsqueeze(-1)
        pooled = (x * weights).sum(1) / weights.sum(1).clamp_min(1.0)
        return self.head(self.dropout(pooled))  # type: ignore[no-any-return]


@torch.no_grad()
def token_effects(
    classifier: ActionClassifier,
    ids: torch.Tensor,
    mask: torch.Tensor,
    labels: torch.Tensor,
    *,
    unk_id: int,
    window: int = 4,
    batch: int = 1024,
) -> torch.Tensor:
    """``c_t = |p(a | y) - p(a | y with y_t..y_{t+w-1} := unk)|`` for every response token.

    Args:
        classifier: ``p_phi`` (put in eval mode here, and back after).
        ids, mask: ``(rows, T)`` response tokens, right-padded; mask 1 on real tokens.
        labels: ``(rows,)`` the action class of each row.
        unk_id: the id the window is replaced with.
        window: tokens replaced from ``t`` on (the authors' 4); the window stops at the row's end.
        batch: counterfactual sequences per classifier pass.

    Returns:
        ``(rows, T)`` float32 effects, 0 on padding and on positions past ``max_positions``.
    """
    was_training = classifier.training
    classifier.eval()
    try:
        device = next(classifier.parameters()).device
        width = min(ids.shape[1], classifier.max_positions)
        ids, live = ids[:, :width].to(device), mask[:, :width].to(device) > 0
        labels = labels.to(device)
        lengths = live.sum(-1)
        p_label = _label_prob(classifier, ids, live, labels)
        rows, starts = live.nonzero(as_tuple=True)
        effects = torch.zeros(ids.shape, dtype=torch.float32, device=device)
        offsets = torch.arange(width, device=device)
        for s in range(0, rows.numel(), batch):
            r, t = rows[s : s + batch], starts[s : s + batch]
            hide = (offsets >= t[:, None]) & (offsets < (t + window)[:, None])
            hide &= offsets < lengths[r][:, None]
            masked = torch.where(hide, torch.full_like(ids[r], unk_id), ids[r])
            p_cf = _label_prob(classifier, masked, live[r], labels[r])
            effects[r, t] = (p_label[r] - p_cf).abs()
        return effects.cpu() if mask.device.type == "cpu" else effects
    finally:
        classifier.train(was_training)


def _label_prob(
    classifier: ActionClassifier, ids: torch.Tensor, live: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    probs = torch.softmax(classifier(ids, live.long()).float(), dim=-1)
    return probs.gather(1, labels[:, None]).squeeze(1)


def effect_weights(
    effects: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor, skip_ids: Iterable[int]
) -> torch.Tensor:
    """``c~_t = sqrt((c_t - min c) / (max c - min c + 1e-10))`` per row, skip tokens set to 0 first.

    Min and max run over the row's real tokens; padding gets 0. A row whose effects are all
    equal (one token, or only skip tokens) gets 0 everywhere, as the authors' formula gives.
    """
    width = effects.shape[1]
    ids, live = ids[:, :width].to(effects.device), mask[:, :width].to(effects.device) > 0
    skip = torch.tensor(sorted(skip_ids), dtype=ids.dtype, device=ids.device)
    c = torch.where(torch.isin(ids, skip), torch.zeros_like(effects), effects)
    low = torch.where(live, c, torch.full_like(c, math.inf)).amin(-1, keepdim=True)
    high = torch.where(live, c, torch.full_like(c, -math.inf)).amax(-1, keepdim=True)
    weights = ((c - low) / (high - low + 1e-10)).clamp_min(0.0).sqrt()
    weights = torch.where(live, weights, torch.zeros_like(weights))
    out = torch.zeros(mask.shape, dtype=torch.float32, device=effects.device)
    out[:, :width] = weights
    return out.detach()


def causal_entropy(entropy: torch.Tensor, weights: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row ``H_c = sum_t m_t c~_t H_t / sum_t m_t`` (weights detached).

    The learner aggregates ``c~ * H`` with the loss's own mode (``loss.agg``) instead; this is
    the per-response form the authors compute.
    """
    m = mask.to(entropy.dtype)
    return (weights.detach() * entropy * m).sum(-1) / m.sum(-1).clamp_min(1.0)


class LabelIndex:
    """Action strings -> class ids, in order of first appearance, up to ``capacity`` classes.

    When all classes but the last are taken, every new action shares the last one.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 2:
            raise ValueError(f"LabelIndex needs at least 2 classes, got {capacity}.")
        self.capacity = capacity
        self.ids: dict[str, int] = {}

    def __call__(self, action: str) -> int:
        found = self.ids.get(action)
        if found is not None:
            return found
        if len(self.ids) < self.capacity - 1:
            self.ids[action] = len(self.ids)
            return self.ids[action]
        return self.capacity - 1

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class ClassifierUpdate:
    """What one round of classifier training did (means over its optimizer steps)."""

    loss: float
    accuracy: float
    steps: int


class CausalEntropy:
    """The classifier, its online training on rollout rows, and the weights it gives.

    Training follows the authors' ``update_causal``: each optimizer step draws ``samples``
    (response, action) pairs with replacement from a buffer of the last ``buffer_rows`` valid
    rows, runs them in batches of ``batch_rows`` with the gradients of the batch means summed,
    clips the gradient norm at ``grad_clip`` and takes one Adam step; ``epochs`` such steps make
    one update. The first :meth:`update` runs ``pretrain`` updates (the authors pretrain on
    their offline data before the online phase); later ones run one.

    Args:
        vocab_size: the policy's vocabulary (embedding rows).
        tokenizer: the policy's Hugging Face tokenizer (special tokens, punctuation, unk).
        window, hidden, heads, layers, ffn, max_positions, dropout, max_labels: sizes.
        lr, epochs, samples, batch_rows, grad_clip, pretrain, buffer_rows: the schedule.
        seed: the classifier's init and the buffer's sampling.
        device: where the classifier runs.
    """

    def __init__(
        self,
        vocab_size: int,
        tokenizer: Any,
        *,
        window: int = 4,
        hidden: int = 128,
        heads: int = 4,
        layers: int = 3,
        ffn: int = 512,
        max_positions: int = 512,
        dropout: float = 0.1,
        max_labels: int = 64,
        lr: float = 1e-5,
        epochs: int = 2,
        samples: int = 1024,
        batch_rows: int = 512,
        grad_clip: float = 0.01,
        pretrain: int = 500,
        buffer_rows: int = 2000,
        seed: int = 0,
        device: torch.device | str = "cpu",
    ) -> None:
        self.window, self.samples, self.batch_rows = window, samples, batch_rows
        self.epochs, self.grad_clip, self.pretrain = epochs, grad_clip, pretrain
        self.skip = skip_token_ids(tokenizer)
        unk = getattr(tokenizer, "unk_token_id", None)
        # Qwen's tokenizers have no unknown token: the classifier gets a row of its own for it.
        self.unk_id = int(unk) if unk is not None else vocab_size
        rows = vocab_size + (1 if unk is None else 0)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.classifier = ActionClassifier(
                rows,
                max_labels,
                hidden=hidden,
                heads=heads,
                layers=layers,
                ffn=ffn,
                max_positions=max_positions,
                dropout=dropout,
            ).to(device)
        self.optimizer = torch.optim.Adam(self.classifier.parameters(), lr=lr)
        self.labels = LabelIndex(max_labels)
        self.buffer: deque[tuple[tuple[int, ...], int]] = deque(maxlen=buffer_rows)
        self.generator = torch.Generator().manual_seed(seed)
        self.updates = 0

    def label_ids(self, actions: Sequence[str | None]) -> list[int | None]:
        """Each row's class (None for a row without a valid action)."""
        return [None if a is None else self.labels(a) for a in actions]

    def observe(self, ids: torch.Tensor, mask: torch.Tensor, actions: Sequence[str | None]) -> int:
        """Add the rows with a valid action to the buffer; returns how many were added."""
        added = 0
        for row, label in zip(range(ids.shape[0]), self.label_ids(actions), strict=True):
            if label is None:
                continue
            n = int(mask[row].sum())
            if n:
                self.buffer.append((tuple(int(i) for i in ids[row, :n]), label))
                added += 1
        return added

    def update(self) -> ClassifierUpdate:
        """Train on the buffer: ``pretrain`` rounds the first time, one round after."""
        if not self.buffer:
            return ClassifierUpdate(loss=math.nan, accuracy=math.nan, steps=0)
        rounds = max(self.pretrain, 1) if self.updates == 0 else 1
        losses, hits, seen = [], 0, 0
        self.classifier.train()
        device = next(self.classifier.parameters()).device
        for _ in range(rounds * self.epochs):
            pick = torch.randint(len(self.buffer), (self.samples,), generator=self.generator)
            self.optimizer.zero_grad(set_to_none=True)
            for start in range(0, self.samples, self.batch_rows):
                batch = [self.buffer[int(i)] for i in pick[start : start + self.batch_rows]]
                ids, mask = _pad([b[0] for b in batch], device)
                labels = torch.tensor([b[1] for b in batch], device=device)
                logits = self.classifier(ids, mask)
                loss = nn.functional.cross_entropy(logits, labels)
                loss.backward()
                losses.append(float(loss.detach()))
                hits += int((logits.argmax(-1) == labels).sum())
                seen += len(batch)
            nn.utils.clip_grad_norm_(self.classifier.parameters(), self.grad_clip)
            self.optimizer.step()
        self.updates += 1
        return ClassifierUpdate(
            loss=sum(losses) / len(losses), accuracy=hits / max(seen, 1), steps=rounds * self.epochs
        )

    def weights(self, ids: torch.Tensor, mask: torch.Tensor, actions: Sequence[str | None]) -> torch.Tensor:
        """``c~`` ``(rows, T)`` for response tokens ``ids``; 0 on rows without a valid action."""
        labels = self.label_ids(actions)
        known = torch.tensor([label is not None for label in labels], dtype=torch.bool)
        out = torch.zeros(mask.shape, dtype=torch.float32)
        if not bool(known.any()):
            return out
        index = known.nonzero(as_tuple=True)[0]
        target = torch.tensor([labels[int(i)] for i in index], dtype=torch.long)
        effects = token_effects(
            self.classifier, ids[index], mask[index], target, unk_id=self.unk_id, window=self.window
        )
        out[index] = effect_weights(effects.cpu(), ids[index], mask[index], self.skip)
        return out


def _pad(sequences: Sequence[tuple[int, ...]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(s) for s in sequences)
    ids = torch.zeros((len(sequences), width), dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for r, s in enumerate(sequences):
        ids[r, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[r, : len(s)] = 1
    return ids.to(device), mask.to(device)
