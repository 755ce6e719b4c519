"""SkyRL: envhub envs as ``skyrl_gym`` text envs (``pip install 'envhub[skyrl]'``).

SkyRL's generator builds one env per trajectory with
``skyrl_gym.make(env_class, env_config=..., extras=<the dataset row's extras>)``, calls
``init(prompt_messages)`` once and then ``step(model_text)`` until ``done``, appending each
step's ``observations`` to the chat with loss mask 0. :class:`EnvhubTextEnv` plays one envhub
episode that way, in process or against an ``envhub serve`` server, and
:func:`register_envhub_envs` registers every envhub env under ``envhub-<Name>-vN``.

Call :func:`register_envhub_envs` in the training entrypoint (SkyRL's Ray workers run it, so
each worker's registry has the envs)::

    from envhub.integrations.skyrl import register_envhub_envs
    register_envhub_envs()                     # then env_class: envhub-ALFWorld-v0 in the data

``env_config`` (SkyRL's ``environment.skyrl_gym.<env_class>`` block), all keys optional:

=================  ===========================================================================
``base_url``       play on this envhub server instead of in process
``token``          bearer token for that server
``env_kwargs``     keyword arguments for the env's constructor
``projection``     projection rule applied to the model's text (default: the env package's rule;
                   ``"none"`` sends the text as it is)
``split``          reset option ``split`` when the row gives none
=================  ===========================================================================

``extras`` (the dataset row): ``task_id`` and ``seed`` pick the episode (also read from
``extras["extra_info"]``, where SkyRL datasets usually keep per-row fields), ``split`` the split.

With ``generator.step_wise_trajectories=true`` SkyRL trains each turn as its own sample and
takes the per-step reward from :meth:`EnvhubTextEnv.step`; every step's ``metadata`` carries the
env's ``anchor``, ``is_action_valid``, ``won``, ``task_id``, ``task_score`` and
``admissible_actions``, so GiGPO-style step grouping can be done on SkyRL's side.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium

from envhub.agent import EpisodeMemory, build_messages, project
from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.envs.catalog import CATALOG
from envhub.envs.registry import make
from envhub.integrations._agent import AgentSetup, agent_setup

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissingError("skyrl-gym", extra="skyrl") from exc

__all__ = ["ENTRY_POINT", "METADATA_KEYS", "EnvhubTextEnv", "register_envhub_envs", "skyrl_id"]

#: What :func:`register_envhub_envs` registers as each env's entry point.
ENTRY_POINT = "envhub.integrations.skyrl:EnvhubTextEnv"

#: The step ``info`` keys copied into each step's ``metadata``.
METADATA_KEYS = ("anchor", "is_action_valid", "won", "task_id", "task_score", "admissible_actions")


def skyrl_id(env_id: str) -> str:
    """The SkyRL id of an envhub env: ``envhub/ALFWorld-v0`` -> ``envhub-ALFWorld-v0``."""
    return "envhub-" + env_id.removeprefix("envhub/")


def _plain(value: Any) -> dict[str, Any]:
    """``env_config``/``extras`` as a plain dict (SkyRL passes OmegaConf configs)."""
    if value is None:
        return {}
    try:
        from omegaconf import OmegaConf  # skyrl-gym's own dependency

        if OmegaConf.is_config(value):
            value = OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - omegaconf comes with skyrl-gym
        pass
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"Expected a mapping, got {type(value).__name__}: {value!r}.")
    return dict(value)


class EnvhubTextEnv(BaseTextEnv):  # type: ignore[misc]  # skyrl-gym ships no type information
    """One envhub episode as a SkyRL ``BaseTextEnv``.

    Args:
        env_config: see the module docstring (``base_url``, ``token``, ``env_kwargs``,
            ``projection``, ``split``).
        extras: the dataset row's extras (``task_id``, ``seed``, ``split``).
        env_id: the envhub env (set by :func:`register_envhub_envs`).

    Raises:
        ConfigurationError: no ``env_id``, or a bad ``env_config``.
        UnknownEnvError: ``env_id`` is not registered.
    """

    def __init__(self, env_config: Any = None, extras: Any = None, *, env_id: str | None = None) -> None:
        super().__init__()
        config, row = _plain(env_config), _plain(extras)
        env_id = env_id or config.get("env_id")
        if not env_id:
            raise ConfigurationError(
                "EnvhubTextEnv needs env_id: register with register_envhub_envs() and use an "
                "env_class such as 'envhub-ALFWorld-v0', or set env_config.env_id."
            )
        rule = config.get("projection")
        self.setup: AgentSetup = agent_setup(env_id, projection=None if rule in (None, "none") else rule)
        self.project_actions = rule != "none"
        self.env = self._build_env(config)
        info_row = _plain(row.get("extra_info"))
        self.task_id: str | None = row.get("task_id", info_row.get("task_id"))
        seed = row.get("seed", info_row.get("seed"))
        self.seed: int | None = None if seed is None else int(seed)
        split = row.get("split", info_row.get("split", config.get("split")))
        self.reset_options: dict[str, Any] = {} if split is None else {"split": split}
        self.max_turns = self._step_limit()
        self.memory = EpisodeMemory()
        self.observation = ""
        self.info: dict[str, Any] = {}
        self.won = False

    def _build_env(self, config: dict[str, Any]) -> gymnasium.Env[Any, Any]:
        env_kwargs = _plain(config.get("env_kwargs"))
        if config.get("base_url"):
            from envhub.client import RemoteEnv  # HTTP only when asked for

            return RemoteEnv(
                str(config["base_url"]), self.setup.env_id, config.get("token"), env_kwargs=env_kwargs
            )
        return make(self.setup.env_id, **env_kwargs)

    def _step_limit(self) -> int:
        spec = next(s for s in CATALOG if s.id == self.setup.env_id)
        return spec.max_episode_steps or 1 << 30

    # -- SkyRL's interface ------------------------------------------------------------------

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the env and give the model its first prompt.

        Args:
            prompt: the dataset row's chat messages (may be empty); the env's first prompt
                (the family's first-step template, or the bare observation) follows them.

        Returns:
            ``(messages, metadata)``; ``metadata`` has the first ``anchor``, ``task_id``, ...
        """
        options = dict(self.reset_options)
        if self.task_id is not None:
            options["task_id"] = self.task_id
        self.observation, self.info = self.env.reset(seed=self.seed, options=options)
        self.memory.reset()
        self.turns, self.won = 0, False
        if self.setup.template is not None:
            first = build_messages(
                self.setup.template,
                observation=self.observation,
                memory=self.memory,
                admissible_actions=self.info.get("admissible_actions"),
            )
        else:
            first = [{"role": "user", "content": self.observation}]
        return [*list(prompt or []), *first], self._metadata(self.info)

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Project the model's text to an action, step the env, and return the next message.

        Returns:
            ``observations`` (one user message, or none once done), the step's ``reward``,
            ``done`` (terminated or truncated), ``metadata`` (the step's info keys, plus
            ``terminated``, ``truncated``, ``action`` and ``projection_reason``) and
            ``postprocessed_action`` (the action the env received).
        """
        self.turns += 1
        if self.project_actions:
            projection = project(action, self.setup.projection)
            env_action, valid, reason = projection.action, projection.is_valid, projection.reason
        else:
            env_action, valid, reason = action, True, ""
        observation, reward, terminated, truncated, info = self.env.step(env_action)
        self.memory.store(self.observation, env_action)
        self.observation, self.info = observation, info
        self.won = bool(info.get("won", False))
        done = bool(terminated or truncated)
        metadata = self._metadata(info)
        # The trainer penalises a step whose text broke the format, even if the env accepted it.
        metadata["is_action_valid"] = bool(valid and info.get("is_action_valid", True))
        metadata.update(
            terminated=bool(terminated),
            truncated=bool(truncated),
            action=env_action,
            projection_reason=reason,
        )
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": self._render(observation, info)}],
            reward=float(reward),
            done=done,
            metadata=metadata,
            postprocessed_action=env_action,
        )

    def _render(self, observation: str, info: dict[str, Any]) -> str:
        """The user message after a step: the observation, then the admissible actions if any."""
        actions = info.get("admissible_actions")
        if not actions or self.setup.template is None:
            return observation
        listed = self.setup.template.format_actions(actions)
        return f"{observation}\nThe actions available to you now are:\n [{listed}]."

    @staticmethod
    def _metadata(info: dict[str, Any]) -> dict[str, Any]:
        return {key: info.get(key) for key in METADATA_KEYS}

    def get_metrics(self) -> dict[str, Any]:
        """Per-episode metrics SkyRL averages: ``steps``, ``won`` and ``task_score``."""
        score = self.info.get("task_score")
        return {"steps": self.turns, "won": float(self.won), "task_score": float(score or 0.0)}

    def close(self) -> None:
        """Close the env (for a remote one: delete its session)."""
        self.env.close()


def register_envhub_envs(env_ids: Iterable[str] | None = None) -> list[str]:
    """Register envhub envs in SkyRL's registry as ``envhub-<Name>-vN`` (idempotent).

    Args:
        env_ids: the envs to register; default every env of envhub's catalogue except
            ``envhub/Remote-v0`` (pass ``env_config.base_url`` to play any of them remotely).

    Returns:
        The SkyRL ids registered or already present.
    """
    chosen = [s.id for s in CATALOG if s.family != "remote"] if env_ids is None else list(env_ids)
    ids = []
    for env_id in chosen:
        spec_id = agent_setup(env_id).env_id  # validates the id, accepting short names
        sid = skyrl_id(spec_id)
        if sid not in skyrl_gym.registry:
            skyrl_gym.register(id=sid, entry_point=ENTRY_POINT, kwargs={"env_id": spec_id})
        ids.append(sid)
    return ids
