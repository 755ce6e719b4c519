"""scripts/install-system-deps.sh (run by `make test`) on a machine without apt-get (macOS,
Fedora, Arch): it says what is missing and how the browser tests behave; `make test` goes on."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_machine_without_apt_get_is_told_not_failed(tmp_path: Path) -> None:
    # A PATH with a shell and coreutils' id but no chromium, chromedriver or apt-get.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "id", "env"):
        (bin_dir / name).symlink_to(shutil.which(name) or f"/usr/bin/{name}")
    done = subprocess.run(
        [str(bin_dir / "bash"), str(ROOT / "scripts/install-system-deps.sh")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(bin_dir)},
    )
    assert done.returncode == 0, done.stderr
    assert "chromium" in done.stderr and "apt-get" in done.stderr
