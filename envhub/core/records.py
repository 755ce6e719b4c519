"""The records that cross process boundaries, defined once.

* :class:`Step` — one environment step of one trajectory (what the policy saw and did).
* :class:`Trajectory` — the steps of one episode, with its return, ``won`` and length.
* :class:`TokenSequence` — trajectory mode (Search-R1 / SkyRL): one token sequence per episode
  (or per segment, where a chat template rewrote history), env tokens masked out of the loss.
* :class:`Group` — the n trajectories of one task (same task id): the unit the trainer
  consumes and GRPO/GiGPO/HGPO normalise within.
* :class:`StepBatch` — the columnar (numpy) view of many groups that :mod:`envhub.algos` takes.

The first three are strict pydantic models (they travel as JSON over HTTP and Redis);
:class:`StepBatch` is a frozen dataclass of arrays (it never leaves a process).
"""

from __future__ import annotations

import base64
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from numpy.typing import NDArray
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    computed_field,
    model_validator,
)

__all__ = [
    "Base64Png",
    "Group",
    "Step",
    "StepBatch",
    "TokenSequence",
    "Trajectory",
    "canonical_anchor",
    "next_anchors",
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        # Derived fields (episode_return, length, ...) are written by model_dump; accept them back.
        if isinstance(data, dict):
            computed = cls.model_computed_fields
            return {k: v for k, v in data.items() if k not in computed}
        return data


def _decode_base64(value: Any) -> Any:
    return base64.b64decode(value, validate=True) if isinstance(value, str) else value


#: Raw bytes in Python, base64 text in JSON.
Base64Png = Annotated[
    bytes,
    BeforeValidator(_decode_base64),
    PlainSerializer(lambda b: base64.b64encode(b).decode("ascii"), return_type=str, when_used="json"),
]


class Step(_Record):
    """One environment step of one trajectory."""

    uid: str = Field(description="Group id: all trajectories of one task in one group share it.")
    traj_id: str = Field(description="Unique id of the trajectory this step belongs to.")
    step_idx: int = Field(ge=0, description="0-based position of the step inside its trajectory.")
    agent_id: str = Field(default="0", description="Which agent acted (multi-agent grouping, Dr. MAS).")
    env_step: int | None = Field(
        default=None,
        ge=0,
        description="Multi-agent episodes (Dr. MAS): the env step this agent call belongs to (0-based); "
        "the calls of one env step share it, and only the last of them carries the env's reward. "
        "None: the row is an env step of its own.",
    )
    anchor: str = Field(description="History-free canonical state string the action was taken in.")
    observation: str = Field(default="", description="The text observation the action was taken in.")
    prompt_messages: list[dict[str, Any]] | None = Field(
        default=None, description="Chat messages sent to the policy."
    )
    prompt_token_ids: list[int] | None = Field(default=None, description="Token ids of the prompt.")
    response_text: str = Field(default="", description="The policy's raw text output.")
    response_token_ids: list[int] | None = Field(default=None, description="Token ids of the response.")
    response_logprobs: list[float] | None = Field(
        default=None, description="Sampling logprobs of the response."
    )
    action: str = Field(description="The action sent to the env (after projection).")
    is_action_valid: bool = Field(default=True, description="Projection/env validity flag.")
    reward: float = Field(description="The env reward returned by this step.")
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict, description="A JSON-safe subset of the env's info.")
    history_image: Base64Png | None = Field(
        default=None, description="PNG of the rendered history (AgentOCR)."
    )
    # -- LLM rollouts (None for scripted policies) ------------------------------------------
    policy_version: int | None = Field(
        default=None, description="Version of the policy weights that sampled the response."
    )
    finish_reason: str | None = Field(
        default=None, description="Why generation stopped: 'stop', 'length', ... (OpenAI's values)."
    )
    token_exact: bool = Field(
        default=True,
        description="True when the token ids are the ones the model sampled; False when they were "
        "re-tokenised locally from text (an endpoint that returns no token ids).",
    )
    timings: dict[str, float] = Field(
        default_factory=dict, description="Seconds spent: 'policy', 'env', 'render' (what applies)."
    )
    history_image_ref: str | None = Field(
        default=None, description="Where the history image lives when not inline (a URL or a content hash)."
    )
    vision_tokens: int | None = Field(default=None, description="Vision tokens of the history image.")
    text_tokens: int | None = Field(
        default=None, description="Text tokens the same history would cost as text (AgentOCR accounting)."
    )


