"""Search-QA: answer questions by searching a corpus (Search-R1 semantics).

Importing this package is light: the env, retrievers and server live in their own modules
and import bm25s, sentence-transformers or FastAPI only when used.
"""

__all__: list[str] = []
