"""A real server on a free port, and test clients that speak to it over real WebSockets."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import Store
from tests.server.processes import Servers
from tests.server.recorder import close_left_open

FAST = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, grace=5.0)
WAIT = 5.0
"""Seconds a test waits for a message before it fails (never a timing assertion)."""


class Client:
    """A test client: sends dicts, keeps every frame it receives, waits for messages."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[dict[str, Any]] = []
        self.texts: list[str] = []
        """The same frames as they came, text for text."""
        self._unread: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self._ids = 0

    async def _read(self) -> None:
        # A connection the server closed ends the loop quietly; close_code says why.
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.connection:
                self.texts.append(str(frame))
                message = json.loads(frame)
                self.frames.append(message)
                self._unread.put_nowait(message)

    async def send(self, type: str, **fields: Any) -> int:
        """Send a message with a fresh ``id``; return the id."""
        self._ids += 1
        await self.connection.send(json.dumps({"type": type, "id": self._ids, **fields}))
        return self._ids

    async def send_raw(self, frame: str | bytes) -> None:
        await self.connection.send(frame)

    async def expect(self, type: str, **match: Any) -> dict[str, Any]:
        """The next message of ``type`` whose fields equal ``match`` (others are skipped)."""
        return await self.wait(lambda m: m["type"] == type and _has(m, match))

    async def wait(self, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            while True:
                message = await self._unread.get()
                if found(message):
                    return message

    async def reply(self, type: str, **fields: Any) -> dict[str, Any]:
        """Send a message and return the reply (or error) that names it."""
        ref = await self.send(type, **fields)
        # Table events caused by the message carry its ref too; a reply is the rest.
        return await self.wait(
            lambda m: m.get("ref") == ref and not ("seq" in m and "table_id" in m)
        )

    async def hello(self, name: str = "Ann", **fields: Any) -> dict[str, Any]:
        return await self.reply("hello", version=PROTOCOL_VERSION, name=name, **fields)

    async def closed(self) -> None:
        """Wait until the server has closed the connection."""
        async with asyncio.timeout(WAIT):
            await self._reader

    async def close(self) -> None:
        await self.connection.close()
        await self._reader


async def chip_total(server: QiuQiuServer) -> int:
    """Every balance (the house's included), stack and pot: always zero (see store.py)."""
    # The balances first: reading them from a store in this process does not yield,
    # so the tables below are seen at the same moment.
    total = sum((await server.store.balances()).values())
    for table in server.lobby.tables.values():
        hand = table.hand
        if table.playing and hand is not None:
            in_hand = hand.seats
            total += hand.pot + sum(s.stack for s in in_hand.values())
            total += sum(s.stack for n, s in table.seats.items() if n not in in_hand)
        else:
            total += sum(s.stack for s in table.seats.values())
    return total


async def my_turn(client: Client, table_id: str) -> dict[str, Any]:
    """The next ``turn_started`` at ``table_id`` that is this client's: only the
    actor's copy carries ``legal``."""
    return await client.wait(
        lambda m: m["type"] == "turn_started" and m["table_id"] == table_id and "legal" in m
    )


async def at_bot_table(
    connect: Callable[[], Awaitable[Client]],
    name: str = "Ann",
    buy_in: int = 500,
    **options: Any,
) -> tuple[Client, dict[str, Any]]:
    """A player against the dealer bot, at its first turn: the table waits for it."""
    client = await connect()
    await client.hello(name)
    created = await client.reply("create_table", options=options, buy_in=buy_in)
    assert created["type"] == "table_created", created
    return client, await my_turn(client, created["table"]["table_id"])


async def check_or_call_to(client: Client, turn: dict[str, Any], until: str) -> dict[str, Any]:
    """From the player's ``turn``, check (or call whatever the bot bets) until a message
    of type ``until`` of that hand comes; the bot may bet behind a check, or not."""
    hand_id, seat = turn["hand_id"], turn["seat"]

    def next_step(m: dict[str, Any]) -> bool:
        mine = m["type"] == "turn_started" and m["seat"] == seat and "legal" in m
        return m.get("hand_id") == hand_id and (m["type"] == until or mine)

    while True:
        action = "call" if turn["legal"].get("call") else "check"
        await client.send(action, table_id=turn["table_id"], hand_id=hand_id)
        message = await client.wait(next_step)
        if message["type"] == until:
            return message
        turn = message


def _has(message: dict[str, Any], match: dict[str, Any]) -> bool:
    return all(message.get(key) == value for key, value in match.items())


@pytest.fixture
def config() -> ServerConfig:
    return FAST


@pytest.fixture
async def connect_client(server: QiuQiuServer) -> AsyncIterator[Callable[[], Any]]:
    clients: list[Client] = []

    async def make() -> Client:
        client = Client(await connect(server.url))
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture
async def redis_store(redis_url: str) -> AsyncIterator[RedisStore]:
    """A store in the test's own, empty, Redis database."""
    store = await RedisStore.from_url(redis_url)
    yield store
    await store.close()


@pytest.fixture
async def servers(redis_url: str) -> AsyncIterator[Servers]:
    """Real server processes on the test's Redis, none left running after the test."""
    started = Servers(redis_url)
    yield started
    await started.kill_remaining()


@pytest.fixture(autouse=True)
async def recorded_connections_closed() -> AsyncIterator[None]:
    """Whatever a test left open is closed at its end, not collected in another test."""
    yield
    await close_left_open()


# The clients the takeover tests (test_takeover*.py) open through
# takeover_helpers.client_at: a conftest's fixture closes them in every one of those modules.
OPENED: list[Client] = []


@pytest.fixture(autouse=True)
async def clients_closed() -> AsyncIterator[None]:
    """Every test client is closed at the end of its test, passed or failed."""
    yield
    while OPENED:
        await OPENED.pop().close()


# -- the stores of the store's contract (test_store.py, test_store_tables.py) --------

STORES = ["memory_store", "redis_store"]

TABLES = ("t1", "t2", "t3")


@pytest.fixture
def memory_store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> Store:
    made: Store = request.getfixturevalue(request.param)
    return made


@pytest.fixture
async def leases(store: Store) -> None:
    """The store holds the leases on ``TABLES``: a write needs one (the store tests use it
    on every test)."""
    for table_id in TABLES:
        assert await store.acquire_table(table_id, 60)


@pytest.fixture
async def rival(store: Store, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """Another process on the same store as ``store``, with leases of its own."""
    if isinstance(store, MemoryStore):
        yield replace(store, owner=secrets.token_hex(6), _holding={})
        return
    other = await RedisStore.from_url(request.getfixturevalue("redis_url"))
    yield other
    await other.close()


EmptyStores = Callable[[], contextlib.AbstractAsyncContextManager[Store]]


@pytest.fixture
def empty_stores(store: Store, request: pytest.FixtureRequest) -> EmptyStores:
    """More empty stores of the kind ``store`` is, one per example of a property (the
    Redis ones under a prefix of their own), each holding the leases on ``TABLES``."""
    url = None if isinstance(store, MemoryStore) else request.getfixturevalue("redis_url")
    prefixes = itertools.count()

    @contextlib.asynccontextmanager
    async def empty() -> AsyncIterator[Store]:
        if url is None:
            made: Store = MemoryStore()
        else:
            made = await RedisStore.from_url(url, prefix=f"example{next(prefixes)}:")
        try:
            for table_id in TABLES:
                assert await made.acquire_table(table_id, 60)
            yield made
        finally:
            if isinstance(made, RedisStore):
                await made.close()

    return empty
