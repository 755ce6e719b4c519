"""Policy over an OpenAI-compatible HTTP endpoint (vLLM, SGLang, any server), token ids in and out.

With a local tokenizer (the served model's directory), :class:`OpenAIBackend` renders the chat
template itself and POSTs the **token ids** to ``/v1/completions`` with vLLM's
``return_token_ids``, ``logprobs: 0`` and ``return_tokens_as_token_ids``; it stores the
returned ``prompt_token_ids``, sampled ``token_ids`` and per-token logprobs verbatim
(``token_exact=True``). No text is ever re-tokenised, so multi-turn rollouts cannot drift
(shared/reference/round2_rollout_trainer.md §1.1). ``text`` is the local decoding of the
sampled ids (cut before a matched stop string), the text the env gets.

vLLM must run with ``--logprobs-mode processed_logprobs``: its default (``raw_logprobs``)
reports the distribution *before* temperature/top-k/top-p, which is not what was sampled.

Fallback: without a tokenizer, or when the endpoint returns no token ids, prompts go to
``/v1/chat/completions``; the response ids are then re-tokenised locally from the text (when a
tokenizer is given) and the completion is marked ``token_exact=False``.

Images: a prompt with an image content part (the AgentOCR history image) is sent to
``/v1/chat/completions`` as an ``image_url`` part, since only the server's processor can expand
an image into the model's vision tokens; the served model must be a vision-language model.
vLLM returns the ids of such a chat too (``return_token_ids``), so the record stays token-exact.
Of envhub's backends only this one accepts images (``accepts_images = True``).

Failures: HTTP 503 (vLLM answers it while paused for a weight update), 429, 500, 502, 504,
timeouts and connection errors are retried with exponential backoff (``Retry-After`` honoured);
after the last try they raise :class:`~envhub.core.errors.PolicyUnavailableError`. Any other 4xx
raises :class:`~envhub.core.errors.PolicyError` carrying the endpoint's own message.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from envhub.core.errors import ConfigurationError, PolicyError, PolicyUnavailableError
from envhub.policy.base import Completion, Prompt, SamplingParams
from envhub.policy.sampling import prompt_seed
from envhub.policy.tokenizer import ChatTokenizer, has_image_part

__all__ = [
    "RETRY_STATUSES",
    "OpenAIBackend",
    "chat_body",
    "completions_body",
    "error_message",
    "parse_chat",
    "parse_completions",
]

_log = logging.getLogger(__name__)

#: Statuses that mean "not now" rather than "never": paused (503), overloaded (429), a proxy
#: or server in trouble (500, 502, 504).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_COMPLETIONS = "/v1/completions"
_CHAT = "/v1/chat/completions"
_TOKEN_PREFIX = "token_id:"


@dataclass(frozen=True)
class _Reply:
    """What one choice of a reply holds, before it becomes a :class:`Completion`."""

    text: str
    prompt_token_ids: list[int] | None
    token_ids: list[int] | None
    logprobs: list[float] | None
    finish_reason: str
    stop_reason: Any


# -- sans-I/O: request bodies and reply parsing ------------------------------------------------


def _sampling_fields(sampling: SamplingParams, seed: int | None, extensions: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "max_tokens": sampling.max_tokens,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
    }
    if sampling.stop:
        body["stop"] = list(sampling.stop)
    if seed is not None:
        body["seed"] = seed
    if extensions and sampling.top_k > 0:
        body["top_k"] = sampling.top_k
    return body


def completions_body(
    model: str, prompt_ids: list[int], sampling: SamplingParams, seed: int | None
) -> dict[str, Any]:
    """The ``/v1/completions`` request for an already-rendered prompt (vLLM extensions on)."""
    return {
        "model": model,
        "prompt": prompt_ids,
        **_sampling_fields(sampling, seed, extensions=True),
        "logprobs": 0,
        "return_token_ids": True,
        "return_tokens_as_token_ids": True,
    }


def chat_body(
    model: str, messages: list[dict[str, Any]], sampling: SamplingParams, seed: int | None, extensions: bool
) -> dict[str, Any]:
    """The ``/v1/chat/completions`` request; ``extensions`` adds vLLM's token-id fields."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        **_sampling_fields(sampling, seed, extensions),
    }
    if extensions:
        body.update(logprobs=True, top_logprobs=0, return_token_ids=True, return_tokens_as_token_ids=True)
    return body


