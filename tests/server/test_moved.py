"""A table this process lost to another one (its lease taken while it stalled), as
the process that lost it says so: one WARNING line, and its players sent to
reconnect."""

from __future__ import annotations

import logging

import pytest
from websockets.asyncio.client import connect

from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.leases import lease_taken
from tests.server.conftest import FAST, Client, at_bot_table


async def test_a_table_lost_to_another_process_is_one_warning_and_its_player_reconnects(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(FAST.model_copy(update={"lease": 0.3}), store=store)
    await server.start()
    opened: list[Client] = []

    async def connect_client() -> Client:
        opened.append(Client(await connect(server.url)))
        return opened[-1]

    try:
        ann, turn = await at_bot_table(connect_client)
        table_id = turn["table_id"]
        with caplog.at_level(logging.INFO, logger="qiuqiu.server"):
            await lease_taken(redis_url, table_id, for_ms=60_000)
            closed = await ann.expect("table_closed", table_id=table_id)
            assert "table_seed" not in closed
            await ann.closed()
            assert ann.connection.close_code == 1012
        said = [r for r in caplog.records if table_id in r.getMessage()]
        assert [(r.levelname, r.getMessage()) for r in said] == [
            (
                "WARNING",
                f"table {table_id}: closed: the table moved to another server: "
                "reconnect to go on playing",
            )
        ], said
    finally:
        for client in opened:
            await client.close()
        await server.stop()
        await store.close()
