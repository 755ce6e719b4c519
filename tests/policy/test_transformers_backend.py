"""TransformersBackend: the tiny model sampled in-process, recorded token-exact with sampling logprobs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from envhub.core.errors import ConfigurationError, PolicyError
from envhub.policy.base import PolicyBackend, Prompt, SamplingParams
from envhub.policy.tokenizer import ChatTokenizer
from envhub.policy.transformers_backend import TransformersBackend

PROMPTS = [
    Prompt(messages=[{"role": "user", "content": "You see a cabinet 1. Your task is to: find an apple."}]),
    Prompt(messages=[{"role": "user", "content": "stats[0:512]"}]),
    Prompt(
        messages=[{"role": "system", "content": "Push the box."}, {"role": "user", "content": "# _ P X O #"}]
    ),
]


@pytest.fixture
async def backend(tiny_model_dir: Path) -> AsyncIterator[TransformersBackend]:
    backend = TransformersBackend(tiny_model_dir, max_batch=8)
    yield backend
    await backend.aclose()


def test_it_implements_the_policy_backend_protocol(tiny_model_dir: Path) -> None:
    backend = TransformersBackend(tiny_model_dir)
    assert isinstance(backend, PolicyBackend)
    assert backend.accepts_images is False


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingParams(temperature=1.0, max_tokens=20, seed=1),
        SamplingParams(temperature=0.6, max_tokens=20, seed=2),
        SamplingParams(temperature=1.4, top_k=30, top_p=0.9, max_tokens=20, seed=3),
    ],
    ids=["T1", "T0.6", "T1.4-topk-topp"],
)
async def test_recorded_ids_decode_to_the_text_and_logprobs_match_a_recompute(
    backend: TransformersBackend, recompute_logprobs: Callable[..., list[float]], sampling: SamplingParams
) -> None:
    completions = await backend.generate(PROMPTS, sampling)
    assert len(completions) == len(PROMPTS)
    for prompt, completion in zip(PROMPTS, completions, strict=True):
        assert completion.token_exact
        assert completion.prompt_token_ids == backend.tokenizer.render(prompt.messages)
        assert completion.token_ids and len(completion.logprobs or []) == len(completion.token_ids)
        assert backend.tokenizer.decode(completion.token_ids) == completion.text
        expected = recompute_logprobs(
            completion.prompt_token_ids,
            completion.token_ids,
            temperature=sampling.temperature,
            top_k=sampling.top_k,
            top_p=sampling.top_p,
        )
        assert max(abs(a - b) for a, b in zip(expected, completion.logprobs or [], strict=True)) < 1e-3


async def test_logprobs_are_under_the_tempered_distribution_not_the_raw_one(
    backend: TransformersBackend, recompute_logprobs: Callable[..., list[float]]
) -> None:
    [completion] = await backend.generate(PROMPTS[:1], SamplingParams(temperature=0.5, max_tokens=16, seed=4))
    assert completion.token_ids and completion.prompt_token_ids and completion.logprobs
    raw = recompute_logprobs(completion.prompt_token_ids, completion.token_ids, temperature=1.0)
    assert max(abs(a - b) for a, b in zip(raw, completion.logprobs, strict=True)) > 0.1


async def test_max_tokens_ends_with_finish_reason_length(backend: TransformersBackend) -> None:
    completions = await backend.generate(PROMPTS, SamplingParams(max_tokens=7, seed=0))
    assert all(c.finish_reason == "length" and len(c.token_ids or []) == 7 for c in completions)


async def test_rows_of_one_batch_keep_their_own_max_tokens(backend: TransformersBackend) -> None:
    short, long = await asyncio.gather(
        backend.generate(PROMPTS[:1], SamplingParams(max_tokens=3, seed=0)),
        backend.generate(PROMPTS[1:2], SamplingParams(max_tokens=11, seed=0)),
    )
    assert len(short[0].token_ids or []) == 3 and len(long[0].token_ids or []) == 11


async def test_sampling_the_end_of_turn_token_stops_with_finish_reason_stop(tiny_model_dir: Path) -> None:
    tokenizer = ChatTokenizer(tiny_model_dir)
    eos = tokenizer.eos_token_ids[0]
    prompt_ids = tokenizer.render(PROMPTS[0].messages)
    # Train a copy to answer this prompt with <|im_end|> right away: the trainer's path
    # (new weights through set_weights), and a model that really stops on its own.
    trained = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    optimizer = torch.optim.Adam(trained.parameters(), lr=1e-2)
    for _ in range(100):
        logprobs = torch.log_softmax(trained(torch.tensor([prompt_ids])).logits[0, -1], dim=-1)
        if logprobs[eos] > -0.01:
            break
        optimizer.zero_grad()
        (-logprobs[eos]).backward()
        optimizer.step()
    backend = TransformersBackend(tiny_model_dir)
    try:
        backend.set_weights(trained)
        [completion] = await backend.generate(PROMPTS[:1], SamplingParams(temperature=0.0, max_tokens=10))
    finally:
        await backend.aclose()
    assert completion.finish_reason == "stop"
    assert completion.token_ids == [eos]  # the end-of-turn id is recorded, with its logprob
    assert completion.logprobs is not None and completion.logprobs[0] > -0.01
    assert completion.text == ""


async def test_a_stop_string_ends_generation_and_is_cut_from_the_text(backend: TransformersBackend) -> None:
    [free] = await backend.generate(PROMPTS[:1], SamplingParams(max_tokens=30, seed=5))
    stop = free.text[8:10]  # a string the seeded sample is known to produce
    assert stop.strip()
    [cut] = await backend.generate(PROMPTS[:1], SamplingParams(max_tokens=30, seed=5, stop=(stop,)))
    assert cut.finish_reason == "stop"
    assert cut.text == free.text[: free.text.find(stop)]
    assert cut.token_ids == free.token_ids[: len(cut.token_ids or [])]  # the ids keep the stop token
    assert stop in backend.tokenizer.decode(cut.token_ids or [])


async def test_seeded_sampling_is_reproducible_and_unseeded_is_not(backend: TransformersBackend) -> None:
    seeded = SamplingParams(max_tokens=16, seed=11)
    first = await backend.generate(PROMPTS, seeded)
    again = await backend.generate(PROMPTS, seeded)
    assert [c.token_ids for c in first] == [c.token_ids for c in again]
    unseeded = [await backend.generate(PROMPTS[:1], SamplingParams(max_tokens=16)) for _ in range(3)]
    assert len({tuple(c[0].token_ids or []) for c in unseeded}) > 1


async def test_identical_prompts_in_one_seeded_call_get_different_samples(
    backend: TransformersBackend,
) -> None:
    group = await backend.generate([PROMPTS[0]] * 4, SamplingParams(max_tokens=16, seed=11))
    assert len({tuple(c.token_ids or []) for c in group}) == 4


async def test_greedy_decoding_is_deterministic_without_a_seed(backend: TransformersBackend) -> None:
    greedy = SamplingParams(temperature=0.0, max_tokens=12)
    first = await backend.generate(PROMPTS, greedy)
    second = await backend.generate(PROMPTS, greedy)
    assert [c.token_ids for c in first] == [c.token_ids for c in second]


async def test_concurrent_calls_are_batched_and_each_gets_its_own_answer(
    tiny_model_dir: Path, recompute_logprobs: Callable[..., list[float]]
) -> None:
    backend = TransformersBackend(tiny_model_dir, max_batch=4)
    sampling = SamplingParams(temperature=0.8, max_tokens=8, seed=21)
    try:
        together = await asyncio.gather(*(backend.generate([p], sampling) for p in PROMPTS * 3))
        alone = [await backend.generate([p], sampling) for p in PROMPTS * 3]
    finally:
        await backend.aclose()
    for (batched,), (single,) in zip(together, alone, strict=True):
        assert batched.token_ids == single.token_ids  # left padding does not change a row's sample
        assert batched.prompt_token_ids and batched.token_ids and batched.logprobs
        expected = recompute_logprobs(batched.prompt_token_ids, batched.token_ids, temperature=0.8)
        assert max(abs(a - b) for a, b in zip(expected, batched.logprobs, strict=True)) < 1e-3


async def test_prompt_token_ids_are_sent_as_given(backend: TransformersBackend) -> None:
    ids = backend.tokenizer.render(PROMPTS[1].messages) + backend.tokenizer.encode("extra")
    [completion] = await backend.generate(
        [Prompt(messages=PROMPTS[1].messages, token_ids=ids)], SamplingParams(max_tokens=4, seed=0)
    )
    assert completion.prompt_token_ids == ids


async def test_the_event_loop_keeps_running_while_the_model_computes(backend: TransformersBackend) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    ticker = asyncio.create_task(tick())
    await backend.generate(PROMPTS * 4, SamplingParams(max_tokens=48, seed=0))
    ticker.cancel()
    assert ticks > 5


async def test_set_weights_changes_samples_and_bumps_the_version(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    from envhub.policy.tiny import build_tiny_model

    other = AutoModelForCausalLM.from_pretrained(build_tiny_model(tmp_path, seed=1), dtype=torch.float32)
    backend = TransformersBackend(tiny_model_dir)
    greedy = SamplingParams(temperature=0.0, max_tokens=12)
    try:
        before = await backend.generate(PROMPTS, greedy)
        assert backend.set_weights(other) == 1
        after = await backend.generate(PROMPTS, greedy)
        assert backend.set_weights(other.state_dict(), version=7) == 7
    finally:
        await backend.aclose()
    assert {c.policy_version for c in before} == {0} and {c.policy_version for c in after} == {1}
    assert [c.token_ids for c in before] != [c.token_ids for c in after]


async def test_policy_version_is_stamped_when_the_request_is_made(backend: TransformersBackend) -> None:
    pending = asyncio.ensure_future(backend.generate(PROMPTS, SamplingParams(max_tokens=32, seed=0)))
    await asyncio.sleep(0)  # the request is registered
    backend.policy_version = 5
    assert {c.policy_version for c in await pending} == {0}


async def test_image_prompts_are_refused_with_a_way_out(backend: TransformersBackend) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    with pytest.raises(PolicyError, match="OpenAIBackend"):
        await backend.generate([Prompt(messages=[{"role": "user", "content": [image]}])], SamplingParams())


async def test_a_prompt_longer_than_the_context_is_refused(
    backend: TransformersBackend, tiny_model_dir: Path
) -> None:
    context = json.loads((tiny_model_dir / "config.json").read_text())["max_position_embeddings"]
    with pytest.raises(PolicyError, match=f"context is {context}") as caught:
        await backend.generate([Prompt(messages=[], token_ids=[5] * context)], SamplingParams())
    assert caught.value.retryable is False


async def test_a_closed_backend_refuses_calls(tiny_model_dir: Path) -> None:
    backend = TransformersBackend(tiny_model_dir)
    await backend.aclose()
    with pytest.raises(PolicyError, match="closed"):
        await backend.generate(PROMPTS, SamplingParams())


def test_a_model_object_without_tokenizer_is_refused(tiny_model_dir: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    with pytest.raises(ConfigurationError, match="tokenizer"):
        TransformersBackend(model)