class TokenSequence(_Record):
    """Trajectory mode: the turns of one episode appended into one token sequence.

    ``token_ids`` = first prompt, then for every turn the sampled response followed by the env's
    observation tokens. ``loss_mask`` is 1 on sampled tokens and 0 on prompt and env tokens;
    ``logprobs`` holds the sampling logprob of each sampled token and 0.0 elsewhere. A chat
    template that rewrites earlier turns ends a segment instead of being re-tokenised:
    ``segment`` counts them from 0 and ``first_step`` is the step index the segment starts at.
    """

    uid: str
    traj_id: str
    segment: int = Field(default=0, ge=0)
    first_step: int = Field(default=0, ge=0)
    prompt_length: int = Field(ge=0, description="Tokens of the first prompt (all masked).")
    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    policy_versions: list[int] = Field(default_factory=list, description="Policy version of each turn.")
    reward: float = Field(default=0.0, description="The episode return, carried by the last segment.")

    @model_validator(mode="after")
    def _aligned(self) -> TokenSequence:
        n = len(self.token_ids)
        if len(self.loss_mask) != n or len(self.logprobs) != n:
            raise ValueError(
                f"token_ids, loss_mask and logprobs must have one entry per token; got {n}, "
                f"{len(self.loss_mask)} and {len(self.logprobs)}."
            )
        return self


