"""envhub's CoSo causal entropy against the authors' own code (``coso.json.gz``, README.md).

``make_coso.py`` ran ``CausalExecutor.get_token_effect`` (window 4) and
``AutoUIAgent.get_log_prob`` from ``langfengQ/CoSo`` @ eb4f205c with the authors' MiniBert
classifier at their sizes, its weights fixed from a numpy seed, on 14 responses (AutoUI
actions, short envhub-style actions, special tokens, punctuation, one-token and all-special
responses), each as a batch of one. envhub rebuilds the same classifier and tokenizer and must
give the same raw effects ``c_t``, the same skip tokens and weights ``c~_t``, and the same
plain and causal entropy, to float32 precision.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from envhub.train.coso import (
    ActionClassifier,
    CausalEntropy,
    causal_entropy,
    effect_weights,
    skip_token_ids,
    token_effects,
)
from envhub.train.loss import entropy_from_logits

from .fixtures import load_json

FIXTURE: dict[str, Any] = load_json("coso.json.gz")
CASES: list[dict[str, Any]] = FIXTURE["cases"]
BY_TEXT = {c["text"]: c for c in CASES}


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    import hashlib
    import json

    from envhub.policy.tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer(512)
    tok.add_special_tokens({"unk_token": "<unk>"})
    digest = hashlib.sha256(json.dumps(sorted(tok.get_vocab().items())).encode()).hexdigest()
    assert digest == FIXTURE["tokenizer"]["vocab_sha256"], "the tiny tokenizer changed: regenerate"
    return tok


def _authors_name(name: str) -> str:
    """envhub's parameter name -> the authors' MiniBert name."""
    fixed = {
        "token.weight": "embeddings.weight",
        "position.weight": "position_embeddings.weight",
        "norm.weight": "LayerNorm.weight",
        "norm.bias": "LayerNorm.bias",
        "head.weight": "classifier.weight",
        "head.bias": "classifier.bias",
    }
    if name in fixed:
        return fixed[name]
    return name.replace("layers.", "encoder_layers.", 1)


@pytest.fixture(scope="module")
def classifier() -> ActionClassifier:
    spec = FIXTURE["classifier"]
    model = ActionClassifier(
        spec["vocab"],
        spec["labels"],
        hidden=spec["hidden"],
        heads=spec["heads"],
        layers=spec["layers"],
        ffn=spec["ffn"],
        max_positions=spec["max_positions"],
    )
    rng = np.random.default_rng(spec["weight_seed"])
    theirs: dict[str, torch.Tensor] = {}
    for w in spec["weights"]:  # the generator's draw order: the authors' named_parameters()
        values = rng.normal(0.0, 0.2, tuple(w["shape"]))
        if "norm" in w["name"].lower() and w["name"].endswith("weight"):
            values = 1.0 + values
        theirs[w["name"]] = torch.from_numpy(values.astype(np.float32))
        assert float(theirs[w["name"]].double().sum()) == pytest.approx(w["sum"], rel=1e-12)
    state = {}
    for name, p in model.named_parameters():
        if name == "segment":  # the authors add token type 0's embedding everywhere
            state[name] = theirs["token_type_embeddings.weight"][0]
        else:
            state[name] = theirs[_authors_name(name)]
        assert state[name].shape == p.shape, name
    used = {_authors_name(n) for n, _ in model.named_parameters() if n != "segment"}
    assert used | {"token_type_embeddings.weight"} == set(theirs)
    model.load_state_dict(state)
    return model.eval()


def test_fixture_covers_special_tokens_punctuation_and_edge_cases() -> None:
    assert len(CASES) == 14 and len(FIXTURE["entropy_cases"]) == 5
    assert FIXTURE["window"] == 4
    weights = [w for c in CASES for w in c["weight"]]
    assert min(weights) == 0.0 and max(weights) == 1.0
    assert any(len(c["input_ids"]) == 1 for c in CASES)
    assert any(len(c["input_ids"]) > 64 for c in CASES)  # the authors' 64-position chunks
    assert any(len(c["input_ids"]) == 2 for c in CASES)


def test_skip_tokens_are_the_authors(tokenizer: Any) -> None:
    assert tokenizer.unk_token_id == FIXTURE["tokenizer"]["unk_token_id"]
    for case in CASES:
        assert sorted(skip_token_ids(tokenizer)) == case["skip_ids"]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_token_effects_and_weights_match_the_authors(
    index: int, tokenizer: Any, classifier: ActionClassifier
) -> None:
    case = CASES[index]
    ids = torch.tensor([tokenizer(case["text"])["input_ids"]])
    assert ids[0].tolist() == case["input_ids"]
    mask = torch.ones_like(ids)
    label = torch.tensor([case["label"]])
    with torch.no_grad():
        p = torch.softmax(classifier(ids, mask), -1)[0, case["label"]]
    assert float(p) == pytest.approx(case["p_label"], rel=1e-5)
    effects = token_effects(classifier, ids, mask, label, unk_id=tokenizer.unk_token_id, window=4)
    raw = np.asarray(case["effect_raw"])
    # c_t is a difference of two float32 probabilities, each good to ~1e-6 of itself after
    # three encoder layers (seen: 1e-5 of p at most): the tolerance scales with p.
    tol = 2e-5 * (case["p_label"] + raw.max())
    np.testing.assert_allclose(effects[0].numpy(), raw, rtol=0, atol=tol)
    weights = effect_weights(effects, ids, mask, skip_token_ids(tokenizer))[0].numpy()
    theirs = np.asarray(case["weight"])
    # c~² = (c - min) / (max - min): the effects' slack over the row's range; sqrt is steep
    # near 0, so the weights themselves are compared where they are not small.
    spread = max(float(np.asarray(case["effect"]).max() - np.asarray(case["effect"]).min()), 1e-10)
    np.testing.assert_allclose(weights**2, theirs**2, rtol=0, atol=2 * tol / spread + 1e-7)
    big = theirs > 0.2
    np.testing.assert_allclose(weights[big], theirs[big], rtol=0, atol=tol / spread / 0.2 + 1e-6)
    assert (weights[theirs == 0] == 0).all()


@pytest.mark.parametrize("index", range(len(FIXTURE["entropy_cases"])))
def test_causal_entropy_matches_the_authors(index: int, tokenizer: Any, classifier: ActionClassifier) -> None:
    case = FIXTURE["entropy_cases"][index]
    rng = np.random.default_rng(case["logits_seed"])
    logits = torch.from_numpy(
        rng.normal(0.0, 1.0, case["logits_shape"]).astype(np.float32) * FIXTURE["logit_scale"]
    )
    ids = torch.tensor([BY_TEXT[case["text"]]["input_ids"]])
    mask = torch.ones_like(ids, dtype=torch.float32)
    entropy = entropy_from_logits(logits)
    effects = token_effects(
        classifier, ids, mask, torch.tensor([BY_TEXT[case["text"]]["label"]]), unk_id=tokenizer.unk_token_id
    )
    weights = effect_weights(effects, ids, mask, skip_token_ids(tokenizer))
    plain = causal_entropy(entropy, torch.ones_like(weights), mask)
    h_c = causal_entropy(entropy, weights, mask)
    assert float(plain[0]) == pytest.approx(case["entropy"], rel=1e-5)
    assert float(h_c[0]) == pytest.approx(case["causal_entropy"], rel=1e-5)
    # the log-probs the authors return are the same distribution's
    logp = torch.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    np.testing.assert_allclose(logp[0].numpy(), case["log_prob"], rtol=1e-5, atol=1e-5)


INIT: dict[str, Any] = load_json("coso_init.json.gz")


def _init_matches(model: ActionClassifier, theirs: dict[str, Any], where: str) -> None:
    names = set()
    for name, p in model.named_parameters():
        key = "token_type_embeddings.weight[0]" if name == "segment" else _authors_name(name)
        names.add(key)
        want, flat = theirs[key], p.detach().reshape(-1)
        assert list(p.shape) == want["shape"], (where, name)
        # The first values bit for bit: the same draws in the same order. (A torch whose CPU
        # generator draws differently than the fixture's torch fails here; see its versions.)
        assert [float(v) for v in flat[:8]] == want["head"], (where, name, INIT["versions"])
        assert float(flat.double().sum()) == pytest.approx(want["sum"], rel=1e-9, abs=1e-9), (where, name)
        assert float((flat.double() ** 2).sum()) == pytest.approx(want["sumsq"], rel=1e-9), (where, name)
    assert names == set(theirs)


@pytest.mark.parametrize("index", range(len(INIT["cases"])))
def test_the_classifier_starts_with_the_authors_initial_weights(index: int) -> None:
    """``make_coso_init.py`` built the authors' MiniBert under their transformers (4.47.1): its
    ``init_weights()`` is the base class's no-op, so PyTorch's defaults stay (embeddings N(0, 1)).
    envhub's classifier, seeded the same way, draws the same weights."""
    assert INIT["versions"]["init_weights_is_the_base_no_op"] is True
    assert INIT["versions"]["transformers"] == "4.47.1"
    case = INIT["cases"][index]
    torch.manual_seed(case["seed"])
    model = ActionClassifier(case["vocab"], case["labels"])
    _init_matches(model, case["parameters"], f"case {index}")


def test_the_trainers_causal_entropy_starts_with_the_authors_classifier(tokenizer: Any) -> None:
    """``CausalEntropy(seed=s)`` (the trainer's) gives the authors' model built after
    ``torch.manual_seed(s)``: the tiny tokenizer with its unk, the authors' 8 labels."""
    case = next(c for c in INIT["cases"] if c["vocab"] == len(tokenizer) and c["labels"] == 8)
    coso = CausalEntropy(len(tokenizer), tokenizer, max_labels=8, seed=case["seed"])
    _init_matches(coso.classifier, case["parameters"], "CausalEntropy")
