"""Model text -> env action: the projection step between a policy and an env.

Every projector takes *any* object (a model's text, ``None``, bytes, adversarial strings) and
returns a :class:`Projection`; none of them raises. The rules reproduce verl-agent and AgentOCR
(``shared/reference/algorithms.md`` §4-5):

================== ===========================================================================
rule               behaviour
================== ===========================================================================
``alfworld``       lower-case; action = text between the first ``<action>`` and the first
                   ``</action>`` (``""`` when the first ``</action>`` comes before it, as the
                   reference's slice gives); valid only with both action tags, both ``<think>``
                   tags (matched case-sensitively in the original text) and no Chinese ideograph
                   (U+4E00-U+9FFF); without action tags the env gets the last 30 characters
                   (also registered as ``think_action``, its generic name)
``webshop``        the same, with the last 20 characters
``agentocr``       the ALFWorld rule, plus: a repeated ``<action>``/``</action>`` tag gives an
                   invalid ``""``, a repeated ``<think>``/``</think>`` is invalid, and a missing
                   action sends ``""`` instead of the tail
``search``         the first ``<search>…</search>`` block, else the first ``<answer>…</answer>``,
                   looked for in the text cut after its first ``</search>`` (else ``</answer>``);
                   invalid when neither, when both kinds appear or when either repeats (no CJK
                   rule: the reference has none for search)
``tool_call``      ``<tool_call>{json}</tool_call>``, OpenAI function-call JSON, or
                   ``name(arg=value, …)``; the first call wins; other text is a message
================== ===========================================================================

:func:`parse_compression` reads AgentOCR's ``<compression>c</compression>`` tag: a float, NaN or
inf -> 1, clamped to [1, 5], missing or unparsable -> 1, more than one tag -> invalid (the
factor is still read from the first pair, as AgentOCR does).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType
from typing import Any, Literal

from envhub.core.errors import ConfigurationError
from envhub.core.registry import load_entry_point

__all__ = [
    "COMPRESSION_RANGE",
    "PROJECTIONS",
    "CompressionTag",
    "Kind",
    "Projection",
    "ToolCall",
    "as_text",
    "has_cjk",
    "parse_compression",
    "project",
    "project_search_answer",
    "project_think_action",
    "project_tool_call",
    "projector",
    "strip_compression",
]

# CJK ideographs (incl. extension A and compatibility), kana and Hangul, for has_cjk().
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# The reference's validity rule rejects exactly the CJK Unified Ideographs block; kana or
# Hangul alone leave an output valid there, so the think/action rule uses this narrower set.
_REFERENCE_CJK = re.compile(r"[\u4e00-\u9fff]")
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)
_CODE_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_CALL_SYNTAX = re.compile(r"^[A-Za-z_][\w.]*\s*\(.*\)$", re.DOTALL)
_PARSE_ERRORS = (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, OverflowError)
COMPRESSION_RANGE = (1.0, 5.0)
_REPEATED_ACTION = "repeated <action> or </action> tag"

Kind = Literal["action", "search", "answer", "tool_call", "message", "none"]


@dataclass(frozen=True)
class ToolCall:
    """One parsed tool call."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """Canonical wire form: ``{"name": ..., "arguments": {...}}``."""
        return json.dumps({"name": self.name, "arguments": dict(self.arguments)}, ensure_ascii=False)


@dataclass(frozen=True)
class Projection:
    """What a model's text means for the env.

    Attributes:
        action: the string to send to ``env.step`` (may be ``""``).
        is_valid: whether the text followed the format (the trainer penalises invalid steps).
        reason: empty when valid; otherwise what was wrong, in words.
        kind: ``action``, ``search``, ``answer``, ``tool_call``, ``message`` or ``none``.
        tool_call: the parsed call when ``kind == "tool_call"``.
        compression: AgentOCR compression factor (1.0 unless :func:`parse_compression` ran).
    """

    action: str
    is_valid: bool
    reason: str = ""
    kind: Kind = "action"
    tool_call: ToolCall | None = None
    compression: float = 1.0


@dataclass(frozen=True)
class CompressionTag:
    """A parsed ``<compression>`` tag: the factor, and whether the tag use was valid."""

    factor: float
    is_valid: bool
    reason: str = ""


def as_text(output: object) -> str:
    """Any object as text: ``None`` -> ``""``, bytes decoded as UTF-8 (bad bytes replaced)."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    if isinstance(output, bytes | bytearray):
        return bytes(output).decode("utf-8", errors="replace")
    try:
        return str(output)
    except Exception:  # a hostile __str__ must not break the rollout; nothing else is lost
        return ""


