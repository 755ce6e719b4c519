"""``envhub env new NAME``: scaffold an env package that registers through ``envhub.envs``.

The package is a complete, working env family (a small number-guessing game) to edit:

```
envhub-NAME/
  pyproject.toml              the distribution, its dependency on envhub-rl, the entry point
  README.md
  src/envhub_NAME/__init__.py
  src/envhub_NAME/env.py      the AgentEnv subclass
  src/envhub_NAME/spec.py     its EnvSpec (strings only: listing it imports nothing heavy)
  src/envhub_NAME/prompt.py   the prompt templates (contract: envhub.agent.prompt)
  src/envhub_NAME/policy.py   a scripted policy (`envhub demo`, `envhub eval --policy builtin`)
  tests/test_env.py           envhub.check_env, listing, the built-in policy
```

``pip install ./envhub-NAME`` (or its wheel) makes the env appear in ``envhub list`` and work
with ``envhub.make``, ``envhub serve``, ``envhub eval`` and ``envhub-train``.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from envhub.core.errors import ConfigurationError

__all__ = ["new_env_package"]

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")

_PYPROJECT = Template("""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "$title: an envhub env family"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["envhub-rl"]

# envhub finds the env through this entry point (loaded when envhub lists or makes envs).
[project.entry-points."envhub.envs"]
$family = "$module.spec:SPECS"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools.packages.find]
where = ["src"]
""")

_README = Template("""# $dist

An envhub env family: `$env_id` ($title, a number-guessing game to replace with your env).

```bash
pip install .                 # or: pip wheel --no-deps . && pip install $module-*.whl
envhub list                   # shows $env_id with its package and version
envhub eval --env $family --policy builtin --n 4 --k 1 --k 4
envhub serve $family          # the HTTP step API
pytest tests                  # envhub.check_env and the built-in policy
```

Edit `src/$module/env.py` (the game), `spec.py` (its EnvSpec: id, splits, step limit, prompt,
projection) and `prompt.py`. Publish it like any Python package (`python -m build`, then
`twine upload dist/*`); users `pip install $dist` and the env appears in `envhub list`.
""")

_INIT = Template('''"""$title: an envhub env family (registered through the `envhub.envs` entry point)."""
''')

_ENV = Template('''"""The $title env."""

from __future__ import annotations

from collections.abc import Sequence

from envhub.core.env import AgentEnv, Outcome


class $cls(AgentEnv):
    """Guess the hidden number between 0 and 15.

    Description: task ``<split>-<k>`` hides a number derived from ``k``; each guess is answered
    with "higher" or "lower".
    Action Space: ``guess <n>`` with 0 <= n <= 15; any other text is an invalid action.
    Observation Space: the last answer and the range still possible.
    Rewards: 1 when the number is guessed, else 0.
    Starting State: given by the task id.
    Episode End: the number is guessed (the step limit comes from the EnvSpec).
    Information: ``anchor`` is the range still possible; ``admissible_actions`` the guesses in it.
    Arguments: none.
    Reference: none (a scaffold made by `envhub env new`).
    Version History: v0, the first version.
    """

    splits = ("train", "test")
    default_split = "train"

    def __init__(self, *, render_mode: str | None = None) -> None:
        super().__init__(render_mode=render_mode)
        self._target = 0
        self._low, self._high = 0, 15

    def _task_ids(self, split: str) -> Sequence[str]:
        return [f"{split}-{k}" for k in range(32)]

    def _outcome(self, text: str, *, won: bool = False, valid: bool = True) -> Outcome:
        state = f"{self._low}..{self._high}"
        return Outcome(
            observation=f"{text} The number is in {state}.",
            anchor=state,
            reward=1.0 if won else 0.0,
            terminated=won,
            won=won,
            is_action_valid=valid,
            admissible_actions=[f"guess {n}" for n in range(self._low, self._high + 1)],
        )

    def _reset_task(self, task_id: str) -> Outcome:
        split, _, index = task_id.rpartition("-")
        self._target = (int(index) * 7 + (3 if split == "test" else 0)) % 16
        self._low, self._high = 0, 15
        return self._outcome("Guess the hidden number.")

    def _step(self, action: str) -> Outcome:
        verb, _, value = action.strip().lower().partition(" ")
        if verb != "guess" or not value.strip().isdigit() or int(value) > 15:
            return self._outcome("Invalid action: write guess <n> with 0 <= n <= 15.", valid=False)
        n = int(value)
        if n == self._target:
            self._low = self._high = n
            return self._outcome(f"{n} is right!", won=True)
        if n < self._target:
            self._low = max(self._low, n + 1)
            return self._outcome(f"Higher than {n}.")
        self._high = min(self._high, n - 1)
        return self._outcome(f"Lower than {n}.")
''')

_SPEC = Template('''"""The EnvSpec of $env_id: plain data, so listing it imports only envhub's registry."""

