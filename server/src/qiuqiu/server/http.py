"""Plain HTTP on the WebSocket port, for operators and browsers.

``websockets`` shows every request to :meth:`Routes.respond` before the opening
handshake. A request that asks for a WebSocket goes on to the protocol, on any
path; every other one is answered here and its connection closed:

- ``GET /healthz``: ``200 ok`` while its store takes a write, ``503`` with the
  reason otherwise, so a load balancer stops sending players to a process that
  cannot reach Redis or whose Redis is full (a stopping server stops listening at once);
- ``GET /metrics``: :mod:`qiuqiu.server.metrics` in Prometheus' text format;
- ``GET /`` and ``GET /<file>``: the browser client (:mod:`qiuqiu.web`);
- anything else: ``404``.

``HEAD`` gets what ``GET`` would, without the body; any other method ``405``.

Only names made of letters, digits, ``.``, ``-`` and ``_`` (with ``/`` between
folders, none starting with a dot) are looked up, so no path can leave the
client's folder.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from importlib.resources.abc import Traversable
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from qiuqiu.server.errors import StoreUnavailable
from qiuqiu.server.metrics import Metrics
from qiuqiu.web import STATIC

STATIC_PATH = re.compile(r"^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$")

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
}

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


@dataclasses.dataclass(frozen=True, slots=True)
class Routes:
    metrics: Metrics
    ping_store: Callable[[], Awaitable[None]]
    store_timeout: float
    """Seconds the store has to answer a health check, as any call, before it counts
    as unreachable (``--store-timeout``)."""
    allowed_origins: tuple[str, ...] = ()
    """Browser origins let in besides the server's own; none: every one."""
    static: Traversable = STATIC

    async def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        """``None`` lets a WebSocket handshake go on; anything else is the answer."""
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if self._origin_allowed(request):
                return None
            return connection.respond(HTTPStatus.FORBIDDEN, "not from an allowed origin\n")
        # Older websockets refuse every other method themselves, with no ``method`` to read.
        method = getattr(request, "method", "GET")
        if method not in ("GET", "HEAD"):
            refused = connection.respond(HTTPStatus.METHOD_NOT_ALLOWED, "only GET and HEAD\n")
            refused.headers["Allow"] = "GET, HEAD"
            return refused
        response = await self._get(connection, request.path.split("?", 1)[0])
        # The length of what GET would send stays in the headers: that is what HEAD asks.
        return dataclasses.replace(response, body=b"") if method == "HEAD" else response

    def _origin_allowed(self, request: Request) -> bool:
        """Browsers always send Origin; other clients (bots) need none, and could send
        any, so the check protects players' browsers, not the server. The page this
        server serves is let in too: its origin is the address it was asked at."""
        origins = request.headers.get_all("Origin")
        if not self.allowed_origins or not origins:
            return True
        if len(origins) > 1:
            return False
        origin = origins[0]
        own = urlsplit(origin).netloc == request.headers.get("Host", "")
        return own or origin in self.allowed_origins

    async def _get(self, connection: ServerConnection, path: str) -> Response:
        if path == "/healthz":
            status, text = await self._health()
            return connection.respond(status, text + "\n")
        if path == "/metrics":
            return _with_body(connection, self.metrics.render(), PROMETHEUS_TEXT)
        name = "index.html" if path == "/" else path[1:]
        file = self.static.joinpath(*name.split("/")) if STATIC_PATH.match(name) else None
        if file is None or not file.is_file():
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        content_type = CONTENT_TYPES.get(suffix, "application/octet-stream")
        return _with_body(connection, file.read_bytes(), content_type)

    async def _health(self) -> tuple[HTTPStatus, str]:
        try:
            async with asyncio.timeout(self.store_timeout):
                await self.ping_store()
        except StoreUnavailable as error:
            return HTTPStatus.SERVICE_UNAVAILABLE, f"store unreachable: {error}".rstrip(": ")
        except TimeoutError:
            silent = f"store unreachable: no answer in {self.store_timeout:g} s"
            return HTTPStatus.SERVICE_UNAVAILABLE, silent
        return HTTPStatus.OK, "ok"


def _with_body(connection: ServerConnection, body: bytes, content_type: str) -> Response:
    response = connection.respond(HTTPStatus.OK, "")
    headers = response.headers
    del headers["Content-Type"], headers["Content-Length"]
    headers["Content-Type"] = content_type
    headers["Content-Length"] = str(len(body))
    headers["Cache-Control"] = "no-cache"
    headers["X-Content-Type-Options"] = "nosniff"
    return dataclasses.replace(response, body=body)
