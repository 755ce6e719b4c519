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
from typing import Any

import msgpack
from pydantic import BaseModel

from envhub.core.errors import QueueError
from envhub.core.records import Group, Step

__all__ = ["SCHEMA", "decode_group", "decode_step", "encode_group", "encode_step", "pack", "unpack"]

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
