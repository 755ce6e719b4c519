"""EpisodeMemory: records and the reference history formats."""

from __future__ import annotations

import pytest

from envhub.agent import EpisodeMemory
from envhub.core.errors import ConfigurationError
from envhub.render.samples import alfworld_style_steps


def _memory(steps: int) -> EpisodeMemory:
    memory = EpisodeMemory()
    for observation, action in alfworld_style_steps(steps, seed=7):
        memory.store(observation, action)
    return memory


def _expected(steps: list[tuple[str, str]], first: int) -> list[str]:
    return [f"[Observation {first + i}: '{o}', Action {first + i}: '{a}']" for i, (o, a) in enumerate(steps)]


@pytest.mark.parametrize("k", [0, 1, 2, 50])
def test_window_shows_the_last_k_steps_with_global_step_numbers(k: int) -> None:
    steps = alfworld_style_steps(60, seed=7)
    window = _memory(60).window(k)
    shown = steps[len(steps) - k :] if k else []
    assert list(window.lines) == _expected(shown, 61 - k)
    assert window.first_step == 61 - k
    assert window.total_steps == 60
    assert window.text == "\n".join(window.lines)


@pytest.mark.parametrize("k", [0, 1, 2, 50])
def test_window_larger_than_the_episode_shows_every_step(k: int) -> None:
    steps = alfworld_style_steps(3, seed=7)
    window = _memory(3).window(k)
    assert list(window.lines) == _expected(steps[3 - min(k, 3) :], 4 - min(k, 3))
    assert len(window) == min(k, 3)


def test_window_zero_is_empty_unlike_the_reference_slice() -> None:
    window = _memory(5).window(0)
    assert window.lines == ()
    assert window.text == ""
    assert window.first_step == 6


def test_empty_memory_gives_an_empty_window() -> None:
    window = EpisodeMemory().window(2)
    assert (window.lines, window.first_step, window.total_steps) == ((), 1, 0)


def test_step_format_matches_verl_agent() -> None:
    memory = EpisodeMemory()
    memory.store("You are in a room.", "look")
    memory.store("You see a desk 1.", "go to desk 1")
    assert memory.window(2).text == (
        "[Observation 1: 'You are in a room.', Action 1: 'look']\n"
        "[Observation 2: 'You see a desk 1.', Action 2: 'go to desk 1']"
    )


def test_ocr_format_folds_newlines_and_unescapes_quotes() -> None:
    memory = EpisodeMemory()
    memory.store('-= Welcome =-\n\nYou see a \\"desk\\".\r\nTask: x', "go to\ndesk 1")
    # Each newline (and carriage return) becomes one space; other whitespace is kept, as
    # AgentOCR's obs.replace("\n", " ") keeps it.
    assert (
        memory.window(1, "ocr").text
        == '[Observation]: -= Welcome =-  You see a "desk".  Task: x [Action]: go to desk 1'
    )


def test_search_formats_pair_each_query_with_its_result() -> None:
    memory = EpisodeMemory()
    memory.store(
        "Who founded Velmora?",
        "<search> Velmora founder </search>",
        result="<information>Doc 1 A</information>",
    )
    memory.store("<information>Doc 1 A</information>", "<search>Ana Ruiz</search>", result="Doc 2\nB")
    window = memory.window(4, "search")
    assert window.lines == (
        "Step 1:<search>Velmora founder</search> <information>Doc 1 A</information>\n",
        "Step 2:<search>Ana Ruiz</search> <information>Doc 2\nB</information>\n",
    )
    # verl-agent's SearchMemory: f"Step {t}:{search} {information}\n" joined by "\n".
    assert window.text == (
        "Step 1:<search>Velmora founder</search> <information>Doc 1 A</information>\n"
        "\nStep 2:<search>Ana Ruiz</search> <information>Doc 2\nB</information>\n"
    )
    assert (
        memory.window(1, "ocr-search").text == "<search>Ana Ruiz</search> <information>Doc 2 B</information>"
    )


def test_store_keeps_extras_and_reset_forgets_everything() -> None:
    memory = _memory(4)
    memory.store("obs", "act", is_valid=False)
    assert memory.records[-1].extras == {"is_valid": False}
    assert len(memory) == 5
    memory.reset()
    assert len(memory) == 0
    assert memory.window(2).lines == ()


@pytest.mark.parametrize("k", [-1, 1.5, True, "2"])
def test_bad_window_size_raises_a_configuration_error(k: object) -> None:
    with pytest.raises(ConfigurationError, match="k must be an int >= 0"):
        _memory(2).window(k)  # type: ignore[arg-type]


def test_unknown_style_raises_and_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="ocr-search"):
        _memory(2).window(2, "fancy")
