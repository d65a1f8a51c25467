"""A Redis that answers but refuses every write: full (``maxmemory`` with the default
``noeviction``), a failed snapshot (``MISCONF``), a read-only replica. For the server
it is an outage like Redis out of reach, not a bug: requests are refused with
``store_unavailable`` on a connection that stays open, ``/healthz`` says so, a hand
that ends waits for the write, and no traceback is logged per call."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port, own_redis
from tests.server.conftest import FAST, Client, at_bot_table
from tests.server.processes import chips_in_redis, listening, until
from tests.server.test_http import get


@pytest.fixture
async def redis_url(tmp_path: Path) -> AsyncIterator[str]:
    """A Redis of this test's own, since the test fills it."""
    port = free_port()
    redis = own_redis(port, tmp_path)
    try:
        await until(lambda: listening(port))
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        redis.kill()
        redis.wait()


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RedisStore]:
    store = await RedisStore.from_url(redis_url)
    yield store
    await store.close()


@pytest.fixture
async def server(store: RedisStore) -> AsyncIterator[QiuQiuServer]:
    # Short leases: the leases' rounds, which a full Redis still answers, come often.
    config = FAST.model_copy(update={"lease": 0.3})
    server = QiuQiuServer(config, store=store, rng=random.Random(2026))
    await server.start()
    yield server
    await server.stop()


async def test_a_full_redis_refuses_requests_and_holds_a_hands_end_until_it_has_room(
    server: QiuQiuServer,
    store: RedisStore,
    redis_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    connections: list[Client] = []

    async def connect_client() -> Client:
        connections.append(Client(await connect(server.url)))
        return connections[-1]

    ann, turn = await at_bot_table(connect_client)
    table_id, hand_id = turn["table_id"], turn["hand_id"]
    async with Redis.from_url(redis_url) as raw:
        await raw.config_set("maxmemory", 1)
        try:
            with caplog.at_level(logging.WARNING):
                bob = await connect_client()
                refused = await bob.reply("hello", version=2, name="Bob")
                assert refused["type"] == "error", refused
                assert refused["code"] == "store_unavailable"
                status, _, body = await get(server, "/healthz")
                assert status == 503
                assert b"OOM" in body
                # Ann goes all-in; whether the bot calls or folds, the hand's end is told
                # once Redis has room to write it.
                all_in = turn["legal"]["bet"]["max"]
                await ann.send("bet", table_id=table_id, hand_id=hand_id, amount=all_in)
                await asyncio.sleep(0.5)  # the hand's end is being retried
                assert not any(f["type"] == "hand_ended" for f in ann.frames)
        finally:
            await raw.config_set("maxmemory", 0)
        await ann.expect("hand_ended", hand_id=hand_id)
        welcome = await bob.reply("hello", version=2, name="Bob")
        assert welcome["type"] == "welcome", welcome
    assert (await get(server, "/healthz"))[::2] == (200, b"ok\n")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    said = [r.getMessage() for r in caplog.records if r.name == "qiuqiu.server.health"]
    assert len(said) == 2, said  # once away, once back: a lease renewed is not a write
    assert "OOM command not allowed" in said[0]
    for client in connections:
        await client.close()
    await server.stop()
    assert await chips_in_redis(store) == 0
