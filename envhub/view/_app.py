"""The viewer app: FastAPI pages over one source, token auth when bound beyond loopback.

=====================================  ==============================================
``GET /``                              learning curves, filters, the groups
``GET /group?batch=&uid=``             a group's trajectories, anchor groups (and GraphGPO graph)
``GET /step?batch=&uid=&traj=&step=``  one step (the permalink)
``GET /image?batch=&uid=&traj=&step=`` the step's AgentOCR history image (PNG)
``GET /static/...``                    the stylesheet and script shipped in the package
``GET /health``                        liveness (no token needed)
=====================================  ==============================================

Errors leave as ``{code, message, detail}`` like every envhub service's. With a token set, a
request needs ``Authorization: Bearer <token>``, the ``envhub_view`` cookie, or ``?token=``
(which sets the cookie, so a browser opens the printed URL once and then browses).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from envhub.core.errors import ConfigurationError, EnvhubError, UnauthorizedError
from envhub.core.records import Group
from envhub.server.errors import error_response, install_error_handler
from envhub.view._credit import GroupCredit, group_credit
from envhub.view._pages import ALL, RECENT, Filters, group_page, overview_page, step_page
from envhub.view._sources import Batch, RecordNotFoundError, Source

__all__ = ["ViewSettings", "ViewerHostError", "ViewerTokenError", "create_app", "is_loopback"]

_COOKIE = "envhub_view"
_CACHED_GROUPS = 256  # groups whose credit is kept (oldest dropped first)
_OPEN = ("/health", "/static/")
_STATIC = {"view.css": "text/css", "view.js": "text/javascript"}


class ViewSettings(BaseSettings):
    """How ``envhub view`` serves (``ENVHUB_VIEW_*``)."""

    model_config = SettingsConfigDict(env_prefix="ENVHUB_VIEW_", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Interface to bind.")
    port: int = Field(default=8300, ge=0, le=65535, description="TCP port.")
    token: SecretStr | None = Field(
        default=None, description="Required on every page; generated when bound beyond loopback."
    )

    @field_validator("token")
    @classmethod
    def _no_empty_token(cls, token: SecretStr | None) -> SecretStr | None:
        # An empty token (`--token ""`, `ENVHUB_VIEW_TOKEN=` from an unset variable) would let every
        # request in: it counts as none, so beyond loopback one is made up.
        if token is None or not token.get_secret_value().strip():
            return None
        return token

    def secured(self) -> ViewSettings:
        """These settings, with a fresh token when bound beyond loopback and none was given."""
        if self.token is None and not is_loopback(self.host):
            return self.model_copy(update={"token": SecretStr(secrets.token_urlsafe(24))})
        return self


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _token_ok(expected: str, request: Request) -> bool:
    given = ""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        given = header[7:].strip()
    given = given or request.cookies.get(_COOKIE, "") or request.query_params.get("token", "")
    # Constant-time comparison: the token cannot be guessed byte by byte from timings.
    return hmac.compare_digest(given.encode(), expected.encode())


class ViewerTokenError(UnauthorizedError):
    """The viewer's token is missing or wrong (401 UNAUTHORIZED), with the browser's way in."""

    def __init__(self) -> None:
        EnvhubError.__init__(
            self,
            "This viewer needs its token: open the URL `envhub view` printed (it ends in ?token=...), "
            "or send 'Authorization: Bearer <token>' (--token / ENVHUB_VIEW_TOKEN).",
        )


def _auth_middleware(
    expected: str,
) -> Callable[[Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]]:
    async def check(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path.startswith(_OPEN) or _token_ok(expected, request):
            response = await call_next(request)
            given = request.query_params.get("token", "")
            if given and hmac.compare_digest(given.encode(), expected.encode()):
                response.set_cookie(_COOKIE, expected, httponly=True, samesite="strict")
            return response
        return error_response(ViewerTokenError(), request.app.state)

    return check


class ViewerHostError(EnvhubError):
    """A request for a host name other than loopback's to a viewer without a token (403)."""

    code = "HOST_NOT_ALLOWED"
    status_code = 403

    def __init__(self, host: str) -> None:
        super().__init__(
            f"This viewer has no token, so it answers only requests addressed to localhost, 127.0.0.1 "
            f"or [::1], not {host!r} (a guard against DNS rebinding). Open it by one of those names, "
            "or serve it with --token to reach it by another.",
            host=host,
        )


def _host_name(header: str) -> str:
    """The name of a Host header (``name:port``, ``[v6]:port``, ``name``), lower case."""
    if header.startswith("["):
        return header[1:].partition("]")[0].lower()
    return header.rpartition(":")[0].lower() if header.count(":") == 1 else header.lower()


