"""SkyRL: envhub envs as ``skyrl_gym`` text envs (``pip install 'envhub-rl[skyrl]'``).

SkyRL's generator builds one env per trajectory with
``skyrl_gym.make(env_class, env_config=..., extras=<the dataset row's extras>)``, calls
``init(prompt_messages)`` once and then ``step(model_text)`` until ``done``, appending each
step's ``observations`` to the chat with loss mask 0. :class:`EnvhubTextEnv` plays one envhub
episode that way, in process or against an ``envhub serve`` server, and
:func:`register_envhub_envs` registers every envhub env under ``envhub-<Name>-vN``.

Call :func:`register_envhub_envs` in the training entrypoint (SkyRL's Ray workers run it, so
each worker's registry has the envs)::

    from envhub.integrations.skyrl import register_envhub_envs
    register_envhub_envs(env_config={"base_url": "http://sokoban:8000"})  # env_class: envhub-Sokoban-v0

The env's settings go in ``register_envhub_envs(env_config=...)``: SkyRL 0.4 hands an env the
``environment.skyrl_gym.<env_class>`` block only for its own envs (its config classes reject
any other key there), so for envhub's envs it passes an empty ``env_config``. All keys optional:

=================  ===========================================================================
``base_url``       play on this envhub server instead of in process; a name that resolves to
                   several replicas is pinned to one of them for the episode
``token``          bearer token for that server
``env_kwargs``     keyword arguments for the env's constructor
``projection``     projection rule applied to the model's text (default: the env package's rule;
                   ``"none"`` sends the text as it is)
``split``          reset option ``split`` when the row gives none
=================  ===========================================================================

A non-empty ``env_config`` that SkyRL does pass (another framework's ``skyrl_gym.make``) is laid
over the registered one.

``extras`` (the dataset row): ``task_id`` and ``seed`` pick the episode (also read from
``extras["extra_info"]``, where SkyRL datasets usually keep per-row fields), ``split`` the split,
``max_turns`` (which SkyRL's generator sets from ``generator.max_turns``) truncates the episode
after that many steps when the env's own limit has not ended it.

With ``generator.step_wise_trajectories=true`` SkyRL trains each turn as its own sample and
takes the per-step reward from :meth:`EnvhubTextEnv.step`; every step's ``metadata`` carries the
env's ``anchor``, ``is_action_valid``, ``won``, ``task_id``, ``task_score`` and
``admissible_actions``, so GiGPO-style step grouping can be done on SkyRL's side.

:meth:`EnvhubTextEnv.step` returns ``postprocessed_action=None``: SkyRL's generator then trains
on the tokens the model sampled (think block and EOS included, with their log-probs), not on a
re-tokenised copy of the projected action; the action the env received is in
``metadata["action"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.envs.catalog import CATALOG
from envhub.integrations._agent import agent_setup
from envhub.integrations._episode import METADATA_KEYS, TextEpisode, plain_mapping

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise DependencyMissingError("skyrl-gym", extra="skyrl") from exc

__all__ = [
    "ENTRY_POINT",
    "ENV_CONFIG_KEYS",
    "METADATA_KEYS",
    "EnvhubTextEnv",
    "register_envhub_envs",
    "skyrl_id",
]

#: What :func:`register_envhub_envs` registers as each env's entry point.
ENTRY_POINT = "envhub.integrations.skyrl:EnvhubTextEnv"
#: The keys an ``env_config`` may set (module docstring).
ENV_CONFIG_KEYS = frozenset({"env_id", "base_url", "token", "env_kwargs", "projection", "split"})


def skyrl_id(env_id: str) -> str:
    """The SkyRL id of an envhub env: ``envhub/ALFWorld-v0`` -> ``envhub-ALFWorld-v0``."""
    return "envhub-" + env_id.removeprefix("envhub/")


class EnvhubTextEnv(BaseTextEnv):  # type: ignore[misc]  # skyrl-gym ships no type information
    """One envhub episode as a SkyRL ``BaseTextEnv``.

    Args:
        env_config: see the module docstring (``base_url``, ``token``, ``env_kwargs``,
            ``projection``, ``split``); laid over ``defaults``.
        extras: the dataset row's extras (``task_id``, ``seed``, ``split``).
        env_id: the envhub env (set by :func:`register_envhub_envs`).
        defaults: the ``env_config`` given to :func:`register_envhub_envs`.

    Raises:
        ConfigurationError: no ``env_id``, or a bad ``env_config``.
        UnknownEnvError: ``env_id`` is not registered.
    """

    def __init__(
        self,
        env_config: Any = None,
        extras: Any = None,
        *,
        env_id: str | None = None,
        defaults: Any = None,
    ) -> None:
        super().__init__()
        config = {**plain_mapping(defaults), **plain_mapping(env_config)}
        row = plain_mapping(extras)
        env_id = env_id or config.get("env_id")
        if not env_id:
            raise ConfigurationError(
                "EnvhubTextEnv needs env_id: register with register_envhub_envs() and use an "
                "env_class such as 'envhub-ALFWorld-v0', or set env_config.env_id."
            )
        self.episode = TextEpisode(
            env_id,
            base_url=config.get("base_url"),
            token=config.get("token"),
            env_kwargs=plain_mapping(config.get("env_kwargs")),
            projection=config.get("projection"),
        )
        self.setup = self.episode.setup
        self.env = self.episode.env
        info_row = plain_mapping(row.get("extra_info"))
        self.task_id: str | None = row.get("task_id", info_row.get("task_id"))
        seed = row.get("seed", info_row.get("seed"))
        self.seed: int | None = None if seed is None else int(seed)
        self.split: str | None = row.get("split", info_row.get("split", config.get("split")))
        # SkyRL's generator puts generator.max_turns into every row's extras; the env's own step
        # limit may come first.
        limit = row.get("max_turns")
        self.max_turns = self.episode.max_turns if not limit else min(self.episode.max_turns, int(limit))

    # -- SkyRL's interface ------------------------------------------------------------------

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the env and give the model its first prompt.

        Args:
            prompt: the dataset row's chat messages (may be empty); the env's first prompt
                (the family's first-step template, or the bare observation) follows them.

        Returns:
            ``(messages, metadata)``; ``metadata`` has the first ``anchor``, ``task_id``, ...
        """
        first, metadata = self.episode.start(seed=self.seed, task_id=self.task_id, split=self.split)
        self.turns = 0
        return [*list(prompt or []), *first], metadata

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Project the model's text to an action, step the env, and return the next message.

        Returns:
            ``observations`` (one user message, or none once done), the step's ``reward``,
            ``done`` (terminated or truncated), ``metadata`` (the step's info keys, plus
            ``terminated``, ``truncated``, ``action`` (what the env received) and
            ``projection_reason``) and ``postprocessed_action=None``, so that SkyRL keeps the
            sampled tokens.
        """
        self.turns += 1
        result = self.episode.step(action)
        done, metadata = result.done, result.metadata
        if not done and self.turns >= self.max_turns:  # SkyRL's max_turns: truncated here
            done, metadata = True, {**metadata, "truncated": True}
        return BaseTextEnvStepOutput(
            observations=[] if done or result.message is None else [result.message],
            reward=result.reward,
            done=done,
            metadata=metadata,
            # None: SkyRL would otherwise replace the sampled tokens with the re-tokenised
            # action, dropping the think block and the EOS and misaligning the log-probs.
            postprocessed_action=None,
        )

    @property
    def won(self) -> bool:
        """Whether the last step won the episode."""
        return self.episode.won

    def get_metrics(self) -> dict[str, Any]:
        """Per-episode metrics SkyRL averages: ``steps``, ``won`` and ``task_score``."""
        score = self.episode.info.get("task_score")
        return {"steps": self.turns, "won": float(self.won), "task_score": float(score or 0.0)}

    def close(self) -> None:
        """Close the env (for a remote one: delete its session)."""
        self.episode.close()


def register_envhub_envs(
    env_ids: Iterable[str] | None = None, *, env_config: Mapping[str, Any] | None = None
) -> list[str]:
    """Register envhub envs in SkyRL's registry as ``envhub-<Name>-vN``.

    Registering again replaces the earlier registration (so a new ``env_config`` applies).

    Args:
        env_ids: the envs to register; default every env of envhub's catalogue except
            ``envhub/Remote-v0`` (set ``base_url`` to play any of them remotely).
        env_config: the envs' settings (module docstring): ``base_url``, ``token``,
            ``env_kwargs``, ``projection``, ``split``.

    Returns:
        The SkyRL ids registered.

    Raises:
        ConfigurationError: ``env_config`` has a key that is none of those.
    """
    defaults = dict(env_config or {})
    unknown = sorted(defaults.keys() - ENV_CONFIG_KEYS)
    if unknown:
        raise ConfigurationError(
            f"Unknown env_config keys {unknown}; use {sorted(ENV_CONFIG_KEYS)}.", keys=unknown
        )
    chosen = [s.id for s in CATALOG if s.family != "remote"] if env_ids is None else list(env_ids)
    ids = []
    for env_id in chosen:
        spec_id = agent_setup(env_id).env_id  # validates the id, accepting short names
        sid = skyrl_id(spec_id)
        kwargs = {"env_id": spec_id, "defaults": defaults}
        registered = skyrl_gym.registry.get(sid)
        if registered is None or registered.kwargs != kwargs:
            skyrl_gym.registry.pop(sid, None)  # skyrl_gym refuses a second spec of one name
            skyrl_gym.register(id=sid, entry_point=ENTRY_POINT, kwargs=kwargs)
        ids.append(sid)
    return ids
