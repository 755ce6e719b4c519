"""What an adapter needs to show an envhub env to a model: its prompt template and projection rule."""

from __future__ import annotations

from dataclasses import dataclass

from envhub.agent import PROJECTIONS, PromptTemplate, family_template
from envhub.core.errors import ConfigurationError
from envhub.envs.registry import get_spec

__all__ = ["AgentSetup", "agent_setup"]

#: The projection rule each env package's prompts ask the model to follow (see their prompt.py).
_RULES = {
    "alfworld": "alfworld",
    "webshop": "webshop",
    "search": "search",
    "tau": "tool_call",
    "timeseries": "think_action",
}


@dataclass(frozen=True)
class AgentSetup:
    """The prompt template and projection rule for one env id.

    Attributes:
        env_id: the registered id.
        package: the env package under ``envhub.envs`` (``alfworld``, ``timeseries``, ...).
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
    spec = get_spec(env_id)
    # "envhub.envs.timeseries.ucr_env:..." -> "timeseries": variants share their package's prompts.
    parts = spec.entry_point.partition(":")[0].split(".")
    if parts[:2] != ["envhub", "envs"] or len(parts) < 3:
        raise ConfigurationError(
            f"{spec.id} is not one of envhub's own env packages, so it has no prompt template; "
            "use a local env id such as 'envhub/ALFWorld-v0'.",
            env_id=spec.id,
        )
    package = parts[2]
    rule = projection or _RULES.get(package, "think_action")
    if rule not in PROJECTIONS:
        raise ConfigurationError(
            f"Unknown projection rule {rule!r}; use one of {sorted(PROJECTIONS)}.", rule=rule
        )
    try:
        template: PromptTemplate | None = family_template(package)
    except ConfigurationError:
        template = None
    return AgentSetup(spec.id, package, template, rule)
