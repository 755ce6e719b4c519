"""The agent context: prompts from observation + memory, projection, AgentOCR images."""

from __future__ import annotations

import pytest

from envhub.agent import Projection
from envhub.core.errors import ConfigurationError
from envhub.rollout.context import AgentContext, ContextConfig, family_of

TS = "envhub/TimeSeries-v0"


def test_family_comes_from_the_catalogue() -> None:
    assert family_of(TS) == "timeseries" and family_of("envhub/ALFWorld-v0") == "alfworld"


def test_text_prompts_show_the_history_window_after_the_first_step() -> None:
    config = ContextConfig(history_length=1)
    ctx = AgentContext(config, config.template(TS))
    first = ctx.prompt("Series of length 10.", {})
    assert first.image_ref is None and "Series of length 10." in first.messages[-1]["content"]
    ctx.record("Series of length 10.", Projection("stats[0:5]", True), "mean=1")
    ctx.record("mean=1", Projection("zoom[0:5]", True), "1, 2, 3")
    later = ctx.prompt("1, 2, 3", {}).messages[-1]["content"]
    assert "zoom[0:5]" in later and "stats[0:5]" not in later  # only the last step is shown
    assert "Series of length 10." in later  # the task is repeated


def test_projection_follows_the_configured_rule() -> None:
    config = ContextConfig(projection="think_action")
    ctx = AgentContext(config, config.template(TS))
    assert ctx.project("<think>x</think><action>fft[0:9]</action>").action == "fft[0:9]"
    assert not ctx.project("no tags").is_valid


def test_agentocr_prompts_carry_an_image_and_its_token_accounting() -> None:
    config = ContextConfig(agentocr=True, compression=True, projection="agentocr", inline_images=True)
    ctx = AgentContext(config, config.template(TS))
    projection = ctx.project("<think>x</think><action>stats[0:5]</action><compression>2</compression>")
    ctx.record("Series of length 10.", projection, "mean=1")
    view = ctx.prompt("mean=1", {})
    assert view.image_png is not None and view.image_png.startswith(b"\x89PNG")
    assert view.image_ref is not None and view.vision_tokens and view.text_tokens
    assert view.messages[-1]["content"][0]["type"] == "image_url"
    ctx.close()


def test_bad_configurations_fail_before_the_first_step() -> None:
    with pytest.raises(ConfigurationError, match="projection"):
        ContextConfig(projection="nope").template(TS)
    with pytest.raises(ConfigurationError, match="render_at='server'"):
        ContextConfig(agentocr=True, render_at="server").template(TS)
    with pytest.raises(ConfigurationError):
        ContextConfig(family="no_such_family").template(TS)
