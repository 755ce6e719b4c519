"""Regenerate ``search_parsing.json.gz``: Search-R1's and verl-agent's action parsing on adversarial strings.

Not run in CI. Neither original is on PyPI. Fetch:

* repository ``PeterGriffinJin/Search-R1`` at commit a14dc3a (``search_r1/llm_agent/generation.py``);
* repository ``vanzll/verl-agent`` at commit d0b9724
  (``agent_system/environments/env_package/search/projection.py``).

Then run with any Python 3.11 (only the standard library is needed)::

    python3 tests/reference/make_search.py --generation $SCRATCH/generation.py \\
        --projection $SCRATCH/search_projection.py

Search-R1's parsing lives in two methods of ``LLMGenerationManager``, a class that needs torch,
verl and a tokenizer. This script compiles just those two methods from the file's syntax tree
and calls them with a stand-in ``self`` whose tokenizer decodes by returning the strings, so
the original code runs unmodified: ``_postprocess_responses`` (cut after the first
``</search>``, else ``</answer>``) then ``postprocess_predictions`` (first block regex).
verl-agent's ``search_projection`` is imported from its file as is.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib.util
import json
import random
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("search_parsing.json.gz")
SEED = 16
N = 20_000

FRAGMENTS = [
    "<search>", "</search>", "<answer>", "</answer>", "<SEARCH>", "</SEARCH>", "<Answer>",
    "</Answer>", "<think>", "</think>", "<search", "search>", "</answer", "<information>",
    "q", "capital of France", " ", "  ", "\n", "\t", "Paris", "東京", "İstanbul", "ß", "<", ">",
    "/", "a", "b", "1990", "'", '"', "\\n", "<search></search>", "<answer> </answer>",
]  # fmt: skip


def adversarial(rng: random.Random) -> str:
    return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 12)))


def search_r1_parser(path: Path) -> Any:
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LLMGenerationManager")
    wanted = {"_postprocess_responses", "postprocess_predictions"}
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {m.name for m in methods} == wanted
    namespace: dict[str, Any] = {"re": re, "torch": types.SimpleNamespace(Tensor=object)}
    namespace.update({name: getattr(typing, name) for name in ("List", "Any", "Tuple", "Dict")})
    exec(compile(ast.Module(body=methods, type_ignores=[]), str(path), "exec"), namespace)

    class Manager:
        """Stand-in ``self``: decoding returns the strings; re-tokenising is the identity."""

        config = types.SimpleNamespace(no_think_rl=False)
        tokenizer = types.SimpleNamespace(batch_decode=lambda texts, skip_special_tokens: list(texts))

        def _batch_tokenize(self, texts: list[str]) -> list[str]:
            return texts

    manager = Manager()

    def parse(texts: list[str]) -> list[tuple[str | None, str]]:
        _, cut = namespace["_postprocess_responses"](manager, texts)
        actions, contents = namespace["postprocess_predictions"](manager, cut)
        return list(zip(actions, contents, strict=True))

    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generation", type=Path, required=True)
    parser.add_argument("--projection", type=Path, required=True)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("search_projection", args.projection)
    assert spec is not None and spec.loader is not None
    projection = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(projection)
    parse = search_r1_parser(args.generation)

    rng = random.Random(SEED)
    texts = [adversarial(rng) for _ in range(N)]
    r1 = parse(texts)
    results, valids = projection.search_projection(texts)
    cases = [
        {"text": t, "r1_action": a, "r1_content": c, "verl_action": r, "verl_valid": v}
        for t, (a, c), r, v in zip(texts, r1, results, valids, strict=True)
    ]
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps({"cases": cases}, ensure_ascii=False).encode())
    print(f"wrote {len(cases)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
