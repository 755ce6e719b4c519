"""Compact binary payloads for :class:`~envhub.core.records.Group` and :class:`~envhub.core.records.Step`.

A payload is a msgpack envelope ``{"schema": 1, "kind": "group"|"step", "zlib": bool, "body": bytes}``.
The body is the record's fields as a msgpack map (computed fields such as ``episode_return``
left out; ``None`` fields kept), with the large number arrays packed as raw little-endian
bytes in msgpack ext types instead of lists of numbers (reference round2 §5: msgpack with ids
as ``uint32`` bytes is 5.0 MB for an ALFWorld group where JSON is 11.8 MB):

* integer arrays (token ids, loss masks, policy versions) are stored as ``uint8``, ``uint32``
  or ``int64``, the smallest that holds every value (a plain list beyond ``int64``);
* float arrays (logprobs) are stored as ``float32`` when every value is exactly a float32
  (what vLLM and torch produce: their float32 logprobs widened to Python floats), and as
  ``float64`` otherwise.

The round trip is therefore exact: ``decode_group(encode_group(g)) == g`` for every group,
and decoded arrays are plain Python lists again (or read the raw bytes with
``np.frombuffer``). ``zlib`` is
optional (level 1 by default): prompts repeat across the steps of a trajectory, so real
groups compress well.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from envhub.core.errors import QueueError
from envhub.core.records import Group, Step

__all__ = [
    "SCHEMA",
    "GroupColumns",
    "decode_columns",
    "decode_group",
    "decode_step",
    "encode_group",
    "encode_step",
    "pack",
    "unpack",
]

#: Version of the payload layout; a decoder refuses other versions with a clear error.
SCHEMA = 1

# msgpack ext type code -> array typecode of a packed array (little-endian bytes on the wire).
_TYPECODES = {1: "B", 2: "I", 3: "q", 4: "f", 5: "d"}
_CODES = {typecode: code for code, typecode in _TYPECODES.items()}
# The stdlib array converts a list of Python numbers in C, ~3x faster than numpy for these sizes.
_BIG_ENDIAN = sys.byteorder == "big"
assert array("I").itemsize == 4 and array("q").itemsize == 8, "unsupported platform C int sizes"

_STEP_INT_ARRAYS = ("prompt_token_ids", "response_token_ids")
_STEP_FLOAT_ARRAYS = ("response_logprobs",)
_SEQ_INT_ARRAYS = ("token_ids", "loss_mask", "policy_versions")
_SEQ_FLOAT_ARRAYS = ("logprobs",)
_STEP_ARRAYS = frozenset(_STEP_INT_ARRAYS + _STEP_FLOAT_ARRAYS)
_STEP_ARRAY_KINDS = {**dict.fromkeys(_STEP_INT_ARRAYS, "BIq"), **dict.fromkeys(_STEP_FLOAT_ARRAYS, "fd")}
_SEQ_ARRAYS = frozenset(_SEQ_INT_ARRAYS + _SEQ_FLOAT_ARRAYS)


def _ext(packed: array[Any]) -> msgpack.ExtType:
    if _BIG_ENDIAN:
        packed.byteswap()
    return msgpack.ExtType(_CODES[packed.typecode], packed.tobytes())


def _pack_ints(values: list[int] | None, first: str = "I") -> Any:
    if not values:
        return values
    for typecode in (first, "I", "q"):
        try:
            return _ext(array(typecode, values))
        except OverflowError:  # a value outside the type's range: try a wider one
            continue
    return values  # beyond int64: msgpack itself decides (it refuses what it cannot hold)


def _pack_floats(values: list[float] | None) -> Any:
    if not values:
        return values
    narrow = array("f", values)
    # float32 only when it loses nothing, so the round trip stays exact (NaNs never compare
    # equal, so lists with NaN go as float64, which keeps them).
    return _ext(narrow if narrow.tolist() == values else array("d", values))


def _pack_record(
    record: BaseModel, body: dict[str, Any], ints: tuple[str, ...], floats: tuple[str, ...]
) -> None:
    """Add ``record``'s array fields to its dumped ``body`` (which left them out), packed."""
    for name in ints:
        body[name] = _pack_ints(getattr(record, name), "B" if name == "loss_mask" else "I")
    for name in floats:
        body[name] = _pack_floats(getattr(record, name))


