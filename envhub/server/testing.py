"""Run the real env server on loopback in a background thread, for tests and notebooks.

``serve_in_thread(settings)`` starts uvicorn with :func:`create_app` on ``127.0.0.1`` and a
port the OS picks, waits until the workers are up, and stops everything on exit::

    with serve_in_thread(ServerSettings(env_id="envhub/TimeSeries-v0")) as server:
        httpx.post(f"{server.base_url}/v1/sessions", json={})
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import uvicorn
from fastapi import FastAPI

from envhub.server import ServerSettings, create_app
from envhub.server.app import uvicorn_ws_options

__all__ = ["RunningServer", "serve_in_thread"]


@dataclass
class RunningServer:
    """A server started by :func:`serve_in_thread`.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        ws_url: ``ws://127.0.0.1:<port>``.
        settings: the settings it runs with.
        app: the FastAPI app (``app.state.manager`` is the session manager).
    """

    base_url: str
    ws_url: str
    settings: ServerSettings
    app: FastAPI


@contextmanager
def serve_in_thread(settings: ServerSettings, *, ready_timeout_s: float = 60.0) -> Iterator[RunningServer]:
    """Start uvicorn with ``create_app(settings)`` on 127.0.0.1 and stop it on exit.

    Args:
        settings: the server's settings (``host``/``port`` are ignored).
        ready_timeout_s: how long to wait for the workers to come up.

    Yields:
        The running server's addresses.

    Raises:
        RuntimeError: the server did not start in time.
    """
    app = create_app(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this; without it Nagle + delayed ACKs add ~40 ms per request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", ws_ping_interval=None, **uvicorn_ws_options(settings)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_timeout_s
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the envhub test server did not start; see the log above")
        time.sleep(0.05)
    # Started means the lifespan ran, so the workers said hello; /ready must agree.
    if httpx.get(f"{base_url}/ready", timeout=10).status_code != 200:
        server.should_exit = True
        raise RuntimeError("the envhub test server started but /ready is not 200")
    try:
        yield RunningServer(base_url, f"ws://127.0.0.1:{port}", settings, app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
