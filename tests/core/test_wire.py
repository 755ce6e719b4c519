"""The wire models' shared rules (``envhub.core.wire``), which every request model inherits."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from envhub.core.wire import (
    ContextConfig,
    GroupCreate,
    PolicyEndpoint,
    ResetRequest,
    RolloutRequest,
    SamplingRequest,
)


@pytest.mark.parametrize(
    ("model", "fields", "loc"),
    [
        (RolloutRequest, {"count": True}, ("count",)),
        (RolloutRequest, {"group_size": True}, ("group_size",)),
        (RolloutRequest, {"max_steps": True}, ("max_steps",)),
        (RolloutRequest, {"seed": False}, ("seed",)),
        (RolloutRequest, {"step_timeout_s": True}, ("step_timeout_s",)),
        (RolloutRequest, {"sampling": {"top_k": False}}, ("sampling", "top_k")),
        (RolloutRequest, {"sampling": {"max_tokens": True}}, ("sampling", "max_tokens")),
        (RolloutRequest, {"sampling": {"seed": True}}, ("sampling", "seed")),
        (RolloutRequest, {"sampling": {"temperature": True}}, ("sampling", "temperature")),
        (RolloutRequest, {"context": {"history_length": True}}, ("context", "history_length")),
        (RolloutRequest, {"policy": {"base_url": "http://p/v1", "model": "m", "max_concurrency": True}},
         ("policy", "PolicyEndpoint", "max_concurrency")),
        (GroupCreate, {"group_size": True}, ("group_size",)),
        (ResetRequest, {"seed": True}, ("seed",)),
    ],
)  # fmt: skip
def test_a_boolean_is_refused_where_a_number_is_asked(
    model: type[Any], fields: dict[str, Any], loc: tuple[str, ...]
) -> None:
    # pydantic's lax mode reads true as 1: `--set count=true` would be a one-task job.
    with pytest.raises(ValidationError) as caught:
        model.model_validate(fields)
    error = caught.value.errors()[0]
    assert error["loc"] == loc and "boolean" in error["msg"], caught.value.errors()


def test_a_boolean_is_refused_from_json_too() -> None:
    with pytest.raises(ValidationError, match="boolean"):
        RolloutRequest.model_validate_json('{"count": true}')


def test_numbers_and_booleans_still_go_where_they_belong() -> None:
    request = RolloutRequest.model_validate(
        {"count": 2, "sampling": {"temperature": 1, "top_k": 5, "seed": 0}, "seed_each_step": True}
    )
    assert request.count == 2 and request.sampling.temperature == 1.0 and request.seed_each_step
    assert ContextConfig(agentocr=True, history_length=0).agentocr
    assert PolicyEndpoint(base_url="http://p/v1", model="m", timeout_s=5).timeout_s == 5.0
    assert SamplingRequest(seed=None).seed is None


def _eval(**fields: Any) -> dict[str, Any]:
    return {"env": "timeseries", "policy": "random", **fields}


def _train(**fields: Any) -> dict[str, Any]:
    return {"env": "timeseries", "model": {"path": "m"}, **fields}


@pytest.mark.parametrize(
    ("model", "fields", "loc"),
    [
        ("eval", _eval(n=True), ("n",)),
        ("eval", _eval(limit=True), ("limit",)),
        ("eval", _eval(concurrency=True), ("concurrency",)),
        ("eval", _eval(ks=[True]), ("ks",)),
        ("train", _train(iterations=True), ("iterations",)),
        ("train", _train(loss={"kl_coef": True}), ("loss", "kl_coef")),
        ("train", _train(optim={"lr": True}), ("optim", "lr")),
        ("train", _train(output={"checkpoint_every": True}), ("output", "checkpoint_every")),
        ("train", _train(optim={"betas": [True, 0.999]}), ("optim", "betas")),
    ],
)
def test_the_eval_and_trainer_configs_refuse_a_boolean_for_a_number_too(
    model: str, fields: dict[str, Any], loc: tuple[str, ...]
) -> None:
    # `envhub eval --set n=true` ran one sample per task; `envhub-train --set iterations=true` one
    # iteration: the same lax reading the request models refuse.
    from envhub.eval.run import EvalConfig
    from envhub.train.config import TrainConfig

    with pytest.raises(ValidationError) as caught:
        {"eval": EvalConfig, "train": TrainConfig}[model].model_validate(fields)
    error = caught.value.errors()[0]
    assert error["loc"] == loc and "boolean" in error["msg"], caught.value.errors()


def test_a_policy_endpoint_refuses_credentials_in_its_url() -> None:
    # A job record keeps its policy endpoint: a key in the URL would be stored with it.
    with pytest.raises(ValidationError, match="api_key"):
        PolicyEndpoint(base_url="http://user:key@p/v1", model="m")
    # The refusal's echo of the input (4xx bodies, config errors) keeps the host only.
    from envhub.core.wire import redact

    assert redact({"base_url": "http://user:key@p/v1"}) == {"base_url": "http://***@p/v1"}
    assert redact("see http://p/v1") == "see http://p/v1"