def _group_body(group: Group) -> dict[str, Any]:
    # model_dump copies every list; the big arrays are left out and read off the models instead.
    exclude = {
        "trajectories": {
            "__all__": {"steps": {"__all__": set(_STEP_ARRAYS)}, "sequences": {"__all__": set(_SEQ_ARRAYS)}}
        }
    }
    body = group.model_dump(mode="python", exclude_computed_fields=True, exclude=exclude)
    for traj, traj_body in zip(group.trajectories, body["trajectories"], strict=True):
        for step, step_body in zip(traj.steps, traj_body["steps"], strict=True):
            _pack_record(step, step_body, _STEP_INT_ARRAYS, _STEP_FLOAT_ARRAYS)
        for seq, seq_body in zip(traj.sequences, traj_body["sequences"], strict=True):
            _pack_record(seq, seq_body, _SEQ_INT_ARRAYS, _SEQ_FLOAT_ARRAYS)
    return body


def _step_body(step: Step) -> dict[str, Any]:
    body = step.model_dump(mode="python", exclude_computed_fields=True, exclude=set(_STEP_ARRAYS))
    _pack_record(step, body, _STEP_INT_ARRAYS, _STEP_FLOAT_ARRAYS)
    return body


def _unpack_array(code: int, data: bytes) -> Any:
    typecode = _TYPECODES.get(code)
    if typecode is None:
        return msgpack.ExtType(code, data)  # not ours: refused by validation with a field name
    packed = array(typecode, data)
    if _BIG_ENDIAN:
        packed.byteswap()
    return packed.tolist()


def pack(obj: Any) -> bytes:
    """msgpack bytes of a JSON-like value (dicts, lists, str, bytes, numbers, bool, None)."""
    try:
        return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]
    except (TypeError, ValueError, OverflowError) as exc:
        raise QueueError(
            f"Cannot serialise {type(obj).__name__} for the queue/journal ({exc}). Keep job specs, meta "
            "and info to JSON-like values (dict, list, str, bytes, int, float, bool, None).",
            reason=str(exc),
        ) from exc


def unpack(data: bytes) -> Any:
    """Inverse of :func:`pack` (also decodes envhub's packed arrays to lists)."""
    return msgpack.unpackb(data, raw=False, ext_hook=_unpack_array, strict_map_key=False)


def _envelope(kind: str, body: dict[str, Any], compress: int | None) -> bytes:
    raw = pack(body)
    if compress is not None:
        raw = zlib.compress(raw, compress)
    return pack({"schema": SCHEMA, "kind": kind, "zlib": compress is not None, "body": raw})


def _open(data: bytes, kind: str, typed: dict[int, str] | None = None) -> Any:
    """The body of an envelope; ``typed`` collects ``id(list) -> typecode`` of the decoded arrays."""

    def hook(code: int, payload: bytes) -> Any:
        out = _unpack_array(code, payload)
        if typed is not None and isinstance(out, list):
            typed[id(out)] = _TYPECODES[code]
        return out

    try:
        env = msgpack.unpackb(data, raw=False)
        if not isinstance(env, dict) or env.get("kind") != kind:
            raise ValueError(f"not an envhub {kind} payload")
        if env.get("schema") != SCHEMA:
            raise ValueError(f"payload schema {env.get('schema')!r}, this envhub reads schema {SCHEMA}")
        raw = zlib.decompress(env["body"]) if env["zlib"] else env["body"]
        return msgpack.unpackb(raw, raw=False, ext_hook=hook, strict_map_key=False)
    except (ValueError, KeyError, TypeError, zlib.error, msgpack.UnpackException) as exc:
        raise QueueError(
            f"Cannot decode a queued {kind} payload ({exc}). It was written by another program or another "
            "envhub version; upgrade the reader or drain the queue with the writer's version.",
            reason=str(exc),
        ) from exc


def encode_group(group: Group, *, compress: int | None = None) -> bytes:
    """The compact payload of ``group``.

    Args:
        group: the group to encode.
        compress: a zlib level (1 is fast and already gains most on real prompts), or ``None``.

    Returns:
        The payload bytes; :func:`decode_group` gives back an equal group.
    """
    return _envelope("group", _group_body(group), compress)


