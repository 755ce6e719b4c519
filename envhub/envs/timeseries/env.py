"""Time-series anomaly detection with analysis tools."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from envhub.core.env import Outcome
from envhub.core.errors import ConfigurationError
from envhub.core.tasks import NumberedTaskIds
from envhub.envs.timeseries.actions import EXPECTED, Answer, Invalid, parse_action
from envhub.envs.timeseries.base import SeriesToolEnv
from envhub.envs.timeseries.expert import expert_cot
from envhub.envs.timeseries.generator import KINDS, Series, generate, task_rng
from envhub.envs.timeseries.plot import plot_png
from envhub.envs.timeseries.reward import score_answer
from envhub.envs.timeseries.tools import summary

__all__ = ["ACTION_HELP", "TEST_SIZE", "TimeSeriesEnv", "breakdown", "series_for", "task_expert_cot"]

TEST_SIZE = 500
_INTRO = (
    "Task: find the anomaly in this series. Inspect it with stats[a:b], zscore[a:b], fft[a:b] or "
    "zoom[a:b] (half-open index ranges), then answer once with answer[<class>; a:b, ...] where "
    "<class> is one of: " + ", ".join(KINDS) + " (answer[normal] if there is none)."
)


class TimeSeriesEnv(SeriesToolEnv):
    """Find, classify and localise the anomaly in a univariate time series, using tools.

    ## Description
    Each task is a seeded synthetic series (length 200-1000: level, linear trend, a seasonal
    sinusoid with a harmonic, Gaussian noise) with one injected anomaly of a known class, or
    none. The agent inspects the series with analysis tools, then answers with the class and
    the anomalous intervals, in the style of AnomSeer (classification + localisation) with
    TimeMaster-style multi-turn tool use.

    ## Action Space
    Any Unicode string (:class:`~envhub.core.spaces.UnicodeText`). The first command in it is
    used (grammar in :mod:`envhub.envs.timeseries.actions`):
    ``stats[a:b]`` (mean, std, min/max with positions, quantiles), ``zscore[a:b]`` (top-5 |z|
    points), ``fft[a:b]`` (3 dominant periods of the detrended window), ``zoom[a:b]`` (values,
    at most 200 shown), and ``answer[<class>; a:b, c:d]``. Ranges are half-open; ``stats[]``
    means the whole series. AnomSeer's ``<answer>[[a, b]]</answer><class>...</class>`` is also
    accepted. Classes: ``normal, global_point, contextual_point, level_shift, trend_change,
    seasonality_change, variance_change, shapelet`` (aliases such as "global point",
    "trend", "seasonal" are accepted).

    ## Observation Space
    Any Unicode string. On reset: the task statement and a compact summary of the series
    (length, overall stats, about 100 sampled values). After a tool: the tool's result. After
    an unusable action: ``"Invalid action: ..."`` saying what was expected.

    ## Rewards
    0 for every tool step and every invalid action. On ``answer``:
    ``0.7 * loc + 0.2 * class_acc + 0.1 * format`` (AnomSeer's weights), where ``loc`` is a
    tolerant interval F1 (tolerance ``max(3, 1% of length)`` points; 1 when both the answer and
    the truth have no interval, 0 when only one does). See :mod:`envhub.envs.timeseries.reward`.

    ## Starting State
    The series of the task id: ``train-<i>`` (100,000 tasks) or ``test-<i>`` (500 tasks, the
    classes balanced). The same task id gives the same series on every machine.

    ## Episode End
    Terminates on a well-formed answer. Truncated by ``TimeLimit`` at ``max_episode_steps``
    (8 by default; this env itself returns ``truncated=False``). Stepping after the end
    repeats the final observation with reward 0 and ``info["error"]``.

    ## Information
    ``anchor``: the text of the latest tool result (the reset observation at step 0; an
    invalid action keeps the previous anchor, since the agent learned nothing new);
    ``admissible_actions``: ``None`` (free-form); ``won``: class right and ``loc >= 0.5``;
    ``task_id``; ``task_score``: the answer reward (0 before answering); ``is_action_valid``;
    ``series_length``; ``images``: ``[PNG bytes]`` of the series plot on reset, only with
    ``images=True`` (absent otherwise); on reset with ``expert_cot=True`` (absent otherwise):
    ``expert_cot``, AnomSeer's expert explanation (classical detectors chosen by its rules, their
    numbers, and a sentence naming the true anomaly: a training target for TimerPO, never for the
    policy's eyes; :mod:`envhub.envs.timeseries.expert`) and ``evidence``, its numbers; on
    answer: ``reward_components``, ``true_class``, ``true_intervals``.

    ## Arguments
    | argument | default | meaning |
    | --- | --- | --- |
    | ``train_size`` | 100000 | number of ``train`` tasks |
    | ``images`` | False | put a PNG plot in ``info["images"]`` on reset (it makes a reset ~50x slower) |
    | ``tolerance`` | None | localisation tolerance in points (None: ``max(3, 1%)``) |
    | ``expert_cot`` | False | put the expert explanation and its evidence in the reset ``info`` |
    | ``render_mode`` | None | ``"ansi"`` to render the last observation as text |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/TimeSeries-v0")
    >>> obs, info = env.reset(options={"task_id": "test-3"})
    >>> obs.startswith("Task: find the anomaly"), "images" in info
    (True, False)
    >>> env = gymnasium.make("envhub/TimeSeries-v0", expert_cot=True)
    >>> env.reset(options={"task_id": "test-3"})[1]["expert_cot"].startswith("Step 1")
    True
    >>> env = gymnasium.make("envhub/TimeSeries-v0", images=True)
    >>> env.reset(options={"task_id": "test-3"})[1]["images"][0].startswith(b"\\x89PNG")
    True

    ## Reference
    AnomSeer (class set, answer format, 0.7/0.2/0.1 reward weights) and TimeMaster
    (multi-turn reasoning over a time series); the series and tools are envhub's own.

    ## Version History
    * v0: initial release. ``images`` now defaults to False: the plot is drawn only when asked
      for (the observation, rewards and the other info keys are unchanged). ``expert_cot``
      added (off by default: nothing changes without it).
    """

    splits: ClassVar[tuple[str, ...]] = ("train", "test")
    default_split: ClassVar[str] = "train"

    def __init__(
        self,
        *,
        train_size: int = 100_000,
        images: bool = False,
        tolerance: int | None = None,
        expert_cot: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        if train_size < 1:
            raise ConfigurationError(f"train_size must be >= 1, got {train_size}.", train_size=train_size)
        self._ids = {
            "train": NumberedTaskIds("train", train_size),
            "test": NumberedTaskIds("test", TEST_SIZE),
        }
        self._images = images
        self._tolerance = tolerance
        self._expert_cot = expert_cot
        self._series: Series | None = None

    def _reset_task(self, task_id: str) -> Outcome:
        split, _, index = task_id.rpartition("-")
        self._series = series_for(split, int(index))
        observation = f"{_INTRO}\n{summary(self._series.values)}"
        self._anchor = observation
        extra: dict[str, Any] = {"series_length": len(self._series.values)}
        if self._images:
            extra["images"] = [plot_png(self._series.values)]
        if self._expert_cot:
            expert = expert_cot(self._series.values, kind=self._series.kind, intervals=self._series.intervals)
            extra["expert_cot"] = expert.text
            extra["evidence"] = expert.evidence
        return Outcome(observation, task_score=0.0, extra=extra)

    def _step(self, action: str) -> Outcome:
        assert self._series is not None  # the base class only steps after a reset
        x = self._series.values
        extra: dict[str, Any] = {"series_length": len(x)}
        parsed = parse_action(action, len(x))
        if isinstance(parsed, Invalid):
            return self._invalid(parsed.message, extra)
        if isinstance(parsed, Answer):
            score = score_answer(
                parsed.kind,
                parsed.intervals,
                true_kind=self._series.kind,
                true_intervals=self._series.intervals,
                length=len(x),
                tolerance=self._tolerance,
            )
            extra.update(
                reward_components={"loc": score.loc, "class": score.class_acc, "format": score.format},
                true_class=self._series.kind,
                true_intervals=[list(i) for i in self._series.intervals],
            )
            verdict = "correct" if score.won else "incorrect"
            text = f"Answer received ({verdict}): score {score.reward:.3f}."
            return Outcome(
                text,
                anchor=text,
                reward=score.reward,
                terminated=True,
                won=score.won,
                task_score=score.reward,
                extra=extra,
            )
        return self._tool(parsed, x, extra)


_TEST_KINDS = np.random.default_rng([20261122, 99]).permutation(np.arange(TEST_SIZE) % len(KINDS))


def series_for(split: str, index: int) -> Series:
    """The series of task ``f"{split}-{index}"`` (test classes are balanced)."""
    rng = task_rng(split, index)
    kind = KINDS[int(_TEST_KINDS[index])] if split == "test" else KINDS[int(rng.integers(len(KINDS)))]
    return generate(rng, kind)


# Keep the grammar message importable from the env module for prompts and docs.
ACTION_HELP = EXPECTED


def task_expert_cot(task_id: str) -> str:
    """The expert explanation of a task (``info["expert_cot"]`` with ``expert_cot=True``).

    The catalogue's ``EnvSpec.expert_cot``: a trainer computes it from the task id, so remote
    envs and queued groups need not carry the text.
    """
    split, _, index = task_id.rpartition("-")
    series = series_for(split, int(index))
    return expert_cot(series.values, kind=series.kind, intervals=series.intervals).text


def breakdown(task_id: str, task_score: float) -> dict[str, str]:
    """``envhub eval``'s breakdown of a TimeSeries-v0 episode: the task's anomaly kind."""
    split, _, index = task_id.rpartition("-")
    return {"anomaly_kind": series_for(split, int(index)).kind}
