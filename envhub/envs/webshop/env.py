"""The WebShop text environment."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envhub.core.env import AgentEnv, Outcome
from envhub.envs.webshop.data import WEBSHOP_SEED, ShopData, load_shop_data
from envhub.envs.webshop.shop import Page, ShopSession

__all__ = ["WIN_REWARD", "WebShopEnv", "admissible_actions", "breakdown", "clean_observation"]

#: Training reward for a perfect purchase (verl-agent: 10 if the raw score is 1.0, else 0).
WIN_REWARD = 10.0


def admissible_actions(page: Page) -> list[str]:
    """verl-agent's action list: ``search[<your query>]`` with a search bar, then ``click[x]`` each."""
    actions = ["search[<your query>]"] if page.has_search_bar else []
    return actions + [f"click[{c}]" for c in page.clickables]


def clean_observation(observation: str, instruction: str) -> str:
    """verl-agent's cleaned observation (the GiGPO anchor): the parts after the instruction, quoted.

    ``"... [SEP] <instruction> [SEP] a [SEP] b"`` becomes ``"'a' [SEP] 'b'"``; an observation
    without the instruction (the done page) is returned unchanged.
    """
    parts = observation.split(" [SEP] ")
    try:
        index = parts.index(instruction)
    except ValueError:
        return observation
    return " [SEP] ".join(f"'{p}'" for p in parts[index + 1 :])


