"""Building a team: the orchestra a request names, over the policies of its roles."""

from __future__ import annotations

from collections.abc import Mapping

from envhub.core.errors import ConfigurationError
from envhub.core.wire import OrchestraSpec
from envhub.policy.base import PolicyBackend
from envhub.rollout.jobs import build_backend
from envhub.rollout.orchestra.base import Orchestra, OrchestraBackend
from envhub.rollout.orchestra.math import MathOrchestra
from envhub.rollout.orchestra.search import SearchOrchestra

__all__ = ["ORCHESTRA_TYPES", "team_backend"]

#: Each orchestra of :data:`envhub.core.wire.ORCHESTRAS`, and the env family it plays.
ORCHESTRA_TYPES: Mapping[str, tuple[type[Orchestra], str]] = {
    "search": (SearchOrchestra, "search"),
    "math": (MathOrchestra, "math"),
}


def team_backend(
    spec: OrchestraSpec,
    *,
    shared: PolicyBackend | None,
    env_family: str,
    max_steps: int,
    policy_version: int = 0,
    given: Mapping[str, PolicyBackend] | None = None,
) -> OrchestraBackend:
    """The engine's backend for a team: each role's own policy (``given``, else ``spec.policies``),
    else ``shared``.

    Args:
        spec: the request's ``agents``.
        shared: the policy of the roles ``spec.policies`` leaves out (the request's, or the
            caller's backend); None when every role has its own.
        env_family: the family of the env played (an orchestra plays one family's tasks).
        max_steps: the episode's env step limit.
        policy_version: stamped by the role backends built here.
        given: backends the caller built for some roles (the trainer's model per agent); the
            caller keeps and closes them.

    Raises:
        ConfigurationError: the orchestra does not play this env, a role has no policy, or a
            role's scripted policy does not load.
    """
    kind, family = ORCHESTRA_TYPES[spec.orchestra]
    if env_family != family:
        raise ConfigurationError(
            f"The {spec.orchestra} orchestra plays {family} envs, not the {env_family} family.",
            orchestra=spec.orchestra,
            family=env_family,
        )
    given = dict(given or {})
    unknown = sorted(set(given) - set(spec.roles))
    if unknown:
        raise ConfigurationError(
            f"Backends were given for {unknown}, not roles of the {spec.orchestra} orchestra.",
            roles=unknown,
        )
    if shared is None and set(spec.policies) | set(given) != set(spec.roles):
        missing = [r for r in spec.roles if r not in spec.policies and r not in given]
        raise ConfigurationError(
            f"The {spec.orchestra} orchestra has no policy for {missing}: give agents.policies for "
            "them, or the request's policy (one model plays every role left out).",
            roles=missing,
        )
    own = {
        role: build_backend(policy, policy_version)
        for role, policy in spec.policies.items()
        if role not in given
    }
    backends: dict[str, PolicyBackend] = {**given, **own}
    if shared is not None:
        for role in spec.roles:
            backends.setdefault(role, shared)
    return OrchestraBackend(kind.from_spec(spec), backends, max_steps=max_steps, owned=list(own.values()))
