"""``envhub view``: a local web app over a training run, an eval report or a Redis stream (read-only).

Pages show learning curves with validation points, groups, trajectories and steps (the
observation, the response shaded by per-token log-prob, the action, validity, reward, the
AgentOCR history image), and each step's credit as :mod:`envhub.algos` computes it from the
stored steps: GiGPO's anchor groups linked across trajectories with step and episode
advantages, HGPO's hierarchy levels with their weights, GRPO's episode advantage. Every step
has a permalink. The page assets ship in this package; nothing is fetched from the internet.

    app = create_app(open_source("runs/gigpo_sokoban"))
"""

from envhub.view._app import ViewSettings, create_app, is_loopback
from envhub.view._credit import GroupCredit, LevelItem, StepCredit, group_credit
from envhub.view._sources import (
    Batch,
    EvalSource,
    RecordNotFoundError,
    RunSource,
    StreamSource,
    open_source,
)

__all__ = [
    "Batch",
    "EvalSource",
    "GroupCredit",
    "LevelItem",
    "RecordNotFoundError",
    "RunSource",
    "StepCredit",
    "StreamSource",
    "ViewSettings",
    "create_app",
    "group_credit",
    "is_loopback",
    "open_source",
]