def _first_choice(payload: Any, endpoint: str) -> Mapping[str, Any]:
    choices = payload.get("choices") if isinstance(payload, Mapping) else None
    if not choices or not isinstance(choices[0], Mapping):
        raise PolicyError(
            f"{endpoint} answered without choices: {str(payload)[:300]!r}. "
            "Is it an OpenAI-compatible server?",
            endpoint=endpoint,
        )
    return choices[0]


def _ids_from_names(names: Any) -> list[int] | None:
    """Ids from ``"token_id:<id>"`` names (``return_tokens_as_token_ids``); None if any is not one."""
    if not isinstance(names, list):
        return None
    ids: list[int] = []
    for name in names:
        if not (isinstance(name, str) and name.startswith(_TOKEN_PREFIX)):
            return None
        ids.append(int(name[len(_TOKEN_PREFIX) :]))
    return ids


def _int_list(value: Any) -> list[int] | None:
    return [int(v) for v in value] if isinstance(value, list) else None


def parse_completions(payload: Any, endpoint: str) -> _Reply:
    """Read one ``/v1/completions`` choice: text, ids, the sampled-token logprobs."""
    choice = _first_choice(payload, endpoint)
    block = choice.get("logprobs") or {}
    token_ids = _int_list(choice.get("token_ids")) or _ids_from_names(block.get("tokens"))
    logprobs = block.get("token_logprobs")
    return _Reply(
        text=str(choice.get("text") or ""),
        prompt_token_ids=_int_list(choice.get("prompt_token_ids")),
        token_ids=token_ids,
        logprobs=[float(x) for x in logprobs] if isinstance(logprobs, list) else None,
        finish_reason=str(choice.get("finish_reason") or "stop"),
        stop_reason=choice.get("stop_reason"),
    )


def parse_chat(payload: Any, endpoint: str) -> _Reply:
    """Read one ``/v1/chat/completions`` choice (vLLM puts ``prompt_token_ids`` at the top level)."""
    choice = _first_choice(payload, endpoint)
    message = choice.get("message") or {}
    content = (choice.get("logprobs") or {}).get("content")
    entries = content if isinstance(content, list) else None
    token_ids = _int_list(choice.get("token_ids"))
    if token_ids is None and entries is not None:
        token_ids = _ids_from_names([e.get("token") for e in entries])
    return _Reply(
        text=str(message.get("content") or ""),
        prompt_token_ids=_int_list(payload.get("prompt_token_ids")),
        token_ids=token_ids,
        logprobs=[float(e["logprob"]) for e in entries] if entries is not None else None,
        finish_reason=str(choice.get("finish_reason") or "stop"),
        stop_reason=choice.get("stop_reason"),
    )


