"""A request to stand up refused with nothing changed (``store_unavailable``: its
table's host lost touch with Redis for longer than the table's lease, and is making
sure it still hosts it) is sent again a moment later, so that the seat stands up: a
bot's here, the terminal's in test_terminal_leave.py. A proxy in front of a real
server refuses the first requests so."""

from __future__ import annotations

import asyncio

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import leave, run
from qiuqiu.cli.connection import Connection
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.proxy import proxy, refusing
from tests.cli.test_bot import PATIENCE, SMALL


async def test_a_bots_leave_refused_store_unavailable_is_sent_again_and_the_seat_stands_up(
    server: QiuQiuServer,
) -> None:
    """Both its requests (after its last hand, then at once as the next is dealt) were
    refused: the bot stopped answering turns and waited for ever, its seat playing on."""
    refused: list[int] = []
    async with proxy(server.url, up=refusing("leave_table", 2, refused)) as url:
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
    refused: list[int] = []
    async with (
        proxy(server.url, up=refusing("leave_table", 1, refused)) as url,
        await Connection.open(url, name="Ann") as conn,
    ):
        table, _ = await conn.open_table(SMALL, buy_in=500)
        balance = await asyncio.wait_for(leave(conn, table.table_id), PATIENCE)
        assert refused
        assert balance is not None
        assert not await server.store.seated_tables(conn.account_id)
