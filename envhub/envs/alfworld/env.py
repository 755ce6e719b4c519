"""``envhub/ALFWorld-v0``: ALFWorld's text household tasks on the real ALFWorld/TextWorld engine."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from envhub.core.env import AgentEnv, Outcome
from envhub.core.errors import ConfigurationError, UnknownTaskError
from envhub.envs.alfworld._engine import make_engine
from envhub.envs.alfworld.data import (
    ALL_TASK_TYPES,
    SPLIT_DIRS,
    TASK_TYPES,
    GameRecord,
    discover_games,
    load_game_record,
    resolve_data_root,
)

__all__ = ["ALFWorldEnv"]


class ALFWorldEnv(AgentEnv):
    """ALFWorld (TextWorld engine): find, clean, heat, cool and place objects in a described house.

    ## Description

    Each task is one ALFWorld game: an AI2-THOR room rendered as text, and a goal such as
    "put a clean mug in coffeemachine". The env drives one real ALFWorld text engine per
    instance (TextWorld's ``PddlEnv`` with Fast Downward, wrapped in ALFWorld's
    ``AlfredDemangler`` and ``AlfredInfos``), and the game is chosen by ``task_id``, so every
    member of a GRPO/GiGPO group starts in the same game and sees the same transitions.
    Engines in one process share Fast Downward's translations and TextWorld's grammar parses
    (exact caches, see :mod:`envhub.envs.alfworld._engine`), never their game state. An
    engine is not thread-safe: use one env per thread.
    The six task types are ALFWorld's: ``pick_and_place_simple``, ``look_at_obj_in_light``,
    ``pick_clean_then_place_in_recep``, ``pick_heat_then_place_in_recep``,
    ``pick_cool_then_place_in_recep`` and ``pick_two_obj_and_place``.

    ## Action Space

    Any string (:class:`envhub.core.spaces.UnicodeText`). The engine accepts exactly the
    commands of ``info["admissible_actions"]`` (e.g. ``"go to countertop 1"``,
    ``"take mug 1 from countertop 1"``, ``"heat mug 1 with microwave 1"``, ``"look"``); any
    other string is answered with the engine's own ``"Nothing happens."`` and changes nothing.

    ## Observation Space

    ALFWorld's feedback text. The first observation is the room description followed by
    ``"Your task is to: <goal>."``; each step's observation is the engine's answer to the
    command (``"You arrive at fridge 1. The fridge 1 is closed."``).

    ## Rewards

    ``won_reward`` (10.0 by default, as verl-agent) on the step that completes the goal,
    0 otherwise.

    ## Starting State

    The game's initial state, identical for every reset of the same ``task_id``. Without a
    ``task_id`` the game is drawn from the split with ``self.np_random``.

    ## Episode End

    The episode terminates when the goal is reached (``won=True``). Truncation is not the
    env's job: the catalogue registers ``max_episode_steps=50`` and gymnasium's ``TimeLimit``
    applies it, so the env itself always returns ``truncated=False``.

    ## Information

    * ``anchor``: the raw observation text (ALFWorld observations carry no history).
    * ``admissible_actions``: the engine's sorted admissible commands, including ``help``,
      ``look`` and ``inventory`` (prompt builders drop ``help``, as verl-agent does).
    * ``won``: the engine's goal check. ``task_score``: ``1.0`` if won else ``0.0``.
    * ``task_id``: the trial path relative to ``json_2.1.1``; ``task_type``: its task type.
    * ``is_action_valid``: whether the command was admissible.
    * ``gamefile``: the game file played (ALFWorld's ``extra.gamefile``).

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``data_dir`` | ``None`` | folder with ``json_2.1.1/``; ``None``: ``ALFWORLD_DATA`` or embedded games |
    | ``won_reward`` | ``10.0`` | reward when the goal is reached |
    | ``task_types`` | ``(1, 2, 3, 4, 5, 6)`` | ALFWorld task-type numbers to include |
    | ``render_mode`` | ``None`` | ``"ansi"`` for text rendering |

    >>> import gymnasium, envhub.envs.registry as r; r.register_all()
    >>> env = gymnasium.make("envhub/ALFWorld-v0", won_reward=1.0)
    >>> obs, info = env.reset(options={"task_id": env.unwrapped.task_ids("train")[0]})
    >>> "Your task is to:" in obs
    True

    ## Reference

    ALFWorld 0.4.2 (Shridhar et al., 2021) text environment (``AlfredTWEnv``), with
    verl-agent's conventions: reward ``10 * won``, 50 steps, splits ``train`` /
    ``eval_in_distribution`` (``valid_seen``) / ``eval_out_of_distribution``
    (``valid_unseen``), and ALFWorld's game filters. Engine semantics are ALFWorld's own.

    ## Version History

    * v0: initial version.
    """

    splits: ClassVar[tuple[str, ...]] = tuple(SPLIT_DIRS)
    default_split: ClassVar[str] = "train"

    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        won_reward: float = 10.0,
        task_types: Sequence[int] = ALL_TASK_TYPES,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        if any(t not in TASK_TYPES for t in task_types) or not task_types:
            raise ConfigurationError(
                f"task_types must be a non-empty subset of {list(TASK_TYPES)} (ALFWorld's numbering); "
                f"got {list(task_types)}.",
                task_types=list(task_types),
            )
        self._root = resolve_data_root(data_dir)
        self._task_types = tuple(task_types)
        self._won_reward = float(won_reward)
        self._engine: Any = None  # created on first reset: importing TextWorld costs ~1 s
        self._loaded: Path | None = None
        self._game: GameRecord | None = None
        self._admissible: list[str] = []

    # -- tasks ------------------------------------------------------------------------------

    def _task_ids(self, split: str) -> Sequence[str]:
        return [game.task_id for game in discover_games(self._root, split, self._task_types)]

    def has_task(self, task_id: str) -> bool:
        """Whether ``task_id`` is a playable game of any split (checks that one trial only)."""
        if not self._root.embedded and task_id.split("/", 1)[0] not in SPLIT_DIRS.values():
            return False
        return load_game_record(self._root.json_dir, task_id, self._task_types) is not None

    # -- episode ----------------------------------------------------------------------------

    def _reset_task(self, task_id: str) -> Outcome:
        game = load_game_record(self._root.json_dir, task_id, self._task_types)
        if game is None:  # removed from disk since has_task() looked
            raise UnknownTaskError(task_id, env=type(self).__name__, splits=self.splits, examples=[])
        if self._engine is None:
            self._engine = make_engine()
        if self._loaded != game.gamefile:
            # load() parses the domain and grammar; resetting the same game again skips it.
            self._loaded = None
            try:
                self._engine.load(str(game.gamefile))
            except Exception as exc:  # TextWorld/Fast Downward raise assorted types on bad PDDL
                raise ConfigurationError(
                    f"ALFWorld could not load {game.gamefile} ({type(exc).__name__}: {exc}). The game "
                    "file is damaged: restore it from `alfworld-download`, or regenerate it with "
                    "`envhub data alfworld generate`.",
                    task_id=task_id,
                ) from exc
            self._loaded = game.gamefile
        self._game = game
        return self._outcome(self._engine.reset(), valid=True)

    def _step(self, action: str) -> Outcome:
        # The engine matches the stripped command exactly against its admissible list and
        # answers anything else with "Nothing happens." without changing the state.
        valid = action.strip() in self._admissible
        state, _score, _done = self._engine.step(action)
        return self._outcome(state, valid=valid)

    def _outcome(self, state: Any, *, valid: bool) -> Outcome:
        assert self._game is not None  # set by _reset_task before any outcome is built
        observation = str(state["feedback"])
        self._admissible = [str(c) for c in state["admissible_commands"]]
        won = bool(state["won"])
        return Outcome(
            observation=observation,
            anchor=observation,
            reward=self._won_reward if won else 0.0,
            terminated=won,
            won=won,
            task_score=1.0 if won else 0.0,
            is_action_valid=valid,
            admissible_actions=list(self._admissible),
            extra={"task_type": self._game.task_type, "gamefile": str(self._game.gamefile)},
        )

    def _close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
            self._loaded = None