def has_cjk(text: str) -> bool:
    """Whether ``text`` has any CJK ideograph, kana or Hangul syllable."""
    return _CJK.search(text) is not None


def _why(*problems: str) -> str:
    return "; ".join(p for p in problems if p)


def project_think_action(
    output: object,
    *,
    tail_chars: int = 30,
    fallback: Literal["tail", "empty"] = "tail",
    strict_tags: bool = False,
) -> Projection:
    """The ``<think>…</think><action>…</action>`` rule (ALFWorld, WebShop).

    Args:
        output: the model's text.
        tail_chars: characters of the (lower-cased) text sent when there are no action tags
            (30 ALFWorld, 20 WebShop); the env then usually answers "Nothing happens.".
        fallback: ``"tail"`` (reference) or ``"empty"`` (send ``""`` when there is no action).
        strict_tags: AgentOCR's rule: a repeated ``<action>`` or ``</action>`` tag (any case)
            makes the output invalid with action ``""``; a repeated ``<think>`` or ``</think>``
            (case-sensitive) makes it invalid.

    Returns:
        The projection; ``kind`` is ``action``.
    """
    original = as_text(output)
    text = original.lower()
    if strict_tags and (text.count("<action>") > 1 or text.count("</action>") > 1):
        # AgentOCR stops here: no action, and nothing else is checked.
        return Projection(action="", is_valid=False, reason=_REPEATED_ACTION, kind="action")
    start, end = text.find("<action>"), text.find("</action>")
    tagged = start != -1 and end != -1
    if tagged:
        # As the reference slices: a first </action> before <action> gives "" (and stays valid).
        action = text[start + len("<action>") : end].strip()
    else:
        action = text[-tail_chars:] if fallback == "tail" and tail_chars > 0 else ""
    repeated = strict_tags and (original.count("<think>") > 1 or original.count("</think>") > 1)
    reason = _why(
        "" if tagged else "no <action>…</action> block",
        # The reference looks for the think tags in the original text, so <THINK> does not count.
        "" if "<think>" in original and "</think>" in original else "no <think>…</think> block",
        "Chinese characters in the output" if _REFERENCE_CJK.search(original) else "",
        "repeated <think> tag" if repeated else "",
    )
    return Projection(action=action, is_valid=not reason, reason=reason, kind="action")


# Case-insensitive like the reference's patterns, matched on the original text: lower-casing
# first would change the content (e.g. "İ" lower-cases to two characters).
_BLOCKS = {
    tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.IGNORECASE | re.DOTALL) for tag in ("search", "answer")
}
_OPEN_TAGS = {tag: re.compile(rf"<{tag}>", re.IGNORECASE) for tag in ("search", "answer")}


def _first_block(text: str, tag: str) -> str | None:
    match = _BLOCKS[tag].search(text)
    return None if match is None else match.group(1).strip()


def project_search_answer(output: object, *, require_think: bool = False) -> Projection:
    """The search-QA rule: one ``<search>query</search>`` or one ``<answer>…</answer>``.

    Tags match case-insensitively; the content keeps its case. As in the reference, the blocks
    are looked for in the text cut after its first ``</search>`` (else ``</answer>``), and the
    language of the text does not matter (no CJK rule). The action is the block with
    normalised tags, e.g. ``<search>capital of France</search>``, also when the text is invalid
    for another reason (the env acts on it; the trainer penalises the flag).

    Args:
        output: the model's text.
        require_think: also require a ``<think>…</think>`` block.

    Returns:
        The projection; ``kind`` is ``search``, ``answer`` or ``none``.
    """
    original = as_text(output)
    n_search = len(_OPEN_TAGS["search"].findall(original))
    n_answer = len(_OPEN_TAGS["answer"].findall(original))
    # The reference first cuts the text after its first "</search>" (else "</answer>"), matched
    # case-sensitively, then looks for the blocks; so "</search> <search>q</search>" has none.
    text = original
    for closing in ("</search>", "</answer>"):
        cut = original.find(closing)
        if cut != -1:
            text = original[: cut + len(closing)]
            break
    low = text.lower()
    query, answer = _first_block(text, "search"), _first_block(text, "answer")
    if query is not None:
        action, kind = f"<search>{query}</search>", "search"
    elif answer is not None:
        action, kind = f"<answer>{answer}</answer>", "answer"
    else:
        action, kind = "", "none"
    reason = _why(
        "" if kind != "none" else "no <search>…</search> or <answer>…</answer> block",
        "both <search> and <answer> tags" if n_search and n_answer else "",
        "more than one <search> tag" if n_search > 1 else "",
        "more than one <answer> tag" if n_answer > 1 else "",
        "no <think>…</think> block" if require_think and not ("<think>" in low and "</think>" in low) else "",
    )
    return Projection(action=action, is_valid=not reason, reason=reason, kind=kind)  # type: ignore[arg-type]


