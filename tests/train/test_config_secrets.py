"""The Redis password in ``rollout.queue`` (deploy/k8s: ``redis://:$(REDIS_PASSWORD)@redis``) is a
secret: the run's config.json (on the shared runs volume) and the config sent to TensorBoard/W&B
(both ``model_dump`` in JSON mode) must not carry it; the trainer itself still connects with it."""

from __future__ import annotations

from envhub.train.config import load_config

SECRET = "s3cret-redis-password"


def _config() -> object:
    return load_config(
        None,
        {
            "env": "envhub/Sokoban-v0",
            "model.path": "runs/models/tiny64",
            "rollout.generation": "openai",
            "rollout.policy_url": "http://policy:8000/v1",
            "rollout.rollout_service": "http://rollout:8100",
            "rollout.queue": f"redis://:{SECRET}@redis:6379/0",
        },
    )


def test_the_queue_password_stays_out_of_config_json() -> None:
    config = _config()
    assert config.rollout.queue == f"redis://:{SECRET}@redis:6379/0"  # type: ignore[attr-defined]
    written = config.model_dump_json(indent=2)  # type: ignore[attr-defined]
    assert SECRET not in written
    assert "redis://:***@redis:6379/0" in written
    assert SECRET not in str(config.model_dump(mode="json"))  # type: ignore[attr-defined]


def test_a_queue_url_without_a_password_is_written_as_it_is() -> None:
    config = load_config(
        None, {"env": "envhub/Sokoban-v0", "model.path": "m", "rollout.queue": "redis://user@redis:6379/0"}
    )
    assert '"redis://user@redis:6379/0"' in config.model_dump_json()


def test_a_policy_key_in_a_server_url_is_refused_naming_where_it_goes() -> None:
    """A served policy's key belongs in ENVHUB_POLICY_API_KEY: in ``policy_url`` (or an agent's
    ``policy.base_url``) it would be written into config.json and every job record."""
    import pytest

    from envhub.core.errors import ConfigurationError

    base = {"env": "envhub/Sokoban-v0", "model.path": "m", "rollout.generation": "openai"}
    for url in (f"http://user:{SECRET}@policy:8000/v1", f"http://{SECRET}@policy:8000/v1"):
        with pytest.raises(ConfigurationError, match="ENVHUB_POLICY_API_KEY") as caught:
            load_config(None, {**base, "rollout.policy_url": url})
        assert SECRET not in str(caught.value)
