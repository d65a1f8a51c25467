"""The gateway's connections leave nothing behind them for the cyclic collector."""

from __future__ import annotations

import asyncio
import gc
import json

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import Outbox, QiuQiuServer
from tests.server.test_http import get, samples


async def test_a_connection_closed_cleanly_leaves_no_reference_cycle_behind() -> None:
    """Only the collector's full passes free a cycle, and they come seldom once the
    heap is large: what each closed connection left in one would pile up between them."""
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
        while samples((await get(server, "/metrics"))[2])[("qiuqiu_connections", ())] > 0:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # websockets' own handler ends after ours
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, Outbox | ServerConnection)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        await server.stop()
    assert left == []