def _loopback_host_middleware() -> Callable[
    [Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]
]:
    async def check(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        host = request.headers.get("host", "")
        if is_loopback(_host_name(host)) or request.url.path == "/health":
            return await call_next(request)
        return error_response(ViewerHostError(host), request.app.state)

    return check


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(f"{name} must be an integer, got {value!r}.", **{name: value}) from None


class _Pages:
    """The source plus what pages reuse: credit per group, the tokenizer."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._credit: dict[tuple[str, str], tuple[Group, GroupCredit]] = {}
        self._tokenizer: Any = None
        self._tokenizer_tried = False

    def batch(self, key: str) -> Batch:
        for batch in self.source.batches():
            if batch.key == key:
                return batch
        raise RecordNotFoundError(
            f"No batch {key!r} in this {self.source.kind}; the overview lists them.", batch=key
        )

    def group(self, batch: str, uid: str) -> tuple[Group, GroupCredit]:
        for group in self.source.groups(batch):
            if group.uid == uid:
                cached = self._credit.get((batch, uid))
                if cached is None or cached[0] is not group:
                    algo, config = self.source.credit_settings(group)
                    cached = (group, group_credit(group, algo, config))
                    self._credit[(batch, uid)] = cached
                    while len(self._credit) > _CACHED_GROUPS:
                        self._credit.pop(next(iter(self._credit)))
                return cached
        raise RecordNotFoundError(f"Batch {batch!r} has no group {uid!r}.", batch=batch, uid=uid)

    def pieces(self, ids: list[int] | None) -> list[str] | None:
        """Each token's text, when the run's tokenizer is on this machine."""
        if not ids:
            return None
        if not self._tokenizer_tried:
            self._tokenizer_tried = True
            path = self.source.tokenizer_path()
            if path is not None:
                try:
                    from envhub.policy.tokenizer import ChatTokenizer

                    self._tokenizer = ChatTokenizer(path)
                except Exception:
                    self._tokenizer = None
        if self._tokenizer is None:
            return None
        tokenizer = self._tokenizer
        return token_pieces(lambda part: tokenizer.decode(part, skip_special_tokens=False), ids)


def token_pieces(decode: Callable[[list[int]], str], ids: list[int]) -> list[str]:
    """What each token adds to the decoded prefix; the pieces join to ``decode(ids)`` exactly.

    Decoding tokens one by one would show halves of a character whose bytes span several
    byte-level tokens as U+FFFD: here such a character shows at the token that completes it.
    """
    pieces: list[str] = []
    shown = ""
    for end in range(1, len(ids) + 1):
        text = decode(ids[:end])
        if text.endswith("\ufffd") and end < len(ids):
            pieces.append("")  # an incomplete character: wait for its last byte
            continue
        pieces.append(text[len(shown) :] if text.startswith(shown) else text)
        shown = text
    return pieces


def _step_of(group: Group, traj: str, step: int) -> Any:
    for t in group.trajectories:
        if t.traj_id == traj:
            for s in t.steps:
                if s.step_idx == step:
                    return s
    raise RecordNotFoundError(
        f"Group {group.uid} has no step {step} in trajectory {traj!r}.", uid=group.uid, traj=traj, step=step
    )


def create_app(source: Source, settings: ViewSettings | None = None) -> FastAPI:
    """The viewer over ``source``.

    Args:
        source: a run folder or a stream (``envhub.view.open_source``).
        settings: host and token (only the token matters here; the CLI binds the host).
    """
    settings = settings or ViewSettings()
    app = FastAPI(title="envhub view", docs_url=None, redoc_url=None, openapi_url=None)
    install_error_handler(app)
    pages = _Pages(source)
    app.state.pages = pages
    if settings.token is not None:
        app.middleware("http")(_auth_middleware(settings.token.get_secret_value()))
    else:  # no token: only loopback names, so no web page can rebind its name onto this viewer
        app.middleware("http")(_loopback_host_middleware())

    @app.get("/health")
    def health() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in _STATIC:
            raise RecordNotFoundError(f"No asset {name!r}; the viewer ships {', '.join(_STATIC)}.")
        data = resources.files("envhub.view").joinpath("static", name).read_bytes()
        return Response(data, media_type=_STATIC[name])

    @app.get("/", response_class=HTMLResponse)
    def overview(
        batch: str = "", env: str = "", task: str = "", success: str = "", version: str = ""
    ) -> HTMLResponse:
        if success not in ("", "won", "lost"):
            raise ConfigurationError(f"success must be 'won' or 'lost', got {success!r}.", success=success)
        filters = Filters(task=task, env=env, success=success, version=version, batch=batch)
        batches = source.batches()
        if batch == ALL:
            wanted = batches
        elif batch:
            wanted = [pages.batch(batch)]
        else:
            wanted = batches[-RECENT:]
        groups = [(b, g) for b in wanted for g in source.groups(b.key)]
        html = overview_page(
            source.title, source.kind, source.summary(), source.metrics(), batches, groups, filters
        )
        return HTMLResponse(html)

    @app.get("/group", response_class=HTMLResponse)
    def group(batch: str, uid: str, success: str = "") -> HTMLResponse:
        found, credit = pages.group(batch, uid)
        return HTMLResponse(group_page(pages.batch(batch), found, credit, Filters(success=success)))

    @app.get("/step", response_class=HTMLResponse)
    def step(batch: str, uid: str, traj: str, step: str) -> HTMLResponse:
        index = _int(step, "step")
        found, credit = pages.group(batch, uid)
        record = _step_of(found, traj, index)
        html = step_page(
            pages.batch(batch),
            found,
            credit,
            (traj, index),
            pages.pieces(record.response_token_ids),
            show_image=record.history_image is not None,
        )
        return HTMLResponse(html)

    @app.get("/image")
    def image(batch: str, uid: str, traj: str, step: str) -> Response:
        found, _ = pages.group(batch, uid)
        record = _step_of(found, traj, _int(step, "step"))
        if record.history_image is None:
            raise RecordNotFoundError(
                "This step stored no history image (AgentOCR off, or images kept by reference: "
                "set context.inline_images to keep them).",
                uid=uid,
                traj=traj,
                step=step,
            )
        return Response(record.history_image, media_type="image/png")

    return app
