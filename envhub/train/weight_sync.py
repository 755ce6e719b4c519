"""New weights into a running generation server, through disk (``round2_rollout_trainer.md`` §1.2).

:class:`DiskVllmSync` is the path that works on CPU and GPU alike and was checked on vLLM's CPU
build: the trainer writes a Hugging Face safetensors directory, then asks the server to

1. ``POST /pause?mode=wait``: finish in-flight requests, hold new ones;
2. ``POST /collective_rpc {"method": "reload_weights", "kwargs": {"weights_path": DIR}}``:
   every worker reloads its weights in place from the directory;
3. ``POST /update_weight_version {"new_version": "<v>"}``: label the new weights;
4. ``POST /resume`` (always, also after a failure, so a failed push never leaves it paused).

``/collective_rpc`` exists only when the server runs with ``VLLM_SERVER_DEV_MODE=1``, and
``/pause`` (with ``mode``), ``/resume``, ``/update_weight_version`` and ``/weight_info`` only in
vLLM releases after 0.11. :meth:`DiskVllmSync.check_routes` probes the served server for every
one of them when the trainer starts (no side effects: a POST route is asked with GET, which
answers 405 where the route exists and 404 where it does not), so a server that cannot take new
weights fails the run before iteration 1 with an error that says which fix applies.

The weights are written to a temporary directory and renamed, and only the newest directory is
kept. Models with tied embeddings are refused: vLLM's CPU backend reloads the embedding but not
the tied output head (§1.2 (f)), so the server would silently keep the old head.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx

from envhub.core.errors import ConfigurationError, PolicyUnavailableError

__all__ = ["TESTED_VLLM_VERSION", "WEIGHT_SYNC_ROUTES", "DiskVllmSync", "save_weights"]

#: The vLLM release envhub's weight sync is tested against (scripts/install-vllm.sh installs its
#: CPU build; docker-compose.yml's `gpu` profile serves the same release's image).
TESTED_VLLM_VERSION = "0.32.0"
#: Each route a push uses, and its method.
WEIGHT_SYNC_ROUTES = {
    "/pause": "POST",
    "/collective_rpc": "POST",
    "/update_weight_version": "POST",
    "/resume": "POST",
    "/weight_info": "GET",
}
#: Routes vLLM serves only with VLLM_SERVER_DEV_MODE=1.
_DEV_MODE_ROUTES = frozenset({"/collective_rpc"})


def _missing_routes_message(base_url: str, missing: list[str], version: str | None) -> str:
    """What to do about a server that lacks ``missing``: upgrade vLLM, or turn on its dev mode."""
    served = f" (vLLM {version})" if version else ""
    fixes = []
    if any(route not in _DEV_MODE_ROUTES for route in missing):
        fixes.append(
            f"serve vLLM {TESTED_VLLM_VERSION} or newer, the release envhub is tested with (these routes "
            f"came after 0.11; docker-compose.yml's ENVHUB_VLLM_IMAGE defaults to "
            f"vllm/vllm-openai:v{TESTED_VLLM_VERSION})"
        )
    if any(route in _DEV_MODE_ROUTES for route in missing):
        fixes.append("start vLLM with VLLM_SERVER_DEV_MODE=1 (/collective_rpc exists only in dev mode)")
    return (
        f"The generation server at {base_url}{served} has no {', '.join(missing)} route, which the "
        f"trainer's weight sync needs to push new weights: {'; and '.join(fixes)}."
    )


def _plain(model: Any) -> Any:
    """The HF model under DDP / peft wrappers (peft adapters merged into a copy)."""
    inner = getattr(model, "module", model)
    if hasattr(inner, "merge_and_unload"):
        import copy

        return copy.deepcopy(inner).merge_and_unload()
    return inner


def save_weights(model: Any, root: str | Path, version: int) -> Path:
    """Write ``model`` as ``ROOT/v<version>`` (atomically) and delete older versions."""
    model = _plain(model)
    if getattr(model.config, "tie_word_embeddings", False):
        raise ConfigurationError(
            "This model ties its input and output embeddings; vLLM's reload_weights does not update "
            "a tied output head (it keeps serving the old one). Train an untied model.",
        )
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"v{version}"
    tmp = root / f".tmp-v{version}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in root.glob("v*"):
        if old != final and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return final


class DiskVllmSync:
    """Push weights into a vLLM server through a shared directory.

    Args:
        base_url: the server's root (``http://host:8000``; a trailing ``/v1`` is dropped).
        weights_dir: where the weights are written; the server must read the same path.
        server_weights_dir: that directory as the server sees it, when it differs (containers).
        timeout_s: time allowed for each request (the reload itself included).
        api_key: the server's key (vLLM ``--api-key``), sent as a bearer token.
    """

    def __init__(
        self,
        base_url: str,
        weights_dir: str | Path,
        *,
        server_weights_dir: str | None = None,
        timeout_s: float = 600.0,
        api_key: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.weights_dir = Path(weights_dir)
        self.server_weights_dir = server_weights_dir
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s, headers=headers)

    async def _post(self, path: str, **kwargs: Any) -> httpx.Response:
        try:
            reply = await self._http.post(path, **kwargs)
        except httpx.HTTPError as exc:
            raise PolicyUnavailableError(
                f"The generation server at {self.base_url} did not answer {path} "
                f"({type(exc).__name__}: {exc}).",
                endpoint=self.base_url,
            ) from exc
        if reply.status_code == 404:
            raise ConfigurationError(
                _missing_routes_message(self.base_url, [path], await self._server_version()),
                endpoint=self.base_url,
                missing_routes=[path],
            )
        if reply.status_code >= 400:
            raise PolicyUnavailableError(
                f"The generation server refused {path} (HTTP {reply.status_code}): {reply.text[:500]}",
                endpoint=self.base_url,
                status=reply.status_code,
            )
        return reply

    async def _server_version(self) -> str | None:
        """The version the server reports at ``GET /version`` (vLLM's), or None."""
        try:
            reply = await self._http.get("/version", timeout=10.0)
            return str(reply.json()["version"]) if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None

    async def check_routes(self) -> None:
        """Fail now if the server lacks a route a push needs (no side effects on the server).

        A POST route is asked with GET: a FastAPI server answers 405 where the route exists and
        404 where it does not. ``/pause`` must also take ``mode`` (``wait``), where the server
        publishes its OpenAPI schema.

        Raises:
            ConfigurationError: a route is missing (the message says which fix applies).
            PolicyUnavailableError: the server does not answer.
        """
        missing = []
        for path in WEIGHT_SYNC_ROUTES:
            try:
                reply = await self._http.get(path, timeout=10.0)
            except httpx.HTTPError as exc:
                raise PolicyUnavailableError(
                    f"The generation server at {self.base_url} did not answer GET {path} "
                    f"({type(exc).__name__}: {exc}); is it running?",
                    endpoint=self.base_url,
                ) from exc
            if reply.status_code == 404:
                missing.append(path)
        if missing:
            raise ConfigurationError(
                _missing_routes_message(self.base_url, missing, await self._server_version()),
                endpoint=self.base_url,
                missing_routes=missing,
            )
        try:
            schema = (await self._http.get("/openapi.json", timeout=10.0)).json()
            parameters = schema["paths"]["/pause"]["post"].get("parameters", [])
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return  # no schema published (vLLM --disable-fastapi-docs): the routes are there
        if not any(p.get("name") == "mode" for p in parameters):
            version = await self._server_version()
            raise ConfigurationError(
                f"The generation server at {self.base_url}{f' (vLLM {version})' if version else ''} has "
                f"a /pause route without the mode parameter, so a push could not wait for in-flight "
                f"requests: serve vLLM {TESTED_VLLM_VERSION} or newer.",
                endpoint=self.base_url,
                missing_routes=["/pause?mode"],
            )

    async def push(self, model: Any, version: int) -> dict[str, float]:
        """Write ``model``, reload it on the server as ``version``; returns seconds per phase."""
        t0 = time.perf_counter()
        local = save_weights(model, self.weights_dir, version)
        path = (
            f"{self.server_weights_dir.rstrip('/')}/{local.name}" if self.server_weights_dir else str(local)
        )
        t1 = time.perf_counter()
        await self._post("/pause", params={"mode": "wait"})
        t2 = time.perf_counter()
        try:
            await self._post(
                "/collective_rpc", json={"method": "reload_weights", "kwargs": {"weights_path": path}}
            )
            t3 = time.perf_counter()
            await self._post("/update_weight_version", json={"new_version": str(version)})
        finally:
            await self._post("/resume")
        t4 = time.perf_counter()
        return {
            "save_s": t1 - t0,
            "pause_s": t2 - t1,
            "reload_s": t3 - t2,
            "resume_s": t4 - t3,
            "total_s": t4 - t0,
        }

    async def version(self) -> str | None:
        """The weight version the server reports (``GET /weight_info``)."""
        reply = await self._http.get("/weight_info")
        reply.raise_for_status()
        value = reply.json().get("weight_version")
        return None if value is None else str(value)

    async def aclose(self) -> None:
        await self._http.aclose()
