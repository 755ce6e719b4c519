"""What an adapter needs to show an envhub env to a model: its prompt template and projection rule."""

from __future__ import annotations

from dataclasses import dataclass

from envhub.agent import PROJECTIONS, PromptTemplate, family_template
from envhub.core.errors import ConfigurationError
from envhub.envs import resolve

__all__ = ["AgentSetup", "agent_setup"]


@dataclass(frozen=True)
class AgentSetup:
    """The prompt template and projection rule for one env id.

    Attributes:
        env_id: the registered id.
        package: the env's family (``alfworld``, ``timeseries``, ...).
        template: the package's prompt templates (None for a package without a
            ``FIRST_STEP``/``WITH_HISTORY`` module, e.g. tau, whose prompt is its policy document).
        projection: the name of the :data:`envhub.agent.PROJECTIONS` rule its prompts ask for.
    """

    env_id: str
    package: str
    template: PromptTemplate | None
    projection: str


def agent_setup(env_id: str, *, projection: str | None = None) -> AgentSetup:
    """The prompt template and projection rule of a registered env (id, short name or family).

    Args:
        env_id: e.g. ``"envhub/ALFWorld-v0"``.
        projection: a rule name to use instead of the package's own.

    Raises:
        UnknownEnvError: no such env.
        ConfigurationError: the env is not one of envhub's packages, or ``projection`` is unknown.
    """
    spec = resolve(env_id)
    rule = projection or spec.projection
    if rule is None:
        raise ConfigurationError(
            f"{spec.id} names no projection rule in its catalogue entry, so model text cannot be "
            "turned into actions; pass projection=... or use a local env id such as 'envhub/ALFWorld-v0'.",
            env_id=spec.id,
        )
    if rule not in PROJECTIONS and ":" not in rule:
        raise ConfigurationError(
            f"Unknown projection rule {rule!r}; use one of {sorted(PROJECTIONS)} or 'module:function'.",
            rule=rule,
        )
    try:
        template: PromptTemplate | None = family_template(spec)
    except ConfigurationError:
        template = None
    return AgentSetup(spec.id, spec.family, template, rule)