def _call_from_mapping(obj: Any) -> ToolCall | str:
    """A ToolCall from the JSON shapes models emit, or the reason it is not one."""
    if isinstance(obj, list):
        return _call_from_mapping(obj[0]) if obj else "empty tool-call list"
    if not isinstance(obj, dict):
        return "tool call JSON must be an object with a name"
    if isinstance(obj.get("tool_calls"), list):
        return _call_from_mapping(obj["tool_calls"])
    for wrapper in ("function", "function_call"):
        if isinstance(obj.get(wrapper), dict):
            return _call_from_mapping(obj[wrapper])
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return "tool call has no string 'name'"
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except _PARSE_ERRORS as exc:
            return f"tool call 'arguments' is not valid JSON ({exc.__class__.__name__})"
    if not isinstance(args, dict):
        return "tool call 'arguments' must be a JSON object"
    return ToolCall(name=name.strip(), arguments=args)


def _call_from_python(text: str) -> ToolCall | str | None:
    """A ToolCall from ``name(arg=value)``, the reason it is malformed, or ``None`` if the text
    is not a keyword call at all (prose such as "Sure (one moment)" stays a message)."""
    try:
        node = ast.parse(text, mode="eval").body
    except _PARSE_ERRORS:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
        return None
    if node.args or any(kw.arg is None for kw in node.keywords):
        return None
    try:
        args = {str(kw.arg): ast.literal_eval(kw.value) for kw in node.keywords}
    except _PARSE_ERRORS:
        return "call argument values must be literals (strings, numbers, lists, dicts, True/False/None)"
    return ToolCall(name=ast.unparse(node.func), arguments=args)


def _tool_projection(call: ToolCall | str, source: str) -> Projection:
    if isinstance(call, str):
        return Projection(action="", is_valid=False, reason=f"{source}: {call}", kind="none")
    try:
        action = call.to_json()
        json.dumps(dict(call.arguments), allow_nan=False)
    except _PARSE_ERRORS:
        return Projection(
            action="", is_valid=False, reason=f"{source}: arguments are not JSON-serialisable", kind="none"
        )
    return Projection(action=action, is_valid=True, kind="tool_call", tool_call=call)


def project_tool_call(output: object) -> Projection:
    """Parse the first tool call in any of three syntaxes; other text is a message to the user.

    1. ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` (Hermes/Qwen style);
    2. OpenAI function-call JSON: ``{"name", "arguments"}``, ``{"type": "function",
       "function": {…}}``, ``{"function_call": {…}}``, ``{"tool_calls": [...]}`` (arguments may be
       a JSON string), optionally in a code fence;
    3. ``name(arg=value, …)`` with literal keyword values.

    Returns:
        ``kind="tool_call"`` with :attr:`Projection.tool_call` and the canonical JSON as the
        action; ``kind="message"`` (valid) with the stripped text for plain text; an invalid
        ``kind="none"`` projection when a call was attempted but is malformed.
    """
    text = as_text(output).strip()
    tagged = _TOOL_CALL.search(text)
    if tagged:
        try:
            payload = json.loads(tagged.group(1))
        except _PARSE_ERRORS as exc:
            return _tool_projection(f"malformed JSON ({exc.__class__.__name__})", "<tool_call>")
        return _tool_projection(_call_from_mapping(payload), "<tool_call>")
    fenced = _CODE_FENCE.match(text)
    body = fenced.group(1) if fenced else text
    if body[:1] in "{[" and body:
        try:
            payload = json.loads(body)
        except _PARSE_ERRORS:
            payload = None
        if isinstance(payload, dict | list):
            return _tool_projection(_call_from_mapping(payload), "function-call JSON")
    if _CALL_SYNTAX.match(body):
        call = _call_from_python(body)
        if call is not None:
            return _tool_projection(call, "call syntax")
    if not text:
        return Projection(action="", is_valid=False, reason="empty output", kind="none")
    return Projection(action=text, is_valid=True, kind="message")


