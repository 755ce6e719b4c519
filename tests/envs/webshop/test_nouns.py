"""The noun tagger of the type reward: the spaCy model when installed, else the lexicon fallback."""

from __future__ import annotations

from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.nouns import SPACY_MODELS, LexiconNounTagger, SpacyNounTagger, default_noun_tagger
from envhub.envs.webshop.reward import type_reward
from tests.needs import require


def _spacy_tagger() -> SpacyNounTagger:
    tagger = default_noun_tagger()
    require(
        isinstance(tagger, SpacyNounTagger),
        f"a spaCy English model (looked for {', '.join(SPACY_MODELS)})",
        extra="webshop",
    )
    assert isinstance(tagger, SpacyNounTagger)
    return tagger


def test_default_tagger_is_the_spacy_model_from_the_webshop_extra() -> None:
    assert _spacy_tagger().name in SPACY_MODELS


def test_spacy_tagger_keeps_nouns_and_proper_nouns_lowercased() -> None:
    nouns = _spacy_tagger().nouns("Organic Whole Bean Coffee, 12 Ounce Bag")
    assert "coffee" in nouns and "bag" in nouns
    assert "12" not in nouns and "," not in nouns


def test_lexicon_tagger_drops_function_words_and_numbers() -> None:
    assert LexiconNounTagger().nouns("Shampoo and Conditioner Set for Dry Hair, 2 Pack") == (
        "shampoo",
        "conditioner",
        "set",
        "dry",
        "hair",
        "pack",
    )


def test_lexicon_fallback_agrees_with_spacy_on_type_reward(shop: ShopData) -> None:
    """The measured gap between the fallback and the model on envhub's catalogue."""
    spacy_tagger, lexicon = _spacy_tagger(), LexiconNounTagger()
    pairs = [(p, g) for g in shop.goals[:100] for p in shop.catalogue.products]
    same_type = sum(
        type_reward(p, g, spacy_tagger)["r_type"] == type_reward(p, g, lexicon)["r_type"] for p, g in pairs
    )
    assert same_type / len(pairs) >= 0.98
