""".ci/run's phases (.ci/phases.sh): a background phase that hangs or outlives the run.

The fleet's images build in the background while the core and vllm groups run (``phase_bg``);
``phase_wait`` collects them before the fleet group. A hung build must not hold CI past its
budget, and a run that is killed must not leave the build running with no row in the table.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _script(body: str, tmp_path: Path) -> Path:
    script = tmp_path / "ci.sh"
    script.write_text(
        f'set -uo pipefail\ncd {str(REPO_ROOT)!r}\nsource .ci/phases.sh\n{body}\nexit "$FAILED"\n'
    )
    return script


def _alive(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True)
    return [line for line in ps.stdout.splitlines() if marker in line and "ps -eo" not in line]


def test_a_hung_background_phase_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    marker = f"{os.getpid()}{time.monotonic_ns() % 10**6}"
    script = _script(
        f'phase_bg "images" sleep 3{marker}\nphase "tests: core" true\nphase_wait "images"\n', tmp_path
    )
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CI_BG_TIMEOUT_S": "2"},
    )
    assert time.monotonic() - started < 30, "phase_wait waited for the hung phase past its timeout"
    assert done.returncode == 1, done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("images (background)"))
    assert "timed out" in row, done.stdout
    assert not _alive(f"sleep 3{marker}")


def test_a_killed_run_stops_its_background_phase_and_reports_it(tmp_path: Path) -> None:
    marker = f"{os.getpid()}{time.monotonic_ns() % 10**6}"
    script = _script(f'phase_bg "images" sleep 4{marker}\nphase "tests: core" sleep 20\n', tmp_path)
    run = subprocess.Popen(["bash", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not _alive(f"sleep 4{marker}") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _alive(f"sleep 4{marker}")
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=30)
        assert run.returncode == 143, out
    finally:
        run.kill()
    time.sleep(0.5)
    assert not _alive(f"sleep 4{marker}"), "the background phase outlived the run"
    row = next(line for line in out.splitlines() if line.startswith("images (background)"))
    assert "not finished" in row, out
