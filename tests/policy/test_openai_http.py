"""OpenAIBackend against a real OpenAI-compatible server on loopback (uvicorn), scripted per test.

The server below is a real HTTP server whose answers each test sets: statuses to return before
succeeding, whether replies carry token ids, a delay. It checks the backend's wire behaviour:
request bodies, retries on 503, typed errors, the chat-completions fallback, concurrency.
The same backend against a real vLLM is in test_vllm.py.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from envhub.core.errors import ConfigurationError, PolicyError, PolicyUnavailableError
from envhub.policy.base import PolicyBackend, Prompt, SamplingParams
from envhub.policy.openai_http import OpenAIBackend
from envhub.policy.sampling import prompt_seed
from envhub.policy.tokenizer import ChatTokenizer

PROMPT = Prompt(messages=[{"role": "user", "content": "You see a fridge 1."}])
SAMPLED = [41, 42, 43]  # "G", "H", "I" in the tiny tokenizer
CHAT_TEXT = "go to fridge 1"


@dataclass
class Script:
    """What the server answers; tests edit it, the server reads it."""

    statuses: list[int] = field(default_factory=list)  # answered (in order) before succeeding
    token_ids: bool = True  # completions replies carry token_ids and prompt_token_ids
    names_only: bool = False  # ...or only "token_id:<id>" names in logprobs
    sampled: list[int] = field(default_factory=lambda: list(SAMPLED))
    logprobs: list[float] = field(default_factory=lambda: [-0.5, -1.5, -2.5])
    delay_s: float = 0.0
    retry_after: str | None = None
    stop_reason: str | None = None  # set: the completion ends with finish_reason "stop" on it
    hits: dict[str, int] = field(default_factory=dict)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0


def _app(script: Script) -> FastAPI:
    app = FastAPI()

    async def enter(route: str, request: Request) -> tuple[dict[str, Any], JSONResponse | None]:
        body = await request.json()
        script.hits[route] = script.hits.get(route, 0) + 1
        script.bodies.append({"route": route, **body})
        script.in_flight += 1
        script.max_in_flight = max(script.max_in_flight, script.in_flight)
        try:
            await asyncio.sleep(script.delay_s)
        finally:
            script.in_flight -= 1
        if script.statuses:
            status = script.statuses.pop(0)
            headers = {"Retry-After": script.retry_after} if script.retry_after else None
            return body, JSONResponse(
                {"error": {"message": f"scripted failure {status}", "code": status}},
                status_code=status,
                headers=headers,
            )
        return body, None

    @app.post("/v1/completions")
    async def completions(request: Request) -> Any:
        body, failure = await enter("completions", request)
        if failure is not None:
            return failure
        names = [f"token_id:{i}" for i in script.sampled]
        choice: dict[str, Any] = {
            "index": 0,
            "text": "server text",
            "finish_reason": "stop" if script.stop_reason else "length",
            "stop_reason": script.stop_reason,
            "logprobs": {"tokens": names, "token_logprobs": script.logprobs, "top_logprobs": None},
        }
        if script.token_ids and not script.names_only:
            choice.update(token_ids=script.sampled, prompt_token_ids=body["prompt"])
        elif not script.token_ids:
            choice["logprobs"]["tokens"] = ["a", "b", "c"]  # a server without the extensions
        return {"id": "cmpl-1", "object": "text_completion", "choices": [choice]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        _, failure = await enter("chat", request)
        if failure is not None:
            return failure
        return {
            "id": "chat-1",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": CHAT_TEXT},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
        }

    return app


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[Script]]]:
    """A real uvicorn server on a free loopback port; yields its URL and a slot for the script."""
    slot = [Script()]

    class Proxy(Script):  # the app reads the current test's script through the slot
        def __getattribute__(self, name: str) -> Any:
            return getattr(slot[0], name)

        def __setattr__(self, name: str, value: Any) -> None:
            setattr(slot[0], name, value)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    uv = uvicorn.Server(uvicorn.Config(_app(Proxy()), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: asyncio.run(uv.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not uv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the test server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", slot
    finally:
        uv.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture
def script(server: tuple[str, list[Script]]) -> Script:
    server[1][0] = Script()
    return server[1][0]


@pytest.fixture
def url(server: tuple[str, list[Script]]) -> str:
    return server[0]


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir: Path) -> ChatTokenizer:
    return ChatTokenizer(tiny_model_dir)


@pytest.fixture
async def backend(url: str, tokenizer: ChatTokenizer) -> AsyncIterator[OpenAIBackend]:
    backend = OpenAIBackend(url, "tiny", tokenizer, retries=3, backoff_s=0.01, backoff_max_s=0.05)
    yield backend
    await backend.aclose()


def test_it_implements_the_policy_backend_protocol_and_takes_images() -> None:
    backend = OpenAIBackend("http://127.0.0.1:1", "m")
    assert isinstance(backend, PolicyBackend) and backend.accepts_images


async def test_token_ids_are_sent_and_the_reply_is_stored_verbatim(
    backend: OpenAIBackend, script: Script, tokenizer: ChatTokenizer
) -> None:
    sampling = SamplingParams(temperature=0.7, top_p=0.9, top_k=20, max_tokens=3, seed=9, stop=("</action>",))
    [completion] = await backend.generate([PROMPT], sampling)
    [body] = script.bodies
    assert body["route"] == "completions"
    assert body["prompt"] == tokenizer.render(PROMPT.messages)
    assert body["logprobs"] == 0 and body["return_token_ids"] and body["return_tokens_as_token_ids"]
    assert (body["temperature"], body["top_p"], body["top_k"], body["max_tokens"]) == (0.7, 0.9, 20, 3)
    assert body["seed"] == prompt_seed(9, 0) and body["stop"] == ["</action>"]
    assert completion.token_exact and completion.token_ids == SAMPLED
    assert completion.prompt_token_ids == body["prompt"]
    assert completion.logprobs == [-0.5, -1.5, -2.5]
    # The text is the local decoding of the sampled ids (vLLM's own text may hold back bytes).
    assert (completion.text, completion.finish_reason) == (tokenizer.decode(SAMPLED), "length")
    assert completion.text == "GHI"


async def test_text_is_cut_before_the_stop_string_the_server_matched(
    backend: OpenAIBackend, script: Script
) -> None:
    script.stop_reason = "HI"
    [completion] = await backend.generate([PROMPT], SamplingParams(stop=("HI",)))
    assert completion.finish_reason == "stop" and completion.text == "G"
    assert completion.token_ids == SAMPLED  # the ids keep the tokens that made the stop string


async def test_default_top_k_is_not_sent(backend: OpenAIBackend, script: Script) -> None:
    await backend.generate([PROMPT], SamplingParams())
    assert "top_k" not in script.bodies[0] and "seed" not in script.bodies[0]


async def test_token_id_names_are_parsed_when_the_ids_field_is_missing(
    backend: OpenAIBackend, script: Script
) -> None:
    script.names_only = True
    [completion] = await backend.generate([PROMPT], SamplingParams())
    assert completion.token_exact and completion.token_ids == SAMPLED
    assert completion.prompt_token_ids == script.bodies[0]["prompt"]  # the ids that were sent


async def test_503_is_retried_until_the_server_answers(backend: OpenAIBackend, script: Script) -> None:
    script.statuses = [503, 503]
    [completion] = await backend.generate([PROMPT], SamplingParams())
    assert script.hits["completions"] == 3
    assert completion.token_ids == SAMPLED and completion.extra["attempts"] == 3


async def test_overload_and_gateway_statuses_are_retried(url: str, script: Script) -> None:
    script.statuses = [502, 429, 500, 504]
    backend = OpenAIBackend(url, "tiny", retries=4, backoff_s=0.01)
    [completion] = await backend.generate([Prompt(messages=[], token_ids=[1])], SamplingParams())
    await backend.aclose()
    assert script.hits["completions"] == 5 and completion.extra["attempts"] == 5


async def test_after_the_last_try_the_error_is_retryable_unavailable(url: str, script: Script) -> None:
    script.statuses = [503] * 10
    backend = OpenAIBackend(url, "tiny", retries=2, backoff_s=0.01)
    with pytest.raises(PolicyUnavailableError, match="scripted failure 503") as caught:
        await backend.generate([Prompt(messages=[], token_ids=[1, 2, 3])], SamplingParams())
    await backend.aclose()
    assert script.hits["completions"] == 3
    assert caught.value.retryable and caught.value.detail["attempts"] == 3


async def test_retry_after_is_honoured(url: str, script: Script) -> None:
    script.statuses, script.retry_after = [503], "0.3"
    backend = OpenAIBackend(url, "tiny", retries=1, backoff_s=0.0)
    started = time.monotonic()
    await backend.generate([Prompt(messages=[], token_ids=[1])], SamplingParams())
    await backend.aclose()
    assert time.monotonic() - started >= 0.3


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_4xx_is_a_terminal_error_with_the_endpoints_message(
    backend: OpenAIBackend, script: Script, status: int
) -> None:
    script.statuses = [status]
    with pytest.raises(PolicyError, match=f"HTTP {status}.*scripted failure {status}") as caught:
        await backend.generate([PROMPT], SamplingParams())
    assert not isinstance(caught.value, PolicyUnavailableError) and not caught.value.retryable
    assert script.hits["completions"] == 1  # never retried


async def test_without_token_ids_it_falls_back_to_chat_and_marks_records_inexact(
    backend: OpenAIBackend, script: Script, tokenizer: ChatTokenizer
) -> None:
    script.token_ids = False
    [first] = await backend.generate([PROMPT], SamplingParams())
    [second] = await backend.generate([PROMPT], SamplingParams())
    assert script.hits == {"completions": 1, "chat": 2}  # it remembers the endpoint has no ids
    for completion in (first, second):
        assert not completion.token_exact
        assert completion.text == CHAT_TEXT
        assert completion.token_ids == tokenizer.encode(CHAT_TEXT)  # re-tokenised locally
        assert completion.prompt_token_ids == tokenizer.render(PROMPT.messages)
        assert completion.logprobs is None  # the server's logprobs belong to other tokens
    assert script.bodies[1]["messages"] == PROMPT.messages


async def test_without_a_tokenizer_prompts_go_to_chat_completions(url: str, script: Script) -> None:
    backend = OpenAIBackend(url + "/v1", "tiny")  # a trailing /v1 is accepted
    [completion] = await backend.generate([PROMPT], SamplingParams(max_tokens=5))
    await backend.aclose()
    assert script.hits == {"chat": 1}
    assert script.bodies[0]["return_token_ids"] is True  # asks for ids in case it is vLLM
    assert not completion.token_exact and completion.token_ids is None and completion.text == CHAT_TEXT


async def test_strict_servers_get_no_vllm_fields(url: str, script: Script) -> None:
    backend = OpenAIBackend(url, "tiny", vllm_extensions=False)
    await backend.generate([PROMPT], SamplingParams(top_k=5))
    await backend.aclose()
    assert not {"top_k", "return_token_ids", "logprobs"} & set(script.bodies[0])


async def test_image_prompts_go_to_chat_with_the_image_part(backend: OpenAIBackend, script: Script) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    messages = [{"role": "user", "content": [image, {"type": "text", "text": "next?"}]}]
    [completion] = await backend.generate([Prompt(messages=messages)], SamplingParams())
    assert script.hits == {"chat": 1}
    assert script.bodies[0]["messages"][0]["content"][0] == image
    assert not completion.token_exact  # this server returns no ids; vLLM would


async def test_a_refused_connection_becomes_unavailable_after_retries() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        backend = OpenAIBackend(f"http://127.0.0.1:{port}", "tiny", retries=2, backoff_s=0.01)
        with pytest.raises(PolicyUnavailableError, match="connection failed"):
            await backend.generate([Prompt(messages=[], token_ids=[1])], SamplingParams())
        await backend.aclose()


async def test_a_slow_server_times_out_into_unavailable(url: str, script: Script) -> None:
    script.delay_s = 2.0
    backend = OpenAIBackend(url, "tiny", timeout_s=0.2, retries=1, backoff_s=0.01)
    with pytest.raises(PolicyUnavailableError, match="timed out"):
        await backend.generate([Prompt(messages=[], token_ids=[1])], SamplingParams())
    await backend.aclose()


async def test_no_more_than_max_concurrency_requests_are_in_flight(url: str, script: Script) -> None:
    script.delay_s = 0.1
    backend = OpenAIBackend(url, "tiny", max_concurrency=3)
    completions = await backend.generate(
        [Prompt(messages=[], token_ids=[i]) for i in range(10)], SamplingParams()
    )
    await backend.aclose()
    assert len(completions) == 10 and script.max_in_flight == 3
    assert [c.prompt_token_ids for c in completions] == [[i] for i in range(10)]  # order kept


async def test_each_prompt_of_a_seeded_call_gets_its_own_seed(backend: OpenAIBackend, script: Script) -> None:
    await backend.generate([PROMPT] * 4, SamplingParams(seed=3))
    assert sorted(b["seed"] for b in script.bodies) == sorted(prompt_seed(3, i) for i in range(4))


async def test_policy_version_is_stamped_when_the_request_is_made(
    backend: OpenAIBackend, script: Script
) -> None:
    script.delay_s = 0.3
    backend.policy_version = 4
    pending = asyncio.ensure_future(backend.generate([PROMPT], SamplingParams()))
    await asyncio.sleep(0.05)
    backend.policy_version = 5  # a weight sync lands while the request is in flight
    [completion] = await pending
    assert completion.policy_version == 4
    [later] = await backend.generate([PROMPT], SamplingParams())
    assert later.policy_version == 5


async def test_logprobs_that_do_not_match_the_ids_are_refused(url: str, script: Script) -> None:
    script.sampled = [41, 42]  # two ids, three logprobs
    backend = OpenAIBackend(url, "tiny")
    with pytest.raises(PolicyError, match="2 token ids but 3 logprobs"):
        await backend.generate([Prompt(messages=[], token_ids=[1])], SamplingParams())
    await backend.aclose()


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"base_url": "127.0.0.1:8000"}, "http://"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"retries": -1}, "retries"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], needle: str) -> None:
    arguments: dict[str, Any] = {"base_url": "http://127.0.0.1:8000", "model": "m", **kwargs}
    with pytest.raises(ConfigurationError, match=needle):
        OpenAIBackend(**arguments)
