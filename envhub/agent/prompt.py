"""Build the chat messages a policy sees at each step.

A family's prompt module (usually ``envhub/envs/<family>/prompt.py``, named by the ``prompt``
field of the env's catalogue entry) holds plain strings and at most two small functions, so
the env layer never imports this one:

* ``FIRST_STEP`` — the template of the first step (no history);
* ``WITH_HISTORY`` — the template once there is history;
* optional ``HISTORY_IMAGE`` — the AgentOCR variant (history shown as an image, a
  ``<compression>`` instruction); optional ``SYSTEM`` — a system message;
* optional ``MEMORY_STYLE`` (default ``"step"``), ``HISTORY_LENGTH`` (default 2),
  ``MAX_PROMPT_CHARS`` (fall back to ``FIRST_STEP`` when the history prompt is longer),
  ``HISTORY_IMAGE_STYLE`` (the memory style of the history image's lines, default ``"ocr"``);
* optional ``extract_task(observation) -> str`` and ``format_actions(actions) -> str``.

Templates are ``str.format`` strings over these fields: ``{task}``, ``{observation}``,
``{admissible_actions}``, ``{step_count}`` (steps taken), ``{history_length}`` (steps shown),
``{history}``, ``{current_step}`` (``step_count + 1``). The structure follows verl-agent's
prompts (``shared/reference/algorithms.md`` §4); the wording is envhub's own.
"""

from __future__ import annotations

import base64
import importlib
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from envhub.agent.memory import MEMORY_STYLES, EpisodeMemory
from envhub.core.errors import ConfigurationError
from envhub.core.registry import EnvSpec
from envhub.envs.registry import resolve

__all__ = ["FIELDS", "PromptTemplate", "build_messages", "family_template", "format_admissible"]

FIELDS = frozenset(
    {"task", "observation", "admissible_actions", "step_count", "history_length", "history", "current_step"}
)


def format_admissible(actions: Sequence[str] | None) -> str:
    """Admissible actions as the reference lists them: quoted, one per line, without ``help``."""
    if not actions:
        return ""
    return "\n ".join(f"'{a}'" for a in actions if a != "help")


def _fields_of(template: str, name: str) -> frozenset[str]:
    try:
        used = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:
        raise ConfigurationError(f"Prompt template {name} is not a valid format string: {exc}.") from exc
    unknown = used - FIELDS
    if unknown or "" in used:
        raise ConfigurationError(
            f"Prompt template {name} uses unknown fields {sorted(unknown or {'{}'})}; "
            f"templates may use only {sorted(FIELDS)} (double braces for literal ones).",
            template=name,
        )
    return frozenset(used)


def _no_task(observation: str) -> str:
    return ""


@dataclass(frozen=True)
class PromptTemplate:
    """One family's prompts (see the module docstring for the fields).

    Raises:
        ConfigurationError: a template uses an unknown field, or the memory style is unknown.
    """

    first_step: str
    with_history: str
    history_image: str | None = None
    system: str | None = None
    memory_style: str = "step"
    history_image_style: str = "ocr"
    history_length: int = 2
    max_prompt_chars: int | None = None
    extract_task: Callable[[str], str] = _no_task
    format_actions: Callable[[Sequence[str] | None], str] = format_admissible

    def __post_init__(self) -> None:
        for name in ("first_step", "with_history", "history_image"):
            value = getattr(self, name)
            if value is not None:
                _fields_of(value, name)
        for style in (self.memory_style, self.history_image_style):
            if style not in MEMORY_STYLES:
                raise ConfigurationError(
                    f"Unknown memory style {style!r}; use one of {sorted(MEMORY_STYLES)}."
                )

    @classmethod
    def from_module(cls, module: ModuleType) -> PromptTemplate:
        """Read a family prompt module's constants and functions."""
        missing = [name for name in ("FIRST_STEP", "WITH_HISTORY") if not hasattr(module, name)]
        if missing:
            raise ConfigurationError(
                f"{module.__name__} must define {missing} (see envhub.agent.prompt for the contract)."
            )
        return cls(
            first_step=module.FIRST_STEP,
            with_history=module.WITH_HISTORY,
            history_image=getattr(module, "HISTORY_IMAGE", None),
            system=getattr(module, "SYSTEM", None),
            memory_style=getattr(module, "MEMORY_STYLE", "step"),
            history_image_style=getattr(module, "HISTORY_IMAGE_STYLE", "ocr"),
            history_length=getattr(module, "HISTORY_LENGTH", 2),
            max_prompt_chars=getattr(module, "MAX_PROMPT_CHARS", None),
            extract_task=getattr(module, "extract_task", _no_task),
            format_actions=getattr(module, "format_actions", format_admissible),
        )


