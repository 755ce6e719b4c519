"""User simulators: the rule-based user, the scripted user, and the LLM user against a real
OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request

from envhub.core.errors import ConfigurationError, UserSimulatorError
from envhub.envs.tau.data import Domain, TauTask
from envhub.envs.tau.env import TauRetailEnv
from envhub.envs.tau.users import LLMUser, RuleBasedUser, ScriptedUser, extract_facts, is_stop, make_user

TASK = TauTask(
    task_id="test-0",
    user_id="yusuf_rossi_9620",
    instruction=(
        "You are Yusuf Rossi in 19122. You received your order #W2378156 and wish to exchange the keyboard. "
        "Your email is yusuf.rossi@example.com. You want to pay with credit_card_9513926."
    ),
    actions=(),
    outputs=(),
)


def test_facts_are_extracted_from_the_instruction() -> None:
    facts = extract_facts(TASK.instruction)
    assert (facts.name, facts.zip, facts.email) == ("Yusuf Rossi", "19122", "yusuf.rossi@example.com")
    assert facts.order_ids == ("#W2378156",)
    assert facts.payment_ids == ("credit_card_9513926",)
    assert facts.goal.startswith("I received my order")
    assert not facts.refuses


def test_airline_facts_find_user_and_reservation_ids_but_not_flight_numbers() -> None:
    facts = extract_facts("Your user id is mia_li_3668. Cancel reservation ZFA04Y, not flight HAT005.")
    assert facts.user_id == "mia_li_3668"
    assert facts.reservation_ids == ("ZFA04Y",)


def test_rule_based_user_reveals_asked_facts_confirms_and_stops() -> None:
    user = RuleBasedUser()
    assert user.reset(TASK).startswith("Hi! I received my order #W2378156")
    assert "yusuf.rossi@example.com" in user.step("Could you share your email address?")
    assert user.step("What is your name and zip code?") == "My name is Yusuf Rossi and my zip code is 19122."
    assert "#W2378156" in user.step("What is the order id?")
    assert user.step("I will exchange the item. Do you want me to proceed (yes/no)?") == "yes"
    assert is_stop(user.step("Done! Is there anything else I can help you with?"))


def test_rule_based_user_refuses_when_the_instruction_says_so() -> None:
    task = TauTask(
        "test-1", "u", "You are Ann Lee in 12345. You do not want to proceed with any change.", (), ()
    )
    user = RuleBasedUser()
    user.reset(task)
    assert user.step("Shall I cancel it (yes/no)?") == "No, I do not want to proceed."


def test_rule_based_user_says_it_does_not_know_missing_facts() -> None:
    user = RuleBasedUser()
    user.reset(TauTask("test-2", "u", "You are Ann Lee in 12345. You want a refund.", (), ()))
    assert user.step("What is your email?") == "I don't remember my email."


def test_rule_based_user_gives_up_after_max_turns() -> None:
    user = RuleBasedUser(max_turns=3)
    user.reset(TASK)
    replies = [user.step("hmm") for _ in range(3)]
    assert not is_stop(replies[0])
    assert is_stop(replies[-1])


def test_scripted_user_replays_then_stops() -> None:
    user = ScriptedUser("hello", ["a", "b"])
    assert user.reset(TASK) == "hello"
    assert [user.step("x") for _ in range(3)] == ["a", "b", "###STOP###"]


def test_make_user_rejects_unknown_kinds_and_llm_without_endpoint() -> None:
    with pytest.raises(ConfigurationError, match="Unknown user simulator"):
        make_user("robot")
    with pytest.raises(ConfigurationError, match="user_base_url"):
        make_user("llm")
    with pytest.raises(ConfigurationError, match="reset"):
        make_user(42)  # type: ignore[arg-type]


# -- the LLM user over real HTTP -------------------------------------------------------------


def _completion_app(replies: list[str], seen: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        body = await request.json()
        seen.append(body)
        content = replies.pop(0) if replies else "###STOP###"
        return {
            "id": "cmpl-1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
        }

    return app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def completion_server() -> Iterator[tuple[str, list[str], list[dict[str, Any]]]]:
    replies: list[str] = []
    seen: list[dict[str, Any]] = []
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(_completion_app(replies, seen), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the completion server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1", replies, seen
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_llm_user_talks_to_an_openai_compatible_server(
    completion_server: tuple[str, list[str], list[dict[str, Any]]],
) -> None:
    url, replies, seen = completion_server
    replies.extend(["I want to exchange my keyboard.", "yes"])
    user = LLMUser(url, "tiny-user", temperature=0.5)
    try:
        assert user.reset(TASK) == "I want to exchange my keyboard."
        assert user.step("Shall I go ahead (yes/no)?") == "yes"
    finally:
        user.close()
    first, second = seen
    assert first["model"] == "tiny-user" and first["temperature"] == 0.5
    assert first["messages"][0]["role"] == "system" and TASK.instruction in first["messages"][0]["content"]
    assert first["messages"][1] == {"role": "user", "content": "Hi! How can I help you today?"}
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": "I want to exchange my keyboard."},
        {"role": "user", "content": "Shall I go ahead (yes/no)?"},
    ]


def test_env_with_llm_user_ends_on_its_stop_token(
    retail: Domain, completion_server: tuple[str, list[str], list[dict[str, Any]]]
) -> None:
    url, replies, _ = completion_server
    replies.extend(["Hello, I need help.", "###STOP###"])
    env = TauRetailEnv(user="llm", user_base_url=url, user_model="tiny-user")
    try:
        obs, _ = env.reset(options={"task_id": "test-57"})  # no gold actions, no outputs
        assert obs == "Hello, I need help."
        obs, reward, terminated, truncated, info = env.step("How can I help?")
    finally:
        env.close()
    assert (obs, reward, terminated, truncated) == ("###STOP###", 1.0, True, False)
    assert info["reward_info"]["db_match"]


def test_env_ends_the_episode_with_a_reason_when_the_llm_user_fails(
    completion_server: tuple[str, list[str], list[dict[str, Any]]],
) -> None:
    url, replies, _ = completion_server
    replies.append("Hello, I need help.")
    env = TauRetailEnv(user="llm", user_base_url=url, user_model="tiny-user")
    env.reset(options={"task_id": "test-57"})
    # Point the simulator at a port nobody listens on: the next turn is a transport error.
    assert isinstance(env._user, LLMUser)
    env._user.url = f"http://127.0.0.1:{_free_port()}/v1/chat/completions"
    obs, reward, terminated, _, info = env.step("How can I help?")
    env.close()
    assert (reward, terminated) == (0.0, True)
    assert "ConnectError" in info["user_error"]
    assert "reward_info" not in info


def test_llm_user_raises_a_typed_error_on_a_non_completion_reply() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"nope": 1}))
    user = LLMUser("http://llm.invalid/v1", "m", transport=transport)
    with pytest.raises(UserSimulatorError, match="not a chat completion"):
        user.reset(TASK)
    http_error = httpx.MockTransport(lambda request: httpx.Response(500, text="boom"))
    with pytest.raises(UserSimulatorError, match="HTTP 500"):
        LLMUser("http://llm.invalid/v1", "m", transport=http_error).reset(TASK)
