"""Regenerate ``coso_init.json.gz``: the initial weights of the authors' CoSo classifier.

Not run in CI. The authors' code is GitHub ``langfengQ/CoSo`` (Apache-2.0) at commit
eb4f205cb8af37f9dedbf124a0ac643050d6fc5b (see ``make_coso.py`` for getting it into a scratch
directory). Only ``digirl/models/causal.py`` runs, unmodified: ``MiniBertConfig`` and
``MiniBertForSequenceClassification(config, accelerator)``, built the way
``digirl/models/autoui_agent.py`` builds it (hidden 128, feed-forward 512, 4 heads, 3 layers).
Under the transformers their ``requirements.txt`` pins (4.47.1), in a scratch virtualenv that
adds it in front of envhub's own packages (torch comes from there)::

    export SCRATCH=$(mktemp -d)
    python3 -m venv $SCRATCH/venv
    .venv/bin/python -c "import site; print(site.getsitepackages()[0])" \\
        > $($SCRATCH/venv/bin/python -c "import site; print(site.getsitepackages()[0])")/envhub.pth
    $SCRATCH/venv/bin/pip install transformers==4.47.1
    $SCRATCH/venv/bin/python tests/reference/make_coso_init.py --code $SCRATCH/CoSo

Their model subclasses ``PreTrainedModel`` directly and defines no ``_init_weights``; its
``__init__`` calls ``init_weights()``, which in 4.47.1 applies the base class's
``_init_weights``, a no-op. So every parameter keeps PyTorch's default: ``nn.Embedding``
N(0, 1) (the token, position and token-type tables), ``nn.Linear`` U(+-1/sqrt(fan_in)), the
attention's ``xavier_uniform_`` projection, LayerNorm ones and zeros. The script records
that the no-op ran, and per parameter (the token-type table's row 0 alone: the only row the
authors' forward reads) the float64 sum, the sum of squares and the first 8 values, after
``torch.manual_seed(seed)``, for a few vocabulary sizes and label counts.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import torch

OUT = Path(__file__).with_name("coso_init.json.gz")
COMMIT = "eb4f205cb8af37f9dedbf124a0ac643050d6fc5b"
#: (seed, vocabulary, labels): the tiny tokenizer with an unk (513) and 8 AitW action types as
#: in coso.json.gz; a vocabulary without unk plus envhub's extra row; a bigger one.
CASES = [(0, 513, 8), (3, 520, 4), (11, 2048, 64)]


def stats(values: torch.Tensor) -> dict[str, Any]:
    flat = values.detach().reshape(-1)
    return {
        "shape": list(values.shape),
        "sum": float(flat.double().sum()),
        "sumsq": float((flat.double() ** 2).sum()),
        "head": [float(v) for v in flat[:8]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--code", type=Path, required=True, help="a checkout of langfengQ/CoSo at COMMIT")
    args = parser.parse_args()
    import transformers

    spec = importlib.util.spec_from_file_location("causal", args.code / "digirl" / "models" / "causal.py")
    assert spec is not None and spec.loader is not None
    causal = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(causal)
    model_class = causal.MiniBertForSequenceClassification
    no_op = model_class._init_weights is transformers.PreTrainedModel._init_weights
    cases = []
    for seed, vocab, labels in CASES:
        config = causal.MiniBertConfig(
            vocab_size=vocab,
            hidden_size=128,
            intermediate_size=128 * 4,
            num_labels=labels,
            num_attention_heads=4,
            num_hidden_layers=3,
        )
        torch.manual_seed(seed)
        model = model_class(config, None)  # the accelerator is only stored
        params = {}
        for name, p in model.named_parameters():
            if name == "token_type_embeddings.weight":
                params[name + "[0]"] = stats(p[0])
            else:
                params[name] = stats(p)
        cases.append({"seed": seed, "vocab": vocab, "labels": labels, "parameters": params})
    meta = {
        "commit": COMMIT,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "init_weights_is_the_base_no_op": no_op,
    }
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"versions": meta, "cases": cases}).encode())
    print(f"wrote {len(cases)} cases, base _init_weights no-op: {no_op}", file=sys.stderr)


if __name__ == "__main__":
    main()
