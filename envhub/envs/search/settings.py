"""Settings of the Search-QA family (the only place it reads the environment)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["SearchSettings"]


class SearchSettings(BaseSettings):
    """Where Search-QA data and retrieval indexes live.

    Read from ``ENVHUB_SEARCH_*`` environment variables.
    """

    model_config = SettingsConfigDict(env_prefix="ENVHUB_SEARCH_", extra="ignore", env_ignore_empty=True)

    data_dir: Path | None = Field(
        default=None,
        description="Directory with corpus.jsonl and <split>.jsonl/.parquet; unset = the embedded dataset.",
    )
    cache_dir: Path = Field(
        default=Path.home() / ".cache" / "envhub" / "search",
        description="Where indexes go when the corpus directory is read-only or is envhub's package data.",
    )
