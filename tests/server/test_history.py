"""The history wire models and the worker-side recorder (envhub.server.history), without a server."""

from __future__ import annotations

import base64
import io
import math

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from envhub.core.wire import HistoryFrame, HistoryOptions, SessionCreate, StepResponse
from envhub.render import OpticalHistory, RenderConfig
from envhub.server.history import (
    DEFAULT_INLINE,
    HistoryRuntime,
    RenderCounters,
    RenderStatsCollector,
    history_url,
)
from envhub.server.host import EnvHost
from envhub.server.messages import CreateOp, HistoryPngOp, RenderStatsOp, ResetOp, StepOp


def decode(frame: dict[str, object]) -> np.ndarray:
    data = base64.b64decode(str(frame["png_base64"]))
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_history_options_defaults_are_agentocr_alfworld() -> None:
    options = HistoryOptions()
    assert (options.style, options.window, options.preset, options.compression) == (
        "ocr",
        50,
        "alfworld",
        False,
    )
    assert options.inline is None


@pytest.mark.parametrize(
    ("fields", "needle"),
    [({"preset": "comic"}, "alfworld"), ({"style": "fancy"}, "ocr-search"), ({"window": -1}, "window")],
)
def test_history_options_reject_unknown_values_naming_the_choices(
    fields: dict[str, object], needle: str
) -> None:
    with pytest.raises(ValidationError, match=needle):
        HistoryOptions.model_validate(fields)


def test_history_options_forbid_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="extra"):
        SessionCreate.model_validate({"history": {"windw": 3}})


def test_step_response_without_history_has_none() -> None:
    body = {
        "session_id": "s",
        "observation": "o",
        "reward": 0.0,
        "terminated": False,
        "truncated": False,
        "done": False,
        "info": {},
        "step_count": 1,
        "expires_at": 1.0,
    }
    assert StepResponse.model_validate(body).history is None


def test_recorder_renders_what_a_client_renders() -> None:
    runtime = HistoryRuntime()
    session = runtime.open(HistoryOptions(inline=True))
    local = OpticalHistory(RenderConfig.alfworld())
    steps = [("You are in a room.", "look"), ("You see a desk.", "go to desk 1"), ("On the desk.", "look")]
    for t, (observation, action) in enumerate(steps):
        frame = session.after_step(
            session_id="s-1",
            observation=observation,
            action=action,
            factor=1.0,
            tag_valid=None,
            reward=0.0,
            done=False,
            won=False,
        )
        local.record(observation, action)
        expected = local.render()
        assert np.array_equal(decode(frame), expected.pixels)
        HistoryFrame.model_validate(frame)
        assert frame["step"] == t + 1 and frame["vision_tokens"] == expected.vision_tokens()
        assert "compression_valid" not in frame and "url" not in frame
    assert runtime.counters.renders == 3
    assert (runtime.counters.hits, runtime.counters.misses) == (0 + 1 + 2, 1 + 1 + 1)


def test_reset_starts_a_new_episode() -> None:
    session = HistoryRuntime().open(HistoryOptions(inline=False))
    kwargs = {"tag_valid": None, "reward": 0.0, "done": False, "won": False, "factor": 1.0}
    session.after_step(session_id="s", observation="a", action="b", **kwargs)  # type: ignore[arg-type]
    session.reset()
    frame = session.after_step(session_id="s", observation="c", action="d", **kwargs)  # type: ignore[arg-type]
    assert frame["step"] == 1 and frame["url"] == history_url("s") and "png_base64" not in frame


def test_compression_tag_is_stripped_for_the_env_and_parsed_for_the_image() -> None:
    session = HistoryRuntime().open(HistoryOptions(compression=True))
    assert session.env_action("go to desk 1 <compression>2.5</compression>") == ("go to desk 1", 2.5, True)
    action, factor, valid = session.env_action("look<compression>2</compression><compression>3</compression>")
    assert (action, factor, valid) == ("look", 2.0, False)
    plain = HistoryRuntime().open(HistoryOptions())
    assert plain.env_action("look <compression>2</compression>") == (
        "look <compression>2</compression>",
        1.0,
        None,
    )


