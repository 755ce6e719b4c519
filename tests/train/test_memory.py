"""Log-probs and entropies never build a ``(rows, tokens, vocab)`` logits tensor (issue 23, Why 3).

A Qwen2 with Qwen2.5's 151,936-token vocabulary (one narrow layer, random init) runs one whole
update (old log-probs, the forward and the backward pass with entropy) under a
``TorchDispatchMode`` that records the shape of every tensor any operator returns; the largest
vocabulary-wide one must be a chunk of response tokens, not every position of every row.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from envhub.train.config import LossConfig, ModelConfig, OptimConfig
from envhub.train.learner import Learner
from envhub.train.rows import RowBatch

VOCAB = 151_936


class _Largest(TorchDispatchMode):
    """Records the largest output (in elements) with a vocabulary-wide last dimension."""

    def __init__(self) -> None:
        super().__init__()
        self.largest: tuple[int, tuple[int, ...], str] = (0, (), "")

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        inputs = {
            a.untyped_storage().data_ptr()
            for a in torch.utils._pytree.tree_leaves((args, kwargs))
            if isinstance(a, torch.Tensor)
        }
        for t in out if isinstance(out, (tuple, list)) else (out,):
            # an output that shares an input's storage (a view, the head weight's transpose)
            # allocates nothing
            if not isinstance(t, torch.Tensor) or t.untyped_storage().data_ptr() in inputs:
                continue
            if t.dim() >= 2 and t.shape[-1] == VOCAB and t.numel() > self.largest[0]:
                self.largest = (t.numel(), tuple(t.shape), str(func))
        return out


def _model() -> Any:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=1,
        num_attention_heads=1,
        num_key_value_heads=1,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    return Qwen2ForCausalLM(config).float()


def _rows(rows: int, prompt: int, response: int) -> RowBatch:
    g = torch.Generator().manual_seed(1)
    length = prompt + response
    ids = torch.randint(0, VOCAB, (rows, length), generator=g)
    mask = torch.ones(rows, response)
    mask[1, response // 2 :] = 0.0  # a shorter response (right padding)
    attention = torch.ones(rows, length, dtype=torch.long)
    attention[1, prompt + response // 2 :] = 0
    return RowBatch(
        input_ids=ids,
        attention_mask=attention,
        response_index=torch.arange(prompt, length).expand(rows, -1).clone(),
        response_ids=ids[:, prompt:].clone(),
        response_mask=mask,
        rollout_logprobs=torch.zeros(rows, response),
        advantages=torch.tensor([1.0, -1.0]),
        policy_version=torch.zeros(rows, dtype=torch.long),
        group_index=torch.zeros(rows, dtype=torch.long),
        has_rollout_logprobs=False,
    )


def _largest_in_update(
    model_config: ModelConfig, rows: int, prompt: int, response: int
) -> tuple[int, Any, str]:
    learner = Learner(
        _model(),
        model_config=model_config,
        loss=LossConfig(kl_coef=0.0, entropy_coef=0.001),
        optim=OptimConfig(lr=1e-6, micro_batch_rows=rows, shuffle=False),
        temperature=1.0,
    )
    batch = _rows(rows, prompt, response)
    with _Largest() as seen:
        old = learner.logprobs(batch)
        stats = learner.update(batch, old)
    assert stats.optimizer_steps == 1 and stats.entropy > 0
    return seen.largest


def test_no_rows_by_tokens_by_vocab_tensor_in_a_whole_update() -> None:
    rows, prompt, response = 2, 96, 32
    numel, shape, op = _largest_in_update(ModelConfig(path="unused"), rows, prompt, response)
    # at most the response tokens (here fewer than one default chunk), never every position
    assert numel <= rows * response * VOCAB, (shape, op)
    assert numel * 3 < rows * (prompt + response) * VOCAB


def test_the_head_runs_one_chunk_of_response_tokens_at_a_time() -> None:
    rows, prompt, response, chunk = 2, 96, 32, 16
    config = ModelConfig(path="unused", logprob_chunk_tokens=chunk)
    numel, shape, op = _largest_in_update(config, rows, prompt, response)
    # the model's own last-position logits (rows x 1 x vocab) or one chunk of response tokens
    assert numel <= max(chunk, rows) * VOCAB, (shape, op)


def test_the_lean_head_gives_the_whole_vocab_paths_logprobs_entropy_and_gradient() -> None:
    from envhub.train.learner import _forward_response

    batch = _rows(2, 24, 12)
    out = []
    for chunk in (0, 5):
        model = _model()
        logp, entropy = _forward_response(model, batch, 0.7, with_entropy=True, chunk_tokens=chunk)
        assert entropy is not None
        mask = batch.response_mask
        ((logp * mask).sum() + (entropy * mask).sum()).backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
        out.append(((logp * mask).detach(), (entropy * mask).detach(), grads))
    assert torch.allclose(out[0][0], out[1][0], atol=1e-5)
    assert torch.allclose(out[0][1], out[1][1], atol=1e-5)
    # float32 sums in another order (the embedding gradient): 2e-5 of the largest entry seen
    assert torch.allclose(out[0][2], out[1][2], atol=1e-4 * float(out[0][2].abs().max()))
