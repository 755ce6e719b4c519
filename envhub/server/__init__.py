"""The envhub env server: sessions, groups, batch steps and an OpenEnv-compatible surface.

``create_app(settings)`` builds the FastAPI app; ``envhub serve <env-id>`` runs it with
uvicorn. The wire models (the contract with :mod:`envhub.client`) live in
:mod:`envhub.core.wire`; importing them does not import FastAPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from envhub.server.settings import ServerSettings

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["ServerSettings", "create_app"]


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """Build the env server app (see :func:`envhub.server.app.create_app`)."""
    from envhub.server.app import create_app as _create_app

    return _create_app(settings)
