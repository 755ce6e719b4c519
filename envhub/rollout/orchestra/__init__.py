"""Multi-agent episodes (Dr. MAS, arXiv 2602.08847): several role agents play each env step.

A rollout request declares its team once, in ``agents`` (:class:`~envhub.core.wire.OrchestraSpec`):
the orchestra and which policy plays each role (one shared model, or one per role).
:func:`envhub.rollout.driver.play` then plays it with the ordinary engine through
:func:`team_backend` and the expanding writer/journal (:mod:`envhub.rollout.orchestra.base`);
every role call becomes one Step row tagged with ``agent_id`` and ``env_step``, which
``envhub.algos`` groups by agent (``group_by_agent``).

Orchestras: ``search`` (:class:`~envhub.rollout.orchestra.search.SearchOrchestra`) and ``math``
(:class:`~envhub.rollout.orchestra.math.MathOrchestra`).
"""

from __future__ import annotations

from envhub.rollout.orchestra.base import (
    CallRole,
    ExpandingJournal,
    ExpandingWriter,
    Orchestra,
    OrchestraBackend,
    RoleCall,
    Turn,
)
from envhub.rollout.orchestra.math import MathOrchestra
from envhub.rollout.orchestra.search import SearchOrchestra
from envhub.rollout.orchestra.team import ORCHESTRA_TYPES, team_backend

__all__ = [
    "ORCHESTRA_TYPES",
    "CallRole",
    "ExpandingJournal",
    "ExpandingWriter",
    "MathOrchestra",
    "Orchestra",
    "OrchestraBackend",
    "RoleCall",
    "SearchOrchestra",
    "Turn",
    "team_backend",
]
