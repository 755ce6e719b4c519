"""The agent's context during a rollout: what each group member's prompt is built from.

:class:`~envhub.core.wire.ContextConfig` (a field of the rollout request) is the configuration
(memory window and style, prompt template family, projection rule, AgentOCR, self-compression);
:func:`resolve_context` applies it to one env; :class:`AgentContext` is one member's state
(its :class:`~envhub.agent.EpisodeMemory`, and its :class:`~envhub.render.OpticalHistory` when
AgentOCR renders on the client). Both only compose :mod:`envhub.agent` and :mod:`envhub.render`;
the formats are theirs (verl-agent's step prompts, AgentOCR's images).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from typing import Any

from envhub.agent import (
    EpisodeMemory,
    Projection,
    PromptTemplate,
    build_messages,
    family_template,
    project,
    strip_compression,
)
from envhub.core.errors import ConfigurationError
from envhub.core.registry import EnvSpec
from envhub.core.wire import HISTORY_PRESETS, ContextConfig, HistoryOptions
from envhub.envs import resolve
from envhub.render import (
    OpticalHistory,
    RenderConfig,
    RenderPreset,
    TileStore,
    estimate_text_tokens,
    render_preset,
    vision_tokens,
)

__all__ = ["AgentContext", "PromptView", "ResolvedContext", "ServerImage", "resolve_context"]


def resolve_context(config: ContextConfig, env_id: str) -> ResolvedContext:
    """What ``config`` means for ``env_id``: its spec's template, rule and preset, overrides applied.

    Raises:
        UnknownEnvError: ``env_id`` (or an override's env name) is not in the catalogue.
        ConfigurationError: the env has no prompt module, or no projection rule and none is
            configured, or the rule is unknown, or AgentOCR is on but the env has no image
            template or render preset (or, rendering on the server, none the server knows).
    """
    spec = resolve(env_id)
    template = family_template(config.family or spec)
    if config.memory_style is not None:
        template = dataclasses.replace(template, memory_style=config.memory_style)
    rule = config.projection or spec.projection
    if rule is None:
        raise ConfigurationError(
            f"Env {spec.id} names no projection rule in its catalogue entry; set "
            "context.projection (e.g. 'think_action').",
            env=spec.id,
        )
    project("", rule)  # unknown rule -> ConfigurationError now, not at step 1
    preset: RenderPreset | None = None
    server_preset: str | None = None
    if config.agentocr:
        if template.history_image is None:
            raise ConfigurationError(
                f"AgentOCR is on but the prompt module of {spec.id} has no HISTORY_IMAGE template; "
                "turn agentocr off or add one to its prompt module.",
                env=spec.id,
            )
        preset = render_preset(config.render_preset or spec)
        if config.render_at == "server":
            server_preset = _server_preset(preset.config)
    return ResolvedContext(spec, template, rule, preset, server_preset)


def _server_preset(config: RenderConfig) -> str:
    """The name the env server knows ``config`` by (its history option's ``preset``)."""
    for name in HISTORY_PRESETS:
        if getattr(RenderConfig, name)() == config:
            return name
    raise ConfigurationError(
        "render_at='server' needs a render preset the env server has "
        f"({', '.join(HISTORY_PRESETS)}); this env's is not one of them. Use render_at='client'."
    )


@dataclass(frozen=True)
class ResolvedContext:
    """A :class:`ContextConfig` applied to one env.

    Attributes:
        spec: the env's catalogue entry.
        template: its prompt template (overrides applied).
        projection: the projection rule.
        preset: the AgentOCR render preset (None when AgentOCR is off).
        server_preset: the env server's name of that preset when rendering on the server.
    """

    spec: EnvSpec
    template: PromptTemplate
    projection: str
    preset: RenderPreset | None = None
    server_preset: str | None = None

    def history_options(self, config: ContextConfig) -> HistoryOptions | None:
        """The env server's ``history`` option for rendering on the server (None otherwise)."""
        if self.server_preset is None or self.preset is None:
            return None
        return HistoryOptions.model_validate(
            {
                "style": self.preset.style,
                "window": config.ocr_window,
                "preset": self.server_preset,
                "compression": config.compression,
                "inline": True,
            }
        )


@dataclass(frozen=True)
class ServerImage:
    """A history image the env server rendered: its PNG and, when the server said, its text tokens."""

    png: bytes
    width: int
    height: int
    text_tokens: int | None = None


@dataclass(frozen=True)
class PromptView:
    """One step's prompt and its AgentOCR accounting.

    Attributes:
        messages: the chat messages for the policy.
        image_ref: sha256 of the history PNG (AgentOCR), else None.
        image_png: the PNG itself when the config keeps images inline.
        vision_tokens: tokens the image costs a Qwen2.5-VL-style model.
        text_tokens: the estimated tokens of the same history as text.
        render_s: seconds spent rendering.
    """

    messages: list[dict[str, Any]]
    image_ref: str | None = None
    image_png: bytes | None = None
    vision_tokens: int | None = None
    text_tokens: int | None = None
    render_s: float = 0.0


class AgentContext:
    """One group member's episode context.

    Args:
        config: the context configuration.
        resolved: the config applied to the env (:meth:`ContextConfig.resolve`).
        store: the process-wide AgentOCR tile store (shared across members; client rendering).
    """

    def __init__(
        self, config: ContextConfig, resolved: ResolvedContext, store: TileStore | None = None
    ) -> None:
        self.config = config
        self.resolved = resolved
        self.template = resolved.template
        self.memory = EpisodeMemory()
        self.optical: OpticalHistory | None = None
        #: Rendering on the server: the latest image it sent (set by the engine).
        self.server_image: ServerImage | None = None
        if resolved.preset is not None and resolved.server_preset is None:
            self.optical = OpticalHistory(
                resolved.preset.config, window=config.ocr_window, style=resolved.preset.style, store=store
            )

    def prompt(self, observation: str, info: dict[str, Any]) -> PromptView:
        """The messages for the current step (observation + memory [+ history image]).

        Raises:
            ConfigurationError: rendering on the server, but no image has come from it yet.
        """
        admissible = info.get("admissible_actions")
        if self.resolved.preset is None:
            messages = build_messages(
                self.template,
                observation=observation,
                memory=self.memory,
                admissible_actions=admissible,
                history_length=self.config.history_length,
            )
            return PromptView(messages)
        started = time.perf_counter()
        if self.optical is not None:
            rendered = self.optical.render()
            png = rendered.png()
            width, height = rendered.size
            text_tokens: int | None = None
        else:
            if self.server_image is None:
                raise ConfigurationError("render_at='server': no history image from the env server yet.")
            png, width, height = self.server_image.png, self.server_image.width, self.server_image.height
            text_tokens = self.server_image.text_tokens
        render_s = time.perf_counter() - started
        if text_tokens is None:
            # The window the image shows, as text (the server sends this number after each step).
            preset = self.resolved.preset
            text_tokens = estimate_text_tokens(self.memory.window(self.config.ocr_window, preset.style).text)
        messages = build_messages(
            self.template,
            observation=observation,
            memory=self.memory,
            admissible_actions=admissible,
            history_length=self.config.ocr_window,
            history_image=png,
        )
        return PromptView(
            messages,
            image_ref="sha256:" + hashlib.sha256(png).hexdigest(),
            image_png=png if self.config.inline_images else None,
            vision_tokens=vision_tokens(width, height),
            text_tokens=text_tokens,
            render_s=render_s,
        )

    def project(self, text: str) -> Projection:
        """The action a completion's text means (never raises).

        With self-compression on, ``<compression>`` tags are removed from the action (the env
        never sees them, as on the env server) and their factor is the projection's.
        """
        projection = project(text, self.resolved.projection, compression=self.config.compression)
        if self.config.compression:
            projection = dataclasses.replace(projection, action=strip_compression(projection.action))
        return projection

    def record(self, observation: str, projection: Projection, result: str) -> None:
        """Remember one step: the observation acted in, the action and what it produced."""
        self.memory.store(observation, projection.action, result=result)
        if self.optical is not None:
            self.optical.record(
                observation, projection.action, compression=projection.compression, result=result
            )

    def close(self) -> None:
        """Release this member's cached AgentOCR tiles."""
        if self.optical is not None:
            self.optical.close()
