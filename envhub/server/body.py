"""Reading a request body under the server's size limit, shared by both request paths.

The ``BodyLimit`` middleware (every FastAPI route) and the hot path
(:mod:`envhub.server.fastpath`) both read bodies through :func:`read_body`, so a body over
``max_body_bytes`` is refused the same way on both: ``413 PAYLOAD_TOO_LARGE``, from the
declared ``Content-Length`` before anything is read, or as soon as a chunked body passes the
limit.
"""

from __future__ import annotations

from starlette.types import Receive, Scope

from envhub.core.errors import PayloadTooLargeError

__all__ = ["header_value", "read_body"]


def header_value(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower-case bytes, as ASGI gives them), or None."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, at most ``limit`` bytes.

    Raises:
        PayloadTooLargeError: the declared length or the bytes received pass ``limit``.
    """
    declared = header_value(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLargeError(size=int(declared), limit=limit)
    chunks = []
    size, more = 0, True
    while more:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLargeError(size=None, limit=limit)
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)
