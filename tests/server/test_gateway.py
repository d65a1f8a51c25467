"""The gateway's connections are freed by reference counting alone once they end.

The collector's full passes, which free a reference cycle, come seldom once the
heap is large, and never for what ``--gc-freeze`` froze: whatever each connection
left in a cycle would pile up between them, or for good. So these tests keep the
collector off and count what is still alive. ``gc.garbage`` would not do: the
cycle a connection's suspended parser made never showed there, though the
collector did free it.

And a stopping server closes its connections with the code that tells each client
what it may still do.
"""

from __future__ import annotations

import asyncio
import gc
import json
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.server import ServerProtocol

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.connections import GatewayConnection
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.lobby import RESTARTING
from qiuqiu.server.outbox import Outbox
from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port, own_redis
from tests.server.conftest import FAST, Client, my_turn
from tests.server.faulty_store import FaultPlan, FaultyStore
from tests.server.processes import listening, until
from tests.server.test_http import get, samples

KINDS = (Outbox, ServerConnection, ServerProtocol)


def alive() -> set[int]:
    # Not isinstance(): a weak proxy passes for the object it stands for.
    return {id(o) for o in gc.get_objects() if issubclass(type(o), KINDS)}


@dataclass
class Left:
    count: int = 0


@contextmanager
def counting_what_is_left() -> Iterator[Left]:
    """The collector off; on the way out, how many of the gateway's objects made in
    between are still alive (what was there before may come and go)."""
    gc.collect()
    gc.disable()
    left, before = Left(), alive()
    try:
        yield left
    finally:
        left.count = len(alive() - before)
        gc.enable()


@asynccontextmanager
async def serving() -> AsyncIterator[QiuQiuServer]:
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.mark.parametrize("ending", ["closed", "dropped"])
async def test_a_connection_that_ended_is_freed_without_the_collector(ending: str) -> None:
    async with serving() as server:
        with counting_what_is_left() as left:
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
    assert left.count == 0


@pytest.mark.parametrize("sent", [b"", b"GET / HTTP/1.1\r\nHost: qiuqiu\r\n"])
async def test_a_connection_cut_before_its_handshake_is_freed_without_the_collector(
    sent: bytes,
) -> None:
    """What a TCP health check does: connect, maybe start a request, hang up."""
    async with serving() as server:
        with counting_what_is_left() as left:
            for _ in range(3):
                _, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(sent)
                writer.close()
                await writer.wait_closed()
            assert server._server is not None
            while server._server.handler_tasks:
                await asyncio.sleep(0.01)
    assert left.count == 0


@asynccontextmanager
async def echo_server(connections: type[ServerConnection]) -> AsyncIterator[Server]:
    """``websockets``' own server, with none of the gateway's code but ``connections``."""

    async def echo(ws: ServerConnection) -> None:
        async for message in ws:
            await ws.send(message)

    async with serve(echo, "127.0.0.1", 0, create_connection=connections) as server:
        yield server


async def ended_connections_left(connections: type[ServerConnection]) -> tuple[int, int]:
    """What a connection closed normally, and one cut before its request, leave alive
    without the collector, when ``connections`` manage them."""
    async with echo_server(connections) as server:
        port = server.sockets[0].getsockname()[1]
        with counting_what_is_left() as closed:
            async with connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
                await ws.send("hello")
                await ws.recv()
            while server.handler_tasks:
                await asyncio.sleep(0.01)
        with counting_what_is_left() as cut:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\n")
            writer.close()
            await writer.wait_closed()
            while server.handler_tasks:
                await asyncio.sleep(0.01)
    return closed.count, cut.count


async def test_websockets_alone_still_leaves_ended_connections_to_the_collector() -> None:
    """Why the gateway's ``GatewayConnection`` exists (docs/upstream/websockets.md): the same
    server with it leaves nothing. When the first half fails, ``websockets`` frees its
    connections itself: drop ``GatewayConnection`` and the report."""
    closed, cut = await ended_connections_left(ServerConnection)
    assert closed > 0
    assert cut > 0
    assert await ended_connections_left(GatewayConnection) == (0, 0)


