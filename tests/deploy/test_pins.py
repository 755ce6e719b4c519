"""What a user installs is not this machine: torch is a range everywhere, never a pin.

This machine keeps torch's CPU wheel on disk and pip's own configuration points at it
(find-links); pinning that exact version in pyproject.toml, the Makefile or a script would swap a
user's torch for it. The CPU build comes from pip's configuration (scripts/install-torch.sh), the
version from the extras' range.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "pyproject.toml",
    "Makefile",
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "scripts").iterdir()) if p.is_file()),
    *(str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("*/**/Dockerfile"))),
]
TORCH_PIN = re.compile(r"\btorch\s*===?\s*[\d.]+")


def test_torch_is_a_range_in_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    specs = {
        name: Requirement(line).specifier
        for name, lines in extras.items()
        for line in lines
        if Requirement(line).name == "torch"
    }
    assert {"train", "search-dense"} <= set(specs)
    for name, specifier in specs.items():
        assert all(s.operator in (">=", ">", "<", "<=", "!=", "~=") for s in specifier), (
            f"{name}: torch{specifier}"
        )
        assert specifier.contains("2.13.0") and specifier.contains("2.14.1"), f"{name}: torch{specifier}"


@pytest.mark.parametrize("name", FILES)
def test_no_file_pins_torch(name: str) -> None:
    pins = [
        line.strip()
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines()
        if TORCH_PIN.search(line)
    ]
    assert not pins, f"{name} pins torch: {pins}"
