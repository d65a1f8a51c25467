"""The gateway's connections leave nothing behind them for the cyclic collector."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection
from websockets.server import ServerProtocol

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import Outbox, QiuQiuServer
from tests.server.test_http import get, samples


@pytest.mark.parametrize("ending", ["closed", "dropped"])
async def test_a_connection_that_ended_leaves_no_reference_cycle_behind(ending: str) -> None:
    """Only the collector's full passes free a cycle, and they come seldom once the
    heap is large (never, for what ``--gc-freeze full`` froze): what each connection
    left in one would pile up between them."""
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    try:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        for _ in range(3):
            async with connect(server.url, compression=None) as ws:
                hello = {"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"}
                await ws.send(json.dumps(hello))
                await ws.recv()
                if ending == "dropped":
                    ws.transport.abort()  # no closing handshake, as a network outage
        while samples((await get(server, "/metrics"))[2])[("qiuqiu_connections", ())] > 0:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # websockets' own handler ends after ours
        gc.collect()
        # type(), not isinstance(): the garbage holds weak proxies to objects gone.
        left = [o for o in gc.garbage if type(o) in (Outbox, ServerConnection, ServerProtocol)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        await server.stop()
    assert left == []


@pytest.mark.parametrize("sent", [b"", b"GET / HTTP/1.1\r\nHost: qiuqiu\r\n"])
async def test_a_connection_cut_before_its_handshake_leaves_no_reference_cycle_behind(
    sent: bytes,
) -> None:
    """What a TCP health check does: connect, maybe start a request, hang up."""
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    try:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        for _ in range(3):
            _, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(sent)
            writer.close()
            await writer.wait_closed()
        assert server._server is not None
        while server._server.handler_tasks:
            await asyncio.sleep(0.01)
        gc.collect()
        left = [o for o in gc.garbage if type(o) in (ServerConnection, ServerProtocol)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        await server.stop()
    assert left == []
