"""CoSo's causal entropy (``envhub.train.coso``): weights, the classifier's training, the loss hook.

The formulas against the authors' code are in ``tests/reference/test_coso.py``; these pin what
envhub adds or decides: padding never changes a row's weights, rows without a valid action get
none, a tokenizer without an unknown token gets one, labels past the capacity share a class,
the classifier learns, and the learner's entropy term is the weighted one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from envhub.core.errors import ConfigurationError
from envhub.train.config import load_config
from envhub.train.coso import (
    ActionClassifier,
    CausalEntropy,
    LabelIndex,
    causal_entropy,
    effect_weights,
    skip_token_ids,
    token_effects,
)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from envhub.policy.tiny import build_tiny_tokenizer

    return build_tiny_tokenizer(512)


def _classifier(seed: int = 0, labels: int = 4) -> ActionClassifier:
    torch.manual_seed(seed)
    model = ActionClassifier(520, labels, hidden=32, heads=4, layers=2, ffn=64)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    return model.eval()


def test_a_row_s_weights_do_not_depend_on_the_padding_of_its_batch() -> None:
    model = _classifier()
    short = torch.tensor([[5, 70, 80, 16, 90]])
    long = torch.tensor([[7, 8, 9, 10, 11, 12, 13, 14, 15]])
    ids = torch.zeros((2, 9), dtype=torch.long)
    ids[0, :5], ids[1] = short[0], long[0]
    mask = torch.zeros((2, 9))
    mask[0, :5], mask[1] = 1, 1
    labels = torch.tensor([1, 2])
    batch = token_effects(model, ids, mask, labels, unk_id=519)
    alone = token_effects(model, short, torch.ones(1, 5), labels[:1], unk_id=519)
    torch.testing.assert_close(batch[0, :5], alone[0], rtol=1e-5, atol=1e-7)
    assert (batch[0, 5:] == 0).all()
    skip = {16}
    w_batch = effect_weights(batch, ids, mask, skip)
    w_alone = effect_weights(alone, short, torch.ones(1, 5), skip)
    torch.testing.assert_close(w_batch[0, :5], w_alone[0], rtol=1e-4, atol=1e-6)
    assert (w_batch[0, 5:] == 0).all() and w_batch[0, 3] == 0  # padding; a skip token
    assert float(w_batch.max()) == pytest.approx(1.0) and float(w_batch.min()) == 0.0


def test_one_token_and_all_skip_rows_get_no_weight() -> None:
    effects = torch.tensor([[0.3, 0.0], [0.2, 0.5]])
    ids = torch.tensor([[40, 0], [16, 14]])
    mask = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    assert (effect_weights(effects, ids, mask, {14, 16}) == 0).all()


def test_causal_entropy_is_the_weighted_token_mean_per_row() -> None:
    entropy = torch.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    weights = torch.tensor([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    torch.testing.assert_close(causal_entropy(entropy, weights, mask), torch.tensor([2.0 / 3, 1.5]))


def test_skip_tokens_are_special_tokens_and_the_authors_punctuation(tokenizer: Any) -> None:
    skip = skip_token_ids(tokenizer)
    assert tokenizer.eos_token_id in skip and tokenizer.pad_token_id in skip
    for text in (".", ",", ":", "!", "?", "_"):
        assert set(tokenizer.encode(text, add_special_tokens=False)) <= skip
    assert not set(tokenizer.encode("left", add_special_tokens=False)) & skip


def test_a_tokenizer_without_unknown_token_gets_a_row_of_its_own(tokenizer: Any) -> None:
    assert tokenizer.unk_token_id is None
    coso = CausalEntropy(512, tokenizer, hidden=16, heads=2, layers=1, ffn=16, pretrain=0)
    assert coso.unk_id == 512 and coso.classifier.token.num_embeddings == 513


def test_labels_past_the_capacity_share_the_last_class() -> None:
    index = LabelIndex(3)
    assert [index(a) for a in ("up", "down", "up", "left", "right")] == [0, 1, 0, 2, 2]
    assert len(index) == 2


def test_rows_without_a_valid_action_are_not_trained_on_and_get_no_weight(tokenizer: Any) -> None:
    coso = CausalEntropy(512, tokenizer, hidden=16, heads=2, layers=1, ffn=16, pretrain=0)
    ids = torch.tensor([[70, 80, 90], [71, 81, 91]])
    mask = torch.ones(2, 3)
    assert coso.observe(ids, mask, ["up", None]) == 1
    weights = coso.weights(ids, mask, ["up", None])
    assert (weights[1] == 0).all() and float(weights[0].max()) > 0


def test_the_classifier_learns_which_token_decides_the_action(tokenizer: Any) -> None:
    """Replies whose first token is the move and whose tail is noise: the classifier fits them,
    and the decisive first token then carries the largest weight."""
    moves = {"up": 300, "down": 301, "left": 302, "right": 303}
    gen = torch.Generator().manual_seed(0)
    coso = CausalEntropy(
        512, tokenizer, hidden=16, heads=2, layers=1, ffn=32, lr=1e-2, samples=64,
        batch_rows=64, grad_clip=1.0, pretrain=20, dropout=0.0, seed=1,
    )  # fmt: skip
    actions = [list(moves)[int(i)] for i in torch.randint(4, (128,), generator=gen)]
    ids = torch.randint(100, 250, (128, 5), generator=gen)
    ids[:, 0] = torch.tensor([moves[a] for a in actions])
    mask = torch.ones(128, 5)
    coso.observe(ids, mask, actions)
    fit = coso.update()
    assert fit.steps == 40 and fit.accuracy > 0.5
    weights = coso.weights(ids[:16], mask[:16], actions[:16])
    # The window starting at 0 covers the move for every start <= 0 only: column 0 leads.
    assert float(weights[:, 0].mean()) > float(weights[:, 2:].mean()) + 0.3


def test_the_learner_weighs_the_entropy_bonus(small_model_dir: Path, sampled_groups: list[Any]) -> None:
    from transformers import AutoModelForCausalLM

    from envhub.train.config import LossConfig, ModelConfig, OptimConfig
    from envhub.train.learner import Learner
    from envhub.train.rows import build_rows

    rows = build_rows(sampled_groups, pad_token_id=0).rows
    rows.advantages = torch.linspace(-1, 1, len(rows))

    def entropy(weights: torch.Tensor | None) -> float:
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_pretrained(small_model_dir, dtype=torch.float32)
        learner = Learner(
            model,
            model_config=ModelConfig(path=str(small_model_dir), device="cpu"),
            loss=LossConfig(kl_coef=0.0, entropy_coef=0.1),
            optim=OptimConfig(lr=1e-4, micro_batch_rows=4, shuffle=False),
            temperature=1.0,
        )
        old = learner.logprobs(rows)
        return learner.update(rows, old, entropy_weights=weights).entropy

    plain = entropy(None)
    assert entropy(torch.ones(rows.response_mask.shape)) == pytest.approx(plain, rel=1e-6)
    assert entropy(torch.full(rows.response_mask.shape, 0.25)) == pytest.approx(plain / 4, rel=1e-5)
    assert entropy(torch.zeros(rows.response_mask.shape)) == 0.0


def test_bad_coso_settings_are_refused_when_the_config_loads(tmp_path: Path) -> None:
    base = {"env": "envhub/SokobanOnePush-v0", "model.path": str(tmp_path), "loss.entropy": "coso"}
    assert load_config(None, base).loss.coso.samples == 1024
    with pytest.raises(ConfigurationError, match=r"loss\.entropy"):
        load_config(None, {**base, "loss.entropy": "causal"})
    with pytest.raises(ConfigurationError, match="entropy_coef"):
        load_config(None, {**base, "loss.entropy_coef": 0.0})
    with pytest.raises(ConfigurationError, match="trajectory_mode"):
        load_config(None, {**base, "env": "envhub/SearchQA-v0", "rollout.trajectory_mode": True})
    with pytest.raises(ConfigurationError, match="must divide"):
        load_config(None, {**base, "loss.coso.heads": 3})
    with pytest.raises(ConfigurationError, match=r"loss\.coso\.window"):
        load_config(None, {**base, "loss.coso.window": 0})
    # An infinite learning rate turns the classifier's weights (and so every weight c~) into NaN;
    # an infinite alpha makes the loss -inf. Both were accepted.
    with pytest.raises(ConfigurationError, match=r"loss\.coso\.lr"):
        load_config(None, {**base, "loss.coso.lr": math.inf})
    with pytest.raises(ConfigurationError, match=r"loss\.entropy_coef"):
        load_config(None, {**base, "loss.entropy_coef": math.inf})


def test_the_classifier_starts_at_pytorchs_defaults_as_the_authors_does() -> None:
    """The authors' MiniBert never applies an init of its own (transformers 4.47.1's base
    ``_init_weights`` is a no-op and theirs defines none), so its embeddings start N(0, 1), the
    token-type offset too, and every layer at PyTorch's default. It matters for the online
    schedule: Adam at lr 1e-5 moves an embedding entry by about 1e-5 a step, which is 0.001%
    of an N(0, 1) entry but 0.05% of an N(0, 0.02) one, fifty times faster through the
    LayerNorm that follows. The authors' sizes; 1000 x 128 token entries."""
    torch.manual_seed(0)
    model = ActionClassifier(1000, 8)
    for name, p in (("token", model.token.weight), ("position", model.position.weight)):
        assert abs(float(p.mean())) < 0.02 and abs(float(p.std()) - 1.0) < 0.02, name
    # One N(0, 1) vector of 128 entries: its spread is that of the table it comes from.
    assert 0.8 < float(model.segment.std()) < 1.2 and abs(float(model.segment.mean())) < 0.3
    assert torch.equal(model.norm.weight, torch.ones(128)) and torch.equal(model.norm.bias, torch.zeros(128))
    # Linear layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases (nn.Linear's default).
    layer = model.layers[0]
    assert isinstance(layer, torch.nn.TransformerEncoderLayer)
    for linear in (model.head, layer.linear1, layer.linear2):
        bound = 1.0 / math.sqrt(linear.in_features)
        assert 0.9 * bound < float(linear.weight.abs().max()) <= bound
        assert float(linear.bias.abs().max()) <= bound
    attention = layer.self_attn
    assert attention.in_proj_bias is not None and float(attention.in_proj_bias.abs().max()) == 0.0
    xavier = math.sqrt(6.0 / (128 + 3 * 128))  # xavier_uniform_ on the (3 * 128, 128) projection
    assert 0.9 * xavier < float(attention.in_proj_weight.abs().max()) <= xavier