async def ann_at_her_turn(server: QiuQiuServer) -> tuple[Client, str, str]:
    """Ann at a dealer-bot table on ``server``, her turn come: her client, her token and
    the table's id."""
    ann = Client(await connect(server.url))
    welcome = await ann.hello("Ann")
    created = await ann.reply("create_table", options={}, buy_in=300)
    table_id = created["table"]["table_id"]
    await my_turn(ann, table_id)
    return ann, welcome["token"], table_id


async def test_a_server_stopped_while_its_redis_is_away_sends_its_players_to_reconnect(
    redis_url: str, tmp_path: Path
) -> None:
    """Alone on its Redis, the server is stopped while Redis is away: it cannot close
    Ann's table, so it leaves it as Redis has it, her seat with it, for the next server
    to adopt. She is told to reconnect (1012), not that the server is gone with no
    other to play on (1001), and the next server on that Redis has her seat. Before,
    she was told 1001."""
    outage = tmp_path / "outage"
    store = await FaultyStore.open(redis_url, FaultPlan(), outage=outage)
    server = QiuQiuServer(FAST.model_copy(update={"stop_timeout": 1.0}), store=store)
    await server.start()
    ann, token, table_id = await ann_at_her_turn(server)
    outage.write_text("down")
    await server.stop()
    await ann.closed()
    await store.close()
    assert ann.connection.close_code == 1012
    # Not that the table moved to another server: there is none, and it waits for one.
    assert ann.connection.close_reason == RESTARTING

    plain = await RedisStore.from_url(redis_url)
    after = QiuQiuServer(FAST, store=plain)
    await after.start()
    try:
        back = Client(await connect(after.url))
        resumed = await back.reply("hello", version=PROTOCOL_VERSION, token=token)
        assert table_id in resumed["tables"], resumed
        await back.close()
    finally:
        await after.stop()
        await plain.close()


async def test_a_server_stopped_beside_another_while_redis_blips_leaves_it_every_seat(
    tmp_path: Path,
) -> None:
    """A rolling restart: the server hosting Ann's table is stopped beside another one
    as Redis freezes for a moment, so it cannot count who else listens. It must not
    take itself for the last server, void the hand and stand Ann up, closing the
    table: it leaves the table to the other server, her seat with it, and tells her
    to reconnect (1012). Before, she was stood up, the table closed, and told 1001."""
    port = free_port()
    redis = own_redis(port, tmp_path)
    stores: list[RedisStore] = []
    servers: list[QiuQiuServer] = []
    try:
        await until(lambda: listening(port))
        url = f"redis://127.0.0.1:{port}/0"
        stores += [await RedisStore.from_url(url, timeout=0.5) for _ in range(2)]
        config = FAST.model_copy(update={"stop_timeout": 5.0, "lease": 1.0})
        servers += [QiuQiuServer(config, store=store) for store in stores]
        here, there = servers
        for server in servers:
            await server.start()
        ann, token, table_id = await ann_at_her_turn(here)
        redis.send_signal(signal.SIGSTOP)
        asyncio.get_running_loop().call_later(1.5, redis.send_signal, signal.SIGCONT)
        await here.stop()
        await ann.closed()
        assert ann.connection.close_code == 1012
        assert ann.connection.close_reason == RESTARTING
        assert not [f for f in ann.frames if f["type"] in ("table_left", "table_closed")]
        back = Client(await connect(there.url))
        resumed = await back.reply("hello", version=PROTOCOL_VERSION, token=token)
        assert table_id in resumed["tables"], resumed
        await back.close()
    finally:
        redis.send_signal(signal.SIGCONT)
        for server in servers:
            await server.stop()
        for store in stores:
            await store.close()
        redis.kill()
        redis.wait()
