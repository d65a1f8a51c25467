"""A balance past 10^12, the most any table holds: it is written, read and resumed
(PROTOCOL.md, "Conventions"), and the store lets none pass MAX_BALANCE.

A balance sums what was won at every table, so it may pass the most chips one table
holds; before balances had their own bound, the welcome that carried one could not be
written, and its account was locked out for good.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.protocol import MAX_BALANCE, MAX_CHIPS, PROTOCOL_VERSION, TableOptions
from qiuqiu.server.errors import Refused
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import Store, TableRecord
from tests.server.conftest import FAST, Client, my_turn
from tests.server.processes import until
from tests.server.store_helpers import (
    OPTIONS,
    balance,
    buy_in,
    cash_out,
    open_account,
    saved,
    seat,
    with_seat,
)

BUY_IN, ANTE = 500, TableOptions().ante


# -- the store -------------------------------------------------------------------------


async def test_a_cash_out_that_would_take_a_balance_past_the_most_one_holds_is_refused(
    store: Store, leases: None
) -> None:
    await open_account(store, "ann", grant=MAX_BALANCE - 50)
    # Seated as no buy-in could have seated her (see the next test): only to reach the
    # bound, which the store must guard however the balance came near it.
    table = with_seat(TableRecord("t1", OPTIONS), seat(0, "ann", 100))
    await store.commit(saved(table))
    with pytest.raises(Refused) as refused:
        await store.commit(cash_out(table, 0))
    assert refused.value.code == "balance_limit"
    assert f"{MAX_BALANCE:,}" in refused.value.message
    assert await balance(store, "ann") == MAX_BALANCE - 50
    assert await store.table("t1") == table


async def test_a_buy_in_leaves_room_for_every_chip_its_tables_may_pay_back(
    store: Store, leases: None
) -> None:
    """A cash-out is never refused for the bound: a buy-in keeps 10^12 chips (every chip
    one table holds) of room under it for each table the account sits at."""
    await open_account(store, "ann", grant=MAX_BALANCE - MAX_CHIPS + 1)
    first = buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 1))
    await store.commit(first)
    assert await balance(store, "ann") == MAX_BALANCE - MAX_CHIPS
    with pytest.raises(Refused) as refused:
        await store.commit(buy_in(TableRecord("t2", OPTIONS), seat(0, "ann", 1)))
    assert refused.value.code == "balance_limit"
    assert "tables you would sit at (2)" in refused.value.message
    assert await balance(store, "ann") == MAX_BALANCE - MAX_CHIPS
    assert await store.seated_tables("ann") == ("t1",)
    assert await store.table("t2") is None
    # Ann won every chip a table holds at the first: all of it comes back.
    assert first.table is not None
    won = with_seat(first.table, seat(0, "ann", MAX_CHIPS))
    await store.commit(saved(won))
    assert await store.commit(cash_out(won, 0)) == {"ann": MAX_BALANCE}


# -- the wire ----------------------------------------------------------------------------

Raise = Callable[[QiuQiuServer, str, int], Awaitable[None]]


async def _in_memory(server: QiuQiuServer, account_id: str, chips: int) -> None:
    store = server.store
    assert isinstance(store, MemoryStore)
    store._accounts[account_id] = replace(store._accounts[account_id], balance=chips)


def _in_redis(url: str) -> Raise:
    async def raise_to(_: QiuQiuServer, account_id: str, chips: int) -> None:
        async with Redis.from_url(url) as redis:
            assert await redis.hset(f"qiuqiu:account:{account_id}", "balance", chips) == 0

    return raise_to


@pytest.fixture(params=["memory", "redis"])
async def served(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[QiuQiuServer, Raise]]:
    """A server on each store, and how to set an account's balance there."""
    redis_store: RedisStore | None = None
    if request.param == "memory":
        server = QiuQiuServer(FAST, store=MemoryStore())
        raise_to: Raise = _in_memory
    else:
        url = request.getfixturevalue("redis_url")
        redis_store = await RedisStore.from_url(url)
        server = QiuQiuServer(FAST, store=redis_store)
        raise_to = _in_redis(url)
    await server.start()
    yield server, raise_to
    await server.stop()
    if redis_store is not None:
        await redis_store.close()


async def test_an_account_whose_balance_passed_10_to_the_12_resumes_with_its_token(
    served: tuple[QiuQiuServer, Raise],
) -> None:
    server, raise_to = served
    async with connect(server.url) as ws:
        welcome = await Client(ws).hello("Ann")
    rich = MAX_BALANCE - MAX_CHIPS
    await raise_to(server, welcome["account_id"], rich)
    async with connect(server.url) as ws:
        ann = Client(ws)
        again = await ann.reply("hello", version=PROTOCOL_VERSION, token=welcome["token"])
        assert (again["type"], again["balance"]) == ("welcome", rich), again
        created = await ann.reply("create_table", options={}, buy_in=500)
        assert created["type"] == "table_created", created
        joined = await ann.expect("table_joined")
        assert joined["balance"] == rich - 500


async def test_a_new_table_whose_buy_in_would_pass_the_bound_is_not_made(
    served: tuple[QiuQiuServer, Raise],
) -> None:
    server, raise_to = served
    async with connect(server.url) as ws:
        ann = Client(ws)
        welcome = await ann.hello("Ann")
        await raise_to(server, welcome["account_id"], MAX_BALANCE)
        refused = await ann.reply("create_table", options={}, buy_in=500)
        assert (refused["type"], refused.get("code")) == ("error", "balance_limit"), refused
        listing = await ann.reply("list_tables")
        assert listing["tables"] == []


