"""New weights into a running generation server, through disk (``round2_rollout_trainer.md`` §1.2).

:class:`DiskVllmSync` is the path that works on CPU and GPU alike and was checked on vLLM's CPU
build: the trainer writes a Hugging Face safetensors directory, then asks the server to

1. ``POST /pause?mode=wait``: finish in-flight requests, hold new ones;
2. ``POST /collective_rpc {"method": "reload_weights", "kwargs": {"weights_path": DIR}}``:
   every worker reloads its weights in place from the directory;
3. ``POST /update_weight_version {"new_version": "<v>"}``: label the new weights;
4. ``POST /resume`` (always, also after a failure, so a failed push never leaves it paused).

These routes exist only when the server runs with ``VLLM_SERVER_DEV_MODE=1``; without them the
push fails with an error that says so.

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

__all__ = ["DiskVllmSync", "save_weights"]


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
                f"The generation server at {self.base_url} has no {path} route: start vLLM with "
                "VLLM_SERVER_DEV_MODE=1 (its weight-update routes exist only in dev mode).",
                endpoint=self.base_url,
            )
        if reply.status_code >= 400:
            raise PolicyUnavailableError(
                f"The generation server refused {path} (HTTP {reply.status_code}): {reply.text[:500]}",
                endpoint=self.base_url,
                status=reply.status_code,
            )
        return reply

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
