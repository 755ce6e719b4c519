"""Tool declarations, their OpenAI function schemas, and the dispatcher that runs them.

A tool is a plain function ``fn(db, **arguments) -> str`` plus a :class:`ToolSpec` that
declares its name, what it does, its parameters and whether it writes to the database.
:func:`invoke_tool` runs one call the way tau-bench's ``Env.step`` does: an exception
raised inside a tool becomes the observation ``"Error: <message>"``, and an unknown name
becomes ``"Unknown action <name>"``.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envhub.envs.tau.db import TauDB

__all__ = [
    "CALCULATE_TOOL",
    "THINK_TOOL",
    "TRANSFER_TOOL",
    "Param",
    "ToolFn",
    "ToolResult",
    "ToolSpec",
    "invoke_tool",
    "safe_calculate",
    "tool_schemas",
]

ToolFn = Callable[..., str]


@dataclass(frozen=True)
class Param:
    """One parameter of a tool.

    Attributes:
        name: the keyword the tool takes.
        type: JSON-schema type (``string``, ``integer``, ``number``, ``array``, ``object``).
        description: what to pass (shown to the model).
        enum: allowed values, if restricted.
        items: JSON schema of array elements.
    """

    name: str
    type: str
    description: str = ""
    enum: tuple[str, ...] | None = None
    items: Mapping[str, Any] | None = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.items is not None:
            out["items"] = copy.deepcopy(dict(self.items))
        return out


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """A tool: its function, schema and whether it changes the database."""

    name: str
    description: str
    fn: ToolFn
    params: tuple[Param, ...] = field(default_factory=tuple)
    writes: bool = False

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.schema() for p in self.params},
                    "required": [p.name for p in self.params],
                },
            },
        }


@dataclass(frozen=True)
class ToolResult:
    """What one tool call produced.

    Attributes:
        output: the observation text (tool output, ``Error: ...`` or ``Unknown action ...``).
        known: the tool name exists.
        error: the output is an error string.
    """

    output: str
    known: bool
    error: bool


def tool_schemas(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The OpenAI schemas of ``tools``, in order."""
    return [t.schema() for t in tools]


def invoke_tool(
    tools: Mapping[str, ToolSpec], db: TauDB, name: str, arguments: Mapping[str, Any]
) -> ToolResult:
    """Run one tool call against ``db`` (tau-bench's ``Env.step`` for a tool action).

    Never raises: a tool's exception becomes ``"Error: <message>"``.
    """
    spec = tools.get(name)
    if spec is None:
        return ToolResult(output=f"Unknown action {name}", known=False, error=True)
    try:
        output = spec.fn(db, **dict(arguments))
    except TypeError as exc:
        # Python names our function in argument errors; tau-bench's names its tool class's
        # invoke(), e.g. "ModifyPendingOrderItems.invoke() got an unexpected keyword argument ...".
        cls = "".join(part.capitalize() for part in spec.name.split("_"))
        output = "Error: " + str(exc).replace(f"{spec.fn.__name__}()", f"{cls}.invoke()", 1)
    except Exception as exc:
        output = f"Error: {exc}"
    output = str(output)
    return ToolResult(output=output, known=True, error=output.startswith("Error:"))


# -- calculate --------------------------------------------------------------------------------

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_EXPONENT = 4096


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        # eval() would happily compute 9**9**9 and hang the env; refuse huge powers instead.
        if isinstance(node.op, ast.Pow) and isinstance(right, int | float) and abs(right) > _MAX_EXPONENT:
            raise OverflowError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        raise TypeError(f"'{type(_evaluate(node.func)).__name__}' object is not callable")
    raise SyntaxError("invalid syntax")


def safe_calculate(expression: str) -> str:
    """tau-bench's ``calculate``: digits, ``+-*/().`` and spaces only; result rounded to 2 places.

    Evaluated over the expression's syntax tree rather than with ``eval`` so a huge power
    cannot stall the env; results and error texts otherwise match ``eval``.
    """
    if not all(char in "0123456789+-*/(). " for char in expression):
        return "Error: invalid characters in expression"
    if not isinstance(expression, str):
        # A JSON list of allowed strings (or an empty list or object) passes the character
        # check; tau-bench's eval() then rejects it with this message.
        return "Error: eval() arg 1 must be a string, bytes or code object"
    try:
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
        return str(round(float(_evaluate(tree)), 2))
    except Exception as exc:
        return f"Error: {exc}"


# -- the three tools every tau-bench domain shares ---------------------------------------------


def _calculate(db: TauDB, expression: str) -> str:
    return safe_calculate(expression)


def _think(db: TauDB, thought: str) -> str:
    return ""


def _transfer_to_human_agents(db: TauDB, summary: str) -> str:
    return "Transfer successful"


CALCULATE_TOOL = ToolSpec(
    "calculate",
    "Evaluate an arithmetic expression and return the result rounded to 2 decimals.",
    _calculate,
    (Param("expression", "string", "Numbers, + - * /, parentheses and spaces, e.g. '2 + 2'."),),
)
THINK_TOOL = ToolSpec(
    "think",
    "Write down a thought. Reads nothing and changes nothing; use it for reasoning or as a notepad.",
    _think,
    (Param("thought", "string", "The thought."),),
)
TRANSFER_TOOL = ToolSpec(
    "transfer_to_human_agents",
    "Hand the conversation to a human agent with a summary. Only when the user asks for a human, or the "
    "request cannot be handled with the available tools.",
    _transfer_to_human_agents,
    (Param("summary", "string", "A summary of the user's issue."),),
)
