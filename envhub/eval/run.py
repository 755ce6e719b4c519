"""``evaluate``: play a split (or tasks) n times per task through the rollout engine and report.

The episodes are played by :class:`~envhub.rollout.engine.RolloutEngine` with the same
:class:`~envhub.rollout.context.ContextConfig` (prompt, projection, memory, AgentOCR) and policy
backends as training; one group of ``n`` members per task. Each finished group is appended to
``OUT/episodes.jsonl`` whole (flushed and fsynced) by :class:`EpisodeSink`, so a run started again
on the same folder plays only the tasks that are not in the file yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from envhub.core.errors import ConfigurationError, UnknownEnvError, error_from_wire
from envhub.core.records import Group
from envhub.core.registry import EnvSpec, load_entry_point
from envhub.core.wire import (
    MAX_CONCURRENT_GROUPS,
    MAX_GROUP_SIZE,
    ContextConfig,
    NoBooleanNumbers,
    PolicyEndpoint,
    RolloutRequest,
    SamplingRequest,
)
from envhub.eval.report import (
    BreakdownFn,
    breakdown_of,
    build_report,
    episode_row,
    write_markdown,
    write_plots,
)
from envhub.policy.base import PolicyBackend
from envhub.rollout.context import resolve_context
from envhub.rollout.driver import make_pool, play
from envhub.rollout.engine import EngineEvent, GroupTask, JobAborted, group_uid

__all__ = [
    "CONFIG",
    "EPISODES",
    "REPORT",
    "SUMMARY",
    "EpisodeSink",
    "EvalConfig",
    "TaskSeededPolicy",
    "build_policy",
    "evaluate",
    "evaluate_async",
    "read_episodes",
    "rollout_request",
]

EPISODES = "episodes.jsonl"
CONFIG = "eval.json"
REPORT = "report.json"
SUMMARY = "summary.md"


#: The rollout specs an eval carries whole, by key: a field added to one reaches the eval's job.
_SPECS: dict[str, type[BaseModel]] = {"sampling": SamplingRequest, "context": ContextConfig}


class EvalConfig(NoBooleanNumbers):
    """What to evaluate: an env, a policy, tasks, n samples per task, and the job's specs.

    ``sampling`` and ``context`` are the rollout job's own specs, passed to it whole. A field of
    either given flat (``temperature: 0.7``, ``agentocr: true``, as the CLI's flags and older
    ``eval.json`` files do) is a shorthand of the nested one (``sampling: {temperature: 0.7}``);
    ``seed`` is the eval's (task t is reset with seed + t), and it seeds the sampling too unless
    ``sampling.seed`` is given.
    """

    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Env id, short name or family (in-process unless env_urls are given).")
    env_urls: list[str] = Field(default_factory=list, description="Env server replicas (`envhub serve`).")
    policy: str | None = Field(
        default=None,
        description=(
            "builtin | random | scripted:<module>:<callable> | <module>:<callable> | transformers:<dir>; "
            "or leave it unset and give policy_url and model."
        ),
    )
    policy_url: str | None = Field(default=None, description="OpenAI-compatible base URL (…/v1).")
    model: str | None = Field(default=None, description="Served model name.")
    tokenizer: str | None = Field(default=None, description="Local tokenizer directory (exact token ids).")
    split: str | None = Field(default=None, description="Task split (the env's default if unset).")
    tasks: list[str] | None = Field(default=None, description="Explicit task ids (instead of a split).")
    limit: int | None = Field(default=None, ge=1, description="Only the first LIMIT tasks.")
    n: int = Field(default=1, ge=1, le=MAX_GROUP_SIZE, description="Samples per task (the job's group size).")
    ks: list[int] = Field(default_factory=lambda: [1], description="k of pass@k, avg@k, pass^k (k <= n).")
    sampling: SamplingRequest = Field(
        default_factory=SamplingRequest, description="The job's sampling (seed: the eval's seed if unset)."
    )
    context: ContextConfig = Field(
        default_factory=ContextConfig, description="The job's prompt building (AgentOCR: context.agentocr)."
    )
    max_steps: int | None = Field(default=None, ge=1, description="Steps per episode (env's limit if unset).")
    concurrency: int = Field(
        default=8,
        ge=1,
        le=MAX_CONCURRENT_GROUPS,
        description="Tasks played at once (the job's max_concurrent_groups).",
    )
    seed: int = Field(default=0, ge=0, description="Task t is reset with seed + t.")
    env_kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        """Flat fields of the specs moved into them (``temperature`` -> ``sampling.temperature``)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key, spec in _SPECS.items():
            flat = {k: data.pop(k) for k in spec.model_fields if k in data and k not in cls.model_fields}
            if not flat:
                continue
            nested = data.get(key)
            # A spec object counts what it was given, not its defaults (as a mapping does).
            nested = (
                nested.model_dump(exclude_unset=True) if isinstance(nested, BaseModel) else dict(nested or {})
            )
            for name, value in flat.items():
                if name in nested and nested[name] != value:
                    raise ValueError(f"{name} is a shorthand of {key}.{name}; give one of them")
            data[key] = {**nested, **flat}
        return data

    @field_validator("ks")
    @classmethod
    def _positive(cls, ks: list[int]) -> list[int]:
        if not ks or any(k < 1 for k in ks):
            raise ValueError("ks must be positive integers, e.g. [1, 4].")
        return sorted(set(ks))

    @model_validator(mode="after")
    def _k_within_n(self) -> EvalConfig:
        if max(self.ks) > self.n:
            raise ValueError(
                f"k={max(self.ks)} exceeds n={self.n}: pass@k needs n >= k samples per task; raise n."
            )
        return self

    def policy_name(self) -> str:
        return self.policy or f"{self.model}@{self.policy_url}"

    def job_id(self) -> str:
        """A stable id of this configuration (group uids are ``<job>:<slot>:<attempt>``)."""
        digest = hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:10]
        return f"eval-{digest}"


