"""The agent context: prompts from observation + memory, projection, AgentOCR images."""

from __future__ import annotations

import pytest

from envhub.agent import Projection, family_template
from envhub.core.errors import ConfigurationError, EnvhubError
from envhub.core.wire import ContextConfig
from envhub.envs import resolve
from envhub.render import render_preset
from envhub.rollout.context import AgentContext, resolve_context

TS = "envhub/TimeSeries-v0"


def test_the_context_comes_from_the_env_spec() -> None:
    for env in ("envhub/ALFWorld-v0", TS, "envhub/SearchQA-v0"):
        spec = resolve(env)
        resolved = resolve_context(ContextConfig(agentocr=spec.render_preset is not None), env)
        assert resolved.projection == spec.projection
        assert resolved.template == family_template(spec)
        assert resolved.preset == (render_preset(spec) if spec.render_preset else None)


def test_config_fields_override_the_spec() -> None:
    resolved = resolve_context(
        ContextConfig(
            projection="agentocr",
            family="envhub/ALFWorld-v0",
            agentocr=True,
            render_preset="envhub/SearchQA-v0",
        ),
        TS,
    )
    assert resolved.projection == "agentocr"
    assert resolved.template == family_template("envhub/ALFWorld-v0")
    assert resolved.preset == render_preset("envhub/SearchQA-v0")


def test_server_rendering_names_the_servers_preset() -> None:
    resolved = resolve_context(
        ContextConfig(agentocr=True, render_at="server", compression=True, ocr_window=7), "envhub/SearchQA-v0"
    )
    options = resolved.history_options(ContextConfig(agentocr=True, compression=True, ocr_window=7))
    assert options is not None
    assert (options.preset, options.style, options.window, options.compression, options.inline) == (
        "search",
        render_preset("envhub/SearchQA-v0").style,
        7,
        True,
        True,
    )
    assert (
        resolve_context(ContextConfig(agentocr=True), "envhub/SearchQA-v0").history_options(ContextConfig())
        is None
    )


def test_compression_tags_never_reach_the_env() -> None:
    config = ContextConfig(compression=True, projection="think_action")
    ctx = AgentContext(config, resolve_context(config, TS))
    p = ctx.project("<think>x</think><action>fft[0:9]<compression>3</compression></action>")
    assert p.action == "fft[0:9]" and p.compression == 3.0


def test_text_prompts_show_the_history_window_after_the_first_step() -> None:
    config = ContextConfig(history_length=1)
    ctx = AgentContext(config, resolve_context(config, TS))
    first = ctx.prompt("Series of length 10.", {})
    assert first.image_ref is None and "Series of length 10." in first.messages[-1]["content"]
    ctx.record("Series of length 10.", Projection("stats[0:5]", True), "mean=1")
    ctx.record("mean=1", Projection("zoom[0:5]", True), "1, 2, 3")
    later = ctx.prompt("1, 2, 3", {}).messages[-1]["content"]
    assert "zoom[0:5]" in later and "stats[0:5]" not in later  # only the last step is shown
    assert "Series of length 10." in later  # the task is repeated


def test_projection_follows_the_configured_rule() -> None:
    config = ContextConfig(projection="think_action")
    ctx = AgentContext(config, resolve_context(config, TS))
    assert ctx.project("<think>x</think><action>fft[0:9]</action>").action == "fft[0:9]"
    assert not ctx.project("no tags").is_valid


def test_agentocr_prompts_carry_an_image_and_its_token_accounting() -> None:
    config = ContextConfig(
        agentocr=True,
        compression=True,
        projection="agentocr",
        inline_images=True,
        render_preset="envhub/ALFWorld-v0",
    )
    ctx = AgentContext(config, resolve_context(config, TS))
    projection = ctx.project("<think>x</think><action>stats[0:5]</action><compression>2</compression>")
    ctx.record("Series of length 10.", projection, "mean=1")
    view = ctx.prompt("mean=1", {})
    assert view.image_png is not None and view.image_png.startswith(b"\x89PNG")
    assert view.image_ref is not None and view.vision_tokens and view.text_tokens
    assert view.messages[-1]["content"][0]["type"] == "image_url"
    ctx.close()


def test_bad_configurations_fail_before_the_first_step() -> None:
    with pytest.raises(ConfigurationError, match="projection"):
        resolve_context(ContextConfig(projection="nope"), TS)
    with pytest.raises(ConfigurationError, match="render preset"):
        resolve_context(ContextConfig(agentocr=True), TS)  # TimeSeries has no AgentOCR look
    with pytest.raises(EnvhubError):
        resolve_context(ContextConfig(family="no_such_family"), TS)
