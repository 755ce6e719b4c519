"""One envhub episode as a chat: the framework-neutral core of the SkyRL and verl adapters.

A framework that drives a multi-turn chat (SkyRL's ``BaseTextEnv``, verl's ``AgentLoop``) needs
the same four things from an env: the first prompt, the model's text turned into an action,
the env's reply as the next user message, and per-step metadata for step-wise advantages.
:class:`TextEpisode` gives them for any envhub env, in process or on an ``envhub serve``
server, so each adapter is only its framework's glue.

These adapters do not go through :func:`envhub.rollout.driver.play` on purpose: there the
framework owns the loop (it samples each turn and calls the env back one turn at a time), so
envhub supplies one episode's env side, not a rollout job. The TRL adapter, whose
``rollout_func`` hands envhub whole groups to play, does use ``play``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from envhub.agent import EpisodeMemory, build_messages, project
from envhub.core.errors import ConfigurationError
from envhub.envs.catalog import CATALOG
from envhub.envs.registry import make
from envhub.integrations._agent import AgentSetup, agent_setup

__all__ = ["METADATA_KEYS", "EpisodeStep", "TextEpisode", "open_env", "plain_mapping"]

#: The step ``info`` keys copied into each step's ``metadata``.
METADATA_KEYS = ("anchor", "is_action_valid", "won", "task_id", "task_score", "admissible_actions")


def plain_mapping(value: Any) -> dict[str, Any]:
    """A config or dataset row as a plain dict (frameworks pass OmegaConf configs and numpy rows)."""
    if value is None:
        return {}
    try:
        from omegaconf import OmegaConf  # both SkyRL and verl depend on it

        if OmegaConf.is_config(value):
            value = OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - present wherever an adapter runs
        pass
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"Expected a mapping, got {type(value).__name__}: {value!r}.")
    return dict(value)


def open_env(
    env_id: str,
    *,
    base_url: str | None = None,
    token: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
) -> gymnasium.Env[Any, Any]:
    """The env ``env_id``: on the envhub server at ``base_url``, else in this process.

    A ``base_url`` whose name resolves to several replicas (a scaled compose service, a headless
    Kubernetes Service) is pinned to one of them for the env's life: the session lives there.
    """
    kwargs = dict(env_kwargs or {})
    if base_url:
        from envhub.client import RemoteEnv  # HTTP only when asked for
        from envhub.rollout.replicas import pin_replica

        return RemoteEnv(pin_replica(str(base_url)), env_id, token, env_kwargs=kwargs)
    return make(env_id, **kwargs)


@dataclass
class EpisodeStep:
    """What one model turn did to the env.

    Attributes:
        message: the next user message (the observation, with the admissible actions if the
            env lists them), or None once the episode is over.
        reward: the env's reward for the step.
        done: terminated or truncated.
        metadata: the step's :data:`METADATA_KEYS` plus ``terminated``, ``truncated``,
            ``action`` (what the env received) and ``projection_reason``; ``is_action_valid``
            is False when the text broke the format, even if the env accepted the action.
    """

    message: dict[str, Any] | None
    reward: float
    done: bool
    metadata: dict[str, Any] = field(default_factory=dict)


class TextEpisode:
    """One envhub episode played as a chat.

    Args:
        env_id: the registered env (id or short name).
        base_url: play on this envhub server instead of in process.
        token: bearer token for that server.
        env_kwargs: keyword arguments for the env's constructor.
        projection: projection rule for the model's text (default: the env package's rule;
            ``"none"`` sends the text as it is).

    Raises:
        UnknownEnvError: no such env.
        ConfigurationError: unknown projection rule.
    """

    def __init__(
        self,
        env_id: str,
        *,
        base_url: str | None = None,
        token: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        projection: str | None = None,
    ) -> None:
        self.setup: AgentSetup = agent_setup(
            env_id, projection=None if projection in (None, "none") else projection
        )
        self.project_actions = projection != "none"
        self.env = open_env(self.setup.env_id, base_url=base_url, token=token, env_kwargs=env_kwargs)
        spec = next(s for s in CATALOG if s.id == self.setup.env_id)
        #: The env's step limit (its catalogue entry's ``max_episode_steps``).
        self.max_turns: int = spec.max_episode_steps or 1 << 30
        self.memory = EpisodeMemory()
        self.observation = ""
        self.info: dict[str, Any] = {}
        self.turns = 0
        self.won = False
        self.episode_return = 0.0

    def start(
        self, *, seed: int | None = None, task_id: str | None = None, split: str | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the env; the first prompt's messages and the first step's metadata.

        The prompt is the family's first-step template (or the bare observation for a family
        without one, e.g. Tau, whose observation is its policy document).
        """
        options: dict[str, Any] = {} if split is None else {"split": split}
        if task_id is not None:
            options["task_id"] = task_id
        self.observation, self.info = self.env.reset(seed=seed, options=options)
        self.memory.reset()
        self.turns, self.won, self.episode_return = 0, False, 0.0
        if self.setup.template is not None:
            messages = build_messages(
                self.setup.template,
                observation=self.observation,
                memory=self.memory,
                admissible_actions=self.info.get("admissible_actions"),
            )
        else:
            messages = [{"role": "user", "content": self.observation}]
        return messages, self.metadata(self.info)

    def step(self, text: str) -> EpisodeStep:
        """Project the model's text to an action and step the env."""
        self.turns += 1
        if self.project_actions:
            projection = project(text, self.setup.projection)
            action, valid, reason = projection.action, projection.is_valid, projection.reason
        else:
            action, valid, reason = text, True, ""
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.memory.store(self.observation, action)
        self.observation, self.info = observation, info
        self.won = bool(info.get("won", False))
        self.episode_return += float(reward)
        done = bool(terminated or truncated)
        metadata = self.metadata(info)
        metadata["is_action_valid"] = bool(valid and info.get("is_action_valid", True))
        metadata.update(
            terminated=bool(terminated), truncated=bool(truncated), action=action, projection_reason=reason
        )
        message = None if done else {"role": "user", "content": self.render(observation, info)}
        return EpisodeStep(message, float(reward), done, metadata)

    def render(self, observation: str, info: dict[str, Any]) -> str:
        """The user message after a step: the observation, then the admissible actions if any."""
        actions = info.get("admissible_actions")
        if not actions or self.setup.template is None:
            return observation
        listed = self.setup.template.format_actions(actions)
        return f"{observation}\nThe actions available to you now are:\n [{listed}]."

    @staticmethod
    def metadata(info: dict[str, Any]) -> dict[str, Any]:
        """The :data:`METADATA_KEYS` of an info dict (None where absent)."""
        return {key: info.get(key) for key in METADATA_KEYS}

    def close(self) -> None:
        """Close the env (for a remote one: delete its session)."""
        self.env.close()