from envhub.core.registry import EnvSpec

SPECS = (
    EnvSpec(
        id="$env_id",
        entry_point="$module.env:$cls",
        family="$family",
        description="$title: guess a hidden number from higher/lower answers (a scaffold).",
        splits=("train", "test"),
        max_episode_steps=8,
        demo_policy="$module.policy:Bisect",
        projection="think_action",  # <think>...</think><action>...</action>
        prompt="$module.prompt",
    ),
)
''')

_PROMPT = Template('''"""Prompts for $title (contract: envhub.agent.prompt)."""

MEMORY_STYLE = "step"
HISTORY_LENGTH = 4

_ANSWER = "Think inside <think> </think>, then write one action inside <action> </action>."

FIRST_STEP = "Guess the hidden number.\\n{observation}\\nActions: [{admissible_actions}].\\n" + _ANSWER

WITH_HISTORY = (
    "Guess the hidden number. Your last {history_length} step(s):\\n{history}\\n"
    "Step {current_step}: {observation}\\nActions: [{admissible_actions}].\\n" + _ANSWER
)
''')

_POLICY = Template('''"""A scripted $title policy: bisect the range still possible."""

from __future__ import annotations

from typing import Any


class Bisect:
    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        return None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        low, high = (int(v) for v in info["anchor"].split(".."))
        return f"guess {(low + high) // 2}"
''')

_TEST = Template('''"""The package's env keeps envhub's contract and is found through its entry point."""

import envhub
from envhub.envs.registry import list_envs, resolve
from $module.policy import Bisect


def test_the_env_passes_envhubs_contract_checker() -> None:
    env = envhub.make("$env_id")
    envhub.check_env(env)
    env.close()


def test_envhub_lists_the_env_with_its_package() -> None:
    rows = {row.id: row for row in list_envs()}
    assert rows["$env_id"].package == "$dist"
    assert resolve("$family").entry_point == "$module.env:$cls"


def test_the_builtin_policy_wins_every_task() -> None:
    env = envhub.make("$env_id")
    for task_id in env.unwrapped.task_ids("test"):
        obs, info = env.reset(options={"task_id": task_id})
        policy = Bisect()
        policy.reset(obs, info)
        terminated = truncated = False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(policy.act(obs, info))
        assert info["won"], task_id
    env.close()
''')


def new_env_package(name: str, out: str | Path = ".") -> Path:
    """Write the package ``envhub-<name>`` under ``out`` and return its folder.

    Args:
        name: the family name, lower case (``"guess"``, ``"my-game"``); a leading ``envhub-``
            is dropped.
        out: the folder to create the package in.

    Raises:
        ConfigurationError: the name is not a valid package name, or the folder exists.
    """
    family = name.removeprefix("envhub-").removeprefix("envhub_")
    if not _NAME.match(family):
        raise ConfigurationError(
            f"{name!r} is not a valid env package name: use lower-case letters, digits and single "
            "'-' or '_' between them, starting with a letter (e.g. 'guess' or 'my-game').",
            name=name,
        )
    dist = f"envhub-{family.replace('_', '-')}"
    if dist == "envhub-rl":
        raise ConfigurationError(
            f"{name!r} would make the package envhub-rl, envhub's own distribution (installing it would "
            "replace envhub); choose another name.",
            name=name,
        )
    from envhub.envs.catalog import CATALOG

    if family.replace("-", "_") in {spec.family.replace("-", "_") for spec in CATALOG}:
        raise ConfigurationError(
            f"{family!r} is a built-in family of envhub (`envhub list`); choose another name, so that "
            f"names like `envhub demo {family}` keep meaning one family.",
            name=name,
        )
    words = re.split(r"[-_]", family)
    cls = "".join(w.capitalize() for w in words) + "Env"
    title = "".join(w.capitalize() for w in words)
    fields = {
        "dist": f"envhub-{family.replace('_', '-')}",
        "module": "envhub_" + family.replace("-", "_"),
        "family": family.replace("-", "_"),
        "cls": cls,
        "title": title,
        "env_id": f"{family.replace('_', '-')}/{title}-v0",
    }
    root = Path(out) / fields["dist"]
    if root.exists():
        raise ConfigurationError(f"{root} already exists; choose another name or --out.", path=str(root))
    package = root / "src" / fields["module"]
    files = {
        root / "pyproject.toml": _PYPROJECT,
        root / "README.md": _README,
        package / "__init__.py": _INIT,
        package / "env.py": _ENV,
        package / "spec.py": _SPEC,
        package / "prompt.py": _PROMPT,
        package / "policy.py": _POLICY,
        root / "tests" / "test_env.py": _TEST,
    }
    try:
        for path, template in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(template.substitute(fields), encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot write {root} ({exc.strerror or exc}); give a writable --out folder.", path=str(root)
        ) from None
    return root
