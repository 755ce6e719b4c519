"""A new env family is its folder plus one catalogue entry (``docs/adding-an-env.md``).

The tests build the guide's *Lamps* family from the guide's own code blocks in a throwaway
package, add its one catalogue entry, and check that every layer that takes an env name
knows it: ``make``, the projection rule, the prompt templates, the render preset, the
advantage defaults, ``list_envs`` and the demo. Nothing else is edited.
"""

from __future__ import annotations

import doctest
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import envhub
from envhub.agent import EpisodeMemory, build_messages, family_template, project
from envhub.algos import GiGPOConfig, HGPOConfig, default_config
from envhub.core.registry import EnvSpec
from envhub.envs import catalog, resolve, resolve_all
from envhub.render import RenderConfig, render_preset
from envhub.rollout.demo import run_demo

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "adding-an-env.md"
IN_TREE = "envhub.envs.lamps"
LAMPS_ID = "envhub/Lamps-v0"
_BLOCK = re.compile(r"```python\n# (\S+)[^\n]*\n(.*?)```", re.DOTALL)


def _guide_blocks() -> dict[str, str]:
    """The guide's Python blocks by the path on their first line."""
    return {path: body for path, body in _BLOCK.findall(GUIDE.read_text(encoding="utf-8"))}


def _install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, files: dict[str, str], entry: str
) -> EnvSpec:
    """Write the family's files as ``package`` and add its entry to the catalogue."""
    root = tmp_path / package
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text.replace(IN_TREE, package), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = eval(entry.replace(IN_TREE, package), {"EnvSpec": EnvSpec})  # the entry is a literal EnvSpec(...)
    assert isinstance(spec, EnvSpec)
    # The one catalogue edit: CATALOG gains an entry (restored after the test).
    monkeypatch.setattr(catalog, "CATALOG", (*catalog.CATALOG, spec))
    return spec


@pytest.fixture
def lamps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EnvSpec]:
    """The guide's Lamps family, installed as a throwaway package with its catalogue entry."""
    package = "envhub_guide_lamps"
    blocks = _guide_blocks()
    files = {
        path.rpartition("/")[2]: body
        for path, body in blocks.items()
        if path.startswith("envhub/envs/lamps/")
    }
    assert set(files) == {"__init__.py", "env.py", "prompt.py", "policy.py"}, sorted(files)
    yield _install(tmp_path, monkeypatch, package, files, blocks["envhub/envs/catalog.py:"])
    gymnasium.registry.pop(LAMPS_ID, None)
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]


def test_every_name_of_the_new_env_resolves_to_its_entry(lamps: EnvSpec) -> None:
    assert resolve(LAMPS_ID) is lamps and resolve("Lamps-v0") is lamps and resolve("lamps") is lamps
    assert resolve_all("lamps") == (lamps,)


def test_make_builds_the_new_env_with_its_step_limit(lamps: EnvSpec) -> None:
    env = envhub.make("lamps")
    try:
        assert env.spec is not None and env.spec.max_episode_steps == 10
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(options={"task_id": "t30"})
        assert obs == "Lamps: .****" and info["admissible_actions"][0] == "toggle 0"
        obs, reward, terminated, _, info = env.step("toggle 0")
        assert (reward, terminated, info["won"]) == (1.0, True, True)
        assert env.step("toggle 0")[4]["is_action_valid"] is False  # after the end: defined, no raise
    finally:
        env.close()
    assert gymnasium.make(LAMPS_ID).spec.max_episode_steps == 10  # type: ignore[union-attr]


def test_the_projection_rule_comes_from_the_entry(lamps: EnvSpec) -> None:
    result = project("<think>dark first</think><action>Toggle 2</action>", resolve("lamps").projection or "")
    assert (result.action, result.is_valid) == ("toggle 2", True)


def test_the_prompt_and_memory_style_come_from_the_entry(lamps: EnvSpec) -> None:
    template = family_template("lamps")
    assert template.memory_style == "step" and template.history_length == 3
    memory = EpisodeMemory()
    memory.store("Lamps: .*...", "toggle 0")
    messages = build_messages(
        template, observation="Lamps: **...", memory=memory, admissible_actions=["toggle 2"]
    )
    assert "Light every lamp. Your last 1 step(s)" in messages[-1]["content"]
    assert "'toggle 2'" in messages[-1]["content"]


def test_the_render_preset_comes_from_the_entry(lamps: EnvSpec) -> None:
    preset = render_preset("Lamps-v0", highlight=False)
    assert preset.config == RenderConfig.alfworld(highlight=False) and preset.style == "ocr"


def test_the_advantage_defaults_come_from_the_entry(lamps: EnvSpec) -> None:
    assert default_config("gigpo", resolve("lamps")) == GiGPOConfig(mode="mean_std_norm", gamma=0.9)
    assert default_config("hgpo", resolve("lamps")) == HGPOConfig()


def test_list_and_demo_show_the_new_env(lamps: EnvSpec) -> None:
    assert LAMPS_ID in {row.id for row in envhub.list_envs()}
    rows = run_demo(episodes=4, group_size=2, env_ids=["lamps"])
    assert [row.policy for row in rows] == ["FirstDarkLamp", "RandomPolicy"]
    assert rows[0].success == 1.0


def test_the_guides_session_runs_as_shown(lamps: EnvSpec) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    session = re.search(r"```text\n(>>> .*?)```", text, re.DOTALL)
    assert session is not None, "the guide lost its example session"
    test = doctest.DocTestParser().get_doctest(session.group(1), {}, "adding-an-env", str(GUIDE), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


_OWN_RULES = '''
from envhub.agent import Projection, project_think_action
from envhub.render import RenderConfig


def project_lamp(output: object) -> Projection:
    """The think/action rule, and the action must name a lamp."""
    result = project_think_action(output)
    if result.is_valid and not result.action.startswith("toggle "):
        return Projection(action=result.action, is_valid=False, reason="not a toggle")
    return result


def wide_look(*, highlight: bool = True) -> RenderConfig:
    return RenderConfig(font_size=14, width=640)
'''


def test_a_family_outside_envhub_brings_its_own_projection_and_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = "envhub_guide_own_rules"
    blocks = _guide_blocks()
    files: dict[str, Any] = {
        "__init__.py": "",
        "env.py": blocks["envhub/envs/lamps/env.py"],
        "rules.py": _OWN_RULES,
    }
    entry = (
        f'EnvSpec(id="own/Lamps-v0", entry_point="{package}.env:LampsEnv", family="ownlamps", '
        f'description="Lamps with its own rules", projection="{package}.rules:project_lamp", '
        f'render_preset="{package}.rules:wide_look")'
    )
    try:
        _install(tmp_path, monkeypatch, package, files, entry)
        assert project(
            "<think>x</think><action>look</action>", resolve("ownlamps").projection or ""
        ).reason == ("not a toggle")
        assert render_preset("ownlamps").config.width == 640
        assert envhub.make("ownlamps").reset(options={"task_id": "t1"})[0] == "Lamps: *...."
    finally:
        gymnasium.registry.pop("own/Lamps-v0", None)
        for name in [m for m in sys.modules if m.startswith(package)]:
            del sys.modules[name]
