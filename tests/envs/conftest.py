"""Data every registered env needs, so the registry-wide tests run on all of them.

TimeSeriesUCR-v0 reads a UCR dataset (GunPoint by default) from ``ENVHUB_UCR_DATA`` or from
aeon's bundled copy. When neither is there, a small dataset made by envhub's own generator
(:mod:`envhub.envs.timeseries.fixtures`) is written under GunPoint's file names and the
variable points at it for this session, so the env's registry and adversarial tests run
instead of skipping. A user's own ``ENVHUB_UCR_DATA`` or aeon install is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envhub.envs.timeseries.data import DEFAULT_UCR_NAME, UCR_ENV_VAR, ucr_data_status
from envhub.envs.timeseries.fixtures import write_ucr_dataset


@pytest.fixture(scope="session", autouse=True)
def _generated_ucr_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if ucr_data_status().available:
        yield
        return
    directory = write_ucr_dataset(tmp_path_factory.mktemp("ucr"), name=DEFAULT_UCR_NAME, per_class=4)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(UCR_ENV_VAR, str(directory))
        yield
