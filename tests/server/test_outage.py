"""The store going away and coming back, under a real server and real connections.

The store is the in-memory one with a switch: while it is off, every call raises
:class:`StoreUnavailable` without doing anything, as Redis out of reach does.
(The suite in test_faults.py does the same against real Redis and processes.)
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect

from qiuqiu.server.errors import StoreUnavailable
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.store import Store, TableCommit
from tests.server.conftest import FAST, Client, chip_total, my_turn

Connect = Callable[[], Awaitable[Client]]


class SwitchedStore(MemoryStore):
    """A memory store that can be switched off: every call then fails, doing nothing."""

    off = False
    failed = 0

    def _fail(self) -> None:
        if self.off:
            self.failed += 1
            raise StoreUnavailable("switched off")

    async def commit(self, commit: TableCommit) -> dict[str, int]:
        self._fail()
        return await super().commit(commit)

    async def account(self, account_id: str) -> Any:
        self._fail()
        return await super().account(account_id)

    async def create_account(self, *args: Any) -> Any:
        self._fail()
        return await super().create_account(*args)

    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        self._fail()
        return await super().renew_tables(seconds)


@pytest.fixture
async def store() -> SwitchedStore:
    return SwitchedStore()


@pytest.fixture
async def server(store: Store) -> AsyncIterator[QiuQiuServer]:
    config = FAST.model_copy(update={"lease": 30.0, "stop_timeout": 1.0, "grace": 1.0})
    server = QiuQiuServer(config, store=store, rng=random.Random(2026))
    await server.start()
    yield server
    await server.stop()


async def heads_up(
    connect_client: Connect, stacks: tuple[int, int], **table: Any
) -> tuple[Client, Client, str]:
    ann, bob = await connect_client(), await connect_client()
    await ann.hello("Ann")
    await bob.hello("Bob")
    options = {"dealer_bot": False, "turn_seconds": 30, **table}
    created = await ann.reply("create_table", options=options, buy_in=stacks[0])
    table_id = created["table"]["table_id"]
    await bob.reply("join_table", table_id=table_id, buy_in=stacks[1])
    return ann, bob, table_id


def refs(client: Client, *, errors: bool) -> set[Any]:
    return {
        f.get("ref")
        for f in client.frames
        if (f["type"] == "error") == errors and f.get("ref") is not None
    }


async def test_a_call_that_ends_a_hand_while_the_store_is_away_has_its_end_told_once_it_is_back(
    server: QiuQiuServer, store: SwitchedStore, connect_client: Connect
) -> None:
    ann, bob, table_id = await heads_up(connect_client, (100, 500))
    # Whoever acts first goes all-in; the other calls while the store is off.
    first = await _first_to_act(ann, bob, table_id)
    second = bob if first is ann else ann
    legal = first.frames[-1]["legal"]
    await first.send(
        "bet", table_id=table_id, hand_id=first.frames[-1]["hand_id"], amount=legal["bet"]["max"]
    )
    facing = await my_turn(second, table_id)
    store.off = True
    call = await second.send("call", table_id=table_id, hand_id=facing["hand_id"])
    await asyncio.sleep(0.3)  # the hand's end is being retried
    # The call is told at once, as every action is; what it caused waits for the write.
    assert any(f.get("ref") == call and f["type"] == "called" for f in second.frames)
    hand = [f["type"] for f in second.frames if f.get("hand_id") == facing["hand_id"]]
    assert hand[-1] == "called", "nothing of the hand's end before the write"
    store.off = False
    ended = await second.expect("hand_ended")
    for client in (ann, bob):
        assert not refs(client, errors=True) & refs(client, errors=False)
    stacks = {s["seat"]: s["amount"] for s in ended["stacks"]}
    if 0 in stacks.values():
        bust = ann if stacks[0] == 0 else bob
        await bust.expect("table_left")
    assert await chip_total(server) == 0


async def _first_to_act(ann: Client, bob: Client, table_id: str) -> Client:
    async with asyncio.timeout(5):
        while True:
            for client in (ann, bob):
                if any(
                    f["type"] == "turn_started" and "legal" in f and f["table_id"] == table_id
                    for f in client.frames
                ):
                    return client
            await asyncio.sleep(0.01)


async def test_a_buy_in_while_the_store_is_away_is_refused_and_changes_nothing(
    server: QiuQiuServer, store: SwitchedStore, connect_client: Connect
) -> None:
    ann, bob = await connect_client(), await connect_client()
    await ann.hello("Ann")
    await bob.hello("Bob")
    created = await ann.reply("create_table", options={"dealer_bot": False}, buy_in=200)
    table_id = created["table"]["table_id"]
    store.off = True
    # The table learns of the outage from the first write that meets it, or from here:
    server.health.failed(StoreUnavailable("switched off"))
    refused = await bob.reply("join_table", table_id=table_id, buy_in=200)
    assert refused["code"] == "store_unavailable"
    assert server.lobby.tables[table_id].seat_of(bob.frames[0]["account_id"]) is None
    store.off = False
    server.health.answered()
    joined = await bob.reply("join_table", table_id=table_id, buy_in=200)
    assert joined["type"] == "table_joined"
    assert await chip_total(server) == 0


async def test_a_disconnect_while_the_store_is_away_still_starts_the_grace_period(
    server: QiuQiuServer, store: SwitchedStore, connect_client: Connect
) -> None:
    # Three seats, three needed: no hand starts, so the cash-out is the grace's own write.
    ann, bob, table_id = await heads_up(connect_client, (200, 200), seats=3, min_players=3)
    store.off = True
    await bob.close()
    gone = await ann.expect("player_disconnected", table_id=table_id)
    assert gone["grace_ms"] == int(server.config.grace * 1000)
    await asyncio.sleep(server.config.grace + 0.5)  # the grace runs out: its cash-out waits
    assert not any(f["type"] == "player_left" for f in ann.frames)
    store.off = False
    left = await ann.expect("player_left", table_id=table_id)
    assert left["seat"] == gone["seat"]
    assert await chip_total(server) == 0


async def test_stopping_with_the_store_gone_for_good_ends_within_the_deadline_and_logs_once(
    store: SwitchedStore, caplog: pytest.LogCaptureFixture
) -> None:
    config = FAST.model_copy(update={"stop_timeout": 1.0})
    server = QiuQiuServer(config, store=store, rng=random.Random(1))
    await server.start()
    client = Client(await connect(server.url))
    await client.hello("Ann")
    created = await client.reply("create_table", options={}, buy_in=300)
    await my_turn(client, created["table"]["table_id"])
    store.off = True
    caplog.set_level(logging.WARNING)
    await asyncio.wait_for(server.stop(), config.stop_timeout + 10)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in warnings if r.exc_info], "no traceback for an outage"
    assert sum("unreachable" in r.getMessage() for r in warnings) == 1
    assert store.failed >= 1