def error_message(response: httpx.Response) -> str:
    """The endpoint's own error text: OpenAI's ``error.message``, FastAPI's ``detail``, or the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:500] or response.reason_phrase
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        for key in ("message", "detail", "error"):
            if body.get(key):
                return str(body[key])
    return str(body)[:500]


# -- the driver ---------------------------------------------------------------------------------


class OpenAIBackend:
    """A policy served over OpenAI-compatible HTTP (see the module docstring for the protocol).

    Args:
        base_url: the server root, e.g. ``http://127.0.0.1:8000`` (a trailing ``/v1`` is accepted).
        model: the served model name (vLLM: the ``--model`` value or ``--served-model-name``).
        tokenizer_path: the served model's local directory (or a :class:`ChatTokenizer`); without
            it every prompt goes to chat completions and records are not token-exact.
        api_key: sent as ``Authorization: Bearer``.
        max_concurrency: most requests in flight at once (an ``asyncio.Semaphore``).
        timeout_s: read timeout of one request (a long generation on a busy server takes time).
        connect_timeout_s: connect timeout of one request.
        retries: extra attempts after the first on a retryable failure.
        backoff_s: first backoff; doubles per retry, capped at ``backoff_max_s``, with jitter.
        backoff_max_s: the longest wait between two attempts.
        policy_version: version stamped on completions at request time (settable attribute).
        vllm_extensions: send vLLM's fields (``top_k``, ``return_token_ids``, ...) to chat
            completions; turn off for a strict server that rejects unknown fields.
        transport: an ``httpx.AsyncBaseTransport`` to use instead of the network (tests).

    Raises:
        ConfigurationError: a bad argument (non-http URL, max_concurrency < 1, retries < 0).
    """

    accepts_images = True

    def __init__(
        self,
        base_url: str,
        model: str,
        tokenizer_path: str | Path | ChatTokenizer | None = None,
        api_key: str | None = None,
        *,
        max_concurrency: int = 64,
        timeout_s: float = 300.0,
        connect_timeout_s: float = 10.0,
        retries: int = 5,
        backoff_s: float = 0.5,
        backoff_max_s: float = 10.0,
        policy_version: int = 0,
        vllm_extensions: bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"base_url {base_url!r} must start with http:// or https://, e.g. http://127.0.0.1:8000.",
                base_url=base_url,
            )
        if max_concurrency < 1 or retries < 0 or backoff_s < 0:
            raise ConfigurationError(
                f"Need max_concurrency >= 1, retries >= 0 and backoff_s >= 0; got {max_concurrency}, "
                f"{retries} and {backoff_s}.",
            )
        root = base_url.rstrip("/")
        self.base_url = root[: -len("/v1")] if root.endswith("/v1") else root
        self.model = model
        self.tokenizer: ChatTokenizer | None = (
            tokenizer_path
            if isinstance(tokenizer_path, ChatTokenizer) or tokenizer_path is None
            else ChatTokenizer(tokenizer_path)
        )
        self.policy_version = policy_version
        self.max_concurrency = max_concurrency
        self.retries = retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.vllm_extensions = vllm_extensions
        self.timeout_s = timeout_s
        self._timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._transport = transport
        self._jitter = np.random.default_rng()
        # Set once the completions route answered without token ids: later calls go to chat.
        self._completions_without_ids = False
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[Completion]:
        """Sample one completion per prompt, concurrently (prompt ``i`` seeded ``prompt_seed(seed, i)``).

        Raises:
            PolicyUnavailableError: the endpoint stayed down/paused/slow through every retry.
            PolicyError: the endpoint refused a request (4xx) or answered something unreadable.
        """
        version = self.policy_version  # stamped at request time
        tasks = [
            self._one(prompt, sampling, prompt_seed(sampling.seed, index), version)
            for index, prompt in enumerate(prompts)
        ]
        return list(await asyncio.gather(*tasks))

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- one prompt ---------------------------------------------------------------------------

    async def _one(
        self, prompt: Prompt, sampling: SamplingParams, seed: int | None, version: int
    ) -> Completion:
        started = time.perf_counter()
        images = prompt.token_ids is None and has_image_part(prompt.messages)
        prompt_ids = prompt.token_ids
        if prompt_ids is None and self.tokenizer is not None and not images:
            prompt_ids = self.tokenizer.render(prompt.messages)
        if prompt_ids is not None and not self._completions_without_ids:
            body = completions_body(self.model, list(prompt_ids), sampling, seed)
            reply, attempts = await self._post(_COMPLETIONS, body, parse_completions)
            if reply.token_ids is not None:
                return self._exact(reply, list(prompt_ids), version, started, attempts, "completions")
            _log.warning(
                "%s%s returned no token ids; switching to chat completions (records not token-exact). "
                "Serve with vLLM to keep them exact.",
                self.base_url,
                _COMPLETIONS,
            )
            self._completions_without_ids = True
        body = chat_body(self.model, list(prompt.messages), sampling, seed, self.vllm_extensions)
        reply, attempts = await self._post(_CHAT, body, parse_chat)
        if reply.token_ids is not None and reply.prompt_token_ids is not None:
            return self._exact(reply, reply.prompt_token_ids, version, started, attempts, "chat")
        return self._retokenised(reply, prompt, version, started, attempts)

    def _exact(
        self, reply: _Reply, sent: list[int], version: int, started: float, attempts: int, route: str
    ) -> Completion:
        token_ids = reply.token_ids or []
        if reply.logprobs is not None and len(reply.logprobs) != len(token_ids):
            raise PolicyError(
                f"{self.base_url} returned {len(token_ids)} token ids but {len(reply.logprobs)} logprobs.",
                endpoint=self.base_url,
            )
        return Completion(
            text=self._text(reply, token_ids),
            prompt_token_ids=reply.prompt_token_ids if reply.prompt_token_ids is not None else sent,
            token_ids=token_ids,
            logprobs=reply.logprobs,
            finish_reason=reply.finish_reason,
            policy_version=version,
            token_exact=True,
            latency_s=time.perf_counter() - started,
            extra={"route": route, "attempts": attempts, "stop_reason": reply.stop_reason},
        )

    def _text(self, reply: _Reply, token_ids: list[int]) -> str:
        """The text the env gets: the decoded ids, cut before a matched stop string.

        vLLM's own text can differ from the ids: its incremental detokeniser holds back a
        trailing incomplete UTF-8 sequence. Decoding locally keeps ``text`` a function of the ids
        (as verl-agent does), and matches the in-process backend.
        """
        if self.tokenizer is None:
            return reply.text
        text = self.tokenizer.decode(token_ids)
        stop = reply.stop_reason
        if reply.finish_reason == "stop" and isinstance(stop, str) and stop and stop in text:
            text = text[: text.find(stop)]
        return text

    def _retokenised(
        self, reply: _Reply, prompt: Prompt, version: int, started: float, attempts: int
    ) -> Completion:
        token_ids = self.tokenizer.encode(reply.text) if self.tokenizer is not None else None
        prompt_ids = prompt.token_ids
        if prompt_ids is None and self.tokenizer is not None and not has_image_part(prompt.messages):
            prompt_ids = self.tokenizer.render(prompt.messages)
        logprobs = reply.logprobs
        if token_ids is None or logprobs is None or len(logprobs) != len(token_ids):
            logprobs = None  # the server's tokens are not these tokens: their logprobs do not apply
        return Completion(
            text=reply.text,
            prompt_token_ids=prompt_ids,
            token_ids=token_ids,
            logprobs=logprobs,
            finish_reason=reply.finish_reason,
            policy_version=version,
            token_exact=False,
            latency_s=time.perf_counter() - started,
            extra={"route": "chat", "attempts": attempts, "stop_reason": reply.stop_reason},
        )

    # -- HTTP with retries -----------------------------------------------------------------

    def _session(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        # Pools and semaphores belong to one event loop; a new loop (one per test) gets new ones.
        if self._client is None or self._semaphore is None or self._loop is not loop:
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                timeout=self._timeout,
                headers=self._headers,
                transport=self._transport,
                limits=httpx.Limits(
                    max_connections=self.max_concurrency, max_keepalive_connections=self.max_concurrency
                ),
            )
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        return self._client, self._semaphore

    async def _post(self, path: str, body: dict[str, Any], parse: Any) -> tuple[_Reply, int]:
        """POST with retries; returns the parsed reply and the number of attempts it took."""
        client, semaphore = self._session()
        endpoint = f"{self.base_url}{path}"
        last = ""
        for attempt in range(self.retries + 1):
            retry_after: float | None = None
            try:
                async with semaphore:
                    response = await client.post(path, json=body)
            except httpx.TimeoutException as exc:
                last = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                last = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if response.status_code < 400:
                    try:
                        payload = response.json()
                    except ValueError as exc:
                        raise PolicyError(
                            f"{endpoint} answered with non-JSON: {response.text[:300]!r}", endpoint=endpoint
                        ) from exc
                    return parse(payload, endpoint), attempt + 1
                message = error_message(response)
                if response.status_code not in RETRY_STATUSES:
                    raise PolicyError(
                        f"{endpoint} refused the request (HTTP {response.status_code}): {message}",
                        endpoint=endpoint,
                        status=response.status_code,
                    )
                last = f"HTTP {response.status_code}: {message}"
                retry_after = _retry_after(response)
            if attempt < self.retries:
                wait = self._backoff(attempt) if retry_after is None else min(retry_after, self.backoff_max_s)
                await asyncio.sleep(wait)
        raise PolicyUnavailableError(
            f"{endpoint} did not answer after {self.retries + 1} attempt(s); last: {last}. Check that the "
            "server runs (vLLM answers 503 while paused for a weight update), or raise retries/timeout_s.",
            endpoint=endpoint,
            attempts=self.retries + 1,
            last=last,
        )

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.backoff_max_s, self.backoff_s * (2**attempt))
        # Jitter in [ceiling/2, ceiling]: many rollouts waiting on one paused server spread out.
        return float(ceiling * self._jitter.uniform(0.5, 1.0))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use our own backoff
