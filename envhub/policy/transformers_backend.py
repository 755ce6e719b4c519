"""In-process policy: a transformers causal LM sampled on this machine (CPU default, GPU fallback).

:class:`TransformersBackend` samples token by token with its own loop (a KV cache, left
padding), so it records exactly what it drew: ``token_ids`` are the sampled ids, ending with
the end-of-turn id when the model stopped on its own, and ``logprobs[i]`` is the log
probability of ``token_ids[i]`` under the sampling distribution (temperature, top-k and top-p
applied by :func:`envhub.policy.sampling.processed_logprobs`, the same numbers vLLM reports with
``--logprobs-mode processed_logprobs``).

Concurrent :meth:`~TransformersBackend.generate` calls are batched together (up to
``max_batch`` sequences per forward pass); the model runs in one worker thread
(``asyncio.to_thread``), so the event loop keeps serving envs while it computes.

Seeds: with ``SamplingParams.seed = s``, prompt ``i`` of a call draws from a generator seeded
with ``(s, i)``: one call is reproducible, and identical prompts in one call (a GRPO group)
still get different samples. Without a seed, draws come from the backend's own generator.

Images: this backend reads text only (``accepts_images = False``); a prompt with an image part
raises :class:`~envhub.core.errors.PolicyError`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from envhub.core.errors import ConfigurationError, PolicyError
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.sampling import GREEDY_EPS, processed_logprobs, prompt_seed
from envhub.policy.tokenizer import ChatTokenizer, has_image_part

__all__ = ["TransformersBackend"]

_ENDPOINT = "in-process transformers"


@dataclass
class _Row:
    """One prompt waiting for (or being) sampled."""

    prompt_ids: list[int]
    sampling: SamplingParams
    seed: int | None
    version: int
    started: float
    future: asyncio.Future[Completion]


@dataclass
class _RowState:
    """Per-row sampling state inside one batch."""

    row: _Row
    generator: Any
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str | None = None
    stop_at: int | None = None  # char offset where a stop string begins in the decoded text


class TransformersBackend:
    """A causal LM in this process, behind :class:`~envhub.policy.base.PolicyBackend`.

    Args:
        model: a local model directory, or a loaded ``PreTrainedModel``.
        tokenizer: a :class:`ChatTokenizer` or its directory; default: ``model``'s directory.
        device: torch device the model runs on.
        dtype: parameter dtype (float32 by default, so logprobs are exact).
        max_batch: most sequences sampled together in one forward pass.
        policy_version: version stamped on completions (see :meth:`set_weights`).

    Raises:
        ConfigurationError: no tokenizer can be found, or ``max_batch`` < 1.
    """

    accepts_images = False

    def __init__(
        self,
        model: str | Path | Any,
        tokenizer: ChatTokenizer | str | Path | None = None,
        *,
        device: str = "cpu",
        dtype: Any = None,
        max_batch: int = 32,
        policy_version: int = 0,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        if max_batch < 1:
            raise ConfigurationError(f"max_batch={max_batch} must be at least 1.", max_batch=max_batch)
        dtype = dtype or torch.float32
        if isinstance(model, str | Path):
            path = Path(model)
            if not path.is_dir():
                raise ConfigurationError(
                    f"Model path {str(path)!r} is not a directory. Pass a local Hugging Face model "
                    "directory; `envhub model tiny --out DIR` builds a tiny one.",
                    path=str(path),
                )
            loaded: Any = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, local_files_only=True)
            model = loaded
            tokenizer = tokenizer if tokenizer is not None else path
        if tokenizer is None:
            raise ConfigurationError(
                "TransformersBackend got a model object but no tokenizer: pass tokenizer=ChatTokenizer(DIR) "
                "or the tokenizer's directory."
            )
        self.tokenizer = tokenizer if isinstance(tokenizer, ChatTokenizer) else ChatTokenizer(tokenizer)
        self.model: Any = model.to(device=device, dtype=dtype).eval()
        self.device = torch.device(device)
        self.max_batch = max_batch
        self.policy_version = policy_version
        self._context = int(getattr(self.model.config, "max_position_embeddings", 0) or 0)
        self._eos = set(self.tokenizer.eos_token_ids)
        self._rng = torch.Generator().manual_seed(int(np.random.SeedSequence().generate_state(1)[0]))
        # Serialises forward passes and weight swaps (set_weights may come from another thread).
        self._model_lock = threading.Lock()
        self._pending: list[_Row] = []
        self._wakeup: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._worker_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    # -- the PolicyBackend surface ---------------------------------------------------------

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        """Sample one completion per prompt (see the module docstring for seeds and images).

        Raises:
            PolicyError: an image part, an empty prompt, or a prompt that fills the context.
        """
        if self._closed:
            raise PolicyError("This TransformersBackend was closed; create a new one.", endpoint=_ENDPOINT)
        version = self.policy_version  # stamped at request time, not when the batch runs
        loop = asyncio.get_running_loop()
        rows = [
            _Row(
                prompt_ids=self._prompt_ids(prompt),
                sampling=sampling,
                seed=prompt_seed(sampling.seed, index),
                version=version,
                started=time.perf_counter(),
                future=loop.create_future(),
            )
            for index, prompt in enumerate(prompts)
        ]
        self._pending.extend(rows)
        self._ensure_worker().set()
        return list(await asyncio.gather(*(row.future for row in rows)))

    async def aclose(self) -> None:
        """Stop the batching worker; pending calls fail with PolicyError."""
        self._closed = True
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None
        for row in self._pending:
            if not row.future.done():
                row.future.set_exception(PolicyError("The backend was closed.", endpoint=_ENDPOINT))
        self._pending.clear()

    # -- weights (the trainer's side) ------------------------------------------------------

    def set_weights(self, weights: Mapping[str, Any] | Any, *, version: int | None = None) -> int:
        """Load new weights (a state dict or a model with the same architecture) and bump the version.

        Waits for a running forward pass to finish, so no batch mixes old and new weights.
        Completions requested before the call keep the version they were requested with.

        Args:
            weights: a ``state_dict`` mapping, or an ``nn.Module`` whose state dict is copied.
            version: the new ``policy_version``; default: the current one plus 1.

        Returns:
            The new ``policy_version``.
        """
        state = weights if isinstance(weights, Mapping) else weights.state_dict()
        with self._model_lock:
            self.model.load_state_dict(state, strict=True)
        self.policy_version = self.policy_version + 1 if version is None else version
        return self.policy_version

    # -- internals -------------------------------------------------------------------------

    def _prompt_ids(self, prompt: Prompt) -> list[int]:
        if prompt.token_ids is None and has_image_part(prompt.messages):
            raise PolicyError(
                "TransformersBackend reads text only, and this prompt carries an image part. Serve a "
                "vision-language model with vLLM and use OpenAIBackend, or turn AgentOCR off.",
                endpoint=_ENDPOINT,
            )
        ids = (
            list(prompt.token_ids) if prompt.token_ids is not None else self.tokenizer.render(prompt.messages)
        )
        if not ids:
            raise PolicyError("The prompt renders to no tokens.", endpoint=_ENDPOINT)
        if self._context and len(ids) >= self._context:
            raise PolicyError(
                f"The prompt has {len(ids)} tokens, the model's context is {self._context}. Shorten the "
                "history window (memory) or use a model with a longer context.",
                endpoint=_ENDPOINT,
                prompt_tokens=len(ids),
                context=self._context,
            )
        return ids

    def _ensure_worker(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        # A new event loop (e.g. one per test) needs its own worker: the old one died with its loop.
        if (
            self._wakeup is None
            or self._worker is None
            or self._worker.done()
            or self._worker_loop is not loop
        ):
            self._wakeup = asyncio.Event()
            self._worker = loop.create_task(self._drain(self._wakeup))
            self._worker_loop = loop
        return self._wakeup

    async def _drain(self, wakeup: asyncio.Event) -> None:
        while True:
            await wakeup.wait()
            wakeup.clear()
            while self._pending:
                batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
                try:
                    completions = await asyncio.to_thread(self._sample_locked, batch)
                except Exception as exc:  # surfaced to every caller of the batch, typed
                    error = exc if isinstance(exc, PolicyError) else _as_policy_error(exc)
                    for row in batch:
                        if not row.future.done():
                            row.future.set_exception(error)
                    continue
                for row, completion in zip(batch, completions, strict=True):
                    if not row.future.done():
                        row.future.set_result(completion)

    def _sample_locked(self, batch: list[_Row]) -> list[Completion]:
        import torch

        with self._model_lock, torch.inference_mode():
            return self._sample(batch)

    def _sample(self, batch: list[_Row]) -> list[Completion]:
        import torch

        states = [_RowState(row=row, generator=self._generator(row.seed)) for row in batch]
        width = max(len(row.prompt_ids) for row in batch)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor(
            [[pad] * (width - len(r.prompt_ids)) + r.prompt_ids for r in batch], device=self.device
        )
        mask = torch.tensor(
            [[0] * (width - len(r.prompt_ids)) + [1] * len(r.prompt_ids) for r in batch], device=self.device
        )
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        budget = max(self._budget(row) for row in batch)
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True)
        for _ in range(budget):
            logits = out.logits[:, -1, :].float()
            chosen = [self._step(state, logits[i]) for i, state in enumerate(states)]
            if all(state.finish_reason is not None for state in states):
                break
            mask = torch.cat([mask, mask.new_ones((len(batch), 1))], dim=-1)
            positions = positions[:, -1:] + 1
            out = self.model(
                input_ids=torch.tensor(chosen, device=self.device).unsqueeze(-1),
                attention_mask=mask,
                position_ids=positions,
                past_key_values=out.past_key_values,
                use_cache=True,
            )
        return [self._completion(state) for state in states]

    def _budget(self, row: _Row) -> int:
        room = self._context - len(row.prompt_ids) if self._context else row.sampling.max_tokens
        return max(0, min(row.sampling.max_tokens, room))

    def _step(self, state: _RowState, logits: Any) -> int:
        """Sample one token for a live row (finished rows feed padding and record nothing)."""
        import torch

        if state.finish_reason is not None:
            return self.tokenizer.pad_token_id
        params = state.row.sampling
        # Sampled on the CPU: a CPU generator gives the same draws whatever the model's device.
        logprobs = processed_logprobs(logits, params.temperature, params.top_k, params.top_p).cpu()
        if params.temperature < GREEDY_EPS:
            token = int(torch.argmax(logprobs))
        else:
            token = int(torch.multinomial(logprobs.exp(), 1, generator=state.generator))
        state.token_ids.append(token)
        state.logprobs.append(float(logprobs[token]))
        if token in self._eos or (params.stop and self._hit_stop(state, params.stop)):
            state.finish_reason = "stop"
        elif len(state.token_ids) >= self._budget(state.row):
            state.finish_reason = "length"
        return token

    def _hit_stop(self, state: _RowState, stops: Sequence[str]) -> bool:
        # vLLM semantics: the ids keep the token that completed the stop string; the text ends
        # before the stop string.
        text = self.tokenizer.decode(state.token_ids)
        hits = [at for at in (text.find(s) for s in stops if s) if at != -1]
        if hits:
            state.stop_at = min(hits)
        return bool(hits)

    def _completion(self, state: _RowState) -> Completion:
        text = self.tokenizer.decode(state.token_ids)
        if state.stop_at is not None:
            text = text[: state.stop_at]
        return Completion(
            text=text,
            prompt_token_ids=list(state.row.prompt_ids),
            token_ids=state.token_ids,
            logprobs=state.logprobs,
            finish_reason=state.finish_reason or "length",
            policy_version=state.row.version,
            token_exact=True,
            latency_s=time.perf_counter() - state.row.started,
        )

    def _generator(self, seed: int | None) -> Any:
        import torch

        return self._rng if seed is None else torch.Generator().manual_seed(seed)


def _as_policy_error(exc: Exception) -> PolicyError:
    error = PolicyError(
        f"The in-process model failed: {type(exc).__name__}: {exc}", endpoint=_ENDPOINT, cause=repr(exc)
    )
    error.__cause__ = exc
    return error
