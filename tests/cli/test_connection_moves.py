"""The SDK's connection when a table moves to another server, and a spectator's watches
after a drop: a join asked again until the table has moved, the tables watched again
(at the cap of watched tables too) and none it left, a watch refused
``store_unavailable`` after a move sent again."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from redis.asyncio import Redis

from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import ErrorCode, TableOptions, encode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.table.reasons import MOVED
from tests.cli.conftest import cut_the_network
from tests.cli.proxy import Send, proxy, refusing
from tests.conftest import free_port
from tests.server.conftest import FAST, WAIT
from tests.server.processes import Servers, until


async def kill_the_host(
    host: asyncio.subprocess.Process, store: RedisStore, redis_url: str, table_id: str
) -> str:
    """Kill the process hosting ``table_id`` and wait until Redis knows it is gone (its
    channels closed); the dead host's name, which the table's record still holds."""
    dead = await store.table_host(table_id)
    assert dead is not None
    host.kill()
    await host.wait()
    async with Redis.from_url(redis_url) as redis:

        async def gone() -> bool:
            return not await redis.pubsub_channels(f"*{dead}*")

        await until(gone)
    return dead


async def test_joining_a_table_while_it_moves_to_another_server_is_asked_again_until_it_has(
    redis_url: str,
) -> None:
    """Bo's table's server is killed; Ann, at the other server, joins it before that one
    has adopted it (the lease is 3 s): refused table_moving, nothing changed, and the
    SDK sends it again until the table is adopted and takes her."""
    servers = Servers(redis_url)
    store = await RedisStore.from_url(redis_url)
    try:
        hosting, other = free_port(), free_port()
        host = await servers.start(hosting, lease=3.0)
        await servers.start(other, lease=3.0)
        async with await Connection.open(
            f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False
        ) as bo:
            table, _ = await bo.open_table(TableOptions(dealer_bot=False), 500)
            dead = await kill_the_host(host, store, redis_url, table.table_id)
            assert await store.table_host(table.table_id) == dead, "adopted before the test"
            async with await Connection.open(f"ws://127.0.0.1:{other}", name="Ann") as ann:
                joined = await ann.join_table(table.table_id, 500)
        assert joined.table_id == table.table_id
    finally:
        await servers.kill_remaining()
        await store.close()


async def test_a_spectator_watches_its_tables_again_after_a_drop_and_keeps_no_table_it_left(
    server: QiuQiuServer,
) -> None:
    """Eve watches two tables and stops watching one. The network drops: back, she
    watches the other again (its events come, and its state is the new snapshot's),
    and the one she left is not among her tables. The SDK resumed her account and
    watched nothing: her table state stood still."""
    ann = await Connection.open(server.url, name="Ann")
    options = TableOptions(seats=3, dealer_bot=False, min_players=3)
    watched, _ = await ann.open_table(options, 200)
    left, _ = await ann.open_table(options, 200)
    eve = await Connection.open(server.url, name="Eve")
    for table in (watched, left):
        await eve.request(cmd.WatchTable(table_id=table.table_id), wire.TableWatched)
    await eve.request(cmd.LeaveTable(table_id=left.table_id), wire.TableLeft)
    messages = eve.messages()

    async def next_of(kind: type[object], table_id: str) -> object:
        async with asyncio.timeout(10):
            async for message in messages:
                if isinstance(message, kind) and table_of(message) == table_id:
                    return message
        raise AssertionError("the messages ended")

    await next_of(wire.TableLeft, left.table_id)
    assert set(eve.tables) == {watched.table_id}
    before = eve.tables[watched.table_id]
    cut_the_network(server)
    await next_of(wire.TableSnapshot, watched.table_id)
    assert eve.tables[watched.table_id] is not before
    bo = await Connection.open(server.url, name="Bo")
    await bo.join_table(watched.table_id, 200)
    seated = await next_of(wire.PlayerSeated, watched.table_id)
    assert isinstance(seated, wire.PlayerSeated)
    assert seated.name == "Bo"
    assert set(eve.tables) == {watched.table_id}
    for conn in (ann, eve, bo):
        await conn.close()


@pytest.mark.parametrize(
    "config", [pytest.param(FAST.model_copy(update={"max_watched_tables": 2}), id="two watched")]
)
async def test_a_spectator_at_the_cap_of_watched_tables_watches_them_all_again_after_a_drop(
    server: QiuQiuServer,
) -> None:
    """The server caps the tables one connection watches; the SDK watches again, on its
    new connection, as many as it watched: all of them fit."""
    ann = await Connection.open(server.url, name="Ann")
    options = TableOptions(seats=3, dealer_bot=False, min_players=3)
    tables = [(await ann.open_table(options, 200))[0].table_id for _ in range(2)]
    eve = await Connection.open(server.url, name="Eve")
    for table_id in tables:
        await eve.request(cmd.WatchTable(table_id=table_id), wire.TableWatched)
    messages = eve.messages()
    cut_the_network(server)
    again: set[str] = set()
    async with asyncio.timeout(10):
        async for message in messages:
            assert not isinstance(message, wire.Error), message
            if isinstance(message, wire.TableSnapshot):
                again.add(message.table.table_id)
            if again == set(tables):
                break
    assert eve.watching == set(tables)
    for conn in (ann, eve):
        await conn.close()


def table_of(message: object) -> str | None:
    if isinstance(message, wire.TableSnapshot):
        return message.table.table_id
    return getattr(message, "table_id", None)


async def test_a_spectator_back_while_its_table_moves_to_another_server_watches_it_again(
    redis_url: str,
) -> None:
    """Eve, on one server, watches Bo's table, hosted by another. That one is killed, and
    Eve's network drops: back before her server has adopted the table (the lease is
    3 s), her watch is refused table_moving, nothing changed, and the SDK sends it again
    until the table is adopted and its snapshot comes. It took the refusal as final:
    she came back watching nothing."""
    servers = Servers(redis_url)
    store = await RedisStore.from_url(redis_url)
    other = QiuQiuServer(FAST.model_copy(update={"port": free_port()}), store=store)
    await other.start()
    try:
        hosting = free_port()
        host = await servers.start(hosting, lease=3.0)
        async with await Connection.open(
            f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False
        ) as bo:
            table, _ = await bo.open_table(TableOptions(dealer_bot=False), 500)
        eve = await Connection.open(other.url, name="Eve")
        await eve.request(cmd.WatchTable(table_id=table.table_id), wire.TableWatched)
        messages = eve.messages()
        async with asyncio.timeout(WAIT):
            async for message in messages:
                if isinstance(message, wire.TableSnapshot):
                    break
        await kill_the_host(host, store, redis_url, table.table_id)
        cut_the_network(other)
        refused = False
        snapshot = None
        async with asyncio.timeout(30):
            async for message in messages:
                if isinstance(message, wire.Error):
                    refused |= message.code is ErrorCode.TABLE_MOVING
                if isinstance(message, wire.TableSnapshot):
                    snapshot = message
                    break
        assert refused, "adopted before the watch was sent again"
        assert snapshot is not None
        assert snapshot.table.table_id == table.table_id
        assert eve.watching == {table.table_id}
        await eve.close()
    finally:
        await other.stop()
        await servers.kill_remaining()
        await store.close()


async def test_a_watch_sent_again_after_a_move_and_refused_store_unavailable_is_sent_again(
    server: QiuQiuServer,
) -> None:
    """A watched table moved (``table_closed`` without a seed), and its new host, making
    sure of its lease, refused the watch sent again ``store_unavailable``, nothing
    changed: the SDK took that as final, and a watcher in a terminal ended while the
    table played on (a full run here). A proxy in front of a real server plays the
    move and the refusal; the watch must be sent again and the snapshot come."""
    refused: list[int] = []
    moved = asyncio.Event()
    refuse = refusing("watch_table", 1, refused)

    async def refuse_once_moved(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        return moved.is_set() and await refuse(message, to_client, to_server)

    async def move_after_the_snapshot(
        message: dict[str, Any], to_client: Send, to_server: Send
    ) -> bool:
        if message["type"] != "table_snapshot" or moved.is_set():
            return False
        moved.set()
        await to_client(json.dumps(message))
        table_id, seq = message["table"]["table_id"], message["seq"] + 1
        await to_client(encode(wire.TableClosed(table_id=table_id, seq=seq, reason=MOVED)))
        return True

    async with await Connection.open(server.url, name="Bo") as bo:
        table, _ = await bo.open_table(TableOptions(), 500)
        async with (
            proxy(server.url, up=refuse_once_moved, down=move_after_the_snapshot) as url,
            await Connection.open(url, name="Eve") as eve,
        ):
            await eve.request(cmd.WatchTable(table_id=table.table_id), wire.TableWatched)
            snapshots = 0
            async with asyncio.timeout(WAIT):
                async for message in eve.messages():
                    snapshots += isinstance(message, wire.TableSnapshot)
                    if snapshots == 2:
                        break
            assert refused, "the proxy refused no watch sent again"
            assert eve.watching == {table.table_id}
