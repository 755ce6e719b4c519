"""`envhub serve-shop` serves the shop site for a person with a browser."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_shop_serves_goal_pages_on_the_given_port() -> None:
    port = _free_port()
    command = [sys.executable, "-m", "envhub.cli", "serve-shop", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True, timeout=5)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stdout.read() if process.stdout else ""
                assert time.monotonic() < deadline, "serve-shop did not answer within 60 s"
                time.sleep(0.2)
        assert page.status_code == 200
        assert str(page.url).endswith("/fixed_0") and 'id="search_input"' in page.text
    finally:
        process.terminate()
        process.wait(timeout=30)
