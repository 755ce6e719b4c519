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
and decoded arrays are plain Python lists again (read with ``np.frombuffer``). ``zlib`` is
optional (level 1 by default): prompts repeat across the steps of a trajectory, so real
groups compress well.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

from envhub.core.errors import QueueError
from envhub.core.records import Group, Step

__all__ = ["SCHEMA", "decode_group", "decode_step", "encode_group", "encode_step", "pack", "unpack"]

#: Version of the payload layout; a decoder refuses other versions with a clear error.
SCHEMA = 1

# msgpack ext type codes: the dtype of a packed array (little-endian bytes).
_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype("<u1"),
    2: np.dtype("<u4"),
    3: np.dtype("<i8"),
    4: np.dtype("<f4"),
    5: np.dtype("<f8"),
}
_CODES = {dtype: code for code, dtype in _DTYPES.items()}

_STEP_INT_ARRAYS = ("prompt_token_ids", "response_token_ids")
_STEP_FLOAT_ARRAYS = ("response_logprobs",)
_SEQ_INT_ARRAYS = ("token_ids", "loss_mask", "policy_versions")
_SEQ_FLOAT_ARRAYS = ("logprobs",)


def _ext(array: np.ndarray[Any, Any]) -> msgpack.ExtType:
    return msgpack.ExtType(_CODES[array.dtype], array.tobytes())


def _pack_ints(values: list[int] | None) -> Any:
    if not values:
        return values
    lo, hi = min(values), max(values)
    for dtype, low, high in (
        (_DTYPES[1], 0, 255),
        (_DTYPES[2], 0, 2**32 - 1),
        (_DTYPES[3], -(2**63), 2**63 - 1),
    ):
        if low <= lo and hi <= high:
            return _ext(np.asarray(values, dtype=dtype))
    return values  # beyond int64: msgpack itself decides (it refuses what it cannot hold)


def _pack_floats(values: list[float] | None) -> Any:
    if not values:
        return values
    wide = np.asarray(values, dtype=_DTYPES[5])
    # float32 only when it loses nothing (NaN payloads aside), so the round trip stays exact.
    with np.errstate(over="ignore"):
        narrow = wide.astype(_DTYPES[4])
    if np.array_equal(narrow.astype(_DTYPES[5]), wide, equal_nan=True):
        return _ext(narrow)
    return _ext(wide)


def _pack_fields(record: dict[str, Any], ints: tuple[str, ...], floats: tuple[str, ...]) -> None:
    for name in ints:
        record[name] = _pack_ints(record[name])
    for name in floats:
        record[name] = _pack_floats(record[name])


def _step_body(step: dict[str, Any]) -> dict[str, Any]:
    _pack_fields(step, _STEP_INT_ARRAYS, _STEP_FLOAT_ARRAYS)
    return step


def _group_body(group: Group) -> dict[str, Any]:
    body = group.model_dump(mode="python", exclude_computed_fields=True)
    for traj in body["trajectories"]:
        for step in traj["steps"]:
            _step_body(step)
        for seq in traj["sequences"]:
            _pack_fields(seq, _SEQ_INT_ARRAYS, _SEQ_FLOAT_ARRAYS)
    return body


def _ext_hook(code: int, data: bytes) -> Any:
    dtype = _DTYPES.get(code)
    if dtype is None:
        return msgpack.ExtType(code, data)  # not ours: refused by validation with a field name
    return np.frombuffer(data, dtype=dtype).tolist()


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
    return msgpack.unpackb(data, raw=False, ext_hook=_ext_hook, strict_map_key=False)


def _envelope(kind: str, body: dict[str, Any], compress: int | None) -> bytes:
    raw = pack(body)
    if compress is not None:
        raw = zlib.compress(raw, compress)
    return pack({"schema": SCHEMA, "kind": kind, "zlib": compress is not None, "body": raw})


def _open(data: bytes, kind: str) -> Any:
    try:
        env = msgpack.unpackb(data, raw=False)
        if not isinstance(env, dict) or env.get("kind") != kind:
            raise ValueError(f"not an envhub {kind} payload")
        if env.get("schema") != SCHEMA:
            raise ValueError(f"payload schema {env.get('schema')!r}, this envhub reads schema {SCHEMA}")
        raw = zlib.decompress(env["body"]) if env["zlib"] else env["body"]
        return unpack(raw)
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
    return _validated(Group.model_validate, _open(data, "group"))


def encode_step(step: Step, *, compress: int | None = None) -> bytes:
    """The compact payload of one step (the rollout journal stores these)."""
    body = _step_body(step.model_dump(mode="python", exclude_computed_fields=True))
    return _envelope("step", body, compress)


def decode_step(data: bytes) -> Step:
    """The step in a payload from :func:`encode_step`."""
    return _validated(Step.model_validate, _open(data, "step"))


def _validated(validate: Callable[[Any], Any], body: Any) -> Any:
    try:
        return validate(body)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        raise QueueError(
            f"A queued payload does not match this envhub's records ({exc}). It was written by another "
            "envhub version; upgrade the reader or drain the queue with the writer's version.",
            reason=str(exc),
        ) from exc
