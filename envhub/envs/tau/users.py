"""Simulated customers: one interface, three implementations.

A :class:`UserSimulator` plays the customer of a task: ``reset(task)`` returns the user's
opening message, ``step(agent_message)`` the reply. A reply containing a stop token
(``###STOP###``; tau2's ``###TRANSFER###`` and ``###OUT-OF-SCOPE###``) ends the episode.

* :class:`LLMUser` asks any OpenAI-compatible ``/chat/completions`` endpoint to play the
  user, prompted with the task instruction (tau-bench's default user, over httpx).
* :class:`RuleBasedUser` is deterministic and offline: it states its goal, hands over the
  facts the instruction contains when the agent asks for them, answers confirmation
  questions with "yes" (or "no" if the instruction says to refuse), and stops when the
  agent wraps up. For tests and CPU smoke training.
* :class:`ScriptedUser` replays fixed replies (unit tests).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from envhub.core.errors import ConfigurationError, UserSimulatorError
from envhub.envs.tau.data import TauTask

__all__ = [
    "AGENT_GREETING",
    "STOP_TOKENS",
    "LLMUser",
    "RuleBasedUser",
    "ScriptedUser",
    "UserFacts",
    "UserSimulator",
    "extract_facts",
    "is_stop",
    "make_user",
]

#: Tokens that end the conversation when a user message contains them.
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")

#: The greeting the simulated user is answering at the start (tau-bench's).
AGENT_GREETING = "Hi! How can I help you today?"


def is_stop(message: str) -> bool:
    """Whether a user message ends the episode."""
    return any(token in message for token in STOP_TOKENS)


@runtime_checkable
class UserSimulator(Protocol):
    """The customer side of a conversation."""

    def reset(self, task: TauTask) -> str:
        """Start a conversation for ``task``; the user's first message."""
        ...

    def step(self, agent_message: str) -> str:
        """The user's reply to the agent's message."""
        ...


class ScriptedUser:
    """Says ``first``, then each of ``replies`` in turn, then ``then`` forever.

    Args:
        first: the opening message.
        replies: the replies, in order.
        then: what to say once the replies run out (default: stop).
    """

    def __init__(
        self, first: str = "Hi, I need help.", replies: Sequence[str] = (), then: str = "###STOP###"
    ) -> None:
        self.first = first
        self.replies = tuple(replies)
        self.then = then
        self._turn = 0

    def reset(self, task: TauTask) -> str:
        self._turn = 0
        return self.first

    def step(self, agent_message: str) -> str:
        reply = self.replies[self._turn] if self._turn < len(self.replies) else self.then
        self._turn += 1
        return reply


# -- the rule-based user -------------------------------------------------------------------------

