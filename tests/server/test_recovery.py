"""A server on Redis killed without warning (SIGKILL) comes back with every chip.

The real ``qiuqiu-server`` runs as a process on a fixed port, with its state in
a real Redis. Players (the SDK's connection, which reconnects by itself) play
against the dealer bot while the server is killed at random moments and
started again. Whenever it is dead, the chips in Redis (every balance and every
stack at every table) must still sum to zero; after each restart every table
must deal again; at the end every balance must match the hand records.
"""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path

import pytest

from qiuqiu.cli.bot import leave, play
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import HISTORY_LENGTH, HOUSE, SeatRecord, TableCommit, TableRecord
from tests.conftest import free_port, own_redis
from tests.server.conftest import FAST
from tests.server.processes import (
    WAIT,
    Caller,
    Servers,
    chips_in_redis,
    hands_dealt,
    listening,
    until,
)

TABLES = 3
KILLS = 8
HANDS = 120
"""Hands dealt in all before the run ends: enough for kills at every kind of moment,
few enough that every account's hands stay within the store's history."""

THINKING = ("--bot-delay", "0.05")
"""A dealer bot that thinks a little, so that a hand lasts longer than the pause between
hands and most kills find one in play."""

CAPPED = TableOptions(max_bet=20, max_raises=2)
"""Bets and raises capped, so that no caller goes bust against the dealer bot (which
may go all in) and closes its table while a test waits for more hands."""


async def test_a_server_killed_at_random_moments_restarts_with_every_chip_and_deals_on(
    redis_store: RedisStore, servers: Servers
) -> None:
    moments = random.Random(2026)
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    store = redis_store
    server = await servers.start(port, flags=THINKING)
    conns = [await Connection.open(url, name=f"P{n}") for n in range(TABLES)]
    options = CAPPED.model_copy(update={"turn_seconds": 10})
    table_ids = [
        (
            await c.request(cmd.CreateTable(options=options, buy_in=500), wire.TableCreated)
        ).table.table_id
        for c in conns
    ]
    seated = list(zip(conns, table_ids, strict=True))
    players = [asyncio.create_task(play(Caller(), c, t)) for c, t in seated]

    kills = 0
    while kills < KILLS or sum((await hands_dealt(store, table_ids)).values()) < HANDS:
        await asyncio.sleep(moments.uniform(0.02, 0.4))
        server.send_signal(signal.SIGKILL)
        await server.wait()
        kills += 1
        assert await chips_in_redis(store) == 0, f"after kill {kills}"
        before = await hands_dealt(store, table_ids)
        server = await servers.start(port, flags=THINKING)

        async def every_table_dealt_again(before: dict[str, int] = before) -> bool:
            for player in players:
                if player.done():
                    player.result()  # a player that stopped raises why (a failed check)
                    raise AssertionError("a player stood up")
            now = await hands_dealt(store, table_ids)
            return all(now[t] > before[t] + 1 for t in table_ids)

        await until(every_table_dealt_again)

    for player in players:
        assert not player.done(), "a player's connection gave up"
        player.cancel()
    balances = [await leave(c, t) for c, t in seated]
    for conn in conns:
        await conn.close()
    assert await servers.stop(server) == 0

    assert await chips_in_redis(store) == 0
    assert await store.tables() == ()
    for conn, balance in zip(conns, balances, strict=True):
        hands = await store.account_hands(conn.account_id)
        assert len(hands) < HISTORY_LENGTH
        assert balance == 1_000 + sum(h.net(conn.account_id) for h in hands)
        account = await store.account(conn.account_id)
        assert account is not None
        assert account.balance == balance
    voided = [h for t in table_ids for h in await store.table_hands(t) if h.voided]
    assert voided, "some kill should have caught a hand in play"


async def test_a_live_server_takes_over_the_tables_of_one_that_died_and_the_player_resumes_there(
    redis_store: RedisStore, servers: Servers
) -> None:
    store = redis_store
    dying_port, living_port = free_port(), free_port()
    dying = await servers.start(dying_port)
    living = await servers.start(living_port)
    tokens: list[str] = []
    first = await Connection.open(
        f"ws://127.0.0.1:{dying_port}", name="Ann", on_token=tokens.append, reconnect=False
    )
    created = await first.request(cmd.CreateTable(options=CAPPED, buy_in=500), wire.TableCreated)
    table_id = created.table.table_id
    playing = asyncio.create_task(play(Caller(), first, table_id))

    async def a_few_hands_dealt() -> bool:
        return (await hands_dealt(store, [table_id])).get(table_id, 0) >= 3

    await until(a_few_hands_dealt)
    dying.send_signal(signal.SIGKILL)
    await dying.wait()
    with pytest.raises(ConnectionLost, match="gone for good"):
        await asyncio.wait_for(playing, WAIT)  # the connection is gone and does not come back

    # The same account on the other server: seated again as soon as its lease is taken.
    again = await Connection.open(f"ws://127.0.0.1:{living_port}", token=tokens[0])
    summary = await asyncio.wait_for(play(Caller(), again, table_id, hands=3), WAIT)
    await again.close()
    assert summary.hands == 3
    assert summary.balance is not None
    hands = await store.account_hands(again.account_id)
    assert summary.balance == 1_000 + sum(h.net(again.account_id) for h in hands)

    async def closed() -> bool:
        return await store.tables() == ()

    await until(closed)  # the table closes right after its last player is paid out
    assert await servers.stop(living) == 0
    assert await chips_in_redis(store) == 0


