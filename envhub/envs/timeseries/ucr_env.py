"""Time-series classification on a real UCR dataset, with the same analysis tools."""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar

import numpy as np

from envhub.core.env import Outcome
from envhub.core.tasks import NumberedTaskIds
from envhub.envs.timeseries.actions import Invalid, ToolCall, parse_action
from envhub.envs.timeseries.base import SeriesToolEnv
from envhub.envs.timeseries.data import DEFAULT_UCR_NAME, UCRDataset, find_ucr_dir, load_ucr
from envhub.envs.timeseries.plot import plot_png
from envhub.envs.timeseries.tools import summary

__all__ = ["TimeSeriesUCREnv"]

_ANSWER = re.compile(r"\banswer\s*\[([^\]]*)\]", re.IGNORECASE)
_CLASS_TAG = re.compile(r"<class>(.*?)</class>", re.IGNORECASE | re.DOTALL)


class TimeSeriesUCREnv(SeriesToolEnv):
    """Classify a real UCR series (TimeMaster-style), inspecting it with analysis tools first.

    ## Description
    Each task is one series of a UCR/UEA classification dataset read from a path the user
    gives. The agent may call the analysis tools of ``envhub/TimeSeries-v0`` and then answers
    with the class label.

    ## Action Space
    Any Unicode string: ``stats[a:b]``, ``zscore[a:b]``, ``fft[a:b]``, ``zoom[a:b]`` (see
    ``envhub/TimeSeries-v0``), and ``answer[<label>]`` or TimeMaster's ``<class>label</class>``.

    ## Observation Space
    Any Unicode string: on reset the task statement with the class labels and a summary of
    the series; then tool results, or ``"Invalid action: ..."``.

    ## Rewards
    On the answer, TimeMaster's ``0.9 * accuracy + 0.1 * format`` (format is 1 for any
    well-formed answer; an unknown label is not well formed and costs a step instead).

    ## Starting State
    Series ``i`` of the dataset's TRAIN (task ``train-<i>``) or TEST file (``test-<i>``).

    ## Episode End
    Terminates on an answer; ``TimeLimit`` truncates at ``max_episode_steps`` (8).

    ## Information
    ``anchor`` (latest tool result), ``admissible_actions`` (None), ``won`` (label right),
    ``task_id``, ``task_score`` (the answer reward), ``is_action_valid``, ``series_length``,
    ``classes``; ``images`` (PNG plot) on reset, only with ``images=True``; ``true_label`` after
    the answer.

    ## Arguments
    | argument | default | meaning |
    | --- | --- | --- |
    | ``ucr_path`` | ``$ENVHUB_UCR_DATA`` or aeon's bundled data | directory of the dataset files |
    | ``dataset`` | ``"GunPoint"`` | dataset name (file prefix) |
    | ``images`` | False | PNG plot in ``info["images"]`` on reset (absent when False) |

    >>> import gymnasium, envhub  # doctest: +SKIP
    >>> env = gymnasium.make(  # doctest: +SKIP
    ...     "envhub/TimeSeriesUCR-v0", ucr_path="/data/ucr", dataset="GunPoint"
    ... )

    ## Reference
    TimeMaster (RL on UCR "Computers"; reward 0.9 accuracy + 0.1 format); the UCR archive's
    ``.ts``/``.tsv`` formats.

    ## Version History
    * v0: initial release. ``images`` now defaults to False: the plot is drawn only when asked
      for (the observation, rewards and the other info keys are unchanged).
    """

    splits: ClassVar[tuple[str, ...]] = ("train", "test")
    default_split: ClassVar[str] = "train"

    def __init__(
        self,
        *,
        ucr_path: str | os.PathLike[str] | None = None,
        dataset: str = DEFAULT_UCR_NAME,
        images: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        directory = find_ucr_dir(ucr_path, dataset)
        self._data: dict[str, UCRDataset] = {s: load_ucr(directory, dataset, s) for s in self.splits}
        self._ids = {s: NumberedTaskIds(s, len(d.series)) for s, d in self._data.items()}
        self._classes = tuple(sorted({c for d in self._data.values() for c in d.classes}))
        self._images = images
        self._x = np.zeros(0)
        self._label = ""

    def _reset_task(self, task_id: str) -> Outcome:
        split, _, index = task_id.rpartition("-")
        data = self._data[split]
        raw = data.series[int(index)]
        self._x = raw[~np.isnan(raw)]  # unequal-length UCR series are NaN-padded
        self._label = data.labels[int(index)]
        observation = (
            f"Task: classify this {data.name} series. Inspect it with stats[a:b], zscore[a:b], fft[a:b] or "
            f"zoom[a:b], then answer with answer[<label>], <label> one of: {', '.join(self._classes)}.\n"
            + summary(self._x)
        )
        self._anchor = observation
        extra: dict[str, Any] = {"series_length": len(self._x), "classes": list(self._classes)}
        if self._images:
            extra["images"] = [plot_png(self._x)]
        return Outcome(observation, task_score=0.0, extra=extra)

    def _step(self, action: str) -> Outcome:
        extra: dict[str, Any] = {"series_length": len(self._x), "classes": list(self._classes)}
        answer = _ANSWER.search(action) or _CLASS_TAG.search(action)
        if answer is not None:
            label = answer.group(1).strip().strip("\"'")
            if label not in self._classes:
                return self._invalid(
                    f"unknown label {label[:40]!r}; use one of {', '.join(self._classes)}.", extra
                )
            won = label == self._label
            reward = 0.9 * float(won) + 0.1
            extra["true_label"] = self._label
            text = f"Answer received ({'correct' if won else 'incorrect'}): score {reward:.3f}."
            return Outcome(text, reward=reward, terminated=True, won=won, task_score=reward, extra=extra)
        parsed = parse_action(action, len(self._x))
        if not isinstance(parsed, ToolCall):
            message = parsed.message if isinstance(parsed, Invalid) else "use answer[<label>] to answer."
            return self._invalid(message, extra)
        return self._tool(parsed, self._x, extra)