_PAYMENT_ID = re.compile(r"\b(?:credit_card|gift_card|paypal|certificate)_\d+\b")
_USER_ID = re.compile(r"\b(?!credit_card_|gift_card_)[a-z]+_[a-z]+_\d+\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_ORDER_ID = re.compile(r"#W\d{7}\b")
_RESERVATION_ID = re.compile(r"\b(?!HAT\d{3}\b)(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")
_ZIP = re.compile(r"\b\d{5}\b")
_NAME = re.compile(r"\b(?:You are|Your name is|you are|name is)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)+)")
_REFUSE = re.compile(
    r"do not (?:want to )?(?:proceed|confirm)|don't (?:want to )?(?:proceed|confirm)|"
    r"refuse|decline to confirm",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"\(yes/no\)|\byes or no\b", re.IGNORECASE)
_CONFIRM_ASK = re.compile(
    r"\(yes/no\)|\byes or no\b|confirm|proceed\?|shall i|should i|would you like me to|do you want me to|"
    r"can i go ahead|go ahead\?|is that correct|is this correct|okay to",
    re.IGNORECASE,
)
_WRAP_UP = re.compile(
    r"anything else|have a (?:great|nice|good) day|is there something else|all set|that concludes",
    re.IGNORECASE,
)
_SWAPS = (
    (r"\bYou are\b", "I am"), (r"\byou are\b", "I am"), (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"), (r"\bYour\b", "My"), (r"\byour\b", "my"), (r"\byourself\b", "myself"),
    (r"\bYou\b", "I"), (r"\byou\b", "me"),
)  # fmt: skip


@dataclass(frozen=True)
class UserFacts:
    """What a task instruction tells the user about themselves."""

    name: str | None
    zip: str | None
    email: str | None
    user_id: str | None
    order_ids: tuple[str, ...]
    reservation_ids: tuple[str, ...]
    payment_ids: tuple[str, ...]
    refuses: bool
    goal: str


def extract_facts(instruction: str) -> UserFacts:
    """Pull the facts a customer could state out of a task instruction (regular expressions)."""
    name = _NAME.search(instruction)
    zip_code = _ZIP.search(instruction)
    email = _EMAIL.search(instruction)
    user_id = _USER_ID.search(instruction)
    return UserFacts(
        name=name.group(1) if name else None,
        zip=zip_code.group(0) if zip_code else None,
        email=email.group(0) if email else None,
        user_id=user_id.group(0) if user_id else None,
        order_ids=tuple(dict.fromkeys(_ORDER_ID.findall(instruction))),
        reservation_ids=tuple(dict.fromkeys(_RESERVATION_ID.findall(instruction))),
        payment_ids=tuple(dict.fromkeys(_PAYMENT_ID.findall(instruction))),
        refuses=bool(_REFUSE.search(instruction)),
        goal=_goal(instruction),
    )


def _goal(instruction: str) -> str:
    """The first sentence that is about the request rather than who the user is, in first person."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", instruction) if s.strip()]
    identity = re.compile(r"^(?:You are [A-Z]|Your (?:name|user id|email|zip)|You are \w+, )")
    chosen = next((s for s in sentences if not identity.search(s)), sentences[0] if sentences else "")
    for pattern, replacement in _SWAPS:
        chosen = re.sub(pattern, replacement, chosen)
    return chosen


class RuleBasedUser:
    """A deterministic, offline customer driven by its task instruction.

    Args:
        max_turns: replies after which the user gives up and says ``###STOP###``.
    """

    def __init__(self, max_turns: int = 30) -> None:
        self.max_turns = max_turns
        self._facts: UserFacts | None = None
        self._turns = 0

    @property
    def facts(self) -> UserFacts | None:
        """The facts of the current task (``None`` before :meth:`reset`)."""
        return self._facts

    def reset(self, task: TauTask) -> str:
        self._facts = extract_facts(task.instruction)
        self._turns = 0
        return f"Hi! {self._facts.goal}".strip()

    def step(self, agent_message: str) -> str:
        facts = self._facts
        if facts is None:
            return "###STOP###"
        self._turns += 1
        if self._turns >= self.max_turns:
            return "###STOP###"
        if _YES_NO.search(agent_message):
            return "No, I do not want to proceed." if facts.refuses else "yes"
        answers = self._answers(facts, agent_message.lower())
        if answers:
            return " ".join(answers)
        if _CONFIRM_ASK.search(agent_message):
            return "No, I do not want to proceed." if facts.refuses else "yes"
        if _WRAP_UP.search(agent_message):
            return "No, that's all. Thank you! ###STOP###"
        return f"Could you help me with my request? {facts.goal}".strip()

    @staticmethod
    def _answers(facts: UserFacts, text: str) -> list[str]:
        """Replies to every piece of identifying information the agent asked for."""
        out: list[str] = []
        asks_email = bool(re.search(r"\be-?mail\b", text))
        if asks_email:
            out.append(f"My email is {facts.email}." if facts.email else "I don't remember my email.")
        if re.search(r"\b(?:zip|name)\b", text) and not (asks_email and facts.email):
            if facts.name and facts.zip:
                out.append(f"My name is {facts.name} and my zip code is {facts.zip}.")
            elif facts.name:
                out.append(f"My name is {facts.name}.")
        if re.search(r"\buser[ _-]?id\b", text):
            out.append(f"My user id is {facts.user_id}." if facts.user_id else "I don't know my user id.")
        if re.search(r"\border (?:id|number)s?\b", text) and facts.order_ids:
            out.append("The order id is " + ", ".join(facts.order_ids) + ".")
        if re.search(r"\breservation (?:id|number|code)s?\b", text):
            if facts.reservation_ids:
                out.append("The reservation id is " + ", ".join(facts.reservation_ids) + ".")
            else:
                out.append("I don't remember the reservation id.")
        if re.search(r"\b(?:which|what) payment\b", text) and facts.payment_ids:
            out.append("Please use " + ", ".join(facts.payment_ids) + ".")
        return out


# -- the LLM user --------------------------------------------------------------------------------

_LLM_USER_RULES = """You play a customer who is chatting with a customer-service agent.

Your situation and goal:
{instruction}

How to play the customer:
- Write one short message per turn, as a real customer would.
- Reveal your situation bit by bit: only what the agent needs for the current step.
- Never invent facts that are not in your situation. If asked for something you were not
  told (an order id, an email), say you don't know or don't remember it.
- When your goal is fully handled, reply with ###STOP### alone to end the chat.
- Use your own words rather than copying the situation text.
- Keep the personality described in your situation."""


class LLMUser:
    """A customer played by a model behind an OpenAI-compatible chat-completions endpoint.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended).
        model: the model name sent in each request.
        api_key: bearer token, if the endpoint needs one.
        temperature: sampling temperature.
        timeout_s: per-request timeout.
        transport: an httpx transport (tests may inject one; default is a real connection).

    Raises:
        UserSimulatorError: from ``reset``/``step`` when the endpoint cannot be reached or
            answers with something that is not a chat completion.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"LLMUser base_url must be an http(s) URL such as http://127.0.0.1:8000/v1; "
                f"got {base_url!r}.",
                base_url=base_url,
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature = temperature
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, transport=transport)
        self._messages: list[dict[str, str]] = []

    def reset(self, task: TauTask) -> str:
        # Roles are flipped: the simulator is the "assistant", the agent's words are "user".
        self._messages = [
            {"role": "system", "content": _LLM_USER_RULES.format(instruction=task.instruction)},
            {"role": "user", "content": AGENT_GREETING},
        ]
        return self._next()

    def step(self, agent_message: str) -> str:
        self._messages.append({"role": "user", "content": agent_message})
        return self._next()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _next(self) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages,
            "temperature": self.temperature,
        }
        try:
            response = self._client.post(self.url, json=payload)
        except httpx.HTTPError as exc:
            raise UserSimulatorError(self.url, reason=f"{type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise UserSimulatorError(self.url, reason=f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise UserSimulatorError(self.url, reason="the reply is not a chat completion") from exc
        if not isinstance(content, str):
            raise UserSimulatorError(self.url, reason="the completion has no text content")
        self._messages.append({"role": "assistant", "content": content})
        return content


def make_user(
    kind: str | UserSimulator,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    temperature: float = 0.0,
) -> UserSimulator:
    """Build a user simulator from a name (``"rule"``, ``"llm"``, ``"scripted"``) or pass one through.

    Raises:
        ConfigurationError: unknown name, or ``"llm"`` without ``base_url`` and ``model``.
    """
    if not isinstance(kind, str):
        if not isinstance(kind, UserSimulator):
            raise ConfigurationError(
                f"user must be 'rule', 'llm', 'scripted' or an object with reset(task) and step(message); "
                f"got {type(kind).__name__}.",
                user=type(kind).__name__,
            )
        return kind
    if kind == "rule":
        return RuleBasedUser()
    if kind == "scripted":
        return ScriptedUser()
    if kind == "llm":
        if not base_url or not model:
            raise ConfigurationError(
                "user='llm' needs user_base_url (an OpenAI-compatible API root such as "
                "http://127.0.0.1:8000/v1) and user_model.",
                base_url=base_url,
                model=model,
            )
        return LLMUser(base_url, model, api_key=api_key, temperature=temperature)
    raise ConfigurationError(f"Unknown user simulator {kind!r}; use 'rule', 'llm' or 'scripted'.", user=kind)
