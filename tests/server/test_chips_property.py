"""Random clients, many hands: not one chip is made or lost.

Each example starts a real server and lets random players loose on two tables
(one with the dealer bot, one without): they bet, raise, call and fold at
random, send illegal actions and stale hands, drop and resume, leave and sit
down again. After every step the sum of every balance (the house's included),
stack and pot must still be zero.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.server.conftest import FAST, Client, chip_total

CONFIG = FAST.model_copy(
    # Balances deep enough that no player runs out in an example: at a table without
    # the dealer bot, two players who could not buy in again would leave the third
    # waiting for a hand that never comes, however the chips were kept.
    update={"rate": 1e6, "burst": 1_000_000, "grace": 0.2, "starting_balance": 1_000_000}
)
HANDS = 25
"""Hands each table plays per example."""


@dataclass
class Player:
    server: QiuQiuServer
    rng: random.Random
    name: str
    client: Client | None = None
    token: str = ""

    async def connect(self) -> None:
        self.client = Client(await connect(self.server.url))
        if self.token:
            await self.client.reply("hello", version=PROTOCOL_VERSION, token=self.token)
        else:
            welcome = await self.client.hello(self.name)
            self.token = welcome["token"]

    async def sit(self, table_id: str) -> None:
        assert self.client is not None
        await self.client.reply(
            "join_table", table_id=table_id, buy_in=self.rng.choice([100, 150, 300])
        )

    async def play(self, table_id: str, done: asyncio.Event) -> None:
        """Act on every turn until ``done``, misbehaving now and then. Replies are
        not awaited (errors included), so a turn is never missed while waiting."""
        while not done.is_set():
            assert self.client is not None
            try:
                turn = await asyncio.wait_for(self._my_turn(table_id), 0.5)
            except TimeoutError:
                await self._maybe_sit_again(table_id)
                continue
            roll = self.rng.random()
            if roll < 0.05:
                await self.client.close()
                await self.connect()
                continue
            if roll < 0.08:
                await self.client.send("leave_table", table_id=table_id)
                continue
            hand_id, legal = turn
            if roll < 0.15:
                # Illegal on purpose: a hand that is over, an amount out of range.
                await self.client.send("bet", table_id=table_id, hand_id=hand_id - 1, amount=10)
                await self.client.send("raise", table_id=table_id, hand_id=hand_id, to=10**12)
            await self.client.send(**self._choose(legal), table_id=table_id, hand_id=hand_id)
            assert await chip_total(self.server) == 0

    async def _my_turn(self, table_id: str) -> tuple[int, dict[str, Any]]:
        """The next time this seat may act: a ``turn_started`` for it, or a snapshot
        (after a reconnect) that says it is to act."""
        assert self.client is not None
        message = await self.client.wait(
            lambda m: (
                (m["type"] == "turn_started" and m["table_id"] == table_id and "legal" in m)
                or (
                    m["type"] == "table_snapshot"
                    and "legal" in m["table"]
                    and not m["table"]["legal"].get("declare_cut")
                )
            )
        )
        if message["type"] == "turn_started":
            return message["hand_id"], message["legal"]
        return message["table"]["hand"]["hand_id"], message["table"]["legal"]

    async def _maybe_sit_again(self, table_id: str) -> None:
        assert self.client is not None
        table = self.server.lobby.tables.get(table_id)
        if table is None:
            return  # everyone left, so it closed: its hands are over
        if table.seat_of(self._account_id()) is None and table.summary().free_seats:
            balance = await self.server.store.account(self._account_id())
            if balance is not None and balance.balance >= 100:
                await self.sit(table_id)

    def _account_id(self) -> str:
        welcome = next(m for m in self.client.frames if m["type"] == "welcome")  # type: ignore[union-attr]
        return str(welcome["account_id"])

    def _choose(self, legal: dict[str, Any]) -> dict[str, Any]:
        options: list[dict[str, Any]] = []
        if legal.get("check"):
            options.append({"type": "check"})
        if "call" in legal:
            options.append({"type": "call"})
        if legal.get("fold"):
            options.append({"type": "fold"})
        if "bet" in legal:
            low, high = legal["bet"]["min"], legal["bet"]["max"]
            options.append(
                {"type": "bet", "amount": self.rng.choice([low, high, (low + high) // 2])}
            )
        if "raise_to" in legal:
            low, high = legal["raise_to"]["min"], legal["raise_to"]["max"]
            options.append({"type": "raise", "to": self.rng.choice([low, high])})
        return self.rng.choice(options)


async def run_tables(seed: int) -> None:
    server = QiuQiuServer(CONFIG, store=MemoryStore(), rng=random.Random(seed))
    await server.start()
    rng = random.Random(seed)
    try:
        players = [Player(server, random.Random(rng.random()), f"P{i}") for i in range(5)]
        for player in players:
            await player.connect()
        host = players[0].client
        assert host is not None
        # Short turns, so the timer plays for whoever is reconnecting or has left.
        with_bot = await host.reply(
            "create_table", options={"seats": 3, "dealer_bot": True, "turn_seconds": 0.3}
        )
        without = await host.reply(
            "create_table",
            options={"seats": 3, "dealer_bot": False, "max_raises": 2, "turn_seconds": 0.3},
        )
        tables = [with_bot["table"]["table_id"], without["table"]["table_id"]]
        seating = [tables[0], tables[0], tables[1], tables[1], tables[1]]
        for player, table_id in zip(players, seating, strict=True):
            await player.sit(table_id)
        done = asyncio.Event()
        playing = [
            asyncio.create_task(p.play(t, done)) for p, t in zip(players, seating, strict=True)
        ]
        try:
            async with asyncio.timeout(60):
                while any(t.hand_id < HANDS for t in map(server.lobby.tables.get, tables) if t):
                    await asyncio.sleep(0.01)
                    assert await chip_total(server) == 0
        except TimeoutError:
            stuck = await stalled(server, tables, players)
            raise AssertionError(f"a table stopped dealing: {stuck}") from None
        done.set()
        await asyncio.gather(*playing)
        assert await chip_total(server) == 0
    finally:
        await server.stop()
    assert await chip_total(server) == 0
    # Stopped: every seat cashed out, so the balances alone sum to zero.
    assert sum((await server.store.balances()).values()) == 0


async def stalled(server: QiuQiuServer, tables: list[str], players: list[Player]) -> str:
    """Each table still open, by its hands and seats, and each player's balance."""
    described = []
    for table in filter(None, map(server.lobby.tables.get, tables)):
        seats = ", ".join(f"{s.name} {s.stack}" for s in table.seats.values())
        described.append(f"{table.table_id} at hand {table.hand_id}: {seats}")
    for player in players:
        account = await server.store.account(player._account_id())
        described.append(f"{player.name} has {account.balance if account else None}")
    return "; ".join(described)


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(min_value=0, max_value=2**32))
async def test_random_clients_never_create_or_lose_a_chip(seed: int) -> None:
    await run_tables(seed)
