"""The agent's context during a rollout: what each group member's prompt is built from.

:class:`ContextConfig` is the configuration (memory window and style, prompt template family,
projection rule, AgentOCR, self-compression, max steps); :class:`AgentContext` is one member's
state (its :class:`~envhub.agent.EpisodeMemory`, and its :class:`~envhub.render.OpticalHistory`
when AgentOCR renders on the client). Both only compose :mod:`envhub.agent` and
:mod:`envhub.render`; the formats are theirs (verl-agent's step prompts, AgentOCR's images).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envhub.agent import EpisodeMemory, Projection, PromptTemplate, build_messages, family_template, project
from envhub.core.errors import ConfigurationError
from envhub.render import OpticalHistory, RenderConfig, TileStore, estimate_text_tokens

__all__ = ["AgentContext", "ContextConfig", "PromptView", "env_spec", "family_of"]

_RENDER_PRESETS = {"alfworld": (RenderConfig.alfworld, "ocr"), "search": (RenderConfig.search, "ocr-search")}


def env_spec(env_id: str) -> Any:
    """The catalogue entry of ``env_id`` (an id, a short name or a family name).

    Raises:
        UnknownEnvError: ``env_id`` is not in the catalogue.
    """
    from envhub.envs import registry

    # The catalogue lookup is ``resolve`` (``get_spec`` in earlier versions of the registry).
    lookup = getattr(registry, "resolve", None) or getattr(registry, "get_spec")  # noqa: B009
    return lookup(env_id)


def family_of(env_id: str) -> str:
    """The env family (prompt module name) of a catalogue env id, e.g. ``alfworld``.

    Raises:
        UnknownEnvError: ``env_id`` is not in the catalogue.
    """
    return str(env_spec(env_id).family)


class ContextConfig(BaseModel):
    """How prompts are built and model text becomes actions.

    ``None`` fields take the family's defaults (its ``prompt.py`` module).
    """

    model_config = ConfigDict(extra="forbid")

    family: str | None = Field(
        default=None,
        description="Prompt template family (envhub/envs/<family>/prompt.py); default: the env's.",
    )
    history_length: int | None = Field(
        default=None, ge=0, description="Steps of history shown in text prompts (family default if null)."
    )
    memory_style: Literal["step", "search", "ocr", "ocr-search"] | None = Field(
        default=None, description="Format of history lines (family default if null)."
    )
    projection: str = Field(
        default="think_action", description="Projection rule (envhub.agent.PROJECTIONS) from text to action."
    )
    compression: bool = Field(default=False, description="Parse AgentOCR <compression> tags.")
    agentocr: bool = Field(default=False, description="Show the history as an image (AgentOCR).")
    render_at: Literal["client", "server"] = Field(
        default="client",
        description="Where AgentOCR images are rendered: in the engine or in the env server.",
    )
    render_preset: Literal["alfworld", "search"] = Field(default="alfworld", description="AgentOCR look.")
    ocr_window: int = Field(default=50, ge=1, description="Steps shown in the AgentOCR image.")
    inline_images: bool = Field(
        default=False, description="Keep the PNG in each Step (else only its hash and token counts)."
    )
    max_steps: int = Field(default=50, ge=1, le=10_000, description="Steps before an episode is truncated.")

    def template(self, env_id: str) -> PromptTemplate:
        """The prompt template for ``env_id`` with this config's overrides applied.

        Raises:
            ConfigurationError: the family has no prompt module, or AgentOCR is on but the family
                has no image template, or the projection rule is unknown.
        """
        template = family_template(self.family or family_of(env_id))
        if self.memory_style is not None:
            template = dataclasses.replace(template, memory_style=self.memory_style)
        if self.agentocr and template.history_image is None:
            raise ConfigurationError(
                f"AgentOCR is on but family {self.family or family_of(env_id)!r} has no HISTORY_IMAGE "
                "template; turn agentocr off or add one to its prompt module."
            )
        if self.agentocr and self.render_at == "server":
            raise ConfigurationError(
                "render_at='server' needs the env server's history session option, which this engine does "
                "not drive yet; use render_at='client' (pixel-identical images)."
            )
        project("", self.projection)  # unknown rule -> ConfigurationError now, not at step 1
        return template


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
        template: the resolved template (:meth:`ContextConfig.template`).
        store: the process-wide AgentOCR tile store (shared across members).
    """

    def __init__(
        self, config: ContextConfig, template: PromptTemplate, store: TileStore | None = None
    ) -> None:
        self.config = config
        self.template = template
        self.memory = EpisodeMemory()
        self.optical: OpticalHistory | None = None
        if config.agentocr:
            make, style = _RENDER_PRESETS[config.render_preset]
            self.optical = OpticalHistory(make(), window=config.ocr_window, style=style, store=store)

    def prompt(self, observation: str, info: dict[str, Any]) -> PromptView:
        """The messages for the current step (observation + memory [+ history image])."""
        import time

        admissible = info.get("admissible_actions")
        if self.optical is None:
            messages = build_messages(
                self.template,
                observation=observation,
                memory=self.memory,
                admissible_actions=admissible,
                history_length=self.config.history_length,
            )
            return PromptView(messages)
        started = time.perf_counter()
        rendered = self.optical.render()
        png = rendered.png()
        render_s = time.perf_counter() - started
        messages = build_messages(
            self.template,
            observation=observation,
            memory=self.memory,
            admissible_actions=admissible,
            history_length=self.config.ocr_window,
            history_image=png,
        )
        lines = self.optical.memory.window(self.optical.window, self.optical.style).text
        return PromptView(
            messages,
            image_ref="sha256:" + hashlib.sha256(png).hexdigest(),
            image_png=png if self.config.inline_images else None,
            vision_tokens=rendered.vision_tokens(),
            text_tokens=estimate_text_tokens(lines),
            render_s=render_s,
        )

    def project(self, text: str) -> Projection:
        """The action a completion's text means (never raises)."""
        return project(text, self.config.projection, compression=self.config.compression)

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
