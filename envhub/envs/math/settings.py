"""Settings of the Math family (the only place it reads the environment)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["MathSettings"]


class MathSettings(BaseSettings):
    """Where Math data lives. Read from ``ENVHUB_MATH_*`` environment variables."""

    model_config = SettingsConfigDict(env_prefix="ENVHUB_MATH_", extra="ignore", env_ignore_empty=True)

    data_dir: Path | None = Field(
        default=None,
        description="Directory with GSM8K's train.jsonl and test.jsonl; unset = envhub's generated problems.",
    )
