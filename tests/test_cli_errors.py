"""Both console scripts report envhub's errors as one line on stderr, exit 2, text kept verbatim.

The lines are printed with Rich, which would read ``[client]`` in "pip install 'envhub-rl[client]'"
(or ``[such]`` in an env id) as markup and drop it; the message must reach the user whole.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

ODD_ID = "envhub/No[such]-v0"


@pytest.mark.parametrize(
    "command",
    [
        ["envhub.cli", "serve", ODD_ID],
        ["envhub.train.cli", "--env", ODD_ID, "--model", "unused"],
    ],
    ids=["envhub", "envhub-train"],
)
def test_an_envhub_error_is_one_verbatim_line_on_stderr_and_exit_2(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", *command], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"error (UNKNOWN_ENV): No envhub environment is registered as '{ODD_ID}'" in done.stderr
