"""Loading the committed reference fixtures (data produced by running the original implementations)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

__all__ = ["HERE", "load_json", "load_jsonl"]

#: The folder holding the fixture files and the scripts that regenerate them.
HERE = Path(__file__).parent


def _open(name: str) -> str:
    path = HERE / name
    data = path.read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


def load_jsonl(name: str) -> list[dict[str, Any]]:
    """The records of a (possibly gzipped) JSON-lines fixture, in file order."""
    return [json.loads(line) for line in _open(name).splitlines() if line.strip()]


def load_json(name: str) -> Any:
    """A (possibly gzipped) JSON fixture."""
    return json.loads(_open(name))
