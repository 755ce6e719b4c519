"""``RemoteEnv``: a :class:`gymnasium.Env` whose episodes run on an envhub server."""

from __future__ import annotations

import base64
from typing import Any, SupportsFloat

import gymnasium
import httpx

from envhub.client._client import EnvClient
from envhub.client._retry import RetryPolicy
from envhub.core.env import MAX_ACTION_CHARS
from envhub.core.errors import (
    ConfigurationError,
    ResetNeededError,
    ServerUnreachableError,
    SessionExpiredError,
    SessionLostError,
    SessionNotFoundError,
)
from envhub.core.registry import DataStatus
from envhub.core.spaces import UnicodeText

__all__ = ["RemoteEnv", "data_status"]

#: The errors after which the server no longer has the session (a reset opens a new one).
_GONE = (SessionNotFoundError, SessionExpiredError, SessionLostError)


class RemoteEnv(gymnasium.Env[str, str]):
    """An envhub env served over HTTP, used exactly like a local one.

    ## Description
    Each ``RemoteEnv`` holds one session on an ``envhub serve`` server; ``reset`` and ``step``
    are ``POST /v1/sessions/{id}/reset`` and ``/step``, so the episode is the server's env's
    episode, transition for transition (the server applies the registered step limit, so
    ``truncated`` comes from it).

    ## Action Space
    Any Unicode string (:class:`~envhub.core.spaces.UnicodeText`).

    ## Observation Space
    Any Unicode string: the served env's text observation.

    ## Rewards
    The served env's rewards.

    ## Starting State
    The served env's ``reset(seed=..., options=...)``; ``options["task_id"]`` picks the task.

    ## Episode End
    As the served env; stepping after the end gets the served env's defined answer.

    ## Information
    The served env's ``info``: ``anchor``, ``admissible_actions``, ``won``, ``task_id``,
    ``task_score``, ``is_action_valid``.

    ## Arguments
    ================  ===========================================================
    ``base_url``      the server, e.g. ``"http://127.0.0.1:8000"`` (required)
    ``env_id``        when given, the id the server must serve (checked at the first reset)
    ``token``         bearer token for a server started with ``--token``
    ``env_kwargs``    keyword arguments for the served env's constructor
    ``retry``         a :class:`~envhub.client.RetryPolicy`
    ``timeout_s``     time allowed for each phase of a request
    ``transport``     an httpx transport (tests); None uses a connection pool
    ================  ===========================================================

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/Remote-v0", base_url="http://127.0.0.1:8000")  # doctest: +SKIP

    A session that the server reaped or lost (TTL, worker crash) is replaced by a fresh one at
    the next ``reset``; a ``step`` on it raises the server's error (the episode is gone).

    ## Reference
    The envhub REST API (``envhub.server``); ``gymnasium.Env`` semantics.

    ## Version History
    * v0: first version.
    """

    metadata: dict[str, Any] = {"render_modes": [], "render_fps": 1}  # noqa: RUF012 (gymnasium declares it so)

    def __init__(
        self,
        base_url: str,
        env_id: str | None = None,
        token: str | None = None,
        *,
        env_kwargs: dict[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.client = EnvClient(base_url, token=token, retry=retry, timeout_s=timeout_s, transport=transport)
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText(MAX_ACTION_CHARS)
        self.session_id: str | None = None
        self._episode_started = False

    def _open_session(self) -> str:
        created = self.client.create_session(self.env_kwargs)
        if self.env_id is not None and self.env_id not in (
            created.env_id,
            created.env_id.removeprefix("envhub/"),
        ):
            self.client.delete_session(created.session_id)
            raise ConfigurationError(
                f"The server at {self.client.base_url} serves {created.env_id!r}, not {self.env_id!r}. "
                "Point base_url at the server for that env, or drop env_id.",
                served=created.env_id,
                requested=self.env_id,
            )
        self.session_id = created.session_id
        return created.session_id

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on the server.

        Args:
            seed: seeds the served env (and picks the task when no ``task_id`` is given).
            options: ``{"task_id": ...}`` picks the task; other keys go to the served env's reset.

        Returns:
            The first observation and ``info``.

        Raises:
            UnknownTaskError: the served env has no such task.
            ServerUnreachableError: no server answers at ``base_url``.
        """
        super().reset(seed=seed)
        rest = dict(options or {})
        task_id = rest.pop("task_id", None)
        session_id = self.session_id or self._open_session()
        try:
            result = self.client.reset(session_id, seed=seed, task_id=task_id, options=rest)
        except _GONE:
            # The old episode is over anyway; a new session gives the same fresh start.
            result = self.client.reset(self._open_session(), seed=seed, task_id=task_id, options=rest)
        self._episode_started = True
        return result.observation, _decode_images(result.info)

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one text action on the server (retried safely: it carries a ``request_id``).

        Returns:
            ``(observation, reward, terminated, truncated, info)``.

        Raises:
            ResetNeededError: ``reset`` was never called.
            SessionExpiredError, SessionLostError: the server no longer has the episode; reset.
        """
        if self.session_id is None or not self._episode_started:
            raise ResetNeededError(type(self).__name__)
        result = self.client.step(self.session_id, action if isinstance(action, str) else str(action))
        info = _decode_images(result.info)
        return result.observation, result.reward, result.terminated, result.truncated, info

    def close(self) -> None:
        """Delete the session on the server (if it still exists) and close the connection pool."""
        if self.session_id is not None:
            try:
                self.client.delete_session(self.session_id)
            except (*_GONE, ServerUnreachableError):
                pass  # already reaped, lost, or the server is down: its TTL frees the slot
            self.session_id = None
        self.client.close()
        super().close()


def _decode_images(info: dict[str, Any]) -> dict[str, Any]:
    """Give ``info["images"]`` back as PNG bytes, as the local env has them.

    JSON has no bytes, so the server sends each image as base64 text; the env contract says
    images are bytes (or arrays, which arrive as nested lists and are left alone).
    """
    images = info.get("images")
    if isinstance(images, list) and any(isinstance(image, str) for image in images):
        info = dict(info)
        info["images"] = [base64.b64decode(image) if isinstance(image, str) else image for image in images]
    return info


def data_status() -> DataStatus:
    """``envhub/Remote-v0`` has no data of its own: it needs a running server and a ``base_url``."""
    return DataStatus(
        available=False,
        source="a running envhub server",
        how_to_get="start one with `envhub serve <env-id>` and pass base_url='http://host:port'.",
    )
