"""An env's AgentOCR look, read from its catalogue entry."""

from __future__ import annotations

from dataclasses import dataclass

from envhub.agent.prompt import family_template
from envhub.core.errors import ConfigurationError
from envhub.core.registry import EnvSpec, load_entry_point
from envhub.envs.registry import resolve
from envhub.render._config import RenderConfig

__all__ = ["RenderPreset", "render_preset"]


@dataclass(frozen=True)
class RenderPreset:
    """How an env's history images look and what their lines say.

    Attributes:
        config: the look (font, width, highlights).
        style: the memory style of the image's lines (``ocr`` or ``ocr-search``), from the
            env's prompt module (``HISTORY_IMAGE_STYLE``; ``ocr`` without one).
    """

    config: RenderConfig
    style: str


def render_preset(env: str | EnvSpec, *, highlight: bool = True) -> RenderPreset:
    """The render preset of an env, as its catalogue entry's ``render_preset`` names it.

    Args:
        env: any name :func:`envhub.envs.resolve` accepts (``"alfworld"``, ``"search"``, ...)
            or the spec itself.
        highlight: colour the markers (``[Observation]``/``[Action]``, search tags).

    Raises:
        UnknownEnvError: no env has that name.
        ConfigurationError: the env has no render preset, or it does not give a RenderConfig.
    """
    spec = resolve(env) if isinstance(env, str) else env
    if spec.render_preset is None:
        raise ConfigurationError(
            f"Env {spec.id} has no render preset; set render_preset='package.module:function' "
            "(for example 'envhub.render:RenderConfig.alfworld') on its catalogue entry.",
            env=spec.id,
        )
    try:
        config = load_entry_point(spec.render_preset)(highlight=highlight)
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        raise ConfigurationError(
            f"The render preset {spec.render_preset!r} of env {spec.id} failed ({exc}); it must be a "
            "function taking highlight= and returning a RenderConfig.",
            env=spec.id,
        ) from exc
    if not isinstance(config, RenderConfig):
        raise ConfigurationError(
            f"The render preset {spec.render_preset!r} of env {spec.id} returned a "
            f"{type(config).__name__}, not a RenderConfig.",
            env=spec.id,
        )
    style = family_template(spec).history_image_style if spec.prompt is not None else "ocr"
    return RenderPreset(config=config, style=style)
