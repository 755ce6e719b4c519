"""Reading an agent's action: one tool call, or else a message to the user.

Three tool-call syntaxes are accepted (the first call found is used; like tau-bench, extra
calls in the same turn are ignored):

* ``<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W1"}}</tool_call>``
  (Hermes/Qwen style; text around the tag is ignored);
* OpenAI function-call JSON as the whole action: ``{"name": ..., "arguments": {...} or "<json>"}``,
  ``{"type": "function", "function": {...}}``, ``{"tool_calls": [...]}`` or a list of calls;
* a Python-style call as the whole action: ``get_order_details(order_id="#W1")`` (literal
  arguments; positional arguments fill the tool's parameters in order).

Anything else is a message to the user. A ``<tool_call>`` tag or a JSON object that cannot
be read as a call is a *malformed* call: the env answers with an error and the turn is spent.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ParsedAction", "parse_action"]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_PY_CALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\s*\(.*\)$", re.DOTALL)


@dataclass(frozen=True)
class ParsedAction:
    """One agent action, classified.

    Attributes:
        kind: ``"tool"`` (a call), ``"message"`` (text for the user) or ``"malformed"``.
        name: the tool name (``kind == "tool"``).
        arguments: the tool arguments (``kind == "tool"``).
        text: the message (``"message"``) or what was wrong (``"malformed"``).
        extra_calls: how many further calls in the same action were ignored.
    """

    kind: str
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    extra_calls: int = 0


def parse_action(action: str, param_order: Mapping[str, Sequence[str]] | None = None) -> ParsedAction:
    """Classify ``action``; never raises.

    Args:
        action: the agent's text.
        param_order: tool name -> parameter names, used to map positional arguments of the
            ``name(...)`` syntax.
    """
    tags = _TOOL_CALL.findall(action)
    if "<tool_call>" in action and tags:
        parsed = _from_json_text(tags[0])
        return _with_extra(parsed, len(tags) - 1)
    stripped = action.strip()
    if stripped[:1] in "{[" and stripped:
        try:
            value = json.loads(stripped)
        except ValueError:
            if '"name"' in stripped or '"function"' in stripped or '"tool_calls"' in stripped:
                return ParsedAction(kind="malformed", text="the tool call is not valid JSON")
            return ParsedAction(kind="message", text=action)
        calls = _calls_in(value)
        if calls is None:
            return ParsedAction(kind="message", text=action)
        if not calls:
            return ParsedAction(kind="malformed", text="the tool call list is empty")
        return _with_extra(_from_call_object(calls[0]), len(calls) - 1)
    if _PY_CALL.match(stripped):
        call = _from_python_call(stripped, param_order or {})
        if call is not None:
            return call
    return ParsedAction(kind="message", text=action)


def _with_extra(parsed: ParsedAction, extra: int) -> ParsedAction:
    if extra <= 0:
        return parsed
    return ParsedAction(parsed.kind, parsed.name, parsed.arguments, parsed.text, extra)


def _from_json_text(text: str) -> ParsedAction:
    try:
        value = json.loads(text)
    except ValueError:
        return ParsedAction(kind="malformed", text="the <tool_call> body is not valid JSON")
    calls = _calls_in(value)
    if not calls:
        return ParsedAction(kind="malformed", text='the <tool_call> body has no "name"')
    return _from_call_object(calls[0])


def _calls_in(value: Any) -> list[Any] | None:
    """The call objects in a decoded JSON value, or None if it does not look like calls at all."""
    if isinstance(value, list):
        return value if all(isinstance(v, dict) for v in value) else None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        return list(value["tool_calls"])
    if "name" in value or "function" in value:
        return [value]
    return None


def _from_call_object(call: Any) -> ParsedAction:
    if not isinstance(call, dict):
        return ParsedAction(kind="malformed", text="a tool call must be a JSON object")
    if isinstance(call.get("function"), dict):
        call = call["function"]
    name = call.get("name")
    if not isinstance(name, str) or not name:
        return ParsedAction(kind="malformed", text='the tool call has no "name" string')
    args = call.get("arguments", call.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return ParsedAction(kind="malformed", text=f"the arguments of {name} are not valid JSON")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return ParsedAction(kind="malformed", text=f"the arguments of {name} must be a JSON object")
    return ParsedAction(kind="tool", name=name, arguments=args)


def _from_python_call(text: str, param_order: Mapping[str, Sequence[str]]) -> ParsedAction | None:
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    name = node.func.id
    try:
        positional = [ast.literal_eval(a) for a in node.args]
        keywords = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # Names or expressions as arguments: read as prose only when the name is no tool.
        if name in param_order:
            return ParsedAction(kind="malformed", text=f"the arguments of {name} must be literals")
        return None
    if positional:
        order = list(param_order.get(name, ()))
        if len(positional) > len(order):
            if name not in param_order:
                return None
            return ParsedAction(kind="malformed", text=f"{name} takes at most {len(order)} arguments")
        keywords = {**dict(zip(order, positional, strict=False)), **keywords}
    return ParsedAction(kind="tool", name=name, arguments=keywords)