class Trajectory(_Record):
    """The steps of one episode, in order."""

    uid: str
    traj_id: str
    env_id: str
    task_id: str
    steps: list[Step] = Field(default_factory=list)
    won: bool = False
    task_score: float = 0.0
    sequences: list[TokenSequence] = Field(
        default_factory=list, description="Trajectory-mode token sequences (empty in step mode)."
    )
    final_anchor: str | None = Field(
        default=None,
        description="Anchor of the state the episode ended in: the env's info['anchor'] after the "
        "last step (GraphGPO's graph needs where a failed episode went). None where not recorded "
        "(records written before this field, or by a source that does not know it).",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def episode_return(self) -> float:
        """Undiscounted sum of the step rewards."""
        return float(sum(s.reward for s in self.steps))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def length(self) -> int:
        return len(self.steps)


class Group(_Record):
    """The n trajectories of one task: the unit of GRPO-style normalisation."""

    uid: str
    env_id: str
    task_id: str
    trajectories: list[Trajectory] = Field(default_factory=list)
    policy_version: int | None = Field(
        default=None, description="Policy version the group was sampled at (its oldest step's)."
    )
    job_id: str | None = Field(default=None, description="The rollout job that produced the group.")
    attempt: int = Field(default=0, ge=0, description="0, or how many times the group was re-run whole.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float:
        if not self.trajectories:
            return 0.0
        return float(np.mean([t.won for t in self.trajectories]))


def canonical_anchor(anchor: Any) -> Hashable:
    """Make an anchor hashable and canonical: arrays and lists become (nested) tuples."""
    if isinstance(anchor, np.ndarray):
        return tuple(canonical_anchor(a) for a in anchor.tolist()) if anchor.ndim else anchor.item()
    if isinstance(anchor, list | tuple):
        return tuple(canonical_anchor(a) for a in anchor)
    if isinstance(anchor, np.generic):
        return anchor.item()
    return anchor


@dataclass(frozen=True, eq=False)
class StepBatch:
    """Columnar view of steps: one row per environment step, any row order.

    Columns (all of length ``n``): ``uid``, ``traj_id`` and ``anchor`` are object arrays of
    hashables; ``step_idx`` int64; ``reward`` float64; ``is_action_valid`` bool; ``agent_id``
    an object array, or ``None`` when there is one agent; ``env_step`` int64, or ``None`` when
    every row is an env step of its own; ``next_anchor`` an object array of the state each row's
    action led to (canonical like ``anchor``; ``None`` entries where unknown), or ``None`` when
    no row's is known (:func:`envhub.algos.graphgpo_advantages` reads it).

    With ``env_step`` (multi-agent episodes, Dr. MAS) a row is one agent call: the calls of one
    env step share its value, which never decreases along ``step_idx`` within a trajectory. The
    env step's reward is the sum of its calls' rewards (the orchestra puts it on the last call),
    and its discounted return is shared by all of them.
    """

    uid: NDArray[np.object_]
    traj_id: NDArray[np.object_]
    step_idx: NDArray[np.int64]
    anchor: NDArray[np.object_]
    reward: NDArray[np.float64]
    is_action_valid: NDArray[np.bool_]
    agent_id: NDArray[np.object_] | None = None
    env_step: NDArray[np.int64] | None = None
    next_anchor: NDArray[np.object_] | None = None

    def __post_init__(self) -> None:
        n = len(self.uid)
        columns = {
            "traj_id": self.traj_id,
            "step_idx": self.step_idx,
            "anchor": self.anchor,
            "reward": self.reward,
            "is_action_valid": self.is_action_valid,
        }
        if self.agent_id is not None:
            columns["agent_id"] = self.agent_id
        if self.env_step is not None:
            columns["env_step"] = self.env_step
        if self.next_anchor is not None:
            columns["next_anchor"] = self.next_anchor
        bad = {name: len(col) for name, col in columns.items() if len(col) != n}
        if bad:
            raise ValueError(f"StepBatch columns must all have {n} rows (the length of uid); got {bad}.")

    def __len__(self) -> int:
        return len(self.uid)

    @classmethod
    def from_columns(
        cls,
        *,
        uid: Sequence[Hashable] | NDArray[Any],
        traj_id: Sequence[Hashable] | NDArray[Any],
        step_idx: Sequence[int] | NDArray[Any],
        anchor: Sequence[Any] | NDArray[Any],
        reward: Sequence[float] | NDArray[Any],
        is_action_valid: Sequence[bool] | NDArray[Any] | None = None,
        agent_id: Sequence[Hashable] | NDArray[Any] | None = None,
        env_step: Sequence[int] | NDArray[Any] | None = None,
        next_anchor: Sequence[Any] | NDArray[Any] | None = None,
    ) -> StepBatch:
        """Build a batch from plain sequences, canonicalising anchors (arrays -> tuples)."""
        n = len(uid)
        anchors = np.empty(len(anchor), dtype=object)
        anchors[:] = [canonical_anchor(a) for a in anchor]
        nexts = None
        if next_anchor is not None:
            nexts = np.empty(len(next_anchor), dtype=object)
            nexts[:] = [canonical_anchor(a) for a in next_anchor]
        return cls(
            uid=_object_array(uid),
            traj_id=_object_array(traj_id),
            step_idx=np.asarray(step_idx, dtype=np.int64),
            anchor=anchors,
            reward=np.asarray(reward, dtype=np.float64),
            is_action_valid=(
                np.ones(n, dtype=bool) if is_action_valid is None else np.asarray(is_action_valid, dtype=bool)
            ),
            agent_id=None if agent_id is None else _object_array(agent_id),
            env_step=None if env_step is None else np.asarray(env_step, dtype=np.int64),
            next_anchor=nexts,
        )

    @classmethod
    def from_groups(cls, groups: Iterable[Group]) -> StepBatch:
        """One row per step of every trajectory of every group, trajectories in order.

        ``env_step`` is a column when any step has one; a step without one (a trajectory of
        single-agent rows in the same batch) counts as the env step of its ``step_idx``.
        ``next_anchor`` is a column when any trajectory recorded its ``final_anchor``
        (:func:`next_anchors`).
        """
        trajectories = [t for g in groups for t in g.trajectories]
        steps = [s for t in trajectories for s in t.steps]
        agents = [s.agent_id for s in steps]
        turns = [s.step_idx if s.env_step is None else s.env_step for s in steps]
        multi = any(s.env_step is not None for s in steps)
        return cls.from_columns(
            uid=[s.uid for s in steps],
            traj_id=[s.traj_id for s in steps],
            step_idx=[s.step_idx for s in steps],
            anchor=[s.anchor for s in steps],
            reward=[s.reward for s in steps],
            is_action_valid=[s.is_action_valid for s in steps],
            agent_id=agents if len(set(agents)) > 1 else None,
            env_step=turns if multi else None,
            next_anchor=next_anchors(
                [t.final_anchor for t in trajectories], [[s.anchor for s in t.steps] for t in trajectories]
            ),
        )


def next_anchors(
    final_anchor: Sequence[str | None], anchors: Sequence[Sequence[str]]
) -> list[str | None] | None:
    """The ``next_anchor`` column of trajectories in order, from each one's step anchors and final anchor.

    A step leads to the next step's anchor; a trajectory's last step to its final anchor (None
    where it recorded none). None (no column) when no trajectory recorded a final anchor.
    """
    if all(f is None for f in final_anchor):
        return None
    out: list[str | None] = []
    for final, steps in zip(final_anchor, anchors, strict=True):
        out += steps[1:]
        if steps:
            out.append(final)
    return out


def _object_array(values: Sequence[Any] | NDArray[Any]) -> NDArray[np.object_]:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out
