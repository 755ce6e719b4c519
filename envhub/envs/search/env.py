"""The Search-QA environment: answer a question by searching a corpus (Search-R1 semantics)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from envhub.core.env import AgentEnv, Outcome
from envhub.core.errors import ConfigurationError
from envhub.envs.search.data import Question, SearchDataset, default_data_dir
from envhub.envs.search.parsing import INVALID_ACTION_FEEDBACK, parse_action
from envhub.envs.search.resources import shared_dataset, shared_retriever
from envhub.envs.search.retrieval import (
    Hit,
    Retriever,
    format_information,
    information_observation,
)
from envhub.envs.search.retrievers import make_retriever
from envhub.envs.search.scoring import SCORERS, exact_match, normalize_answer, sub_exact_match, token_f1

__all__ = ["SearchQAEnv", "breakdown"]


class SearchQAEnv(AgentEnv):
    """Answer a factual question by calling a search engine, then giving the answer.

    ## Description

    Reproduces the environment of Search-R1 (and of verl-agent's ``search`` env built on it).
    The agent sees a question and, at each turn, either searches the corpus with
    ``<search>query</search>`` or ends the episode with ``<answer>text</answer>``. Each search
    returns the top ``topk`` passages. The default data is envhub's generated fictional world
    (1,500 passages; single-hop and 2-3-hop questions whose answers cannot be known without
    retrieval); Search-R1's own corpora and QA parquet files load from a directory.

    ## Action Space

    Any Unicode string (:class:`~envhub.core.spaces.UnicodeText`). The action is the first
    complete ``<search>…</search>`` or ``<answer>…</answer>`` block (Search-R1's rule; with
    ``strict_parsing=True`` verl-agent's stricter rules apply: both tags or a repeated tag make
    the action invalid). Anything else, or an empty query, is invalid.

    ## Observation Space

    Text. After ``reset``: the question (stripped, ``?`` appended if missing). After a search:
    ``"\\n\\n<information>Doc 1(Title: \\"…\\") …\\nDoc 2(…) …</information>\\n\\n"`` exactly as
    Search-R1 appends it. After an invalid action: Search-R1's corrective text ("My previous
    action is invalid. …"). After the answer: the empty string.

    ## Rewards

    0 for every search and invalid action. At the answer, by ``reward``: ``"em"`` (default) 1.0
    if the answer equals any golden answer after Search-R1's normalisation (lower case, no
    punctuation, no articles, single spaces), else 0.0; ``"subem"`` 1.0 if a normalised golden
    answer is contained in the normalised answer; ``"f1"`` the best token F1. An episode cut by
    the turn limit earns 0.

    ## Starting State

    The question of ``options["task_id"]``, or one drawn with ``self.np_random`` from the
    split (``options["split"]``, default ``train``).

    ## Episode End

    Terminated at the first valid ``<answer>`` block. Truncated by gymnasium's ``TimeLimit``
    after ``max_episode_steps`` turns (4 as registered, verl-agent's ``max_turns``); the env
    itself always returns ``truncated=False``. Stepping after the end repeats the final
    observation with reward 0 and ``is_action_valid=False``.

    ## Information

    Every ``info`` has ``anchor`` (the question at the start; after a search, the
    normalised text of the last ``<information>`` block, unchanged by invalid actions),
    ``admissible_actions`` (``None``: free text), ``won`` (exact match), ``task_id``,
    ``task_score`` (the reward metric's value at the answer, else 0), ``is_action_valid``, plus
    ``action_type`` (``search``/``answer``/``invalid``), ``retrieved_ids`` (ids of this turn's
    passages), ``supporting_hit`` (whether this turn retrieved a supporting passage),
    ``supporting_recall`` (share of the question's supporting passages retrieved so far, ``None``
    when the dataset records none), ``n_searches``, ``data_source`` and ``hops``; the answer
    turn adds ``answer``, ``em``, ``subem`` and ``f1``; an invalid turn adds ``parse_error``.

    ## Arguments

    | argument          | default  | meaning                                                          |
    |-------------------|----------|------------------------------------------------------------------|
    | ``data_dir``      | ``None`` | dataset directory; ``None``: ``ENVHUB_SEARCH_DATA_DIR`` or embedded |
    | ``retriever``     | ``"bm25"`` | ``"bm25"``, ``"dense"``, ``"remote"`` or a ``Retriever`` instance |
    | ``retriever_url`` | ``None`` | ``/retrieve`` endpoint for ``retriever="remote"``                |
    | ``retriever_token``| ``None`` | bearer token of that endpoint (``serve-retriever --token``)     |
    | ``index_dir``     | ``None`` | where the index is cached (default: next to the corpus)          |
    | ``topk``          | 3        | passages per search                                              |
    | ``reward``        | ``"em"`` | ``"em"``, ``"subem"`` or ``"f1"``                                |
    | ``strict_parsing``| False    | verl-agent's stricter validity rules                             |
    | ``render_mode``   | ``None`` | ``"ansi"`` or ``None``                                           |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/SearchQA-v0", topk=3)
    >>> obs, info = env.reset(seed=0)
    >>> obs == info["anchor"]
    True
    >>> obs, reward, terminated, truncated, info = env.step("<search>" + obs + "</search>")
    >>> obs.lstrip().startswith("<information>Doc 1(Title:")
    True

    ## Reference

    Search-R1 (PeterGriffinJin/Search-R1 @a14dc3a): ``llm_agent/generation.py`` (action parsing,
    corrective text, ``<information>`` block), ``search/retrieval_server.py`` (``/retrieve``,
    ``Doc i(Title: …)`` formatting), ``verl/utils/reward_score/qa_em.py`` (normalisation, EM,
    sub-EM); verl-agent's ``env_package/search`` (``max_turns`` 4, top-k 3, anchors, projection).

    ## Version History

    * v0: initial version.
    """

    splits: ClassVar[tuple[str, ...]] = ("train", "test")
    default_split: ClassVar[str] = "train"

    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        retriever: str | Retriever = "bm25",
        retriever_url: str | None = None,
        retriever_token: str | None = None,
        index_dir: str | Path | None = None,
        topk: int = 3,
        reward: str = "em",
        strict_parsing: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        if reward not in SCORERS:
            raise ConfigurationError(
                f"reward={reward!r} is unknown; use one of {sorted(SCORERS)}.", reward=reward
            )
        if int(topk) < 1:
            raise ConfigurationError(f"topk={topk} must be at least 1 (Search-R1 uses 3).", topk=topk)
        root = Path(data_dir) if data_dir is not None else default_data_dir()
        # Instances in one process share the corpus, questions and local index (see resources.py).
        self._dataset: SearchDataset = shared_dataset(root, self.splits)
        self._questions = self._dataset.question_index()
        self._owns_retriever = retriever == "remote"
        self._retriever: Retriever
        if isinstance(retriever, Retriever):
            self._retriever = retriever
        elif retriever == "remote":
            self._retriever = make_retriever("remote", url=retriever_url, token=retriever_token)
        else:
            self._retriever = shared_retriever(
                retriever, self._dataset.corpus_path, index_dir=None if index_dir is None else Path(index_dir)
            )
        self._topk = int(topk)
        self._reward = reward
        self._strict = strict_parsing
        self._question: Question | None = None
        self._anchor = ""
        self._n_searches = 0
        self._found: set[str] = set()

    # -- AgentEnv hooks -----------------------------------------------------------------------

    def _task_ids(self, split: str) -> Sequence[str]:
        return [q.id for q in self._dataset.splits[split]]

    def has_task(self, task_id: str) -> bool:
        return task_id in self._questions

    def _reset_task(self, task_id: str) -> Outcome:
        self._question = self._questions[task_id]
        text = self._question.question.strip()
        # Search-R1's data scripts end every question with "?".
        prompt = text if text.endswith("?") else text + "?"
        self._anchor = prompt
        self._n_searches = 0
        self._found = set()
        return Outcome(observation=prompt, anchor=prompt, extra=self._extra("reset", []))

    def _step(self, action: str) -> Outcome:
        parsed = parse_action(action, strict=self._strict)
        if parsed.kind == "search":
            hits = self._retriever.search_one(parsed.content, self._topk)
            return self._after_search(hits)
        if parsed.kind == "answer":
            return self._after_answer(parsed.content)
        extra = self._extra("invalid", [])
        extra["parse_error"] = parsed.reason
        return Outcome(
            observation=INVALID_ACTION_FEEDBACK, anchor=self._anchor, is_action_valid=False, extra=extra
        )

    def _close(self) -> None:
        if self._owns_retriever:
            self._retriever.close()

    # -- transitions ------------------------------------------------------------------------------

    def _after_search(self, hits: list[Hit]) -> Outcome:
        self._n_searches += 1
        ids = [hit.passage.id for hit in hits]
        self._found.update(ids)
        observation = information_observation(hits)
        # The state an agent is in is "what it last read": anchor on that, history-free.
        self._anchor = normalize_answer(format_information(hits))
        return Outcome(observation=observation, anchor=self._anchor, extra=self._extra("search", ids))

    def _after_answer(self, answer: str) -> Outcome:
        assert self._question is not None  # set by reset; the base class refuses step() before it
        golden = self._question.golden_answers
        scores = {
            "em": exact_match(answer, golden),
            "subem": sub_exact_match(answer, golden),
            "f1": token_f1(answer, golden),
        }
        reward = scores[self._reward]
        extra = self._extra("answer", [])
        extra.update(answer=answer, **scores)
        return Outcome(
            observation="",
            anchor=self._anchor,
            reward=reward,
            terminated=True,
            won=scores["em"] == 1.0,
            task_score=reward,
            extra=extra,
        )

    def _extra(self, action_type: str, retrieved: list[str]) -> dict[str, Any]:
        assert self._question is not None
        supporting = self._question.supporting_ids
        return {
            "action_type": action_type,
            "retrieved_ids": retrieved,
            "supporting_hit": any(i in supporting for i in retrieved),
            "supporting_recall": (
                sum(i in self._found for i in supporting) / len(supporting) if supporting else None
            ),
            "n_searches": self._n_searches,
            "data_source": self._question.data_source,
            "hops": self._question.hops,
        }

    @property
    def question(self) -> Question | None:
        """The current task's question record (``None`` before the first reset)."""
        return self._question

    @property
    def retriever(self) -> Retriever:
        """The retriever this env searches with."""
        return self._retriever


def breakdown(task_id: str, task_score: float) -> dict[str, str]:
    """``envhub eval``'s breakdown of a Search-QA episode: the question's hop count.

    Read from the dataset this install uses (``ENVHUB_SEARCH_DATA_DIR`` or the embedded one);
    ``"unknown"`` when the question is not in it or records no hop count.
    """
    question = shared_dataset(default_data_dir(), SearchQAEnv.splits).question_index().get(task_id)
    hops = question.hops if question is not None else 0
    return {"hops": str(hops) if hops else "unknown"}
