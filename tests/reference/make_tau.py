"""Regenerate ``tau.jsonl.gz`` by running tau-bench's own tools (tau-trait 0.1.1).

Not run in CI. It imports the original package, which envhub never does, so run it in a
scratch virtualenv::

    python3 -m venv $SCRATCH/tau
    $SCRATCH/tau/bin/pip install tau-trait==0.1.1
    OPENAI_API_KEY=unused $SCRATCH/tau/bin/python tests/reference/make_tau.py

What it records (see ``README.md`` for the digest definition):

* one ``base`` line per domain: tau-bench's ``consistent_hash`` of the freshly loaded database;
* one ``gold`` line per task of retail test, retail train and airline test: the output of
  every gold tool action replayed in order on a fresh database (``respond`` actions go to the
  user and are skipped), then the changed records and the database digest;
* ``probe`` lines: single tool calls on a fresh database, drawn with a fixed seed from gold
  actions as they are, with one argument swapped, dropped, added or given a wrong type, plus
  unknown tools and ``calculate`` expressions; each with its output and digest.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import pickle
import random
import sys
from pathlib import Path
from typing import Any

from tau_trait.envs.airline.data import load_data as load_airline
from tau_trait.envs.airline.tasks_test import TASKS as AIRLINE_TEST
from tau_trait.envs.airline.tools import ALL_TOOLS as AIRLINE_TOOLS
from tau_trait.envs.base import consistent_hash, to_hashable
from tau_trait.envs.retail.data import load_data as load_retail
from tau_trait.envs.retail.tasks_test import TASKS_TEST as RETAIL_TEST
from tau_trait.envs.retail.tasks_train import TASKS_TRAIN as RETAIL_TRAIN
from tau_trait.envs.retail.tools import ALL_TOOLS as RETAIL_TOOLS

OUT = Path(__file__).with_name("tau.jsonl.gz")
SEED = 16
PROBES_PER_DOMAIN = 500


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_hash(record: Any) -> str:
    """tau-bench's own record hash: sha256 of ``str(to_hashable(record))``."""
    return consistent_hash(to_hashable(record))


def changed(base: dict[str, dict[str, Any]], data: dict[str, dict[str, Any]]) -> dict[str, str]:
    """``"table/key" -> record hash`` of every record that is new or differs from ``base``."""
    out = {}
    for table, records in data.items():
        for key, record in records.items():
            old = base[table].get(key)
            # json.dumps tells 1 from 1.0 (as tau-bench's hash does) and is much faster than
            # hashing every record; only differing records are hashed.
            if old is None or json.dumps(old, sort_keys=True) != json.dumps(record, sort_keys=True):
                out[f"{table}/{key}"] = record_hash(record)
    return out


def digest(changes: dict[str, str]) -> str:
    """The database digest: sha256 over sorted ``table<TAB>key<TAB>record hash`` lines."""
    rows = sorted((k.split("/", 1)[0], k.split("/", 1)[1], h) for k, h in changes.items())
    return sha("\n".join(f"{t}\t{k}\t{h}" for t, k, h in rows))


def call(tools: dict[str, Any], data: dict[str, Any], name: str, kwargs: dict[str, Any]) -> str:
    """tau-bench's ``Env.step`` for a tool action, verbatim in behaviour."""
    if name not in tools:
        return f"Unknown action {name}"
    try:
        observation = tools[name].invoke(data=data, **kwargs)
    except Exception as e:  # tau-bench turns every exception into text
        observation = f"Error: {e}"
    return str(observation)


WRONG_TYPES: list[Any] = [None, 7, 3.5, ["x"], {"a": 1}, True, ""]
CALCS = ["2 + 2", "(10 - 3) * 1.5", "100 / 3", "1 / 0", "2 * (3 + 4) / 7", "7 -", "abc", "1e3",
         "12.345 * 2", "((1))", "-5 + 2", "99999999 * 99999999", "3 / 4 * 100"]  # fmt: skip


def probes(rng: random.Random, tasks: list[Any], tools: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    actions = [(a.name, dict(a.kwargs)) for t in tasks for a in t.actions if a.name in tools]
    pool: dict[str, list[Any]] = {}
    for _, kwargs in actions:
        for key, value in kwargs.items():
            pool.setdefault(key, []).append(value)
    out: list[tuple[str, dict[str, Any]]] = []
    while len(out) < PROBES_PER_DOMAIN:
        kind = rng.choice(["as_is", "swap", "swap", "drop", "extra", "type", "unknown", "calc"])
        name, kwargs = copy.deepcopy(rng.choice(actions))
        keys = sorted(kwargs)
        if kind == "swap" and keys:
            key = rng.choice(keys)
            kwargs[key] = copy.deepcopy(rng.choice(pool[key]))
        elif kind == "drop" and keys:
            del kwargs[rng.choice(keys)]
        elif kind == "extra":
            kwargs["unexpected"] = "x"
        elif kind == "type" and keys:
            kwargs[rng.choice(keys)] = copy.deepcopy(rng.choice(WRONG_TYPES))
        elif kind == "unknown":
            name = rng.choice(["delete_everything", name.upper(), name + "s", ""])
        elif kind == "calc":
            name, kwargs = "calculate", {"expression": rng.choice(CALCS)}
        out.append((name, kwargs))
    return out


def main() -> None:
    rng = random.Random(SEED)
    domains = [
        ("retail", load_retail, RETAIL_TOOLS, [("test", RETAIL_TEST), ("train", RETAIL_TRAIN)]),
        ("airline", load_airline, AIRLINE_TOOLS, [("test", AIRLINE_TEST)]),
    ]
    lines: list[dict[str, Any]] = []
    for domain, load, tool_classes, splits in domains:
        tools = {t.get_info()["function"]["name"]: t for t in tool_classes}
        base = load()
        frozen = pickle.dumps(base)
        lines.append({"kind": "base", "domain": domain, "tau_hash": record_hash(base)})
        for split, tasks in splits:
            for index, task in enumerate(tasks):
                data = pickle.loads(frozen)
                outputs = []
                for action in task.actions:
                    if action.name == "respond":
                        continue
                    out = call(tools, data, action.name, copy.deepcopy(dict(action.kwargs)))
                    outputs.append({"name": action.name, "sha256": sha(out), "head": out[:80]})
                changes = changed(base, data)
                lines.append({
                    "kind": "gold", "domain": domain, "task_id": f"{split}-{index}",
                    "outputs": outputs, "changed": changes, "digest": digest(changes),
                })  # fmt: skip
            print(domain, split, len(tasks), file=sys.stderr)
        all_tasks = [t for _, ts in splits for t in ts]
        for name, kwargs in probes(rng, all_tasks, tools):
            data = pickle.loads(frozen)
            out = call(tools, data, name, copy.deepcopy(kwargs))
            changes = changed(base, data)
            lines.append({
                "kind": "probe", "domain": domain, "name": name, "kwargs": kwargs,
                "sha256": sha(out), "head": out[:80], "digest": digest(changes),
            })  # fmt: skip
        print(domain, "probes done", file=sys.stderr)
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        for line in lines:
            # kwargs keep their order: Python names the first unexpected keyword in call order.
            f.write((json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
    print(f"wrote {len(lines)} lines to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
