"""A model's tokenizer and chat template, loaded from a local path, as the rollout layer uses it.

:class:`ChatTokenizer` renders chat messages into the exact token ids the model is sampled
from (the chat template applied locally, never re-derived from text by a server), decodes
sampled ids back into the text an env sees, and knows the ids that end a turn.

Image content parts (OpenAI's ``{"type": "image_url", ...}``, the AgentOCR history image) and
text-only tokenizers: a text-only model cannot read an image, and a vision model's image tokens
are produced by its processor on the server (their count depends on the image size), so no
tokenizer alone can render them token-exactly. By default each image part is therefore
replaced by ``image_placeholder`` text (``"<image>"``) and a message's parts are joined into
one string, which every chat template accepts. Pass ``keep_image_parts=True`` for a
multimodal template that renders image parts itself (its image tokens are then the
template's placeholders, not the processor's expansion). The HTTP backend sends prompts with
images to chat completions instead, where the server expands them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError, DependencyMissingError

__all__ = ["ChatTokenizer", "has_image_part"]

_IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})


def has_image_part(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any message carries an image content part."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(part, Mapping) and part.get("type") in _IMAGE_PART_TYPES for part in content
        ):
            return True
    return False


class ChatTokenizer:
    """Render, encode and decode with one model's tokenizer.

    Args:
        path: a local Hugging Face model or tokenizer directory (``tokenizer.json``,
            ``tokenizer_config.json``, the chat template). Nothing is downloaded.
        image_placeholder: text that stands for an image part (see the module docstring).
        keep_image_parts: hand image parts to the chat template unchanged.

    Raises:
        ConfigurationError: the path does not exist, holds no loadable tokenizer, or the
            tokenizer has no chat template.
        DependencyMissingError: ``transformers`` is not installed.
    """

    def __init__(
        self, path: str | Path, *, image_placeholder: str = "<image>", keep_image_parts: bool = False
    ) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise ConfigurationError(
                f"Tokenizer path {str(self.path)!r} is not a directory. Pass the local directory of the "
                "model vLLM serves (the one with tokenizer.json); `envhub model tiny --out DIR` builds one.",
                path=str(self.path),
            )
        self.hf = _load_tokenizer(self.path)
        if not getattr(self.hf, "chat_template", None):
            raise ConfigurationError(
                f"The tokenizer at {str(self.path)!r} has no chat template, so chats cannot be rendered "
                "locally. Use the model's instruct/chat variant, or add chat_template.jinja to the "
                "directory.",
                path=str(self.path),
            )
        self.image_placeholder = image_placeholder
        self.keep_image_parts = keep_image_parts
        self.eos_token_ids: tuple[int, ...] = _eos_ids(self.hf, self.path)

    @property
    def pad_token_id(self) -> int:
        """Padding id: the tokenizer's pad token, else its first end-of-turn id."""
        pad = self.hf.pad_token_id
        return int(pad) if pad is not None else self.eos_token_ids[0]

    def __len__(self) -> int:
        return len(self.hf)

    def render(self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool = True) -> list[int]:
        """Token ids of ``messages`` under the chat template (no ids added outside it)."""
        encoded = self.hf.apply_chat_template(
            self._prepare(messages), add_generation_prompt=add_generation_prompt, tokenize=True
        )
        # transformers 5.x returns a BatchEncoding (a dict); 4.x a plain list.
        ids = encoded["input_ids"] if isinstance(encoded, Mapping) else encoded
        return [int(i) for i in ids]

    def render_text(self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool = True) -> str:
        """The chat template's text for ``messages`` (what :meth:`render` tokenises)."""
        return str(
            self.hf.apply_chat_template(
                self._prepare(messages), add_generation_prompt=add_generation_prompt, tokenize=False
            )
        )

    def encode(self, text: str) -> list[int]:
        """Ids of plain text, with no special tokens added (no BOS/EOS)."""
        return [int(i) for i in self.hf.encode(text, add_special_tokens=False)]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids``; special tokens (end of turn, padding) are dropped by default."""
        return str(self.hf.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def _prepare(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if self.keep_image_parts:
            return [dict(m) for m in messages]
        return [self._flatten(m) for m in messages]

    def _flatten(self, message: Mapping[str, Any]) -> dict[str, Any]:
        content = message.get("content")
        if not isinstance(content, list):
            return dict(message)
        pieces: list[str] = []
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text":
                pieces.append(str(part.get("text", "")))
            elif kind in _IMAGE_PART_TYPES:
                pieces.append(self.image_placeholder)
            else:
                raise ConfigurationError(
                    f"Message content part {part!r} has no known type. Parts must be "
                    "{'type': 'text', 'text': ...} or {'type': 'image_url', 'image_url': {'url': ...}}.",
                    part_type=str(kind),
                )
        return {**message, "content": "".join(pieces)}


def _load_tokenizer(path: Path) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:  # pragma: no cover - the train extra is part of the test extras
        raise DependencyMissingError("transformers", extra="train") from exc
    try:
        return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            f"No tokenizer could be loaded from {str(path)!r} ({exc}). The directory needs tokenizer.json "
            "(or vocab + merges) and tokenizer_config.json, as save_pretrained writes them.",
            path=str(path),
        ) from exc


def _eos_ids(tokenizer: Any, path: Path) -> tuple[int, ...]:
    """End-of-turn ids: the tokenizer's EOS plus ``generation_config.json``'s, in that order."""
    found: list[int] = []
    if tokenizer.eos_token_id is not None:
        found.append(int(tokenizer.eos_token_id))
    config = path / "generation_config.json"
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("eos_token_id")
        for i in value if isinstance(value, list) else [value]:
            if i is not None and int(i) not in found:
                found.append(int(i))
    if not found:
        raise ConfigurationError(
            f"The tokenizer at {str(path)!r} defines no end-of-sequence token, so generation could never "
            "stop on its own. Set eos_token in tokenizer_config.json.",
            path=str(path),
        )
    return tuple(found)
