"""The retriever factory: a retriever by name, and imports that run one way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import envhub.envs.search as search
from envhub.core.errors import ConfigurationError
from envhub.envs.search.data import EMBEDDED_DATA_DIR
from envhub.envs.search.retrieval import Retriever
from envhub.envs.search.retrievers import RETRIEVER_KINDS, make_retriever

PACKAGE = Path(search.__file__).parent


def _imports_within_package() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at module level or inside functions."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("envhub.envs.search."):
                found.add(node.module.rpartition(".")[2])  # type: ignore[union-attr]
            elif isinstance(node, ast.Import):
                found.update(
                    a.name.rpartition(".")[2] for a in node.names if a.name.startswith("envhub.envs.search.")
                )
        graph[path.stem] = found
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [])):
            return found
    return None


def test_the_search_package_has_no_import_cycle() -> None:
    graph = _imports_within_package()
    assert {"bm25", "dense", "remote"} <= graph["retrievers"]
    assert _cycle(graph) is None


def test_bm25_is_built_by_name_over_a_corpus(tmp_path: Path) -> None:
    retriever = make_retriever(
        "bm25", corpus_path=EMBEDDED_DATA_DIR / "corpus.jsonl", index_dir=tmp_path / "index"
    )
    assert isinstance(retriever, Retriever) and retriever.name == "bm25" and retriever.size > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "tfidf"}, "Unknown retriever"),
        ({"kind": "remote"}, "needs retriever_url"),
        ({"kind": "dense"}, "needs a corpus path"),
    ],
)
def test_bad_requests_are_configuration_errors(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        make_retriever(**kwargs)
    assert set(RETRIEVER_KINDS) == {"bm25", "dense", "remote"}
