"""``EvalConfig`` carries the rollout job's shared specs whole (``SamplingRequest``, ``ContextConfig``).

A field added to either spec reaches the eval's job with no edit to the eval; the flat keys of
the CLI and of older ``eval.json`` files are shorthands that fill the nested specs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from envhub.core.errors import ConfigurationError
from envhub.core.wire import ContextConfig, SamplingRequest
from envhub.eval.run import EvalConfig, evaluate, rollout_request

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
TS = "TimeSeries-v0"

#: Every field of both specs away from its default (a new field belongs here too).
SAMPLING = SamplingRequest(temperature=0.3, top_p=0.9, top_k=7, max_tokens=11, stop=["\n\n"], seed=5)
CONTEXT = ContextConfig(
    family="timeseries",
    history_length=3,
    memory_style="search",
    projection="think_action",
    compression=True,
    agentocr=True,
    render_at="server",
    render_preset="search",
    ocr_window=4,
    inline_images=True,
)


def test_every_sampling_and_context_field_reaches_the_job_whole() -> None:
    for spec in (SAMPLING, CONTEXT):
        defaults = type(spec)()
        unchanged = [k for k in type(spec).model_fields if getattr(spec, k) == getattr(defaults, k)]
        assert not unchanged, f"give {type(spec).__name__}.{unchanged} a non-default value here"
    config = EvalConfig(env=TS, policy="builtin", sampling=SAMPLING, context=CONTEXT)
    request = rollout_request(config, env_id="envhub/TimeSeries-v0", max_steps=4)
    assert request.sampling == SAMPLING and request.context == CONTEXT
    assert config.model_dump(mode="json")["sampling"] == SAMPLING.model_dump(mode="json")


def test_flat_keys_fill_the_nested_specs() -> None:
    base = {"env": TS, "policy": "builtin"}
    flat = EvalConfig.model_validate({**base, "temperature": 0.4, "max_tokens": 9, "top_k": 3, "stop": ["x"],
                                      "agentocr": True, "history_length": 2})  # fmt: skip
    nested = EvalConfig(
        env=TS,
        policy="builtin",
        sampling=SamplingRequest(temperature=0.4, max_tokens=9, top_k=3, stop=["x"]),
        context=ContextConfig(agentocr=True, history_length=2),
    )
    assert flat == nested
    both = EvalConfig.model_validate({**base, "temperature": 0.4, "sampling": {"temperature": 0.4}})
    assert both.sampling == SamplingRequest(temperature=0.4)  # a shorthand and its field may agree
    with pytest.raises(ValidationError, match=r"temperature is a shorthand of sampling\.temperature"):
        EvalConfig.model_validate({**base, "temperature": 0.4, "sampling": {"temperature": 0.5}})


def test_the_sampling_seed_is_the_eval_seed_unless_given() -> None:
    config = EvalConfig(env=TS, policy="builtin", seed=17)
    assert rollout_request(config, env_id="envhub/TimeSeries-v0", max_steps=4).sampling.seed == 17
    config = EvalConfig(env=TS, policy="builtin", seed=17, sampling=SamplingRequest(seed=3))
    request = rollout_request(config, env_id="envhub/TimeSeries-v0", max_steps=4)
    assert request.sampling.seed == 3 and request.seed == 17  # the tasks' reset seeds stay the eval's


def test_the_job_bounds_are_the_eval_bounds() -> None:
    # Refused when the config is made (one --concurrency line), not later by the job it builds.
    for fields in ({"concurrency": 5000}, {"n": 2000}):
        with pytest.raises(ValidationError):
            EvalConfig.model_validate({"env": TS, "policy": "builtin", **fields})
    rollout_request(EvalConfig(env=TS, policy="builtin", concurrency=4096), env_id="x", max_steps=1)


def test_a_folder_of_the_flat_eval_json_form_resumes_and_names_a_nested_difference(tmp_path: Path) -> None:
    config = EvalConfig(
        env=TS, policy="random", split="test", limit=2, sampling=SamplingRequest(temperature=0.7)
    )
    evaluate(config, tmp_path, plots=False)
    saved = json.loads((tmp_path / "eval.json").read_text())
    assert saved["sampling"]["temperature"] == 0.7 and saved["context"]["agentocr"] is False
    # The form older versions wrote: sampling and context as flat keys.
    flat = {k: v for k, v in saved.items() if k not in ("sampling", "context")}
    flat.update(temperature=0.7, top_p=1.0, max_tokens=256, agentocr=False)
    (tmp_path / "eval.json").write_text(json.dumps(flat))
    assert EvalConfig.model_validate(flat) == config  # readable as it is
    before = (tmp_path / "episodes.jsonl").read_bytes()
    started: list[int] = []
    evaluate(config.model_copy(update={"concurrency": 1}), tmp_path, plots=False,
             on_event=lambda e: started.append(e.slot) if e.kind == "group_started" else None)  # fmt: skip
    assert started == [] and (tmp_path / "episodes.jsonl").read_bytes() == before
    other = config.model_copy(update={"sampling": SamplingRequest(temperature=0.9)})
    with pytest.raises(ConfigurationError, match=r"differs in sampling\.temperature\)"):
        evaluate(other, tmp_path, plots=False)


def test_the_sampling_flags_fill_the_spec_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "envhub.cli", "eval", "--env", TS, "--policy", "builtin", "--split",
            "test", "--limit", "1", "--temperature", "0.2", "--set", "sampling.stop=[END]", "--set",
            "context.history_length=2", "-o", str(tmp_path / "a")]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=REPO, env=ENV)
    assert done.returncode == 0, done.stderr[-2000:]
    saved = json.loads((tmp_path / "a" / "eval.json").read_text())
    assert saved["sampling"]["temperature"] == 0.2 and saved["sampling"]["stop"] == ["END"]
    assert saved["context"]["history_length"] == 2
    bad_flags = [
        ("--temperature", "-1", "--temperature"),
        ("--max-tokens", "0", "--max-tokens"),
        ("--set", "sampling.top_k=-7", "--set sampling.top_k"),
        ("--set", "sampling.seed=true", "--set sampling.seed"),  # a boolean is no number
        ("--set", "no_such_key=1", "--set no_such_key"),  # no --no-such-key flag to point at
        ("--set", "env_kwargs=3", "--set env_kwargs"),
    ]
    for flag, value, shown in bad_flags:
        bad = [*args[:-4], flag, value, "-o", str(tmp_path / "b")]
        done = subprocess.run(bad, capture_output=True, text=True, timeout=180, cwd=REPO, env=ENV)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1 and shown in lines[0], done.stderr
        assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("text", ['{"env": "TimeSer', "[1, 2]", ""])
def test_a_folder_whose_eval_json_is_unreadable_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    # A run stopped while writing eval.json left it cut short: resuming raised a raw
    # JSONDecodeError (a traceback on the command line), not the one-line refusal.
    (tmp_path / "eval.json").write_text(text)
    config = EvalConfig(env=TS, policy="random", split="test", limit=1)
    with pytest.raises(ConfigurationError, match=r"eval\.json .*(not|no) .*new --out"):
        evaluate(config, tmp_path, plots=False)


def test_a_flat_shorthand_beside_a_spec_object_conflicts_only_with_what_it_set() -> None:
    # The spec given as an object was compared with its defaults too: SamplingRequest(top_p=0.9)
    # and temperature=0.5 were refused as two temperatures, while the same as a dict was taken.
    config = EvalConfig(env=TS, policy="random", sampling=SamplingRequest(top_p=0.9), temperature=0.5)
    assert config.sampling == SamplingRequest(top_p=0.9, temperature=0.5)
    assert config == EvalConfig(env=TS, policy="random", sampling={"top_p": 0.9}, temperature=0.5)
    with pytest.raises(ValidationError, match=r"shorthand of sampling\.temperature"):
        EvalConfig(env=TS, policy="random", sampling=SamplingRequest(temperature=1.0), temperature=0.5)
