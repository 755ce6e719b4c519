"""Text spaces that accept any Unicode string.

Gymnasium's :class:`~gymnasium.spaces.Text` only contains strings over a fixed charset
(alphanumerics by default). LLM agents read and write arbitrary Unicode, so envhub's spaces
accept every ``str`` up to ``max_length`` characters. Sampling still draws from a finite,
mixed charset (ASCII letters, punctuation, spaces and a few non-Latin characters) so random
policies and ``check_env`` can exercise an env.

Gymnasium's ``AsyncVectorEnv`` keeps observations in shared memory by default, which only
works for fixed-size arrays; like Gymnasium's own variable-size spaces, :class:`UnicodeText`
refuses it with a ``TypeError`` that names the fix (``vector_kwargs={"shared_memory": False}``).
"""

from __future__ import annotations

import multiprocessing as mp
import string
from types import ModuleType
from typing import Any, NoReturn

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import create_shared_memory

__all__ = ["SAMPLE_CHARSET", "UnicodeText"]

SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " " * 8 + "éßπжλ中文🙂"


class UnicodeText(Text):
    """A :class:`gymnasium.spaces.Text` whose ``contains`` accepts any Unicode string.

    Args:
        max_length: longest string the space contains, in characters.
        min_length: shortest string (default 0: the empty action is a legal, if useless, action).
        seed: seed for :meth:`sample`.
    """

    def __init__(
        self, max_length: int = 1 << 20, *, min_length: int = 0, seed: int | np.random.Generator | None = None
    ) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((UnicodeText, self.min_length, self.max_length))


@create_shared_memory.register(UnicodeText)
def _refuse_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> NoReturn:
    # Gymnasium reads shared memory once, at construction, and relies on the result being a
    # live view (a numpy array); strings cannot be one, so a text observation would be stale.
    # This is how Gymnasium itself treats its variable-size spaces (Sequence, Graph).
    raise TypeError(
        f"{space} holds variable-length text, which AsyncVectorEnv cannot keep in shared memory. "
        'Pass vector_kwargs={"shared_memory": False} to gymnasium.make_vec(..., vectorization_mode="async").'
    )
