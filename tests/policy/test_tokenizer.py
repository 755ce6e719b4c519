"""ChatTokenizer: local chat-template rendering, lossless decoding, end-of-turn ids, image parts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envhub.core.errors import ConfigurationError
from envhub.policy.tokenizer import ChatTokenizer, has_image_part

MESSAGES = [
    {"role": "system", "content": "You are an agent."},
    {"role": "user", "content": "You see a fridge 1."},
]
IMAGE_MESSAGE = {
    "role": "user",
    "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "What next?"},
    ],
}


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir: Path) -> ChatTokenizer:
    return ChatTokenizer(tiny_model_dir)


def test_render_returns_a_plain_list_of_ids_of_the_template_text(tokenizer: ChatTokenizer) -> None:
    ids = tokenizer.render(MESSAGES)
    assert isinstance(ids, list) and all(type(i) is int for i in ids)
    assert ids == tokenizer.encode(tokenizer.render_text(MESSAGES))
    assert tokenizer.decode(ids, skip_special_tokens=False) == tokenizer.render_text(MESSAGES)


def test_generation_prompt_is_appended_only_when_asked(tokenizer: ChatTokenizer) -> None:
    assert tokenizer.render_text(MESSAGES).endswith("<|im_start|>assistant\n")
    assert tokenizer.render_text(MESSAGES, add_generation_prompt=False).endswith("<|im_end|>\n")


def test_decode_drops_special_tokens_by_default(tokenizer: ChatTokenizer) -> None:
    ids = [*tokenizer.encode("go to fridge 1"), tokenizer.eos_token_ids[0]]
    assert tokenizer.decode(ids) == "go to fridge 1"
    assert tokenizer.decode(ids, skip_special_tokens=False) == "go to fridge 1<|im_end|>"


def test_end_of_turn_ids_include_generation_config_eos(tokenizer: ChatTokenizer) -> None:
    im_end, endoftext = (tokenizer.hf.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>"))
    assert tokenizer.eos_token_ids == (im_end, endoftext)
    assert tokenizer.pad_token_id == endoftext


def test_image_parts_become_placeholder_text(tokenizer: ChatTokenizer) -> None:
    assert has_image_part([IMAGE_MESSAGE]) and not has_image_part(MESSAGES)
    text = tokenizer.render_text([IMAGE_MESSAGE])
    assert "<|im_start|>user\n<image>What next?<|im_end|>" in text


def test_image_placeholder_is_configurable(tiny_model_dir: Path) -> None:
    tokenizer = ChatTokenizer(tiny_model_dir, image_placeholder="[history image]")
    assert "[history image]What next?" in tokenizer.render_text([IMAGE_MESSAGE])


def test_unknown_content_part_is_a_clear_error(tokenizer: ChatTokenizer) -> None:
    with pytest.raises(ConfigurationError, match="no known type"):
        tokenizer.render([{"role": "user", "content": [{"type": "audio", "data": "..."}]}])


def test_missing_directory_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="envhub model tiny"):
        ChatTokenizer(tmp_path / "nope")


def test_a_directory_without_tokenizer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"tokenizer\.json"):
        ChatTokenizer(tmp_path)


def test_a_tokenizer_without_chat_template_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_model_dir / name, tmp_path / name)
    with pytest.raises(ConfigurationError, match="no chat template"):
        ChatTokenizer(tmp_path)
