"""Settings of one env server: flags of ``envhub serve`` or ``ENVHUB_*`` environment variables."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["ServerSettings"]


class ServerSettings(BaseSettings):
    """How ``envhub serve`` runs; every field is also ``ENVHUB_<NAME>`` (e.g. ``ENVHUB_TOKEN``).

    Containers configure through the environment; ``envhub serve`` flags override it.
    """

    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="ignore")

    env_id: str = Field(
        default="envhub/TimeSeries-v0",
        description="The env to serve: a registered id, a family name, or a module:Class entry point.",
    )
    host: str = Field(default="127.0.0.1", description="Interface to bind (0.0.0.0 in containers).")
    port: int = Field(default=8000, ge=0, le=65535, description="TCP port (OpenEnv's default is 8000).")
    workers: int = Field(default=2, ge=1, le=256, description="Worker processes hosting the envs.")
    max_sessions: int = Field(default=4096, ge=1, description="Sessions held at most; past it: 503.")
    session_ttl: float = Field(default=600.0, gt=0, description="Seconds an idle session lives.")
    step_timeout: float = Field(default=60.0, gt=0, description="Seconds a step may take before 504.")
    token: SecretStr | None = Field(
        default=None, description="Bearer token required on all but /health, /ready."
    )
    max_body_bytes: int = Field(default=16 << 20, ge=1024, description="Largest request body accepted (413).")
    retry_after: int = Field(default=1, ge=1, description="Retry-After seconds sent with CAPACITY_REACHED.")
    start_method: Literal["spawn", "forkserver"] = Field(
        default="spawn", description="How worker processes start (never fork: the server has threads)."
    )
