"""What the takeover tests (test_takeover*.py) share: clients of real server processes,
each closed at the end of its test (conftest.clients_closed), the frames they wait for,
and a table hosted by one process while its player is connected to another."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port
from tests.server.conftest import OPENED, Client
from tests.server.processes import Servers, until

HEADS_UP = {"seats": 2, "dealer_bot": False}


def ws(port: int) -> str:
    return f"ws://127.0.0.1:{port}"


async def client_at(port: int) -> Client:
    client = Client(await connect(ws(port)))
    OPENED.append(client)
    return client


async def resume(port: int, token: str) -> tuple[Client, dict[str, Any]]:
    """A new connection to ``port`` saying hello with ``token`` alone."""
    client = await client_at(port)
    return client, await client.reply("hello", version=PROTOCOL_VERSION, token=token)


async def answer(client: Client, type: str, **fields: Any) -> dict[str, Any]:
    """Send a message and return the first frame naming it: its event, reply or error."""
    ref = await client.send(type, **fields)
    return await client.wait(lambda m: m.get("ref") == ref)


async def seen(client: Client, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first frame ``client`` has received, or will within a generous wait, that
    ``found`` accepts (for waits longer than a reply takes: takeovers, stores back)."""

    async def arrived() -> bool:
        return any(map(found, client.frames))

    await until(arrived)
    return next(filter(found, client.frames))


async def check_or_call(client: Client, table_id: str, snapshot: dict[str, Any]) -> dict[str, Any]:
    """Play the client's turn at ``table_id`` (the snapshot's, or the next one) by
    checking or calling; the event the action made."""
    table = snapshot["table"]
    if table.get("legal") is None:
        turn = await client.wait(turn_at(table_id))
        hand_id, legal = turn["hand_id"], turn["legal"]
    else:
        hand_id, legal = table["hand"]["hand_id"], table["legal"]
    action = "check" if legal["check"] else "call"
    played = await answer(client, action, table_id=table_id, hand_id=hand_id)
    assert played["type"] == {"check": "checked", "call": "called"}[action], played
    return played


def turn_at(table_id: str) -> Callable[[dict[str, Any]], bool]:
    """The actor's own ``turn_started`` at ``table_id`` (only its copy has ``legal``)."""

    def found(m: dict[str, Any]) -> bool:
        return m["type"] == "turn_started" and "legal" in m and m["table_id"] == table_id

    return found


def unasked_snapshot(table_id: str) -> Callable[[dict[str, Any]], bool]:
    def found(m: dict[str, Any]) -> bool:
        return (
            m["type"] == "table_snapshot" and "ref" not in m and m["table"]["table_id"] == table_id
        )

    return found


@dataclass
class Elsewhere:
    """Ann at a table hosted by one process while she is connected to the other."""

    host: asyncio.subprocess.Process
    hosting: int
    relaying: int
    ann: Client
    table_id: str


async def at_a_table_hosted_elsewhere(
    servers: Servers, *, flags: tuple[str, ...] = ()
) -> Elsewhere:
    """Ann's table with the dealer bot, a hand in play, hosted by one process while she
    is connected to the other one (started with ``flags``): her messages about it go
    between them."""
    hosting, relaying = free_port(), free_port()
    host = await servers.start(hosting, lease=LEASE)
    await servers.start(relaying, lease=LEASE, flags=flags)
    ann = await client_at(hosting)
    token = (await ann.hello("Ann"))["token"]
    created = await ann.reply("create_table", options={"turn_seconds": 30}, buy_in=300)
    table_id = created["table"]["table_id"]
    await ann.wait(turn_at(table_id))
    moved, welcome = await resume(relaying, token)
    assert welcome["tables"] == [table_id], welcome
    await moved.expect("table_snapshot")
    return Elsewhere(host, hosting, relaying, moved, table_id)


LEASE = 1.5
"""The lease of the relay tests: long enough for a message to reach a dead host before
its lease runs out, short enough for the adoption to come soon after."""


async def listened_to(redis_url: str, process: str) -> bool:
    """Whether Redis still counts ``process`` among the listeners of the bus."""
    async with Redis.from_url(redis_url) as redis:
        return bool(await redis.pubsub_channels(f"*{process}*"))


async def killed_in_its_lease(
    host: asyncio.subprocess.Process, table_id: str, redis_store: RedisStore, redis_url: str
) -> None:
    """Kill the host of ``table_id``, and return once Redis has dropped its connection
    to the bus, while the table's lease still names it."""
    dead = await redis_store.table_host(table_id)
    assert dead is not None
    host.send_signal(signal.SIGKILL)
    await host.wait()

    async def gone() -> bool:
        return not await listened_to(redis_url, dead)

    await until(gone)
    assert await redis_store.table_host(table_id) == dead, "the lease ran out before the test"


async def seen_after(
    client: Client, earlier: dict[str, Any], found: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The first frame after ``earlier`` that ``found`` accepts, within a generous wait."""
    start = client.frames.index(earlier) + 1

    async def arrived() -> bool:
        return any(map(found, client.frames[start:]))

    await until(arrived)
    return next(filter(found, client.frames[start:]))