class WebShopEnv(AgentEnv):
    """Shop for a product that matches an instruction, in WebShop's text mode.

    ## Description
    A reproduction of WebShop (Yao et al., 2022): a shop with a search engine, result pages,
    item pages with options and sub-pages, and a purchase scored against the instruction's
    product, attributes, options and price limit. Pages are shown as WebShop's "simple"
    text observation: visible strings joined by ``" [SEP] "``.

    ## Action Space
    Any string. Understood: ``search[keywords]`` (from any page, as in WebShop) and
    ``click[x]`` where ``x`` is one of the page's clickables (buttons, product ids, option
    values; case-insensitive). Anything else changes nothing.

    ## Observation Space
    Text: e.g. ``"WebShop [SEP] Instruction: [SEP] i need ... [SEP] Search"`` at the start,
    ``"Instruction: [SEP] ... [SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP]
    Next > [SEP] B0... [SEP] <title> [SEP] $12.5 ..."`` on result pages.

    ## Rewards
    ``click[buy now]`` scores the purchase with WebShop's reward (type x (attribute, option
    and price matches) / (attributes + options + 1)); the env reward is 10 when that score
    is 1.0 and 0 otherwise (verl-agent). Every other step gives 0.

    ## Starting State
    The search page of the chosen goal; goal ``i`` (task id ``str(i)``) is the ``i``-th goal
    after WebShop's seeded shuffle (seed 233). Test = goals 0-499, train = the rest.

    ## Episode End
    Terminates on ``click[buy now]``. The env never truncates: registration sets
    ``max_episode_steps=15`` (verl-agent) and ``TimeLimit`` applies it. A step after the end
    repeats the final page with reward 0 (see :class:`~envhub.core.env.AgentEnv`).

    ## Information
    ``anchor`` (verl-agent's cleaned observation: the parts after the instruction, quoted),
    ``admissible_actions`` (``search[<your query>]`` when there is a search bar, plus
    ``click[x]``), ``won`` (score == 1.0), ``task_id``, ``task_score`` (the raw WebShop
    score, 0 until the purchase), ``is_action_valid`` (WebShop acted on the action),
    ``available_actions`` (WebShop's ``{has_search_bar, clickables}``), ``instruction``,
    ``page`` (search/results/item/sub/done) and, after a purchase, ``reward_info`` (WebShop's
    verbose components, plus ``noun_tagger``) and ``purchased`` (asin and options).

    ## Arguments
    | argument | default | meaning |
    | --- | --- | --- |
    | ``data_dir`` | ``WEBSHOP_DATA`` or embedded | directory of WebShop's data files |
    | ``human_goals`` | ``False`` | human instructions instead of synthetic ones (verl-agent: False) |
    | ``goal_seed`` | ``233`` | seed of prices, price limits and the goal shuffle (WebShop's) |
    | ``show_attrs`` | ``False`` | offer the item's Attributes sub-page |
    | ``shop`` | ``None`` | a :class:`~envhub.envs.webshop.data.ShopData` to share |
    | ``render_mode`` | ``None`` | ``"ansi"`` or ``None`` |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/WebShop-v0")
    >>> obs, info = env.reset(options={"task_id": "0"})
    >>> obs.startswith("WebShop [SEP] Instruction: [SEP] ")
    True
    >>> info["admissible_actions"]
    ['search[<your query>]', 'click[search]']

    ## Reference
    princeton-nlp/WebShop (``web_agent_site``: ``engine/engine.py``, ``engine/goal.py``,
    ``envs/web_agent_text_env.py``) as wrapped by verl-agent (``env_package/webshop``);
    reimplemented from envhub's reference notes, not vendored.

    ## Version History
    * v0: initial release.
    """

    splits = ("train", "test")
    default_split = "train"

    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        human_goals: bool = False,
        goal_seed: int = WEBSHOP_SEED,
        show_attrs: bool = False,
        shop: ShopData | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        self.shop = (
            shop if shop is not None else load_shop_data(data_dir, human_goals=human_goals, seed=goal_seed)
        )
        self.show_attrs = show_attrs
        self._session: ShopSession | None = None

    # -- hooks -----------------------------------------------------------------------------

    def _task_ids(self, split: str) -> Sequence[str]:
        return self.shop.splits[split]

    def has_task(self, task_id: str) -> bool:
        return task_id.isdigit() and str(int(task_id)) == task_id and int(task_id) < len(self.shop.goals)

    def _reset_task(self, task_id: str) -> Outcome:
        self._session = ShopSession(self.shop, self.shop.goals[int(task_id)], show_attrs=self.show_attrs)
        return self._outcome(valid=True)

    def _step(self, action: str) -> Outcome:
        assert self._session is not None  # the base class resets before stepping
        result = self._session.act(action)
        score = result.reward.score if result.reward else 0.0
        won = result.done and score == 1.0
        return self._outcome(
            valid=result.valid,
            reward=WIN_REWARD if won else 0.0,
            terminated=result.done,
            won=won,
            score=score,
        )

    # -- helpers ---------------------------------------------------------------------------

    def _outcome(
        self,
        *,
        valid: bool,
        reward: float = 0.0,
        terminated: bool = False,
        won: bool = False,
        score: float = 0.0,
    ) -> Outcome:
        session = self._session
        assert session is not None
        page = session.page
        observation = page.text
        extra: dict[str, Any] = {
            "available_actions": page.available_actions(),
            "instruction": session.goal.instruction_text,
            "page": page.kind,
        }
        if session.state.reward is not None:
            extra["reward_info"] = dict(session.state.reward.info)
            extra["purchased"] = {"asin": session.state.asin, "options": dict(session.state.options)}
        return Outcome(
            observation=observation,
            anchor=clean_observation(observation, session.goal.instruction_text),
            reward=reward,
            terminated=terminated,
            won=won,
            task_score=score,
            is_action_valid=valid,
            admissible_actions=admissible_actions(page),
            extra=extra,
        )


#: Upper bounds of WebShop's score buckets (a score of exactly 1.0 is its own bucket: a win).
_SCORE_BUCKETS = (
    (0.0, "0"),
    (0.25, "(0,0.25)"),
    (0.5, "[0.25,0.5)"),
    (0.75, "[0.5,0.75)"),
    (1.0, "[0.75,1)"),
)


def breakdown(task_id: str, task_score: float) -> dict[str, str]:
    """``envhub eval``'s breakdown of a WebShop episode: the bucket of its raw score."""
    if task_score >= 1.0:
        return {"score_bucket": "1"}
    if task_score <= 0.0:
        return {"score_bucket": "0"}
    label = next(name for bound, name in _SCORE_BUCKETS[1:] if task_score < bound)
    return {"score_bucket": label}
