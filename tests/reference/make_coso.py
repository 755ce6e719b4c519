"""Regenerate ``coso.json.gz``: CoSo's token effects, weights and causal entropy from the authors' code.

Not run in CI. The authors' code is GitHub ``langfengQ/CoSo`` (Apache-2.0) at commit
eb4f205cb8af37f9dedbf124a0ac643050d6fc5b; it is not on PyPI. Export it to a scratch directory,
never into this repository. It was written against transformers 4 (``causal.py`` calls
``init_weights()`` before ``post_init()``, and ``model.py`` imports a name transformers 5
removed), so the script runs in a scratch virtualenv that adds ``transformers==4.46.3`` in front
of envhub's own packages (torch, numpy, matplotlib, Pillow and envhub itself come from there)::

    export SCRATCH=$(mktemp -d)
    git clone https://github.com/langfengQ/CoSo $SCRATCH/CoSo   # or `git archive` a mirror
    git -C $SCRATCH/CoSo checkout eb4f205cb8af37f9dedbf124a0ac643050d6fc5b
    python3 -m venv $SCRATCH/venv
    .venv/bin/python -c "import site; print(site.getsitepackages()[0])" \
        > $($SCRATCH/venv/bin/python -c "import site; print(site.getsitepackages()[0])")/envhub.pth
    $SCRATCH/venv/bin/pip install transformers==4.46.3
    PYTHONPATH=$PWD $SCRATCH/venv/bin/python tests/reference/make_coso.py --code $SCRATCH/CoSo

What runs, unmodified, from that checkout:

* ``digirl/coso/executor.py``: ``CausalExecutor.get_token_effect`` (window 4) and ``parse_action``;
* ``digirl/models/causal.py``: ``MiniBertConfig`` and ``MiniBertForSequenceClassification`` at the
  authors' sizes (3 layers, hidden 128, 4 heads, feed-forward 512, 8 labels = ``len(ActionType)``);
* ``digirl/models/autoui_agent.py``: ``AutoUIAgent.get_log_prob(..., return_entropy=True)``, the
  causal entropy (with ``critic.py`` and ``model.py``, which it imports);
* ``digirl/environment/android/autoui_utils.py``: ``autoui_translate_action`` and ``ActionType``.

What is not imported, and why (nothing is replaced): the package ``__init__`` files of
``digirl.models``, ``digirl.environment`` and ``digirl.environment.android``. They import the
Android emulator env, the Gemini evaluator and ``cog_agent`` (a gradio client). Empty packages
stand in, and ``digirl.environment.android`` re-exports the real ``autoui_translate_action`` from
``autoui_utils.py``, as its own ``__init__`` does. (``digirl`` itself has no ``__init__``.)

``AutoUIAgent`` is built with ``__new__`` and given the attributes ``get_log_prob`` reads (its
``__init__`` downloads Auto-UI-Base and RoBERTa). Its ``model`` is a stand-in policy whose
output logits are seeded normal numbers, ``(rows, action tokens, vocab)``: the fixture pins the
entropy formula, not T5. The tokenizer is envhub's tiny byte-level BPE
(:func:`envhub.policy.tiny.build_tiny_tokenizer` ``(512)``) with an ``<unk>`` token added (id 512;
the authors' T5 tokenizer has one, the tiny one has none), so the classifier's vocabulary is
``len(tokenizer)`` = 513. The classifier's weights are not the authors' random init: every
parameter, in ``named_parameters()`` order, is overwritten with
``numpy.random.default_rng(WEIGHT_SEED).normal(0, 0.2, shape)`` (LayerNorm weights ``1 +``
that), so the test can rebuild them without storing them.

The token effects before and after special tokens are zeroed, and the skip-token set, are local
variables of ``get_token_effect``; they are read from its frame with ``sys.settrace`` at the
lines that use them (the function itself runs as written).

Each sequence goes through the authors' code as a batch of one, so no padding is involved (their
classifier mean-pools over padded positions too, which envhub does not; see README.md).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import linecache
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

OUT = Path(__file__).with_name("coso.json.gz")
COMMIT = "eb4f205cb8af37f9dedbf124a0ac643050d6fc5b"
WEIGHT_SEED = 20250506
LOGIT_SEED = 7
LOGIT_SCALE = 2.0
TOKENIZER_VOCAB = 512

#: AutoUI action strings as the authors' policy writes them (``to_autoui`` plus the plan prefix).
AUTOUI = [
    'Action Plan: [DUAL_POINT,TYPE,PRESS_ENTER] ; Action Decision: "action_type": "TYPE", '
    '"touch_point": "[-1.0, -1.0]", "lift_point": "[-1.0, -1.0]", "typed_text": "best buy"',
    'Action Plan: [PRESS_HOME,DUAL_POINT] ; Action Decision: "action_type": "DUAL_POINT", '
    '"touch_point": "[0.4512, 0.8123]", "lift_point": "[0.4512, 0.8123]", "typed_text": ""',
    'Action Plan: [PRESS_BACK] ; Action Decision: "action_type": "PRESS_BACK", '
    '"touch_point": "[-1.0, -1.0]", "lift_point": "[-1.0, -1.0]", "typed_text": ""',
    'Action Plan: [STATUS_TASK_COMPLETE] ; Action Decision: "action_type": "STATUS_TASK_COMPLETE", '
    '"touch_point": "[-1.0, -1.0]", "lift_point": "[-1.0, -1.0]", "typed_text": ""',
    'Action Plan: [PRESS_ENTER] ; Action Decision: "action_type": "PRESS_ENTER", '
    '"touch_point": "[-1.0, -1.0]", "lift_point": "[-1.0, -1.0]", "typed_text": ""',
]
#: envhub-style responses with labels given directly: short actions, punctuation, special tokens
#: inside and at the end, a one-token response, an all-special one, a repeated token.
SHORT = [
    ("left", 3),
    ("move left.<|im_end|>", 3),
    ("I think: push the box up!<|im_end|>", 1),
    ("<think>box is right of me; go right?</think><action>right</action><|im_end|>", 2),
    ('search[best "buy" (cheap), {fast}]_now', 5),
    ("<|im_start|>down<|im_end|><|endoftext|>", 4),
    ("<|im_end|>", 0),
    ("up up up up up up up up", 6),
    ("'quoted' answer: Paris", 7),
]


def load(path: Path, name: str, package: bool = False) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if package else None
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, leaf = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], leaf, module)
    return module


def empty_package(name: str, path: Path) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    sys.modules[name] = module
    parent, _, leaf = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], leaf, module)
    return module


def load_authors(code: Path) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")  # executor.py imports pyplot; render() draws only every 500th call
    d = code / "digirl"
    empty_package("digirl", d)
    empty_package("digirl.environment", d / "environment")
    android = empty_package("digirl.environment.android", d / "environment" / "android")
    utils = load(d / "environment" / "android" / "autoui_utils.py", "digirl.environment.android.autoui_utils")
    android.autoui_translate_action = utils.autoui_translate_action  # type: ignore[attr-defined]
    load(d / "coso" / "__init__.py", "digirl.coso", package=True)
    empty_package("digirl.models", d / "models")
    causal = load(d / "models" / "causal.py", "digirl.models.causal")
    agent = load(d / "models" / "autoui_agent.py", "digirl.models.autoui_agent")
    executor = sys.modules["digirl.coso.executor"]
    return {"utils": utils, "causal": causal, "agent": agent, "executor": executor}


def tokenizer() -> Any:
    from envhub.policy.tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer(TOKENIZER_VOCAB)
    tok.add_special_tokens({"unk_token": "<unk>"})
    return tok


def vocab_digest(tok: Any) -> str:
    items = sorted(tok.get_vocab().items())
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


def fixed_weights(model: torch.nn.Module) -> list[dict[str, Any]]:
    rng = np.random.default_rng(WEIGHT_SEED)
    spec = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            values = rng.normal(0.0, 0.2, tuple(p.shape))
            if "norm" in name.lower() and name.endswith("weight"):
                values = 1.0 + values
            p.copy_(torch.from_numpy(values.astype(np.float32)))
            spec.append({"name": name, "shape": list(p.shape), "sum": float(p.double().sum())})
    return spec


def traced_effects(executor: Any, tok_ids: Any, labels: list[int], model: Any) -> dict[str, Any]:
    """Run ``get_token_effect`` and read its locals at the lines named below."""
    code = type(executor).get_token_effect.__code__
    seen: dict[str, Any] = {}

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            line = linecache.getline(code.co_filename, frame.f_lineno).strip()
            if line.startswith("special_tokens_mask = torch.zeros_like"):
                seen["raw"] = frame.f_locals["causal_effects"].clone()
                seen["skip"] = sorted(int(t) for t in frame.f_locals["special_tokens"])
            elif line.startswith("min_effect ="):
                seen["zeroed"] = frame.f_locals["causal_effects"].clone()
        return local

    def outer(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code is code else None

    sys.settrace(outer)
    try:
        tokens, weights = executor.get_token_effect(tok_ids, labels, model)
    finally:
        sys.settrace(None)
    return {"tokens": tokens, "weights": weights, **seen}


class StandInPolicy:
    """The policy's output logits for ``get_log_prob``: seeded numbers, one draw per call."""

    def __init__(self, vocab: int) -> None:
        self.vocab = vocab
        self.calls: list[dict[str, Any]] = []

    def __call__(self, *, labels: torch.Tensor, **_: Any) -> Any:
        seed = LOGIT_SEED + len(self.calls)
        shape = (*labels.shape, self.vocab)
        logits = np.random.default_rng(seed).normal(0.0, 1.0, shape).astype(np.float32) * LOGIT_SCALE
        self.calls.append({"seed": seed, "shape": list(shape)})
        return types.SimpleNamespace(logits=torch.from_numpy(logits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, required=True, help="a checkout of langfengQ/CoSo")
    args = parser.parse_args()
    import transformers

    if int(transformers.__version__.split(".")[0]) >= 5:
        raise SystemExit("run in the scratch venv with transformers 4.46.3 (see the docstring)")
    head = subprocess.run(
        ["git", "-C", str(args.code), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if head and head != COMMIT:
        raise SystemExit(f"{args.code} is at {head}, not {COMMIT}")
    torch.use_deterministic_algorithms(True)
    authors = load_authors(args.code)
    tok = tokenizer()
    n_labels = len(authors["utils"].ActionType)
    config = authors["causal"].MiniBertConfig(
        vocab_size=len(tok),  # the authors pass tokenizer.vocab_size, which leaves out added tokens
        hidden_size=128,
        intermediate_size=128 * 4,
        num_labels=n_labels,
        num_attention_heads=4,
        num_hidden_layers=3,
    )
    classifier = authors["causal"].MiniBertForSequenceClassification(config, None)
    weights = fixed_weights(classifier)
    classifier.eval()
    scratch = Path(tempfile.mkdtemp())
    executor = authors["executor"].CausalExecutor(tok, "cpu", causal_save_path=str(scratch / "causal"))

    _, autoui_labels, valids = authors["executor"].parse_action(AUTOUI)
    assert all(valids), "every AUTOUI string must parse"
    texts = [(t, int(label)) for t, label in zip(AUTOUI, autoui_labels, strict=True)] + SHORT
    cases = []
    for text, label in texts:
        enc = tok([text], return_tensors="pt", padding=True, max_length=512, truncation=True)
        before = enc["input_ids"].clone()
        got = traced_effects(executor, enc, [label], classifier)
        # get_token_effect writes its unknown token into its input when a 64-position chunk
        # holds one position (``expand(...).contiguous()`` is then a view): here, only the
        # one-token response. Its effects were computed before the write; keep the real ids.
        mutated = not torch.equal(got["tokens"], before)
        assert not mutated or before.shape[1] % 64 == 1
        enc["input_ids"] = before
        with torch.no_grad():
            probs = torch.softmax(classifier(input_ids=enc["input_ids"]).logits, -1)[0]
        cases.append({
            "text": text,
            "label": label,
            "input_ids": enc["input_ids"][0].tolist(),
            "p_label": float(probs[label]),
            "effect_raw": got["raw"][0].tolist(),
            "effect": got["zeroed"][0].tolist(),
            "weight": got["weights"][0].tolist(),
            "skip_ids": got["skip"],
            "input_overwritten": mutated,
        })  # fmt: skip

    # The causal entropy: get_log_prob on one AutoUI action at a time.
    agent_cls = authors["agent"].AutoUIAgent
    agent = agent_cls.__new__(agent_cls)
    torch.nn.Module.__init__(agent)
    policy = StandInPolicy(len(tok))
    agent.use_causal = True
    agent.template = None
    agent.tokenizer = tok
    agent.device = "cpu"
    agent.softmax = torch.nn.Softmax(dim=-1)
    agent.causal_executor = executor
    agent.causal_model = classifier
    agent.model = policy
    entropies = []
    for text in AUTOUI:
        with torch.no_grad():
            log_prob, entropy, causal_entropy = agent.get_log_prob(
                ["an observation"], torch.zeros(1, 1408), [text], return_entropy=True
            )
        entropies.append({
            "text": text,
            "logits_seed": policy.calls[-1]["seed"],
            "logits_shape": policy.calls[-1]["shape"],
            "log_prob": log_prob[0].tolist(),
            "entropy": float(entropy.reshape(-1)[0]),
            "causal_entropy": float(causal_entropy.reshape(-1)[0]),
        })  # fmt: skip

    fixture = {
        "provenance": {
            "repo": "https://github.com/langfengQ/CoSo",
            "commit": COMMIT,
            "license": "Apache-2.0",
            "functions": [
                "digirl/coso/executor.py::CausalExecutor.get_token_effect (window_size=4)",
                "digirl/coso/executor.py::parse_action",
                "digirl/models/causal.py::MiniBertForSequenceClassification",
                "digirl/models/autoui_agent.py::AutoUIAgent.get_log_prob (return_entropy=True)",
            ],
            "command": "PYTHONPATH=$PWD $SCRATCH/venv/bin/python tests/reference/make_coso.py"
            " --code $SCRATCH/CoSo",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "numpy": np.__version__,
        },
        "tokenizer": {
            "build": f"envhub.policy.tiny.build_tiny_tokenizer({TOKENIZER_VOCAB}) + unk_token '<unk>'",
            "vocab_sha256": vocab_digest(tok),
            "unk_token_id": tok.unk_token_id,
        },
        "classifier": {
            "hidden": 128,
            "heads": 4,
            "layers": 3,
            "ffn": 512,
            "labels": n_labels,
            "vocab": len(tok),
            "max_positions": config.max_position_embeddings,
            "layer_norm_eps": config.layer_norm_eps,
            "weight_seed": WEIGHT_SEED,
            "weights": weights,
        },
        "window": 4,
        "logit_scale": LOGIT_SCALE,
        "cases": cases,
        "entropy_cases": entropies,
    }
    OUT.write_bytes(gzip.compress(json.dumps(fixture).encode(), mtime=0))
    print(f"wrote {OUT}: {len(cases)} effect cases, {len(entropies)} entropy cases")


if __name__ == "__main__":
    main()
