"""(Named group_queue.py: a bench/queue.py would shadow the stdlib queue module that redis-py imports.)

Finished-group payload size and queue rates: envhub's codec against JSON, memory against Redis.

The group is ALFWorld-sized (reference round2 §5): 8 trajectories x 50 steps, each step with
2048 prompt ids, 512 response ids, 512 float32 logprobs and short anchor/observation text.
Ids are either uniformly random in a 151k vocabulary (the worst case for compression) or
"shared-prefix" (every prompt of a trajectory starts with the same 1536 ids, as a system
prompt plus a history window does), which is closer to real prompts.

Part 1 encodes and decodes one group (median of ``--reps``). Part 2 pushes ``--groups``
groups through each queue backend: ``put`` rate, then ``get`` + ``ack`` rate (one consumer,
batches of 4). The Redis backend needs a server at ``--redis-url`` (skipped otherwise).

Part 3 (``--part decode``) measures the trainer's read path, groups per second: the pydantic
decode (``decode_group``) then ``build_rows``, against the columnar decode (``decode_columns``)
then ``build_rows_from_columns`` (the same rows, checked equal).

    python bench/group_queue.py
    python bench/group_queue.py --groups 20 --redis-url redis://127.0.0.1:6379/0
    python bench/group_queue.py --part decode
    python bench/group_queue.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result

from envhub.core.errors import QueueError
from envhub.core.records import Group, Step, Trajectory
from envhub.rollout.queue.codec import decode_columns, decode_group, encode_group
from envhub.rollout.queue.memory import MemoryQueue
from envhub.train.rows import build_rows, build_rows_from_columns

VOCAB = 151_000


def alfworld_group(uid: str, *, ids: str, n: int = 8, steps: int = 50, seed: int = 0) -> Group:
    """An ALFWorld-sized group of random token ids (see the module docstring)."""
    rng = np.random.default_rng(seed)
    trajectories = []
    for k in range(n):
        prefix = rng.integers(0, VOCAB, 1536, dtype=np.int64)
        rows = []
        for i in range(steps):
            if ids == "shared-prefix":
                prompt = np.concatenate([prefix, rng.integers(0, VOCAB, 512, dtype=np.int64)])
            else:
                prompt = rng.integers(0, VOCAB, 2048, dtype=np.int64)
            rows.append(
                Step(
                    uid=uid,
                    traj_id=f"{uid}/{k}",
                    step_idx=i,
                    anchor=f"You are in the middle of a room. Looking around you, you see cabinet {i % 7}.",
                    observation=f"You arrive at cabinet {i % 7}. On the cabinet {i % 7}, you see a mug {i}.",
                    prompt_token_ids=prompt.tolist(),
                    response_text="<think>Look in the cabinet.</think><action>go to cabinet 1</action>",
                    response_token_ids=rng.integers(0, VOCAB, 512, dtype=np.int64).tolist(),
                    response_logprobs=(-rng.exponential(1.0, 512)).astype(np.float32).tolist(),
                    action="go to cabinet 1",
                    reward=0.0,
                    policy_version=1,
                    finish_reason="stop",
                    timings={"policy": 0.5, "env": 0.01},
                )
            )
        trajectories.append(
            Trajectory(uid=uid, traj_id=f"{uid}/{k}", env_id="envhub/ALFWorld-v0", task_id="t", steps=rows)
        )
    return Group(
        uid=uid, env_id="envhub/ALFWorld-v0", task_id="t", trajectories=trajectories, policy_version=1
    )


def _median_s(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def payload_rows(reps: int) -> list[dict[str, Any]]:
    rows = []
    for ids in ("random", "shared-prefix"):
        group = alfworld_group("g", ids=ids)
        encodings: dict[str, tuple[Callable[[], bytes], Callable[[bytes], Group]]] = {
            "json (pydantic)": (lambda g=group: g.model_dump_json().encode(), Group.model_validate_json),
            "envhub codec": (lambda g=group: encode_group(g), decode_group),
            "envhub codec + zlib 1": (lambda g=group: encode_group(g, compress=1), decode_group),
        }
        for name, (encode, decode) in encodings.items():
            enc_s, data = _median_s(encode, reps)
            dec_s, again = _median_s(lambda data=data, decode=decode: decode(data), reps)
            assert again == group
            rows.append(
                {
                    "ids": ids,
                    "encoding": name,
                    "bytes": len(data),
                    "mb": len(data) / 1e6,
                    "encode_ms": enc_s * 1e3,
                    "decode_ms": dec_s * 1e3,
                }
            )
    return rows


async def _rates(queue: Any, consumer: Any, groups: list[Group]) -> dict[str, float]:
    t0 = time.perf_counter()
    for group in groups:
        await queue.put(group)
    put_s = time.perf_counter() - t0
    t0, got = time.perf_counter(), 0
    while got < len(groups):
        batch = await consumer.get(4, timeout_s=5)
        if not batch:
            raise RuntimeError("the queue lost groups")
        await consumer.ack(batch)
        got += len(batch)
    get_s = time.perf_counter() - t0
    return {"puts_per_s": len(groups) / put_s, "get_acks_per_s": len(groups) / get_s}


async def queue_rows(n_groups: int, redis_url: str | None) -> list[dict[str, Any]]:
    base = alfworld_group("g", ids="shared-prefix")
    groups = [base.model_copy(update={"uid": f"g{i}"}) for i in range(n_groups)]
    rows = []
    memory = MemoryQueue(max_pending=n_groups + 1)
    rows.append({"backend": "memory", "compress": None, **await _rates(memory, memory.consumer("c"), groups)})
    if redis_url is None:
        return rows
    from envhub.rollout.queue.redis import RedisQueue

    for compress in (None, 1):
        stream = f"envhub-bench:{uuid.uuid4().hex[:8]}"
        queue = RedisQueue(redis_url, stream=stream, max_backlog=n_groups + 1, compress=compress)
        try:
            rows.append({"backend": "redis", "compress": compress, **await _rates(queue, queue, groups)})
        except QueueError as exc:
            print(f"Redis skipped: {exc}")
            await queue.aclose()
            break
        await queue.client.delete(stream, f"{stream}:trainers:consumed", f"{stream}:dead")
        await queue.aclose()
    return rows


def decode_rows(reps: int) -> list[dict[str, Any]]:
    """Groups per second through each decode path (median of ``reps`` over one payload)."""
    group = alfworld_group("g", ids="shared-prefix")
    data = encode_group(group)
    paths: dict[str, Callable[[], Any]] = {
        "pydantic (decode_group)": lambda: decode_group(data),
        "pydantic + build_rows": lambda: build_rows([decode_group(data)], pad_token_id=0),
        "columnar (decode_columns)": lambda: decode_columns(data),
        "columnar + build_rows_from_columns": lambda: build_rows_from_columns(
            [decode_columns(data)], pad_token_id=0
        ),
    }
    slow = build_rows([decode_group(data)], pad_token_id=0).rows
    fast = build_rows_from_columns([decode_columns(data)], pad_token_id=0).rows
    assert all(bool((getattr(slow, f) == getattr(fast, f)).all()) for f in ("input_ids", "rollout_logprobs"))
    rows = []
    for name, fn in paths.items():
        seconds, _ = _median_s(fn, reps)
        rows.append({"part": "decode", "path": name, "ms": seconds * 1e3, "groups_per_s": 1 / seconds})
    return rows


def _print_decode(rows: list[dict[str, Any]]) -> None:
    table = Table(title="trainer read path, one ALFWorld-sized group (8 x 50 steps)")
    for column in ("path", "ms", "groups/s"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for r in rows:
        table.add_row(r["path"], f"{r['ms']:.1f}", f"{r['groups_per_s']:.1f}")
    Console(width=120).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=3, help="repetitions of each encode/decode (median)")
    parser.add_argument(
        "--groups", type=int, default=20, help="ALFWorld-sized groups pushed through each queue"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0", help="'' skips the Redis backend")
    parser.add_argument("--part", choices=["all", "payload", "decode"], default="all")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 repetition, 2 groups (tests/test_bench.py)"
    )
    args = parser.parse_args()
    if args.quick:
        args.reps, args.groups = 1, 2
    if args.part == "decode":
        decode = decode_rows(2 if args.quick else max(args.reps, 5))
        _print_decode(decode)
        print(f"wrote {write_result('queue_decode', vars(args), decode)}")
        return

    payloads = payload_rows(args.reps)
    table = Table(title="one ALFWorld-sized group (8 x 50 steps, 2048 + 512 ids, 512 logprobs per step)")
    for column in ("ids", "encoding", "size MB", "encode ms", "decode ms"):
        table.add_column(column, justify="left" if column in ("ids", "encoding") else "right")
    for r in payloads:
        table.add_row(
            r["ids"], r["encoding"], f"{r['mb']:.2f}", f"{r['encode_ms']:.0f}", f"{r['decode_ms']:.0f}"
        )
    Console(width=120).print(table)

    rates = asyncio.run(queue_rows(args.groups, args.redis_url or None))
    table = Table(title=f"queue rates, {args.groups} ALFWorld-sized groups (shared-prefix ids), one process")
    for column in ("backend", "zlib", "puts/s", "get+ack/s"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for r in rates:
        zlib = "-" if r["compress"] is None else str(r["compress"])
        table.add_row(r["backend"], zlib, f"{r['puts_per_s']:,.1f}", f"{r['get_acks_per_s']:,.1f}")
    Console(width=120).print(table)
    decode = decode_rows(2 if args.quick else max(args.reps, 5)) if args.part == "all" else []
    if decode:
        _print_decode(decode)
    path = write_result("queue", vars(args), [*({"part": "payload", **r} for r in payloads), *rates, *decode])
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