def test_compression_rewards_come_only_at_episode_end_and_leave_the_env_reward_alone() -> None:
    session = HistoryRuntime().open(HistoryOptions(compression=True, compression_lam=0.5))
    first = session.after_step(
        session_id="s",
        observation="a",
        action="b",
        factor=2.0,
        tag_valid=True,
        reward=0.0,
        done=False,
        won=False,
    )
    assert first["compression"] == 2.0 and "compression_rewards" not in first
    last = session.after_step(
        session_id="s",
        observation="c",
        action="d",
        factor=1.0,
        tag_valid=True,
        reward=10.0,
        done=True,
        won=True,
    )
    assert last["compression_rewards"] == pytest.approx([10.0 + 0.5 * math.log(2.0), 10.0])


def test_host_records_observation_before_the_step() -> None:
    from tests.server.envs import CounterEnv

    host = EnvHost(lambda **kw: CounterEnv(**kw), "counter")
    [(ok, _)] = host.run([CreateOp("s", {}, HistoryOptions(inline=True).model_dump())])
    assert ok
    [(ok, first)] = host.run([ResetOp("s", 0, None, {}, None, "rest", {"expires_at": 0.0})])
    import json

    before = json.loads(first)["observation"]
    [(ok, stepped)] = host.run([StepOp("s", "inc", None, "rest", {"expires_at": 0.0})])
    frame = json.loads(stepped)["history"]
    local = OpticalHistory(RenderConfig.alfworld())
    local.record(before, "inc")
    assert np.array_equal(decode(frame), local.render().pixels)
    [(ok, (png, step))] = host.run([HistoryPngOp("s")])
    assert ok and step == 1 and png.startswith(b"\x89PNG")
    [(ok, counters)] = host.run([RenderStatsOp()])
    assert counters.renders == 1 and counters.encodes == 1


def test_host_without_history_adds_no_field() -> None:
    from tests.server.envs import CounterEnv

    host = EnvHost(lambda **kw: CounterEnv(**kw), "counter")
    host.run([CreateOp("s", {})])
    host.run([ResetOp("s", 0, None, {}, None, "rest", {"expires_at": 0.0})])
    [(ok, stepped)] = host.run([StepOp("s", "inc", None, "rest", {"expires_at": 0.0})])
    assert ok and b'"history"' not in stepped
    [(ok, error)] = host.run([HistoryPngOp("s")])
    assert not ok and "without history" in error["message"]


def test_collector_sums_workers_and_keeps_replaced_workers_counts() -> None:
    collector = RenderStatsCollector("env")
    collector.update(
        [(0, 0, RenderCounters(renders=2, hits=3, misses=1)), (1, 0, RenderCounters(hits=1, misses=1))]
    )
    collector.update([(0, 1, RenderCounters(renders=1, hits=0, misses=1))])  # worker 0 was replaced
    total = collector.total()
    assert (total.renders, total.hits, total.misses) == (3, 4, 3)
    names = {m.name: m for m in collector.collect()}
    assert names["envhub_history_cache_hit_rate"].samples[0].value == pytest.approx(4 / 7)


def test_default_delivery_is_documented_choice() -> None:
    assert HistoryRuntime().open(HistoryOptions()).inline is DEFAULT_INLINE


def test_a_retried_step_is_answered_from_the_store_and_not_recorded_twice() -> None:
    from tests.server.envs import CounterEnv

    host = EnvHost(lambda **kw: CounterEnv(**kw), "counter")
    host.run([CreateOp("s", {}, HistoryOptions().model_dump())])
    host.run([ResetOp("s", 0, None, {}, None, "rest", {"expires_at": 0.0})])
    step = StepOp("s", "inc", "req-1", "rest", {"expires_at": 0.0})
    [(_, first)], [(_, again)] = host.run([step]), host.run([step])
    assert first == again
    [(_, (_png, recorded))] = host.run([HistoryPngOp("s")])
    assert recorded == 1
