"""What the Redis store must keep beyond the contract in test_store.py: a change is
one atomic step even with many writers at once, and what one store object writes
another sees, as a second server process on the same Redis would."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from qiuqiu.protocol import TableOptions
from qiuqiu.server.errors import LeaseLost, Refused
from qiuqiu.server.lobby import token_hash
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import HOUSE, HandRecord, SeatRecord, TableRecord

GRANT = 1_000
OPTIONS = TableOptions(seats=3, dealer_bot=False)


HELD = 60.0
"""Seconds of a lease that outlasts the test that takes it."""


def seated(table_id: str, account_id: str, stack: int) -> TableRecord:
    return TableRecord(table_id, OPTIONS).with_seat(SeatRecord(0, account_id, "Ann", stack))


async def dump(url: str) -> dict[bytes, bytes | None]:
    """Every key in the database with its value, serialized by Redis itself."""
    async with Redis.from_url(url) as raw:
        return {key: await raw.dump(key) async for key in raw.scan_iter()}


async def test_a_refused_move_leaves_every_key_in_redis_as_it_was(
    redis_store: RedisStore, redis_url: str
) -> None:
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    for table_id in ("t1", "t2"):
        assert await redis_store.acquire_table(table_id, HELD)
    saved = seated("t1", "ann", 400)
    await redis_store.move_chips("ann", 400, saved)
    before = await dump(redis_url)
    with pytest.raises(Refused, match="insufficient_balance"):
        await redis_store.move_chips("ann", 601, saved.with_seat(SeatRecord(1, "ann", "Ann", 601)))
    with pytest.raises(Refused, match="unknown_account"):
        await redis_store.move_chips("nobody", 1, seated("t2", "nobody", 1))
    assert await dump(redis_url) == before
    ann = await redis_store.account("ann")
    assert ann is not None
    assert ann.balance == GRANT - 400
    assert await redis_store.table("t1") == saved


async def test_two_hundred_buy_ins_at_once_never_overdraw_and_create_or_lose_no_chip(
    redis_store: RedisStore,
) -> None:
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    buy_in = 30

    async def buy_in_at(n: int) -> str | None:
        """None for a buy-in made, the code of its refusal otherwise."""
        try:
            assert await redis_store.acquire_table(f"t{n}", HELD)
            await redis_store.move_chips("ann", buy_in, seated(f"t{n}", "ann", buy_in))
        except Refused as refused:
            return refused.code
        return None

    outcomes = await asyncio.gather(*(buy_in_at(n) for n in range(200)))
    assert outcomes.count(None) == GRANT // buy_in
    assert set(outcomes) == {None, "insufficient_balance"}
    balances = await redis_store.balances()
    assert balances["ann"] == GRANT % buy_in
    tables = await redis_store.tables()
    assert len(tables) == GRANT // buy_in
    assert sum(balances.values()) + sum(s.stack for t in tables for s in t.seats) == 0


async def test_a_second_store_on_the_same_redis_sees_what_the_first_wrote(
    redis_store: RedisStore, redis_url: str
) -> None:
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    table = seated("t1", "ann", 400)
    assert await redis_store.acquire_table("t1", HELD)
    await redis_store.move_chips("ann", 400, table)
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 400),), ((0, 420),), ('{"type": "x"}',))
    await redis_store.record_hand(hand)
    other = await RedisStore.from_url(redis_url)
    try:
        # Opening it found the house there already and left its balance alone.
        assert await other.balances() == {HOUSE: -GRANT, "ann": GRANT - 400}
        assert await other.account_for_token(token_hash("ann")) == await redis_store.account("ann")
        assert await other.tables() == (table,)
        assert await other.account_hands("ann") == (hand,)
        await redis_store.release_table("t1")
        assert await other.acquire_table("t1", HELD)
        await other.drop_table("t1")
    finally:
        await other.close()
    assert await redis_store.table("t1") is None


async def test_stores_under_different_prefixes_share_a_redis_without_seeing_each_other(
    redis_url: str,
) -> None:
    blue = await RedisStore.from_url(redis_url, prefix="blue:")
    green = await RedisStore.from_url(redis_url, prefix="green:")
    try:
        await blue.create_account("ann", "Ann", token_hash("ann"), GRANT)
        assert await blue.acquire_table("t1", HELD)
        await blue.save_table(TableRecord("t1", OPTIONS))
        assert await green.acquire_table("t1", HELD), "green's t1 is another table"
        assert await green.account("ann") is None
        assert await green.tables() == ()
        assert await green.balances() == {HOUSE: 0}
        await green.create_account("ann", "Ann", token_hash("ann"), 5)
        assert await blue.balances() == {HOUSE: -GRANT, "ann": GRANT}
    finally:
        await blue.close()
        await green.close()


async def test_the_keys_are_laid_out_under_the_prefix_as_the_module_says(
    redis_store: RedisStore, redis_url: str
) -> None:
    await redis_store.create_account("ann", "Ann", "hash-of-anns-token", GRANT)
    await redis_store.acquire_table("t1", 10)
    await redis_store.move_chips("ann", 400, seated("t1", "ann", 400))
    await redis_store.record_hand(HandRecord("t1", 1, ((0, "ann"),), ((0, 400),), ((0, 400),), ()))
    await redis_store.claim_connection("ann", "process:session")
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        assert sorted(await raw.keys()) == [
            "qiuqiu:account:ann",
            "qiuqiu:account:house",
            "qiuqiu:accounts",
            "qiuqiu:connection:ann",
            "qiuqiu:fence:t1",
            "qiuqiu:hands:account:ann",
            "qiuqiu:hands:table:t1",
            "qiuqiu:lease:t1",
            "qiuqiu:seats:ann",
            "qiuqiu:table:t1",
            "qiuqiu:tables",
            "qiuqiu:token:hash-of-anns-token",
            "qiuqiu:version:t1",
        ]
        assert await raw.get("qiuqiu:lease:t1") == f"{redis_store.owner}:1"
        assert await raw.hgetall("qiuqiu:account:ann") == {"name": "Ann", "balance": "600"}
        assert await raw.smembers("qiuqiu:seats:ann") == {"t1"}


async def test_a_store_keeps_working_after_redis_forgets_its_scripts(
    redis_store: RedisStore, redis_url: str
) -> None:
    # As after a restart of Redis: the scripts are loaded again on first use.
    async with Redis.from_url(redis_url) as raw:
        await raw.script_flush()
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    assert await redis_store.balances() == {HOUSE: -GRANT, "ann": GRANT}


# -- leases: one writer per table ---------------------------------------------------

LEASE = 0.3
"""Seconds a lease lasts in these tests: short, so that letting one run out is quick."""


async def two_stores(url: str) -> tuple[RedisStore, RedisStore]:
    """Two store objects on one Redis, as two server processes would have."""
    return await RedisStore.from_url(url), await RedisStore.from_url(url)


async def test_only_one_of_two_processes_gets_a_tables_lease(redis_url: str) -> None:
    first, second = await two_stores(redis_url)
    assert await first.acquire_table("t1", LEASE)
    assert not await second.acquire_table("t1", LEASE)
    assert await first.acquire_table("t1", LEASE), "taking it again just extends it"
    assert await first.orphaned_tables() == ()
    await first.close()
    await second.close()


async def test_a_lease_not_renewed_runs_out_and_another_process_takes_the_table_over(
    redis_url: str,
) -> None:
    first, second = await two_stores(redis_url)
    await first.acquire_table("t1", LEASE)
    await first.save_table(TableRecord("t1", OPTIONS))
    assert await second.orphaned_tables() == ()
    await asyncio.sleep(LEASE * 2)
    assert await second.orphaned_tables() == ("t1",)
    assert await second.acquire_table("t1", LEASE)
    assert await first.renew_tables(LEASE) == ("t1",)
    assert await first.renew_tables(LEASE) == (), "a lost table is forgotten"
    await first.close()
    await second.close()


async def test_renewing_keeps_a_lease_past_its_first_term(redis_url: str) -> None:
    first, second = await two_stores(redis_url)
    await first.acquire_table("t1", LEASE)
    for _ in range(4):
        await asyncio.sleep(LEASE / 3)
        assert await first.renew_tables(LEASE) == ()
    assert not await second.acquire_table("t1", LEASE)
    await first.close()
    await second.close()


async def test_the_process_that_lost_its_lease_writes_nothing_more(redis_url: str) -> None:
    old, new = await two_stores(redis_url)
    await old.create_account("ann", "Ann", token_hash("ann"), GRANT)
    await old.acquire_table("t1", LEASE)
    await old.save_table(TableRecord("t1", OPTIONS))
    await asyncio.sleep(LEASE * 2)
    assert await new.acquire_table("t1", LEASE)
    before = await dump(redis_url)
    stale = seated("t1", "ann", 100)
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 100),), ((0, 100),), ())
    for write in (
        old.save_table(stale),
        old.move_chips("ann", 100, stale),
        old.record_hand(hand, stale),
        old.drop_table("t1"),
    ):
        with pytest.raises(LeaseLost):
            await write
    assert await dump(redis_url) == before
    await new.save_table(stale)
    assert await new.table("t1") == stale
    await old.close()
    await new.close()


async def test_two_processes_racing_to_apply_the_same_change_only_one_wins(
    redis_url: str,
) -> None:
    """Both believe they host the table (the first stalled past its lease while the
    second took over): each tries to seat Ann with her whole balance at once."""
    first, second = await two_stores(redis_url)
    await first.create_account("ann", "Ann", token_hash("ann"), GRANT)
    await first.acquire_table("t1", LEASE)
    await first.save_table(TableRecord("t1", OPTIONS))
    await asyncio.sleep(LEASE * 2)
    await second.acquire_table("t1", LEASE)
    outcomes = await asyncio.gather(
        first.move_chips("ann", GRANT, seated("t1", "ann", GRANT)),
        second.move_chips("ann", GRANT, seated("t1", "ann", GRANT)),
        return_exceptions=True,
    )
    assert isinstance(outcomes[0], LeaseLost)
    assert not isinstance(outcomes[1], BaseException)
    assert await balance_of(second, "ann") == 0
    assert await second.table("t1") == seated("t1", "ann", GRANT)
    await first.close()
    await second.close()


async def test_a_released_lease_is_free_at_once_and_a_dropped_table_frees_its_lease(
    redis_url: str,
) -> None:
    first, second = await two_stores(redis_url)
    await first.acquire_table("t1", LEASE)
    await first.release_table("t1")
    assert await second.acquire_table("t1", LEASE)
    await second.save_table(TableRecord("t1", OPTIONS))
    await second.drop_table("t1")
    assert await first.acquire_table("t1", LEASE)
    await first.close()
    await second.close()


async def balance_of(store: RedisStore, account_id: str) -> int:
    account = await store.account(account_id)
    assert account is not None
    return account.balance
