"""verl-agent: an environment manager whose envs are sessions of an envhub server.

verl-agent (the GiGPO reference, ``shared/reference/round2_rollout_trainer.md`` §3-4) drives its
envs through an *environment manager*; its rollout loop calls ``reset(kwargs)``, then per step
``step(text_actions)``, then ``success_evaluator(total_infos=..., total_batch_list=...)``, and
finally ``close()``. :class:`EnvhubEnvironmentManager` implements that interface over HTTP:

* ``B = env_num * group_n`` sessions of one ``envhub serve`` server, in group-interleaved order
  (sessions ``g*group_n .. (g+1)*group_n - 1`` form group ``g``); the first reset creates each
  group with ``POST /v1/groups`` (identical starts are the server's guarantee), later resets
  are one ``POST /v1/batch/reset``, each step one ``POST /v1/batch/step``;
* memory and prompt rendering stay in the manager: ``text`` is the env family's prompt
  (:func:`envhub.agent.build_messages` over an :class:`~envhub.agent.EpisodeMemory` window),
  ``anchor`` the raw env observation, as verl-agent's own managers return them;
* the model's text goes through :func:`envhub.agent.project` (the family's rule);
  ``info["is_action_valid"]`` is the projection's verdict, as in verl-agent (the env's own
  verdict stays in ``info["env_action_valid"]``), and ``info["won"]`` is the env's.

verl-agent keeps stepping envs whose episode ended and masks them out with ``active_masks``;
the manager does not send those to the server: a finished env answers with its last
observation, reward 0 and ``done`` True.

verl-agent is not on PyPI, so this module needs nothing beyond envhub (numpy). Wire it into a
verl-agent checkout by returning it from ``make_envs`` for your env name, e.g.
``EnvhubEnvironmentManager(url, env_id="envhub/ALFWorld-v0", env_num=config.data.train_batch_size,
group_n=config.env.rollout.n)``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from envhub.agent import EpisodeMemory, build_messages, project
from envhub.client import EnvClient, slot_error
from envhub.client._remote_env import _GONE, _decode_images
from envhub.core.errors import ConfigurationError, ResetNeededError, ServerUnreachableError
from envhub.core.wire import BatchResetItem
from envhub.integrations._agent import AgentSetup, agent_setup
from envhub.rollout.replicas import pin_replica

__all__ = ["EnvhubEnvironmentManager"]


class EnvhubEnvironmentManager:
    """verl-agent's environment-manager interface over ``env_num`` groups of ``group_n`` sessions.

    Args:
        base_url: the envhub server, e.g. ``"http://127.0.0.1:8000"``; a name that resolves to
            several replicas is pinned to one (the batch's sessions live there).
        env_id: the env the server serves (picks the prompt template and projection rule).
        env_num: number of groups (verl-agent's ``data.train_batch_size``).
        group_n: sessions per group (verl-agent's ``env.rollout.n``; 1 for no grouping).
        seed: base seed; group ``g`` of the ``r``-th reset plays seed ``seed + r * env_num + g``.
        split: the task split to draw from (None: the env's default).
        history_length: memory records shown in ``text`` (default: the family's).
        projection: projection rule (default: the family's).
        env_kwargs: constructor keyword arguments for the served env.
        token: bearer token for a server started with ``--token``.
        timeout_s: time allowed for each phase of a request.

    Raises:
        ConfigurationError: ``env_num`` or ``group_n`` below 1, or the family has no prompt
            template (tau: use a tool-calling integration instead).
    """

    def __init__(
        self,
        base_url: str,
        *,
        env_id: str,
        env_num: int,
        group_n: int = 1,
        seed: int = 0,
        split: str | None = None,
        history_length: int | None = None,
        projection: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        token: str | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        if env_num < 1 or group_n < 1:
            raise ConfigurationError(
                f"env_num and group_n must be at least 1 (got {env_num}, {group_n}).",
                env_num=env_num,
                group_n=group_n,
            )
        self.setup: AgentSetup = agent_setup(env_id, projection=projection)
        if self.setup.template is None:
            raise ConfigurationError(
                f"{self.setup.env_id} has no text prompt template for a verl-agent manager; "
                "pick an env with one (ALFWorld, WebShop, SearchQA, TimeSeries).",
                env_id=self.setup.env_id,
            )
        self.env_num, self.group_n, self.batch_size = env_num, group_n, env_num * group_n
        self.seed, self.split = seed, split
        self.history_length = history_length
        self.env_kwargs = dict(env_kwargs or {})
        # Every session of the batch lives on the server that opened it: a name that resolves to
        # several replicas is pinned to one of them for the manager's life.
        self.client = EnvClient(pin_replica(base_url), token=token, timeout_s=timeout_s)
        self.session_ids: list[str] = []
        self.group_ids: list[str] = []
        self.memories = [EpisodeMemory() for _ in range(self.batch_size)]
        self._resets = 0
        self._observations: list[str] = [""] * self.batch_size
        self._infos: list[dict[str, Any]] = [{} for _ in range(self.batch_size)]
        self._done = np.zeros(self.batch_size, dtype=np.bool_)

    # -- verl-agent's interface -------------------------------------------------------------

    def reset(
        self, kwargs: Sequence[Mapping[str, Any]] | None = None
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Start a new episode in every session, identical within each group.

        Args:
            kwargs: verl-agent's per-env ``env_kwargs`` (or None). Entry ``g * group_n`` sets
                group ``g``'s ``task_id`` and/or ``seed``.

        Returns:
            ``({'text': prompts, 'image': None, 'anchor': raw observations}, infos)``, each a
            list of length ``env_num * group_n``.
        """
        starts = [self._group_start(g, kwargs) for g in range(self.env_num)]
        # The first reset opens the groups; later ones reuse their sessions in one batch request.
        results = self._reset_sessions(starts) if self.session_ids else self._create_groups(starts)
        self._resets += 1
        self._done[:] = False
        for i, (observation, info) in enumerate(results):
            self.memories[i].reset()
            self._observations[i], self._infos[i] = observation, info
        texts = [self._text(i) for i in range(self.batch_size)]
        return {"text": texts, "image": None, "anchor": list(self._observations)}, [
            dict(i) for i in self._infos
        ]

    def step(
        self, text_actions: Sequence[str]
    ) -> tuple[dict[str, Any], np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Project each model output to an action and step every unfinished session at once.

        Args:
            text_actions: one model output per session.

        Returns:
            ``(observations, rewards, dones, infos)``: ``observations`` as in :meth:`reset`;
            ``rewards`` float64 and ``dones`` bool arrays of length B; each info has the env's
            keys (``anchor``, ``won``, ``admissible_actions``, ...) plus ``is_action_valid``
            (the projection's verdict) and ``env_action_valid`` (the env's).

        Raises:
            ResetNeededError: :meth:`reset` was never called.
            ConfigurationError: ``len(text_actions) != env_num * group_n``.
        """
        if not self.session_ids:
            raise ResetNeededError(type(self).__name__)
        if len(text_actions) != self.batch_size:
            raise ConfigurationError(
                f"step got {len(text_actions)} actions for {self.batch_size} envs; pass one per env.",
                actions=len(text_actions),
                envs=self.batch_size,
            )
        projections = [project(text, self.setup.projection) for text in text_actions]
        active = [i for i in range(self.batch_size) if not self._done[i]]
        rewards = np.zeros(self.batch_size, dtype=np.float64)
        response = self.client.batch_step([(self.session_ids[i], projections[i].action) for i in active])
        for i, slot in zip(active, response.results, strict=True):
            error = slot_error(slot)
            if error is not None:
                raise error
            assert slot.result is not None  # an ok slot carries its result
            self.memories[i].store(self._observations[i], projections[i].action)
            self._observations[i] = slot.result.observation
            self._infos[i] = _decode_images(slot.result.info)
            rewards[i] = slot.result.reward
            self._done[i] = slot.result.done
        infos = []
        for i, projection in enumerate(projections):
            info = dict(self._infos[i])
            info["env_action_valid"] = bool(info.get("is_action_valid", True))
            info["is_action_valid"] = bool(projection.is_valid)
            info["won"] = bool(info.get("won", False))
            infos.append(info)
        texts = [self._text(i) for i in range(self.batch_size)]
        observations = {"text": texts, "image": None, "anchor": list(self._observations)}
        return observations, rewards, self._done.copy(), infos

    def success_evaluator(
        self,
        *,
        total_infos: Sequence[Sequence[Mapping[str, Any]]],
        total_batch_list: Sequence[Sequence[Mapping[str, Any]]],
        **_: Any,
    ) -> dict[str, np.ndarray]:
        """``success_rate`` per env: ``won`` of the last step its ``active_masks`` kept.

        Args:
            total_infos: per env, the infos of every step (verl-agent's rollout loop keeps them).
            total_batch_list: per env, the step rows; each has ``active_masks``.

        Returns:
            ``{"success_rate": float array of length B}``.
        """
        success: dict[str, list[float]] = defaultdict(list)
        for rows, infos in zip(total_batch_list, total_infos, strict=True):
            last = max((t for t, row in enumerate(rows) if bool(row["active_masks"])), default=None)
            success["success_rate"].append(0.0 if last is None else float(bool(infos[last]["won"])))
        return {key: np.asarray(values, dtype=np.float64) for key, values in success.items()}

    def close(self) -> None:
        """Delete every session and close the connection pool."""
        for session_id in self.session_ids:
            try:
                self.client.delete_session(session_id)
            except (*_GONE, ServerUnreachableError):
                continue  # reaped or lost already, or the server is down: its TTL frees the slot
        self.session_ids = []
        self.client.close()

    # -- helpers ----------------------------------------------------------------------------

    def _group_start(self, group: int, kwargs: Sequence[Mapping[str, Any]] | None) -> tuple[str | None, int]:
        """The ``(task_id, seed)`` group ``group`` starts from."""
        row: Mapping[str, Any] = {}
        if kwargs is not None:
            if len(kwargs) != self.batch_size:
                raise ConfigurationError(
                    f"reset got {len(kwargs)} env_kwargs for {self.batch_size} envs; "
                    "pass one per env, or None.",
                    kwargs=len(kwargs),
                    envs=self.batch_size,
                )
            row = kwargs[group * self.group_n] or {}
        seed = row.get("seed", self.seed + self._resets * self.env_num + group)
        return row.get("task_id"), int(seed)

    def _create_groups(self, starts: list[tuple[str | None, int]]) -> list[tuple[str, dict[str, Any]]]:
        results = []
        for task_id, seed in starts:
            group = self.client.create_group(
                self.group_n, task_id=task_id, seed=seed, split=self.split, env_kwargs=self.env_kwargs
            )
            self.group_ids.append(group.group_id)
            for member in group.sessions:
                self.session_ids.append(member.session_id)
                results.append((member.observation, _decode_images(member.info)))
        return results

    def _reset_sessions(self, starts: list[tuple[str | None, int]]) -> list[tuple[str, dict[str, Any]]]:
        options = {} if self.split is None else {"split": self.split}
        items = [
            BatchResetItem(
                session_id=sid,
                seed=starts[i // self.group_n][1],
                task_id=starts[i // self.group_n][0],
                options=options,
            )
            for i, sid in enumerate(self.session_ids)
        ]
        out = []
        for slot in self.client.batch_reset(items).results:
            error = slot_error(slot)
            if error is not None:
                raise error
            assert slot.result is not None
            out.append((slot.result.observation, _decode_images(slot.result.info)))
        return out

    def _text(self, i: int) -> str:
        """The prompt of env ``i``: the family template over its memory and current observation."""
        assert self.setup.template is not None  # checked in __init__
        messages = build_messages(
            self.setup.template,
            observation=self._observations[i],
            memory=self.memories[i],
            admissible_actions=self._infos[i].get("admissible_actions"),
            history_length=self.history_length,
        )
        content = messages[-1]["content"]
        return content if isinstance(content, str) else str(content)