def parse_compression(output: object) -> CompressionTag:
    """Read AgentOCR's ``<compression>c</compression>`` tag.

    As AgentOCR's projection: the factor is the text between the first ``<compression>`` and
    the first ``</compression>`` (any case) read as a float; NaN or inf gives 1, other values
    are clamped to [1, 5]; a missing tag or an unparsable value gives 1. More than one opening
    or closing tag makes the output invalid, and the factor is still read from the first pair.

    Returns:
        The factor and whether the tag use was valid.
    """
    low = as_text(output).lower()
    repeated = low.count("<compression>") > 1 or low.count("</compression>") > 1
    start, end = low.find("<compression>"), low.find("</compression>")
    value = 1.0
    if start != -1 and end != -1:
        try:
            value = float(low[start + len("<compression>") : end].strip())
        except _PARSE_ERRORS:
            value = 1.0
    if math.isnan(value) or math.isinf(value):
        value = 1.0
    low_bound, high_bound = COMPRESSION_RANGE
    factor = min(high_bound, max(low_bound, value))
    if repeated:
        return CompressionTag(factor, False, "more than one <compression> tag")
    return CompressionTag(factor, True)


_COMPRESSION_BLOCK = re.compile(r"<compression>.*?</compression>", re.IGNORECASE | re.DOTALL)
_COMPRESSION_TAG = re.compile(r"</?compression>", re.IGNORECASE)


def strip_compression(action: str) -> str:
    """``action`` without its ``<compression>`` blocks (and stray tags), stripped: what the env plays.

    Self-compression tags are for the history image, never for the env; the env server
    (``history.compression``) and the rollout engine both remove them with this function, so the
    same action reaches the env wherever AgentOCR renders.
    """
    return _COMPRESSION_TAG.sub("", _COMPRESSION_BLOCK.sub("", action)).strip()


PROJECTIONS: Mapping[str, Callable[[object], Projection]] = MappingProxyType(
    {
        "think_action": partial(project_think_action, tail_chars=30),  # the generic name of the rule
        "alfworld": partial(project_think_action, tail_chars=30),
        "webshop": partial(project_think_action, tail_chars=20),
        "agentocr": partial(project_think_action, tail_chars=30, fallback="empty", strict_tags=True),
        "search": project_search_answer,
        "tool_call": project_tool_call,
    }
)


def projector(rule: str) -> Callable[[object], Projection]:
    """The projection function of a rule: a name from :data:`PROJECTIONS` or ``"module:function"``.

    An env's catalogue entry names its rule (``envhub.envs.resolve(name).projection``); a family
    with a rule of its own points at a function in its package, so this module never changes
    for a new family.

    Raises:
        ConfigurationError: ``rule`` is neither a known name nor an importable function.
    """
    found = PROJECTIONS.get(rule)
    if found is not None:
        return found
    if ":" in rule:
        try:
            loaded = load_entry_point(rule)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigurationError(
                f"Projection rule {rule!r} does not import ({exc}); give 'package.module:function'.",
                rule=rule,
            ) from exc
        if callable(loaded):
            return loaded  # type: ignore[no-any-return]
    raise ConfigurationError(
        f"Unknown projection rule {rule!r}; use one of {sorted(PROJECTIONS)} or 'package.module:function'.",
        rule=rule,
    )


def project(output: object, rule: str, *, compression: bool = False) -> Projection:
    """Project ``output`` with a rule: a name from :data:`PROJECTIONS` or ``"module:function"``.

    Args:
        output: the model's text (anything; never raises on it).
        rule: ``alfworld`` (= ``think_action``), ``webshop``, ``agentocr``, ``search``,
            ``tool_call``, or a ``"module:function"`` (an env's ``EnvSpec.projection``).
        compression: also read the AgentOCR compression tag (a repeated tag makes it invalid).

    Returns:
        The projection.

    Raises:
        ConfigurationError: ``rule`` is not a known rule (a programming error, not input).
    """
    result = projector(rule)(output)
    if not compression:
        return result
    tag = parse_compression(output)
    # AgentOCR keeps factor 1 for an answer (search) and when it rejected repeated action tags.
    factor = 1.0 if result.kind == "answer" or result.reason == _REPEATED_ACTION else tag.factor
    reason = _why(result.reason, tag.reason)
    return replace(result, is_valid=result.is_valid and tag.is_valid, reason=reason, compression=factor)
