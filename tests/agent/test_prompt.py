"""Prompt building: family templates + memory window + observation + admissible actions."""

from __future__ import annotations

import base64
import types

import pytest

from envhub.agent import EpisodeMemory, PromptTemplate, build_messages, family_template, format_admissible
from envhub.core.errors import ConfigurationError, UnknownEnvError
from envhub.render.samples import alfworld_style_steps

ACTIONS = ["go to desk 1", "help", "inventory", "look"]


def _memory(steps: int) -> EpisodeMemory:
    memory = EpisodeMemory()
    for observation, action in alfworld_style_steps(steps, seed=3):
        memory.store(observation, action)
    return memory


def test_admissible_actions_are_quoted_one_per_line_without_help() -> None:
    assert format_admissible(ACTIONS) == "'go to desk 1'\n 'inventory'\n 'look'"
    assert format_admissible(None) == ""


@pytest.mark.parametrize("family", ["alfworld", "webshop", "search", "timeseries", "envhub/WebShopHTML-v0"])
def test_each_family_prompt_module_loads(family: str) -> None:
    template = family_template(family)
    assert "{observation}" in template.first_step or "{task}" in template.first_step
    assert "{history}" in template.with_history


def test_alfworld_first_step_shows_observation_and_actions_but_no_history() -> None:
    first_obs = alfworld_style_steps(1, seed=3)[0][0]
    messages = build_messages(
        family_template("alfworld"), observation=first_obs, memory=EpisodeMemory(), admissible_actions=ACTIONS
    )
    assert [m["role"] for m in messages] == ["user"]
    text = messages[0]["content"]
    assert first_obs in text
    assert "'go to desk 1'\n 'inventory'\n 'look'" in text and "'help'" not in text
    assert "<think>" in text and "<action>" in text
    assert "[Observation 1" not in text


def test_alfworld_history_prompt_has_task_step_count_window_and_current_step() -> None:
    memory = _memory(5)
    messages = build_messages(
        family_template("alfworld"),
        observation="You arrive at desk 1.",
        memory=memory,
        admissible_actions=ACTIONS,
    )
    text = messages[0]["content"]
    task = memory.records[0].observation.split("Your task is to: ")[1]
    assert f"Your task is: {task}" in text
    assert "taken 5 step(s)" in text and "last 2 observation(s)" in text
    assert memory.window(2).text in text
    assert "[Observation 3:" not in text
    assert "This is step 6. What you observe now: You arrive at desk 1." in text


def test_history_length_override_and_zero_window_falls_back_to_first_step() -> None:
    memory = _memory(4)
    template = family_template("alfworld")
    text = build_messages(template, observation="o", memory=memory, history_length=4)[0]["content"]
    assert memory.window(4).text in text
    text0 = build_messages(template, observation="o", memory=memory, history_length=0)[0]["content"]
    assert text0 == template.first_step.format_map(
        {"observation": "o", "admissible_actions": "", "task": "", "step_count": 4}
        | {"history_length": 0, "history": "", "current_step": 5}
    )


def test_webshop_prompt_falls_back_to_first_step_past_13000_characters() -> None:
    template = family_template("webshop")
    first = "WebShop [SEP] Instruction: [SEP] i need a red shirt [SEP] Search"
    memory = EpisodeMemory()
    memory.store(first, "search[red shirt]")
    short = build_messages(template, observation="page", memory=memory, admissible_actions=["click[b01]"])
    assert "i need a red shirt" in short[0]["content"] and "search[red shirt]" in short[0]["content"]
    assert "'click[b01]'," in short[0]["content"]
    memory.store("x" * 14_000, "click[b01]")
    long = build_messages(template, observation="page", memory=memory)[0]["content"]
    assert "x" * 100 not in long and "The current page: page" in long


def test_search_prompt_lists_queries_with_their_information() -> None:
    memory = EpisodeMemory()
    memory.store(
        "Who founded Velmora?", "<search>Velmora founder</search>", result="<information>Doc 1</information>"
    )
    text = build_messages(
        family_template("search"), observation="<information>Doc 1</information>", memory=memory
    )[0]["content"]
    assert "Your question: Who founded Velmora?" in text
    assert "Step 1:<search>Velmora founder</search> <information>Doc 1</information>\n" in text
    assert "<answer>" in text


def test_history_image_puts_the_png_first_and_asks_for_compression() -> None:
    png = b"\x89PNG fake"
    messages = build_messages(
        family_template("alfworld"),
        observation="o",
        memory=_memory(3),
        admissible_actions=ACTIONS,
        history_image=png,
    )
    image, text = messages[0]["content"]
    assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
    assert "<compression>" in text["text"] and "'look'" in text["text"]


def test_history_image_without_an_image_template_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="HISTORY_IMAGE"):
        build_messages(family_template("webshop"), observation="o", memory=_memory(1), history_image=b"png")


def test_system_message_comes_first_when_the_family_has_one() -> None:
    template = PromptTemplate(first_step="{observation}", with_history="{history}", system="Be brief.")
    messages = build_messages(template, observation="o", memory=EpisodeMemory())
    assert messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "o"}]


def test_observation_braces_are_inserted_verbatim() -> None:
    template = PromptTemplate(first_step="obs={observation}", with_history="{history}")
    assert (
        build_messages(template, observation="{task} {0}", memory=EpisodeMemory())[0]["content"]
        == "obs={task} {0}"
    )


@pytest.mark.parametrize("bad", ["{unknown}", "{}", "{observation", "{0}"])
def test_templates_with_unknown_fields_are_rejected(bad: str) -> None:
    with pytest.raises(ConfigurationError):
        PromptTemplate(first_step=bad, with_history="{history}")


def test_unknown_family_and_incomplete_module_are_configuration_errors() -> None:
    with pytest.raises(UnknownEnvError):
        family_template("nosuchfamily")
    with pytest.raises(ConfigurationError, match="no prompt module"):
        family_template("envhub/Remote-v0")  # a remote env has no prompt of its own
    with pytest.raises(ConfigurationError, match="FIRST_STEP"):
        PromptTemplate.from_module(types.ModuleType("envhub.envs.fake.prompt"))
