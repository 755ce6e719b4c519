"""``RemoteVectorEnv``: a Gymnasium vector env whose N sub-envs are N sessions of one server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from envhub.client._client import EnvClient
from envhub.client._protocol import slot_error
from envhub.client._remote_env import _GONE, _decode_images
from envhub.client._retry import RetryPolicy
from envhub.core.env import MAX_ACTION_CHARS
from envhub.core.errors import ConfigurationError, ResetNeededError, ServerUnreachableError
from envhub.core.spaces import UnicodeText
from envhub.core.wire import BatchResetItem, BatchResetResponse, BatchStepResponse

__all__ = ["RemoteVectorEnv"]

# (observation, reward, terminated, truncated, info) of one sub-env
_Transition = tuple[str, float, bool, bool, dict[str, Any]]


class RemoteVectorEnv(VectorEnv[tuple[str, ...], tuple[str, ...], np.ndarray]):
    """``num_envs`` sessions of one ``envhub serve`` server, stepped together.

    Each :meth:`step` is one ``POST /v1/batch/step`` for the sub-envs that act, plus one
    ``POST /v1/batch/reset`` for those being autoreset; :meth:`reset` is one batch reset. The
    results match ``gymnasium.make_vec(<the served id>, num_envs)`` run locally on the same
    seeds: sub-env ``i`` of ``reset(seed=s)`` is seeded ``s + i``, autoresets pass no seed (the
    served env goes on with its own generator), and autoreset follows Gymnasium's vector API:

    * ``NEXT_STEP`` (default): the step after a sub-env ends resets it, ignores its action and
      returns the first observation with reward 0 and ``terminated = truncated = False``;
    * ``SAME_STEP``: a sub-env that ends is reset in the same call; its last observation and
      info go to ``info["final_obs"]`` and ``info["final_info"]``;
    * ``DISABLED``: the caller resets ended sub-envs with ``reset(options={"reset_mask": m})``.

    Observations and actions are tuples of strings (the batch of
    :class:`~envhub.core.spaces.UnicodeText`); ``info`` is batched as Gymnasium does (one array
    per key, plus a ``_key`` mask of the sub-envs that have it).

    Args:
        base_url: the server, e.g. ``"http://127.0.0.1:8000"``.
        num_envs: how many sessions to hold.
        env_id: when given, the id the server must serve (checked when the sessions open).
        token: bearer token for a server started with ``--token``.
        env_kwargs: keyword arguments for the served env's constructor, every session alike.
        autoreset_mode: a :class:`gymnasium.vector.AutoresetMode`.
        retry: a :class:`~envhub.client.RetryPolicy`; batch calls are replay-safe.
        timeout_s: time allowed for each phase of a request.
        transport: an httpx transport (tests); None uses a connection pool.

    Raises:
        ConfigurationError: ``num_envs < 1``, or the server serves another env than ``env_id``.

    Example:
        >>> import gymnasium
        >>> url = "http://127.0.0.1:8000"
        >>> envs = gymnasium.make_vec("envhub/Remote-v0", num_envs=8, base_url=url)  # doctest: +SKIP
        >>> obs, info = envs.reset(seed=0)  # doctest: +SKIP
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 (gymnasium declares it so)

    def __init__(
        self,
        base_url: str,
        num_envs: int = 1,
        env_id: str | None = None,
        token: str | None = None,
        *,
        env_kwargs: dict[str, Any] | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        retry: RetryPolicy | None = None,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if num_envs < 1:
            raise ConfigurationError(f"num_envs must be at least 1, got {num_envs}.", num_envs=num_envs)
        self.num_envs = num_envs
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode}
        self.client = EnvClient(base_url, token=token, retry=retry, timeout_s=timeout_s, transport=transport)
        self.single_observation_space = UnicodeText()
        self.single_action_space = UnicodeText(MAX_ACTION_CHARS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.session_ids: list[str] = []
        self._open_sessions(env_id, dict(env_kwargs or {}))
        self._observations = [""] * num_envs
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._started = False

    def _open_sessions(self, env_id: str | None, env_kwargs: dict[str, Any]) -> None:
        for _ in range(self.num_envs):
            created = self.client.create_session(env_kwargs)
            self.session_ids.append(created.session_id)
            if env_id is not None and env_id not in (created.env_id, created.env_id.removeprefix("envhub/")):
                self.close()
                raise ConfigurationError(
                    f"The server at {self.client.base_url} serves {created.env_id!r}, not {env_id!r}. "
                    "Point base_url at the server for that env, or drop env_id.",
                    served=created.env_id,
                    requested=env_id,
                )

    # -- gymnasium API ----------------------------------------------------------------------

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``) with one batch request.

        Args:
            seed: an int seeds sub-env ``i`` with ``seed + i``; a list gives one seed each.
            options: ``{"task_id": ...}`` and other reset options, the same for every sub-env;
                ``"reset_mask"`` (a bool array) resets only the sub-envs it marks.

        Returns:
            The batched observations and info.
        """
        seeds = self._seeds(seed)
        rest = dict(options or {})
        mask = np.asarray(rest.pop("reset_mask", np.ones(self.num_envs, dtype=np.bool_)), dtype=np.bool_)
        task_id = rest.pop("task_id", None)
        indices = [i for i in range(self.num_envs) if mask[i]]
        results = self._batch_reset(indices, [seeds[i] for i in indices], task_id, rest)
        infos: dict[str, Any] = {}
        for i, (observation, info) in zip(indices, results, strict=True):
            self._observations[i] = observation
            infos = self._add_info(infos, info, i)
        self._autoreset[mask] = False
        self._started = True
        return tuple(self._observations), infos

    def step(
        self, actions: Sequence[str]
    ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with one batch request (autoresetting as the mode says).

        Args:
            actions: one text action per sub-env.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, arrays of length
            ``num_envs`` (observations a tuple of strings).

        Raises:
            ResetNeededError: :meth:`reset` was never called.
            ConfigurationError: ``len(actions) != num_envs``.
        """
        if not self._started:
            raise ResetNeededError(type(self).__name__)
        if len(actions) != self.num_envs:
            raise ConfigurationError(
                f"step got {len(actions)} actions for {self.num_envs} sub-envs; pass one per sub-env.",
                actions=len(actions),
                num_envs=self.num_envs,
            )
        if self.autoreset_mode is AutoresetMode.DISABLED and self._autoreset.any():
            raise ConfigurationError(
                "Sub-envs ended and autoreset is DISABLED: reset them first with "
                'reset(options={"reset_mask": terminations | truncations}).',
                ended=np.flatnonzero(self._autoreset).tolist(),
            )
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        env_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        acting = [i for i in range(self.num_envs) if not self._autoreset[i]]
        stepped = self._batch_step([(self.session_ids[i], str(actions[i])) for i in acting])
        for i, (observation, reward, terminated, truncated, info) in zip(acting, stepped, strict=True):
            self._observations[i], env_infos[i] = observation, info
            rewards[i], terminations[i], truncations[i] = reward, terminated, truncated
        ended = terminations | truncations
        infos: dict[str, Any] = {}
        # NEXT_STEP resets (action ignored, reward 0) the sub-envs that ended on the previous
        # step; SAME_STEP resets those that ended on this one, keeping their last obs and info.
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            resetting = np.flatnonzero(ended).tolist()
            for i in resetting:
                final = {"final_obs": self._observations[i], "final_info": env_infos[i]}
                infos = self._add_info(infos, final, i)
        else:
            resetting = np.flatnonzero(self._autoreset).tolist()
        for i, (observation, info) in zip(resetting, self._batch_reset(resetting), strict=True):
            self._observations[i], env_infos[i] = observation, info
        for i in range(self.num_envs):
            infos = self._add_info(infos, env_infos[i], i)
        # Sub-envs still to reset: the NEXT_STEP ones next call, the DISABLED ones by the caller.
        self._autoreset = np.zeros_like(ended) if self.autoreset_mode is AutoresetMode.SAME_STEP else ended
        return tuple(self._observations), rewards, terminations, truncations, infos

    def close_extras(self, **kwargs: Any) -> None:
        """Delete every session on the server and close the connection pool."""
        for session_id in self.session_ids:
            try:
                self.client.delete_session(session_id)
            except (*_GONE, ServerUnreachableError):
                pass  # already reaped, lost, or the server is down: its TTL frees the slot
        self.session_ids = []
        self.client.close()

    # -- wire -------------------------------------------------------------------------------

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int):
            return [seed + i for i in range(self.num_envs)]
        if len(seed) != self.num_envs:
            raise ConfigurationError(
                f"reset got {len(seed)} seeds for {self.num_envs} sub-envs; pass an int or one per sub-env.",
                seeds=len(seed),
                num_envs=self.num_envs,
            )
        return list(seed)

    def _batch_reset(
        self,
        indices: list[int],
        seeds: Sequence[int | None] | None = None,
        task_id: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[tuple[str, dict[str, Any]]]:
        if not indices:
            return []
        items = [
            BatchResetItem(
                session_id=self.session_ids[i],
                seed=None if seeds is None else seeds[k],
                task_id=task_id,
                options=dict(options or {}),
            )
            for k, i in enumerate(indices)
        ]
        response: BatchResetResponse = self.client.batch_reset(items)
        out = []
        for slot in response.results:
            error = slot_error(slot)
            if error is not None:
                raise error
            assert slot.result is not None  # an ok slot carries its result (the wire model says so)
            out.append((slot.result.observation, _decode_images(slot.result.info)))
        return out

    def _batch_step(self, items: list[tuple[str, str]]) -> list[_Transition]:
        if not items:
            return []
        response: BatchStepResponse = self.client.batch_step(items)
        out = []
        for slot in response.results:
            error = slot_error(slot)
            if error is not None:
                raise error
            assert slot.result is not None
            r = slot.result
            out.append((r.observation, r.reward, r.terminated, r.truncated, _decode_images(r.info)))
        return out