def _spec(config: EvalConfig) -> EnvSpec | None:
    from envhub.envs.registry import resolve

    try:
        return resolve(config.env)
    except UnknownEnvError:
        if config.env_urls:  # a served env this install does not know: no breakdown, no defaults
            return None
        raise


def build_policy(config: EvalConfig, spec: EnvSpec | None) -> PolicyBackend:
    """The backend ``config`` names (see :class:`EvalConfig.policy`).

    Raises:
        ConfigurationError: no policy given, or ``builtin`` for an env without a built-in policy.
    """
    from envhub.rollout.jobs import build_backend

    policy = config.policy
    if policy is None:
        if config.policy_url is None or config.model is None:
            raise ConfigurationError(
                "Give --policy (builtin, random, scripted:...), or --policy-url and --model."
            )
        return build_backend(
            PolicyEndpoint(base_url=config.policy_url, model=config.model, tokenizer=config.tokenizer), 0
        )
    if policy in ("builtin", "random"):
        if spec is None:
            raise ConfigurationError(
                f"--policy {policy} needs an env this install knows; {config.env!r} is not one."
            )
        path = spec.demo_policy if policy == "builtin" else spec.baseline_policy
        if path is None:
            raise ConfigurationError(
                f"{spec.id} has no built-in policy; give --policy scripted:<module>:<callable>."
            )
        policy = f"scripted:{path}"
    if policy.startswith("transformers:"):
        from envhub.policy.transformers_backend import TransformersBackend

        model_dir = policy.removeprefix("transformers:")
        try:
            return TransformersBackend(model_dir, tokenizer=config.tokenizer)
        except (OSError, ValueError) as exc:
            raise ConfigurationError(
                f"Cannot load the model at {model_dir} ({type(exc).__name__}: {str(exc)[:200]}); give "
                "--policy transformers:<a Hugging Face model directory>.",
                policy=policy,
            ) from None
    policy = policy if policy.startswith("scripted:") else f"scripted:{policy}"
    target = _policy_class(policy)
    if target is not None:
        from envhub.policy.scripted import ScriptedBackend, think_action

        # A policy's action is wrapped as <think>…</think><action>…</action> for the projection
        # rules that read those tags; tool_call reads calls anywhere and sends any other text to
        # the user as it is, so there the action goes out unwrapped.
        plain = spec is not None and spec.projection == "tool_call"
        return ScriptedBackend(
            make_policy=lambda member: TaskSeededPolicy(target, member, config.seed),
            wrap=(lambda action: action) if plain else think_action,
        )
    return build_backend(policy, 0)


def _policy_class(spec: str) -> type | None:
    """The Policy class a scripted spec names (None for backend factories and scripts)."""
    try:
        target = load_entry_point(spec.removeprefix("scripted:"))
    except (ImportError, AttributeError, ValueError):
        return None  # build_backend raises the error that says how to fix it
    if isinstance(target, type) and hasattr(target, "act") and hasattr(target, "reset"):
        return target
    return None