def decode_group(data: bytes) -> Group:
    """The group in a payload from :func:`encode_group`.

    Raises:
        QueueError: the bytes are not an envhub group payload of this schema.
    """
    typed: dict[int, str] = {}
    body = _open(data, "group", typed)
    steps = body.get("trajectories") if isinstance(body, dict) else None
    rows = [t.get("steps") if isinstance(t, dict) else None for t in steps] if isinstance(steps, list) else []
    arrays = [[_take_arrays(s, typed) for s in r] if isinstance(r, list) else [] for r in rows]
    group: Group = _validated(Group.model_validate, body)
    for traj, traj_arrays in zip(group.trajectories, arrays, strict=False):
        for step, fields in zip(traj.steps, traj_arrays, strict=False):
            _put_arrays(step, fields)
    return group


def encode_step(step: Step, *, compress: int | None = None) -> bytes:
    """The compact payload of one step (the rollout journal stores these)."""
    return _envelope("step", _step_body(step), compress)


def decode_step(data: bytes) -> Step:
    """The step in a payload from :func:`encode_step`."""
    typed: dict[int, str] = {}
    body = _open(data, "step", typed)
    fields = _take_arrays(body, typed)
    step: Step = _validated(Step.model_validate, body)
    _put_arrays(step, fields)
    return step


def _take_arrays(step: Any, typed: dict[int, str]) -> dict[str, list[Any]]:
    """Remove a step body's packed arrays, whose element types are known, from validation.

    Validating ~1M token ids one by one is half the decode time of a big group; arrays decoded
    from our integer (or float) ext types cannot hold anything else, so they skip it. A field
    whose array has the wrong kind stays in the body and validation reports it.
    """
    out: dict[str, list[Any]] = {}
    if not isinstance(step, dict):
        return out
    for name, kinds in _STEP_ARRAY_KINDS.items():
        value = step.get(name)
        if isinstance(value, list) and typed.get(id(value), "") in kinds:
            out[name] = step.pop(name)
    return out


def _put_arrays(step: Step, fields: dict[str, list[Any]]) -> None:
    for name, value in fields.items():
        setattr(step, name, value)


def _validated(validate: Callable[[Any], Any], body: Any) -> Any:
    try:
        return validate(body)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        raise QueueError(
            f"A queued payload does not match this envhub's records ({exc}). It was written by another "
            "envhub version; upgrade the reader or drain the queue with the writer's version.",
            reason=str(exc),
        ) from exc


# -- the columnar decode (the trainer's path: no records, arrays straight from the payload) -------

_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype("<u1"),
    2: np.dtype("<u4"),
    3: np.dtype("<i8"),
    4: np.dtype("<f4"),
    5: np.dtype("<f8"),
}


@dataclass(frozen=True)
class GroupColumns:
    """One group's steps as columns, decoded from a payload without building pydantic records.

    One entry per step, trajectories in order and steps in order within each (the order of
    :meth:`~envhub.core.records.StepBatch.from_groups` and of the trainer's rows). Token and
    logprob arrays are numpy views on the payload's bytes (read-only; ``None`` where the step
    has none).

    Attributes:
        uid, env_id, task_id, job_id, policy_version: the group's header.
        step_uid, traj_id, anchor, agent_id: per-step strings.
        step_idx, reward, is_action_valid, token_exact, step_policy_version: per-step arrays
            (``step_policy_version`` is -1 where unknown).
        prompt_ids, response_ids, response_logprobs: per-step arrays or ``None``.
        episode_return, won, length: per-trajectory values (for the trainer's metrics).
        final_anchor: per trajectory, the state it ended in (None where unrecorded, as in
            payloads written before trajectories had it).
    """

    uid: str
    env_id: str
    task_id: str
    job_id: str | None
    policy_version: int | None
    step_uid: list[str]
    traj_id: list[str]
    anchor: list[str]
    agent_id: list[str]
    step_idx: NDArray[np.int64]
    reward: NDArray[np.float64]
    is_action_valid: NDArray[np.bool_]
    token_exact: NDArray[np.bool_]
    step_policy_version: NDArray[np.int64]
    prompt_ids: list[NDArray[Any] | None]
    response_ids: list[NDArray[Any] | None]
    response_logprobs: list[NDArray[Any] | None]
    episode_return: NDArray[np.float64]
    won: NDArray[np.bool_]
    length: NDArray[np.int64]
    final_anchor: list[str | None]

    def __len__(self) -> int:
        return len(self.traj_id)


