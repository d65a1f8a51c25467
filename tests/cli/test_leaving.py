"""A request to stand up refused with nothing changed (``store_unavailable``: its
table's host lost touch with Redis for longer than the table's lease, and is making
sure it still hosts it) is sent again a moment later, so that the seat stands up: a
bot's here, the terminal's in test_terminal_leave.py. A proxy in front of a real
server refuses the first requests so."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import leave, run
from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import ErrorCode, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.table.hand import IN_DOUBT
from tests.cli.test_bot import PATIENCE, SMALL


@asynccontextmanager
async def refusing_leaves(server: QiuQiuServer, count: int) -> AsyncIterator[tuple[str, list[int]]]:
    """The url of a proxy to ``server`` that refuses the first ``count`` ``leave_table``
    as a table in doubt of its lease does, and the ids it refused."""
    refused: list[int] = []

    async def between(bot: ServerConnection) -> None:
        async with connect(server.url) as real:

            async def upstream() -> None:
                async for text in bot:
                    message = json.loads(text)
                    if message["type"] == "leave_table" and len(refused) < count:
                        refused.append(message["id"])
                        error = wire.Error(
                            ref=message["id"], code=ErrorCode.STORE_UNAVAILABLE, message=IN_DOUBT
                        )
                        await bot.send(encode(error))
                        continue
                    await real.send(text)

            async def downstream() -> None:
                async for text in real:
                    await bot.send(text)

            pumps = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in pumps:
                pump.cancel()

    async with serve(between, "127.0.0.1", 0) as proxy:
        port = next(iter(proxy.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}", refused


async def test_a_bots_leave_refused_store_unavailable_is_sent_again_and_the_seat_stands_up(
    server: QiuQiuServer,
) -> None:
    """Both its requests (after its last hand, then at once as the next is dealt) were
    refused: the bot stopped answering turns and waited for ever, its seat playing on."""
    async with refusing_leaves(server, count=2) as (url, refused):
        summary = await asyncio.wait_for(
            run(AlwaysCall(), url, name="Leaver", hands=2, options=SMALL), PATIENCE
        )
    assert len(refused) == 2
    assert summary.hands >= 2
    assert summary.balance is not None
    assert summary.shuffle_verified == summary.hands, "the table closed as the bot stood up"


async def test_leave_refused_store_unavailable_asks_again_and_returns_the_balance(
    server: QiuQiuServer,
) -> None:
    """What a program calls after an error (a deal that failed its check, a bot that
    raised): refused so, it gave up with the seat still at the table."""
    async with (
        refusing_leaves(server, count=1) as (url, refused),
        await Connection.open(url, name="Ann") as conn,
    ):
        table, _ = await conn.open_table(SMALL, buy_in=500)
        balance = await asyncio.wait_for(leave(conn, table.table_id), PATIENCE)
        assert refused
        assert balance is not None
        assert not await server.store.seated_tables(conn.account_id)