class TaskSeededPolicy:
    """A scripted Policy re-made for every episode with a seed of (task id, sample, eval seed).

    The scripted backend seeds a Policy with the member index alone, so a random policy would
    play every task the same way; here each (task, sample) gets its own, reproducible, seed.
    """

    def __init__(self, cls: type, member: int, seed: int) -> None:
        self._cls = cls
        self._member = member
        self._seed = seed
        self._inner: Any = None

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        key = f"{info.get('task_id')}:{self._member}:{self._seed}".encode()
        self._inner = self._cls(int.from_bytes(hashlib.sha256(key).digest()[:4], "big"))
        self._inner.reset(observation, info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return str(self._inner.act(observation, info))


def read_episodes(out: str | Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The episode rows of ``OUT/episodes.jsonl`` (a torn last line is dropped, and cut when ``repair``)."""
    path = Path(out) / EPISODES
    if not path.exists():
        return []
    data = path.read_bytes()
    rows: list[dict[str, Any]] = []
    good = 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break
        good += len(line)
    if repair and good < len(data):
        with path.open("r+b") as f:
            f.truncate(good)
    return rows


class EpisodeSink:
    """Where an eval's groups go (a :class:`~envhub.rollout.queue.base.GroupWriter`).

    Each group becomes its episode rows, appended whole and fsynced; :func:`read_episodes`
    reads the file back.
    """

    def __init__(
        self,
        path: Path,
        *,
        job_id: str,
        breakdown: BreakdownFn | None,
        started: dict[str, float],
        slots: dict[str, int],
    ) -> None:
        self._path = path
        self._job_id = job_id
        self._breakdown = breakdown
        self._started = started
        self._slots = slots
        self.groups = 0

    async def put(self, group: Group) -> None:
        slot = self._slots[group.uid]
        wall = time.monotonic() - self._started.get(group.uid, time.monotonic())
        rows = [
            episode_row(t, slot=slot, sample=i, wall_s=wall, breakdown=self._breakdown)
            for i, t in enumerate(group.trajectories)
        ]
        blob = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
        with self._path.open("ab") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        self.groups += 1

    async def aclose(self) -> None:
        return None


def _complete_tasks(out: Path, n: int) -> set[tuple[int, str]]:
    """The (slot, task id) pairs with all n episodes in the file; rows of incomplete tasks are removed.

    A task's episodes are written in one write, so only a torn write leaves a task incomplete.
    """
    rows = read_episodes(out, repair=True)
    count: dict[tuple[int, str], int] = {}
    for row in rows:
        key = (int(row["slot"]), str(row["task_id"]))
        count[key] = count.get(key, 0) + 1
    done = {key for key, c in count.items() if c >= n}
    if len(done) < len(count):
        kept = [r for r in rows if (int(r["slot"]), str(r["task_id"])) in done]
        tmp = out / (EPISODES + ".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
        os.replace(tmp, out / EPISODES)
    return done


#: Settings that change no episode: a run resumed with other values plays on (and reports those ks).
_NOT_EPISODES = frozenset({"concurrency", "ks"})


def _flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"sampling": {"top_p": 1}}`` -> ``{"sampling.top_p": 1}`` (the nested specs' dotted keys)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key in _SPECS and not prefix and isinstance(value, dict):
            out.update(_flat(value, f"{key}."))
        else:
            out[prefix + key] = value
    return out


def _saved_config(path: Path) -> dict[str, Any]:
    """A folder's ``eval.json`` in today's form (an older flat one is read through EvalConfig).

    Raises:
        ConfigurationError: the file is not a JSON object (a run stopped while writing it).
    """
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        saved = None
    if not isinstance(saved, dict):
        raise ConfigurationError(
            f"{path} is not an eval's configuration (no JSON object); give a new --out, or remove "
            "the folder to start over.",
            out=str(path.parent),
        )
    try:
        return EvalConfig.model_validate(saved).model_dump(mode="json")
    except ValidationError:
        return dict(saved)  # another eval altogether: compared as it is, and refused


def _check_config(out: Path, config: EvalConfig) -> bool:
    """Refuse a folder that holds another eval; True when it holds this one already."""
    path = out / CONFIG
    given = config.model_dump(mode="json")
    if not path.exists():
        return False
    saved = _saved_config(path)
    old, new = _flat(saved), _flat(given)
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k) and k not in _NOT_EPISODES)
    if diff:
        raise ConfigurationError(
            f"{out} holds an eval with another configuration (differs in {', '.join(diff)}); "
            "give a new --out, or the same settings to resume it.",
            out=str(out),
        )
    if json.loads(path.read_text(encoding="utf-8")) != given:
        # Only what changes no episode (or the file's older form): the folder now holds this config.
        path.write_text(json.dumps(given, indent=2) + "\n", encoding="utf-8")
    return True


def _start_folder(out: Path, config: EvalConfig) -> Callable[[], None]:
    """Create ``out`` and its ``eval.json``; returns the undo for a run that wrote no episode."""
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / CONFIG).write_text(
            json.dumps(config.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot write the eval folder {out} ({exc.strerror or exc}); give a writable --out.",
            out=str(out),
        ) from None

    def undo() -> None:
        (out / CONFIG).unlink(missing_ok=True)
        (out / EPISODES).unlink(missing_ok=True)
        if created:
            with contextlib.suppress(OSError):  # something else was put there meanwhile: leave it
                out.rmdir()

    return undo


async def evaluate_async(
    config: EvalConfig,
    out: str | Path,
    *,
    on_event: Callable[[EngineEvent], None] | None = None,
    on_tasks: Callable[[int, int], None] | None = None,
    backend: PolicyBackend | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Play what is missing of the eval in ``out``, then write and return its report.

    Args:
        config: the eval.
        out: the run folder (created; an existing one is resumed when its config matches).
        on_event: every engine event (progress bars).
        on_tasks: called once with (tasks in the run, tasks already done).
        backend: a ready policy backend (overrides the one ``config`` names).
        plots: write PNG plots.

    Raises:
        ConfigurationError: bad settings, or ``out`` holds another eval.
    """
    from envhub.rollout.jobs import check_policy

    out = Path(out)
    spec = _spec(config)
    resumed = _check_config(out, config)
    env_id = spec.id if spec is not None else config.env
    max_steps = config.max_steps or (spec.max_episode_steps if spec else None) or 50
    request = rollout_request(config, env_id=env_id, max_steps=max_steps)
    if spec is not None and not config.env_urls and spec.family != "remote":
        resolve_context(request.context, env_id)  # no prompt module, projection or render preset: say so now
    if backend is None:
        backend = build_policy(config, spec)
        if config.policy is None and config.policy_url is not None and config.model is not None:
            try:  # a down endpoint or an unserved model: one line now, not after retries
                await check_policy(PolicyEndpoint(base_url=config.policy_url, model=config.model))
            except BaseException:
                await backend.aclose()
                raise
    envs = make_pool(env_id=env_id, env_urls=config.env_urls)
    job_id = config.job_id()
    started: dict[str, float] = {}
    slots: dict[str, int] = {}
    sink = EpisodeSink(
        out / EPISODES, job_id=job_id, breakdown=breakdown_of(spec), started=started, slots=slots
    )

    def event(e: EngineEvent) -> None:
        if e.kind == "group_started":
            uid = group_uid(job_id, e.slot, e.attempt)
            started[uid] = time.monotonic()
            slots[uid] = e.slot
        if on_event is not None:
            on_event(e)

    try:
        task_ids = config.tasks or await envs.task_ids(config.split, config.limit, config.env_kwargs)
        if config.tasks and config.limit:
            task_ids = task_ids[: config.limit]
        if not task_ids:
            raise ConfigurationError(f"Split {config.split!r} of {env_id} has no tasks.", split=config.split)
        tasks = [GroupTask(slot, task, config.seed + slot) for slot, task in enumerate(task_ids)]
        done = _complete_tasks(out, config.n) if resumed else set()
        todo: list[GroupTask] = [t for t in tasks if (t.slot, t.task_id) not in done]
        if on_tasks is not None:
            on_tasks(len(tasks), len(tasks) - len(todo))
        if not resumed:
            undo = _start_folder(out, config)
        if todo:
            try:
                await play(
                    request, sink, backend=backend, envs=envs, tasks=todo, job_id=job_id, on_event=event
                )
            except JobAborted as exc:
                raise error_from_wire(exc.failure.code, exc.failure.message) from None
            finally:
                if not resumed and sink.groups == 0:
                    undo()  # nothing was played: leave no folder that would refuse the next try
    finally:
        await envs.aclose()
        await backend.aclose()
    rows = read_episodes(out)
    report = build_report(
        rows, env_id=env_id, policy=config.policy_name(), config=config.model_dump(mode="json"), ks=config.ks
    )
    if plots and rows:
        report["plots"] = write_plots(report, rows, out)
    (out / REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_markdown(report, out / SUMMARY)
    return report


def rollout_request(config: EvalConfig, *, env_id: str, max_steps: int) -> RolloutRequest:
    """The rollout job an eval plays (its policy and tasks are the eval's own: a backend, a task list).

    ``sampling`` and ``context`` go in whole; the sampling seed is the eval's unless given.
    """
    sampling = config.sampling
    if sampling.seed is None:
        sampling = sampling.model_copy(update={"seed": config.seed})
    return RolloutRequest(
        env_urls=config.env_urls,
        env_id=env_id,
        env_kwargs=config.env_kwargs,
        split=config.split,
        group_size=config.n,
        max_steps=max_steps,
        sampling=sampling,
        context=config.context,
        max_concurrent_groups=config.concurrency,
        seed=config.seed,
    )


def evaluate(config: EvalConfig, out: str | Path, **kwargs: Any) -> dict[str, Any]:
    """Blocking :func:`evaluate_async` (see there)."""
    return asyncio.run(evaluate_async(config, out, **kwargs))