def _array_hook(code: int, payload: bytes) -> Any:
    dtype = _DTYPES.get(code)
    if dtype is None:
        return msgpack.ExtType(code, payload)
    return np.frombuffer(payload, dtype=dtype)


def _column(value: Any, name: str) -> NDArray[Any] | None:
    if value is None or isinstance(value, np.ndarray):
        return value
    if isinstance(value, list):  # empty, or a plain list (values beyond int64)
        return np.asarray(value)
    raise TypeError(f"step field {name!r} holds {type(value).__name__}, not an array")


def decode_columns(data: bytes) -> GroupColumns:
    """The steps of a payload from :func:`encode_group` as :class:`GroupColumns` (no pydantic).

    About 50x faster than :func:`decode_group` for ALFWorld-sized groups, because the big
    arrays stay numpy views on the payload and nothing is validated field by field.

    Raises:
        QueueError: the bytes are not an envhub group payload of this schema, or a field has
            the wrong shape.
    """
    try:
        env = msgpack.unpackb(data, raw=False)
        if not isinstance(env, dict) or env.get("kind") != "group" or env.get("schema") != SCHEMA:
            raise ValueError("not an envhub group payload of schema 1")
        raw = zlib.decompress(env["body"]) if env["zlib"] else env["body"]
        body = msgpack.unpackb(raw, raw=False, ext_hook=_array_hook, strict_map_key=False)
        return _columns(body)
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error, msgpack.UnpackException) as exc:
        raise QueueError(
            f"Cannot decode a queued group payload into columns ({exc}). It was written by another "
            "program or another envhub version; upgrade the reader or drain the queue with the "
            "writer's version.",
            reason=str(exc),
        ) from exc


def _columns(body: dict[str, Any]) -> GroupColumns:
    steps = [step for traj in body["trajectories"] for step in traj["steps"]]
    rewards = [[float(s["reward"]) for s in t["steps"]] for t in body["trajectories"]]
    return GroupColumns(
        uid=str(body["uid"]),
        env_id=str(body["env_id"]),
        task_id=str(body["task_id"]),
        job_id=body.get("job_id"),
        policy_version=body.get("policy_version"),
        step_uid=[str(s["uid"]) for s in steps],
        traj_id=[str(s["traj_id"]) for s in steps],
        anchor=[str(s["anchor"]) for s in steps],
        agent_id=[str(s.get("agent_id", "0")) for s in steps],
        step_idx=np.fromiter((int(s["step_idx"]) for s in steps), dtype=np.int64, count=len(steps)),
        reward=np.fromiter((float(s["reward"]) for s in steps), dtype=np.float64, count=len(steps)),
        is_action_valid=np.fromiter((bool(s.get("is_action_valid", True)) for s in steps), bool, len(steps)),
        token_exact=np.fromiter((bool(s.get("token_exact", True)) for s in steps), bool, len(steps)),
        step_policy_version=np.fromiter(
            (-1 if s.get("policy_version") is None else int(s["policy_version"]) for s in steps),
            dtype=np.int64,
            count=len(steps),
        ),
        prompt_ids=[_column(s.get("prompt_token_ids"), "prompt_token_ids") for s in steps],
        response_ids=[_column(s.get("response_token_ids"), "response_token_ids") for s in steps],
        response_logprobs=[_column(s.get("response_logprobs"), "response_logprobs") for s in steps],
        episode_return=np.asarray([sum(r) for r in rewards], dtype=np.float64),
        won=np.asarray([bool(t.get("won", False)) for t in body["trajectories"]], dtype=bool),
        length=np.asarray([len(t["steps"]) for t in body["trajectories"]], dtype=np.int64),
        final_anchor=[_optional_str(t.get("final_anchor")) for t in body["trajectories"]],
    )


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)
