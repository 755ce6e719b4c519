"""Server settings come from ENVHUB_* variables (containers) and refuse unsafe values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from envhub.server import ServerSettings


def test_defaults_are_safe() -> None:
    settings = ServerSettings(_env_file=None)  # type: ignore[call-arg]
    assert settings.session_ttl > 0 and settings.max_sessions > 0 and settings.step_timeout > 0
    assert settings.host == "127.0.0.1"
    assert settings.token is None


def test_environment_variables_configure_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVHUB_ENV_ID", "tests.server.envs:CounterEnv")
    monkeypatch.setenv("ENVHUB_WORKERS", "3")
    monkeypatch.setenv("ENVHUB_SESSION_TTL", "12.5")
    monkeypatch.setenv("ENVHUB_TOKEN", "abc")
    settings = ServerSettings()
    assert (settings.env_id, settings.workers, settings.session_ttl) == (
        "tests.server.envs:CounterEnv",
        3,
        12.5,
    )
    assert settings.token is not None and settings.token.get_secret_value() == "abc"
    assert "abc" not in repr(settings)  # the token never shows up in logs


@pytest.mark.parametrize("field", ["session_ttl", "step_timeout", "workers", "max_sessions"])
def test_non_positive_limits_are_refused(field: str) -> None:
    with pytest.raises(ValidationError):
        ServerSettings(**{field: 0})
