"""Answer scoring as Search-R1 defines it: normalisation, exact match, sub-EM and token F1.

Search-R1 (``verl/utils/reward_score/qa_em.py``) normalises a string by lower-casing it,
removing ASCII punctuation, removing the articles ``a``/``an``/``the`` as whole words, and
collapsing whitespace, in that order. Exact match (EM) is 1 when the normalised prediction
equals any normalised golden answer; sub-EM is 1 when a normalised golden answer occurs
inside the normalised prediction. Token F1 is the SQuAD-style bag-of-tokens F1 over the
normalised strings, maximised over the golden answers.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

__all__ = ["SCORERS", "exact_match", "normalize_answer", "sub_exact_match", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Search-R1's answer normalisation (lower, strip punctuation, drop articles, squeeze spaces)."""
    text = text.lower()
    text = text.translate(_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golden_answers: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals any normalised golden answer, else 0.0."""
    normalized = normalize_answer(prediction)
    return float(any(normalize_answer(g) == normalized for g in golden_answers))


def sub_exact_match(prediction: str, golden_answers: Sequence[str]) -> float:
    """1.0 if any normalised golden answer is a substring of the normalised prediction."""
    normalized = normalize_answer(prediction)
    return float(any(normalize_answer(g) in normalized for g in golden_answers))


def token_f1(prediction: str, golden_answers: Sequence[str]) -> float:
    """The best SQuAD token F1 between the prediction and any golden answer."""
    predicted = normalize_answer(prediction).split()
    best = 0.0
    for golden in golden_answers:
        reference = normalize_answer(golden).split()
        common = sum((Counter(predicted) & Counter(reference)).values())
        if common == 0:
            continue
        precision, recall = common / len(predicted), common / len(reference)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


#: The reward functions the env accepts by name (``reward=`` argument).
SCORERS: Mapping[str, Callable[[str, Sequence[str]], float]] = MappingProxyType(
    {"em": exact_match, "subem": sub_exact_match, "f1": token_f1}
)
