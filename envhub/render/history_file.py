"""Read recorded steps from JSONL and turn them into AgentOCR history lines.

Accepted lines (one JSON value per line; blank lines skipped):

* a step: an object with ``observation`` and ``action`` (envhub's :class:`~envhub.core.Step`
  records qualify) and optionally ``result``;
* a trajectory: an object with ``steps``, a list of such objects;
* a preformatted history line: a JSON string, or an object with ``line``.

For the search style a step without ``result`` takes the next step's observation (what its
search returned).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envhub.agent.memory import EpisodeMemory
from envhub.core.errors import ConfigurationError, DataNotFoundError

__all__ = ["history_lines_from_jsonl"]


def _entries(path: Path) -> list[dict[str, Any] | str]:
    entries: list[dict[str, Any] | str] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigurationError(
                    f"{path}:{number} is not valid JSON ({exc.msg}); each line must be one JSON step, "
                    "trajectory or history line.",
                    path=str(path),
                    line=number,
                ) from exc
            if isinstance(value, dict) and isinstance(value.get("steps"), list):
                entries.extend(s for s in value["steps"] if isinstance(s, dict))
            elif isinstance(value, str | dict):
                entries.append(value)
            else:
                raise ConfigurationError(
                    f"{path}:{number} holds a {type(value).__name__}; expected a step object, a trajectory "
                    "object with 'steps', or a string line.",
                    path=str(path),
                    line=number,
                )
    return entries


def history_lines_from_jsonl(path: str | Path, *, style: str = "ocr", window: int | None = None) -> list[str]:
    """History lines, one per recorded step, from a JSONL file.

    Args:
        path: the file.
        style: memory style of the lines (``ocr`` or ``ocr-search``; any of
            :data:`envhub.agent.MEMORY_STYLES`).
        window: keep only the last ``window`` steps (default: all).

    Returns:
        The lines, oldest first.

    Raises:
        DataNotFoundError: the file does not exist.
        ConfigurationError: a line is not JSON or has an unexpected shape.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(
            "The history file",
            path=path,
            env_var=None,
            how_to_get="record steps as JSONL (one object with 'observation' and 'action' per line).",
        )
    entries = _entries(path)
    lines: list[str] = []
    memory = EpisodeMemory()
    for i, entry in enumerate(entries):
        if isinstance(entry, str) or "line" in entry:
            lines.append(str(entry if isinstance(entry, str) else entry["line"]))
            continue
        if "observation" not in entry or "action" not in entry:
            raise ConfigurationError(
                f"{path}: step {i + 1} lacks 'observation' or 'action' (keys: {sorted(entry)}).",
                path=str(path),
            )
        result = entry.get("result")
        if result is None:
            following = entries[i + 1] if i + 1 < len(entries) else None
            result = following.get("observation", "") if isinstance(following, dict) else ""
        memory.store(str(entry["observation"]), str(entry["action"]), result=str(result))
        lines.append(memory.window(1, style).text)
    return lines if window is None else lines[len(lines) - min(window, len(lines)) :]
