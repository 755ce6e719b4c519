"""tau-bench's retail and airline customer-service domains as envhub envs."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from envhub.core.env import AgentEnv, Outcome
from envhub.core.errors import UnknownTaskError, UserSimulatorError
from envhub.envs.tau.airline_tools import AIRLINE_TOOLS
from envhub.envs.tau.calls import ParsedAction, parse_action
from envhub.envs.tau.data import DOMAIN_SPLITS, Domain, TauTask, load_domain
from envhub.envs.tau.db import TauDB
from envhub.envs.tau.prompt import system_prompt
from envhub.envs.tau.retail_tools import RETAIL_TOOLS
from envhub.envs.tau.reward import TERMINATE_TOOLS, changed_records, compute_reward, state_digest
from envhub.envs.tau.toolkit import ToolSpec, invoke_tool, tool_schemas
from envhub.envs.tau.users import UserSimulator, is_stop, make_user

__all__ = ["RESPOND_ACTION", "TauAirlineEnv", "TauEnv", "TauRetailEnv"]

_logger = logging.getLogger(__name__)

_MALFORMED_HINT = (
    'Call a tool as <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>, '
    "or write a plain message to the customer."
)
#: tau-bench's name for the message-to-the-customer action (its ReAct/Act agents write it as
#: a call, ``{"name": "respond", "arguments": {"content": ...}}``).
RESPOND_ACTION = "respond"


class TauEnv(AgentEnv):
    """Shared machinery of the tau-bench domains; use :class:`TauRetailEnv` or :class:`TauAirlineEnv`.

    Args:
        user: ``"rule"`` (default, offline), ``"llm"``, ``"scripted"`` or a :class:`UserSimulator`.
        user_base_url: OpenAI-compatible API root for ``user="llm"``.
        user_model: model name for ``user="llm"``.
        user_api_key: bearer token for ``user="llm"``, if needed.
        user_temperature: sampling temperature for ``user="llm"``.
        data_dir: tau-bench data root (default: ``TAU_DATA`` or the tau-trait package).
        render_mode: ``None`` or ``"ansi"``.
    """

    domain_name: ClassVar[str] = "retail"
    domain_tools: ClassVar[tuple[ToolSpec, ...]] = RETAIL_TOOLS

    def __init__(
        self,
        *,
        user: str | UserSimulator = "rule",
        user_base_url: str | None = None,
        user_model: str | None = None,
        user_api_key: str | None = None,
        user_temperature: float = 0.0,
        data_dir: str | Path | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        self._domain: Domain = load_domain(self.domain_name, data_dir)
        self._tools = {tool.name: tool for tool in self.domain_tools}
        self._param_order = {tool.name: [p.name for p in tool.params] for tool in self.domain_tools}
        self._schemas = tool_schemas(self.domain_tools)
        self._user = make_user(
            user, base_url=user_base_url, model=user_model, api_key=user_api_key, temperature=user_temperature
        )
        self._task_lists = {
            split: tuple(t.task_id for t in tasks) for split, tasks in self._domain.tasks.items()
        }
        self._db = TauDB(self._domain.tables)
        self._task: TauTask | None = None
        self._messages: list[str] = []

    # -- public attributes ------------------------------------------------------------------

    @property
    def system_prompt(self) -> str:
        """The domain policy document: the agent's system prompt (tau-bench's ``wiki.md``)."""
        return system_prompt(self._domain.policy)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function schemas (pass them as ``tools=`` to a chat API)."""
        return [dict(schema) for schema in self._schemas]

    @property
    def db(self) -> TauDB:
        """The current episode's database."""
        return self._db

    @property
    def task(self) -> TauTask | None:
        """The current task (instruction, gold actions, outputs), ``None`` before reset."""
        return self._task

    @property
    def agent_messages(self) -> tuple[str, ...]:
        """Messages the agent sent to the user this episode (used for required outputs)."""
        return tuple(self._messages)

    # -- AgentEnv hooks ----------------------------------------------------------------------

    def _task_ids(self, split: str) -> Sequence[str]:
        return self._task_lists.get(split, ())

    def has_task(self, task_id: str) -> bool:
        return self._domain.task(task_id) is not None

    def _reset_task(self, task_id: str) -> Outcome:
        task = self._domain.task(task_id)
        if task is None:  # has_task() already checked; kept so the type is narrowed
            raise UnknownTaskError(task_id, env=type(self).__name__, splits=self.splits, examples=())
        self._task = task
        self._db = TauDB(self._domain.tables)  # copy-on-write: a fresh copy of the database
        self._messages = []
        first = self._user.reset(task)  # an LLM user that cannot answer raises UserSimulatorError here
        return self._outcome(
            first,
            source="user",
            extra={
                "system_prompt": self.system_prompt,
                "tools": self.tools,
                "domain": self.domain_name,
            },
        )

    def _step(self, action: str) -> Outcome:
        parsed = parse_action(action, self._param_order)
        if parsed.kind == "malformed":
            return self._outcome(f"Error: {parsed.text}. {_MALFORMED_HINT}", source="error", valid=False)
        if parsed.kind == "tool" and parsed.name == RESPOND_ACTION:
            content = parsed.arguments.get("content")
            if not isinstance(content, str):
                return self._outcome(
                    'Error: a respond action needs a string "content" argument, e.g. '
                    '{"name": "respond", "arguments": {"content": "How can I help?"}}, '
                    "or write the message as plain text.",
                    source="error",
                    valid=False,
                )
            return self._message_step(content)
        if parsed.kind == "tool":
            return self._tool_step(parsed)
        return self._message_step(parsed.text)

    def _close(self) -> None:
        close = getattr(self._user, "close", None)
        if callable(close):
            close()

    # -- steps -----------------------------------------------------------------------------

    def _tool_step(self, parsed: ParsedAction) -> Outcome:
        result = invoke_tool(self._tools, self._db, parsed.name, parsed.arguments)
        extra = {"tool_error": result.error, "ignored_calls": parsed.extra_calls}
        done = result.known and parsed.name in TERMINATE_TOOLS
        return self._outcome(result.output, source=parsed.name, valid=result.known, done=done, extra=extra)

    def _message_step(self, message: str) -> Outcome:
        self._messages.append(message)
        try:
            reply = self._user.step(message)
        except UserSimulatorError as exc:
            # The conversation cannot go on; end it, score nothing, and say why.
            _logger.warning(
                "tau %s: user simulator failed, ending the episode: %s", self._task_id, exc.message
            )
            return self._outcome(
                "###STOP###", source="user", done=True, score=False, extra={"user_error": exc.message}
            )
        return self._outcome(reply, source="user", done=is_stop(reply))

    def _outcome(
        self,
        observation: str,
        *,
        source: str,
        valid: bool = True,
        done: bool = False,
        score: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> Outcome:
        info: dict[str, Any] = {"source": source, **(extra or {})}
        digest = state_digest(changed_records(self._domain, self._db))
        reward = 0.0
        if done and score and self._task is not None:
            result = compute_reward(self._domain, self.domain_tools, self._task, self._db, self._messages)
            reward = result.reward
            info["reward_info"] = result.as_info()
        return Outcome(
            observation=observation,
            anchor=f"db:{digest[:16]}\n{observation}",
            reward=reward,
            terminated=done,
            won=reward >= 1.0,
            task_score=reward,
            is_action_valid=valid,
            admissible_actions=None,
            extra=info,
        )


class TauRetailEnv(TauEnv):
    """tau-bench retail: help customers of an online store with orders, returns and exchanges.

    ## Description

    The agent is a store's customer-service representative. A simulated customer (by
    default the offline rule-based user) opens with a request; the agent looks things up and
    changes the store database with 16 tools (find a user, read orders and products, cancel
    or modify pending orders, return or exchange delivered items, change addresses and
    payment methods, ``calculate``, ``think``, ``transfer_to_human_agents``), following the
    store policy given as the system prompt. Database: 500 users, 1,000 orders, 50 products.
    Tasks: tau-bench's retail test (120) and train (500) splits, with gold actions.

    ## Action Space

    Any text. One tool call per turn, in any of three forms (further calls are ignored):
    ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, OpenAI function-call JSON,
    or ``name(arg=...)``. Anything else is a message to the customer, and so is tau-bench's
    ``respond`` action written as a call (``{"name": "respond", "arguments": {"content":
    ...}}``). Malformed calls and unknown tool names are invalid actions that use up the turn.

    ## Observation Space

    Text: the newest turn of the conversation, i.e. the customer's reply, or the tool's
    output (JSON of a record, ``Error: ...`` or ``Unknown action <name>``, as in tau-bench).

    ## Rewards

    0 on every step except the last. When the episode ends (customer stop token or
    ``transfer_to_human_agents``): 1 if the final database equals the database the task's
    gold actions produce and every required output was said to the customer (lowercased,
    commas removed), else 0. Truncation at the step limit scores 0.

    ## Starting State

    The task's customer and a fresh copy of the database; the observation is the customer's
    first message. The same task id always starts from the same state.

    ## Episode End

    Terminated when the customer's message contains ``###STOP###`` (or tau2's
    ``###TRANSFER###``/``###OUT-OF-SCOPE###``), when the agent calls
    ``transfer_to_human_agents``, or when an LLM user's endpoint fails (reward 0,
    ``info["user_error"]``). Truncated by ``TimeLimit`` after 30 steps.

    ## Information

    ``anchor`` (database digest + observation), ``admissible_actions`` (None), ``won``,
    ``task_id`` (``"test-0"``, ``"train-12"``), ``task_score`` (the reward),
    ``is_action_valid``, ``source`` (``user``, a tool name, or ``error``), ``tool_error``;
    at reset ``system_prompt``, ``tools`` (OpenAI schemas) and ``domain``; at the end
    ``reward_info`` (``db_match``, ``outputs``, ``missing_outputs``, ``mismatched_records``).

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``user`` | ``"rule"`` | ``"rule"``, ``"llm"``, ``"scripted"`` or a ``UserSimulator`` |
    | ``user_base_url`` / ``user_model`` | None | OpenAI-compatible endpoint for ``user="llm"`` |
    | ``user_api_key`` / ``user_temperature`` | None / 0.0 | its key and temperature |
    | ``data_dir`` | None | data root (else ``TAU_DATA``, else the tau-trait package) |
    | ``render_mode`` | None | ``"ansi"`` to render the last turn |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/TauRetail-v0")
    >>> obs, info = env.reset(options={"task_id": "test-0"})
    >>> obs.startswith("Hi!")
    True
    >>> len(info["tools"])
    16

    ## Reference

    sierra-research/tau-bench (MIT), retail domain, data and tasks as shipped in tau-trait
    0.1.1; tools reimplemented to give tau-bench's outputs and final databases.

    ## Version History

    * v0: initial release.
    """

    splits: ClassVar[tuple[str, ...]] = DOMAIN_SPLITS["retail"]
    default_split: ClassVar[str] = "train"
    domain_name: ClassVar[str] = "retail"
    domain_tools: ClassVar[tuple[ToolSpec, ...]] = RETAIL_TOOLS


class TauAirlineEnv(TauEnv):
    """tau-bench airline: help travellers book, change and cancel flight reservations.

    ## Description

    The agent is an airline's customer-service representative. A simulated traveller (by
    default the offline rule-based user) opens with a request; the agent uses 14 tools
    (read users and reservations, search direct and one-stop flights, book, cancel, change
    flights, bags and passengers, send certificates, ``calculate``, ``think``,
    ``transfer_to_human_agents``), following the airline policy given as the system prompt.
    Database: 500 users, 2,000 reservations, 300 flights. Tasks: tau-bench's airline test
    split (60 in tau-trait), with gold actions.

    ## Action Space

    Any text. One tool call per turn, in any of three forms (further calls are ignored):
    ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, OpenAI function-call JSON,
    or ``name(arg=...)``. Anything else is a message to the traveller, and so is tau-bench's
    ``respond`` action written as a call. Malformed calls and unknown tool names are invalid
    actions that use up the turn.

    ## Observation Space

    Text: the newest turn, i.e. the traveller's reply or the tool's output (JSON,
    ``Error: ...`` or ``Unknown action <name>``, as in tau-bench).

    ## Rewards

    0 on every step except the last. When the episode ends: 1 if the final database equals
    the gold actions' database and every required output was said, else 0. Truncation scores 0.

    ## Starting State

    The task's traveller and a fresh copy of the database; the observation is the
    traveller's first message. The same task id always starts from the same state.

    ## Episode End

    Terminated on a stop token in the traveller's message (``###STOP###``,
    ``###TRANSFER###``, ``###OUT-OF-SCOPE###``), on ``transfer_to_human_agents``, or when an
    LLM user's endpoint fails (reward 0). Truncated by ``TimeLimit`` after 30 steps.

    ## Information

    ``anchor``, ``admissible_actions`` (None), ``won``, ``task_id`` (``"test-0"``),
    ``task_score``, ``is_action_valid``, ``source``, ``tool_error``; at reset
    ``system_prompt``, ``tools`` and ``domain``; at the end ``reward_info``.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``user`` | ``"rule"`` | ``"rule"``, ``"llm"``, ``"scripted"`` or a ``UserSimulator`` |
    | ``user_base_url`` / ``user_model`` | None | OpenAI-compatible endpoint for ``user="llm"`` |
    | ``user_api_key`` / ``user_temperature`` | None / 0.0 | its key and temperature |
    | ``data_dir`` | None | data root (else ``TAU_DATA``, else the tau-trait package) |
    | ``render_mode`` | None | ``"ansi"`` to render the last turn |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/TauAirline-v0")
    >>> obs, info = env.reset(options={"task_id": "test-0"})
    >>> len(info["tools"])
    14

    ## Reference

    sierra-research/tau-bench (MIT), airline domain, data and tasks as shipped in tau-trait
    0.1.1; tools reimplemented to give tau-bench's outputs and final databases.

    ## Version History

    * v0: initial release.
    """

    splits: ClassVar[tuple[str, ...]] = DOMAIN_SPLITS["airline"]
    default_split: ClassVar[str] = "test"
    domain_name: ClassVar[str] = "airline"
    domain_tools: ClassVar[tuple[ToolSpec, ...]] = AIRLINE_TOOLS