async def test_every_client_dropped_at_once_comes_back_and_play_goes_on(
    redis_store: RedisStore,
) -> None:
    config = FAST.model_copy(
        update={"hand_pause": 0.02, "rate": 1_000, "burst": 1_000, "grace": 30}
    )
    server = QiuQiuServer(config, store=redis_store, rng=random.Random(11))
    await server.start()
    opened: list[Connection] = []
    players: list[asyncio.Task[object]] = []
    try:
        ring = [await Connection.open(server.url, name=f"R{n}") for n in range(3)]
        opened += ring
        shared = TableOptions(seats=3, dealer_bot=False, turn_seconds=10)
        created = await ring[0].request(
            cmd.CreateTable(options=shared, buy_in=500), wire.TableCreated
        )
        seated = [(ring[0], created.table.table_id)]
        for conn in ring[1:]:
            joined = await conn.request(
                cmd.JoinTable(table_id=created.table.table_id, buy_in=500), wire.TableJoined
            )
            seated.append((conn, joined.table_id))
        for n in range(2):
            solo = await Connection.open(server.url, name=f"S{n}")
            opened.append(solo)
            table = await solo.request(
                cmd.CreateTable(options=CAPPED, buy_in=500), wire.TableCreated
            )
            seated.append((solo, table.table.table_id))
        table_ids = [t for _, t in seated]
        players += [asyncio.create_task(play(Caller(), c, t)) for c, t in seated]

        async def a_few_hands_everywhere() -> bool:
            return min((await hands_dealt(redis_store, table_ids)).values()) >= 4

        await until(a_few_hands_everywhere)
        before = await hands_dealt(redis_store, table_ids)
        assert server._server is not None
        for connection in list(server._server.connections):
            connection.transport.abort()  # as a network outage would: no closing handshake

        async def every_table_dealt_again() -> bool:
            now = await hands_dealt(redis_store, table_ids)
            return all(now[t] >= before[t] + 4 for t in table_ids)

        await until(every_table_dealt_again)
        for player in players:
            assert not player.done(), "a player's connection gave up"
            player.cancel()
        # All at once, so nobody at the shared table waits on a turn its player left.
        balances = await asyncio.gather(*(leave(c, t) for c, t in seated))
        for (conn, _), balance in zip(seated, balances, strict=True):
            await conn.close()
            assert conn.welcome is not None
            assert conn.welcome.resumed, "each came back on its own account"
            hands = await redis_store.account_hands(conn.account_id)
            assert balance == 1_000 + sum(h.net(conn.account_id) for h in hands)
        await server.stop()
        assert await chips_in_redis(redis_store) == 0
    finally:
        # Also when a wait above fails: a player, a connection or the server left
        # running would hold the loop's teardown, and the test worker, for good.
        for player in players:
            player.cancel()
        await asyncio.gather(*players, return_exceptions=True)
        for conn in opened:
            await conn.close()
        await server.stop()


async def test_a_table_its_server_died_while_closing_is_closed_by_the_server_that_adopts_it(
    redis_store: RedisStore, redis_url: str
) -> None:
    """Killed between paying out the last player and closing: only the dealer bot is
    left in the record, with chips from the house that must go back to it."""
    options = TableOptions()
    bot = SeatRecord(options.seats - 1, HOUSE, "Dealer", options.max_buy_in, is_bot=True)
    dead = await RedisStore.from_url(redis_url)
    assert await dead.acquire_table("t1", 0.2)
    record = TableRecord("t1", options, (bot,))
    await dead.commit(TableCommit("t1", record, ((HOUSE, options.max_buy_in),)))
    await dead.close()
    assert await chips_in_redis(redis_store) == 0
    server = QiuQiuServer(FAST.model_copy(update={"lease": 0.5}), store=redis_store)
    await server.start()

    async def closed() -> bool:
        return await redis_store.tables() == ()

    await until(closed)
    assert (await redis_store.balances())[HOUSE] == 0
    await server.stop()


async def test_play_goes_on_after_redis_itself_restarts_and_no_hand_is_lost(
    tmp_path: Path,
) -> None:
    """Redis (keeping an append-only file) stops for a second while hands are played:
    the hand that ends meanwhile is saved once it is back, and dealing goes on."""
    port = free_port()

    redis = own_redis(port, tmp_path, "--appendonly", "yes")
    try:
        await until(lambda: listening(port))
        store = await RedisStore.from_url(f"redis://127.0.0.1:{port}/0")
        server = QiuQiuServer(FAST.model_copy(update={"hand_pause": 0.02, "lease": 3}), store=store)
        await server.start()
        conn = await Connection.open(server.url, name="Ann")
        created = await conn.request(cmd.CreateTable(options=CAPPED, buy_in=500), wire.TableCreated)
        table_id = created.table.table_id
        player = asyncio.create_task(play(Caller(), conn, table_id))

        async def dealt(at_least: int) -> bool:
            return server.lobby.tables[table_id].hand_id >= at_least

        await until(lambda: dealt(5))
        redis.terminate()
        redis.wait()
        # Meanwhile, what needs Redis is refused with a code, and the connection stays.
        with pytest.raises(ServerRefused) as refused:
            await conn.request(cmd.ListHands(), wire.HandList)
        assert refused.value.code == "store_unavailable"
        await asyncio.sleep(0.5)
        redis = own_redis(port, tmp_path, "--appendonly", "yes")
        await until(lambda: listening(port))
        so_far = server.lobby.tables[table_id].hand_id
        await until(lambda: dealt(so_far + 5))

        player.cancel()
        balance = await leave(conn, table_id)
        await conn.close()
        await server.stop()
        hands = await store.account_hands(conn.account_id)
        assert [h.hand_id for h in hands] == list(range(1, len(hands) + 1)), "none missing"
        assert balance == 1_000 + sum(h.net(conn.account_id) for h in hands)
        assert await chips_in_redis(store) == 0
        await store.close()
    finally:
        redis.terminate()
        redis.wait()
