"""The README's Python example runs and ends in a won episode."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs_and_wins() -> None:
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert block is not None, "README lost its Python example"
    scope: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block.group(1), str(README), "exec"), scope)
    assert scope["info"]["won"] is True  # type: ignore[index]


def test_readme_shows_the_two_commands_ci_runs() -> None:
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make demo" in text and "make test" in text and "make test" in ci
