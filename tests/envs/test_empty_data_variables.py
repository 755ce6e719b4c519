"""A data variable that is set but empty means "not set": the embedded data is used.

docker-compose.yml passes ``ALFWORLD_DATA: ${ALFWORLD_DATA:-}`` and the like, so a container
whose user named no dataset sees the variable as an empty string. Reading that as the current
directory would make every env service fail to start on the embedded default.
"""

from __future__ import annotations

import pytest

import envhub


@pytest.mark.parametrize(
    ("variable", "env_id"),
    [
        ("ALFWORLD_DATA", "envhub/ALFWorld-v0"),
        ("WEBSHOP_DATA", "envhub/WebShop-v0"),
        ("TAU_DATA", "envhub/TauRetail-v0"),
        ("ENVHUB_SEARCH_DATA_DIR", "envhub/SearchQA-v0"),
        ("ENVHUB_UCR_DATA", "envhub/TimeSeries-v0"),
        ("ENVHUB_MATH_DATA_DIR", "envhub/Math-v0"),
    ],
)
def test_an_empty_data_variable_falls_back_to_the_embedded_data(
    variable: str, env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, "")
    env = envhub.make(env_id)
    try:
        observation, _ = env.reset(seed=0)
    finally:
        env.close()
    assert isinstance(observation, str) and observation
