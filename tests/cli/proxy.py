"""A WebSocket proxy in front of a real server, for the tests that play what a server
does at a bad moment (refuse a request as its table moves, or as its host makes sure
of its lease) without bringing that moment about."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from qiuqiu.protocol import ErrorCode, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.table.reasons import IN_DOUBT

Send = Callable[[str], Awaitable[None]]
Hook = Callable[[dict[str, Any], Send, Send], Awaitable[bool]]
"""Sees each frame, decoded, with a way to send to the client and one to the server;
``True`` when it dealt with the frame, which then goes no further."""


async def passes(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
    return False


@asynccontextmanager
async def proxy(url: str, up: Hook = passes, down: Hook = passes) -> AsyncIterator[str]:
    """The url of a proxy to the server at ``url``: each frame a client sends goes
    through ``up`` first, each frame the server sends through ``down``."""

    async def between(client: ServerConnection) -> None:
        async with connect(url) as real:

            async def pump(source: Any, sink: Send, hook: Hook) -> None:
                async for text in source:
                    if not await hook(json.loads(text), client.send, real.send):
                        await sink(text)

            pumps = [
                asyncio.create_task(pump(client, real.send, up)),
                asyncio.create_task(pump(real, client.send, down)),
            ]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in pumps:
                task.cancel()

    async with serve(between, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


def refusing(kind: str, count: int, refused: list[int]) -> Hook:
    """Refuse the first ``count`` messages of type ``kind`` as a table in doubt of its
    lease does (``store_unavailable``: nothing changed), noting their ids."""

    async def hook(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        if message["type"] != kind or len(refused) >= count:
            return False
        refused.append(message["id"])
        error = wire.Error(ref=message["id"], code=ErrorCode.STORE_UNAVAILABLE, message=IN_DOUBT)
        await to_client(encode(error))
        return True

    return hook
