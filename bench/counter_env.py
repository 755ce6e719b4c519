"""The trivial env ``bench/server_load.py`` serves two ways: a counter that echoes the action.

The same MDP is written twice so the server, not the env, is what the benchmark measures:

* :class:`CounterEnv`, an :class:`envhub.core.AgentEnv`, served by
  ``envhub serve bench.counter_env:CounterEnv`` (``envhub serve`` accepts ``module:Class``);
* :func:`create_openenv_app`, the same counter as an OpenEnv ``Environment`` behind
  ``openenv-core``'s own ``create_fastapi_app`` (run with ``uvicorn --factory``).

Each step costs a string format and an integer increment, so steps/s is the serving overhead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envhub.core.env import AgentEnv, Outcome

__all__ = ["CounterEnv", "create_openenv_app"]

#: The counter has one task: there is nothing to choose between.
_TASK_ID = "count"


class CounterEnv(AgentEnv):
    """A counter that echoes the action.

    ## Description
    Each step adds one to a counter and answers ``"<count>: <action>"``. It exists to measure
    serving overhead, so the step itself does next to no work.

    ## Action Space
    Any Unicode string.

    ## Observation Space
    ``"<count>: <last action>"``; ``"0: ready"`` after reset.

    ## Rewards
    1.0 per step.

    ## Starting State
    Count 0.

    ## Episode End
    Never terminates; callers stop when they have taken enough steps.

    ## Information
    ``anchor`` is the count; ``admissible_actions`` is None; ``won`` is False; ``task_id`` is
    ``"count"``; ``task_score`` is the count.

    ## Arguments
    None. ``envhub.make("bench.counter_env:CounterEnv")`` builds it.

    ## Reference
    OpenEnv's echo env template (``openenv init``), with a counter added.

    ## Version History
    * v0: first version.
    """

    family = "counter"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._count = 0

    def _task_ids(self, split: str) -> Sequence[str]:
        return (_TASK_ID,)

    def _reset_task(self, task_id: str) -> Outcome:
        self._count = 0
        return Outcome(observation="0: ready", anchor="0", task_score=0.0)

    def _step(self, action: str) -> Outcome:
        self._count += 1
        return Outcome(
            observation=f"{self._count}: {action}",
            anchor=str(self._count),
            reward=1.0,
            task_score=float(self._count),
        )


def create_openenv_app() -> Any:
    """The counter behind OpenEnv's server: ``uvicorn --factory bench.counter_env:create_openenv_app``.

    openenv-core is imported here, not at module level, so that envhub's workers, which
    import this module for :class:`CounterEnv`, do not pay for it.

    Returns:
        The FastAPI app from ``openenv.core.env_server.http_server.create_fastapi_app``.
    """
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State

    class CounterAction(Action):
        message: str

    class CounterObservation(Observation):
        echoed_message: str
        count: int

    class OpenEnvCounter(Environment):  # type: ignore[type-arg]
        # Each WebSocket session gets its own instance, as in OpenEnv's echo template.
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State(episode_id="counter", step_count=0)

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Observation:
            self._state = State(episode_id=episode_id or "counter", step_count=0)
            return CounterObservation(echoed_message="0: ready", count=0, done=False, reward=0.0)

        def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
            self._state.step_count += 1
            count = self._state.step_count
            message = action.message  # type: ignore[attr-defined]  # the server validated it as CounterAction
            return CounterObservation(
                echoed_message=f"{count}: {message}", count=count, done=False, reward=1.0
            )

        @property
        def state(self) -> State:
            return self._state

    # Enough WebSocket slots for the benchmark's sessions; OpenEnv's default is 1.
    return create_fastapi_app(OpenEnvCounter, CounterAction, CounterObservation, max_concurrent_envs=4096)