async def _fold_to_every_bet(bo: Client, table_id: str) -> None:
    while True:
        turn = await my_turn(bo, table_id)
        action = "check" if turn["legal"]["check"] else "fold"
        await bo.send(action, table_id=table_id, hand_id=turn["hand_id"])


@pytest.mark.parametrize("config", [FAST.model_copy(update={"starting_balance": MAX_CHIPS})])
async def test_a_player_who_starts_with_10_to_the_12_wins_past_it_and_comes_back(
    connect_client: Callable[[], Awaitable[Client]],
) -> None:
    """Ann bets whenever she may and Bo folds to every bet, so every hand is hers
    whatever the tiles: no run of the test hangs on the deal."""
    ann, bo = await connect_client(), await connect_client()
    token = (await ann.hello("Ann"))["token"]
    await bo.hello("Bo")
    created = await ann.reply("create_table", options={"dealer_bot": False}, buy_in=BUY_IN)
    table_id = created["table"]["table_id"]
    joined = await bo.reply("join_table", table_id=table_id, buy_in=BUY_IN)
    assert joined["type"] == "table_joined", joined
    folding = asyncio.create_task(_fold_to_every_bet(bo, table_id))
    while True:
        turn = await my_turn(ann, table_id)
        started = next(
            m for m in ann.frames if m["type"] == "hand_started" and m["hand_id"] == turn["hand_id"]
        )
        stack = next(s["amount"] for s in started["stacks"] if s["seat"] == turn["seat"])
        # Leaving in a hand folds the seat: it loses its ante at most.
        if stack > BUY_IN + ANTE:
            break
        ids = {"table_id": table_id, "hand_id": turn["hand_id"]}
        if "bet" in turn["legal"]:
            await ann.send("bet", **ids, amount=turn["legal"]["bet"]["min"])
        else:
            await ann.send("check", **ids)
    await ann.send("leave_table", table_id=table_id)
    left = await ann.expect("table_left", table_id=table_id)
    assert left["balance"] == MAX_CHIPS - BUY_IN + left["cashed_out"] > MAX_CHIPS
    folding.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await folding
    await ann.close()

    again = await connect_client()
    welcome = await again.reply("hello", version=PROTOCOL_VERSION, token=token)
    assert (welcome["type"], welcome["balance"]) == ("welcome", left["balance"]), welcome


async def _leaving_refused(
    server: QiuQiuServer,
    raise_to: Raise,
    ann: Client,
    caplog: pytest.LogCaptureFixture,
    options: dict[str, Any],
    kind: str,
) -> tuple[str, str]:
    """Ann at a new table, her balance then raised as far as one goes, leaving: once the
    store has refused the ``kind`` write that pays her, her account and the table."""
    welcome = await ann.hello("Ann")
    created = await ann.reply("create_table", options=options, buy_in=BUY_IN)
    table_id = created["table"]["table_id"]
    await ann.expect("table_joined")
    await raise_to(server, welcome["account_id"], MAX_BALANCE)
    await ann.send("leave_table", table_id=table_id)

    async def refused() -> bool:
        return f"the store refused the {kind} write" in caplog.text

    await until(refused)
    return welcome["account_id"], table_id


async def test_a_cash_out_the_store_refuses_waits_for_the_account_and_loses_nothing(
    served: tuple[QiuQiuServer, Raise], caplog: pytest.LogCaptureFixture
) -> None:
    """Only a balance edited by hand can make the store refuse a cash-out (a buy-in
    leaves room for it): the table keeps the chips and tries again, and the account
    gets them once its balance has room, and the log says so."""
    server, raise_to = served
    async with connect(server.url) as ws:
        ann = Client(ws)
        account_id, table_id = await _leaving_refused(server, raise_to, ann, caplog, {}, "hand_end")
        await raise_to(server, account_id, 1000)
        left = await ann.expect("table_left", table_id=table_id)
        assert left["balance"] == 1000 + left["cashed_out"]
        assert "the store took the hand_end write it had refused" in caplog.text


async def test_asked_again_while_its_cash_out_is_held_a_leave_waits_for_no_hand(
    served: tuple[QiuQiuServer, Raise], caplog: pytest.LogCaptureFixture
) -> None:
    """Out of a hand, a leave waits only for its cash-out: asked again while the store
    refuses that write, the refusal does not speak of a hand to wait for."""
    server, raise_to = served
    async with connect(server.url) as ws:
        ann = Client(ws)
        alone = {"dealer_bot": False}  # no hand is dealt
        account_id, table_id = await _leaving_refused(
            server, raise_to, ann, caplog, alone, "cash_out"
        )
        again = await ann.reply("leave_table", table_id=table_id)
        assert again["code"] == "already_leaving", again
        assert "hand" not in again["message"], again
        await raise_to(server, account_id, 1000)
        left = await ann.expect("table_left", table_id=table_id)
        assert left["balance"] == 1000 + BUY_IN


async def test_a_stop_that_leaves_a_held_cash_out_does_not_blame_an_absent_store(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The store answered, and refused: the stop's warning must not send the operator
    looking for a Redis that was there all along."""
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(FAST.model_copy(update={"stop_timeout": 1.0}), store=store)
    await server.start()
    try:
        async with connect(server.url) as ws:
            alone = {"dealer_bot": False}
            raise_to = _in_redis(redis_url)
            await _leaving_refused(server, raise_to, Client(ws), caplog, alone, "cash_out")
            await server.stop()
        assert "stopped with 1 table not closed" in caplog.text
        assert "(the store did not answer)" not in caplog.text
    finally:
        await server.stop()
        await store.close()