def family_template(env: str | EnvSpec) -> PromptTemplate:
    """The :class:`PromptTemplate` of an env: the module its catalogue entry's ``prompt`` names.

    Args:
        env: any name :func:`envhub.envs.resolve` accepts (``"alfworld"``,
            ``"envhub/WebShop-v0"``, ...) or the spec itself.

    Raises:
        UnknownEnvError: no env has that name.
        ConfigurationError: the env has no prompt module, or the module breaks the contract.
    """
    spec = resolve(env) if isinstance(env, str) else env
    if spec.prompt is None:
        raise ConfigurationError(
            f"Env {spec.id} has no prompt module; set prompt='package.module' on its catalogue "
            "entry or pass a PromptTemplate explicitly.",
            env=spec.id,
        )
    try:
        module = importlib.import_module(spec.prompt)
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"The prompt module {spec.prompt!r} of env {spec.id} does not import ({exc}); fix the "
            "prompt field of its catalogue entry.",
            env=spec.id,
        ) from exc
    return PromptTemplate.from_module(module)


def _image_part(png: bytes) -> dict[str, Any]:
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url}}


def build_messages(
    template: PromptTemplate,
    *,
    observation: str,
    memory: EpisodeMemory,
    admissible_actions: Sequence[str] | None = None,
    task: str | None = None,
    history_length: int | None = None,
    history_image: bytes | None = None,
) -> list[dict[str, Any]]:
    """The chat messages for the current step.

    The first step (empty memory) uses ``first_step``; later steps ``with_history`` over the
    last ``history_length`` records, unless the result is longer than ``max_prompt_chars``
    (then ``first_step``, as verl-agent's WebShop prompt does). With ``history_image`` (PNG
    bytes, AgentOCR) the ``history_image`` template is used and the image leads the user
    message as an OpenAI-style ``image_url`` part.

    Args:
        template: the family's prompts.
        observation: the current observation.
        memory: the episode's records so far.
        admissible_actions: the env's admissible actions (``help`` is left out), if any.
        task: the task text; default ``template.extract_task`` of the first observation.
        history_length: records to show; default ``template.history_length``.
        history_image: the rendered history, to show as an image instead of text.

    Returns:
        ``[{"role": "system", ...}?, {"role": "user", "content": str | list}]``.

    Raises:
        ConfigurationError: ``history_image`` given but the family has no image template.
    """
    k = template.history_length if history_length is None else history_length
    records = memory.records
    first_obs = records[0].observation if records else observation
    window = memory.window(k, template.memory_style)
    values = {
        "task": task if task is not None else template.extract_task(first_obs),
        "observation": observation,
        "admissible_actions": template.format_actions(admissible_actions),
        "step_count": len(records),
        "history_length": len(window),
        "history": window.text,
        "current_step": len(records) + 1,
    }
    if history_image is not None:
        if template.history_image is None:
            raise ConfigurationError("This family's prompt module defines no HISTORY_IMAGE template.")
        content: str | list[dict[str, Any]] = [
            _image_part(history_image),
            {"type": "text", "text": template.history_image.format_map(values)},
        ]
    else:
        text = template.with_history.format_map(values) if records and k > 0 else ""
        if not text or (template.max_prompt_chars is not None and len(text) > template.max_prompt_chars):
            text = template.first_step.format_map(values)
        content = text
    messages: list[dict[str, Any]] = []
    if template.system:
        messages.append({"role": "system", "content": template.system})
    messages.append({"role": "user", "content": content})
    return messages
